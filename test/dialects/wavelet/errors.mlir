// RUN: weft-opt %s --split-input-file --verify-diagnostics

wavelet.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{PEs [2, 6) x [0, 1) of @g leave the 4x4 fabric}}
  wavelet.pe_group @g at #weft.rect<2, 0, 4, 1> {
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe_group @a at #weft.rect<0, 0, 2, 2> {
  }
  // expected-error @below {{PEs [1, 2) x [1, 2) of @b overlap PEs [0, 2) x [0, 2) of @a}}
  wavelet.pe @b at (1, 1) {
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4, colors = 8>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{color 12 is not routable on this target (colors 0..7)}}
    wavelet.route color 12 from [west] to [east]
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    wavelet.route color 3 from [west] to [east]
    // expected-error @below {{color 3 is routed twice on @a}}
    wavelet.route color 3 from [north] to [ramp]
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe_group @g at #weft.rect<0, 0, 4, 2> {
    // expected-error @below {{color 3 uses the north port of PE (0, 0), which has no north neighbour}}
    wavelet.route color 3 from [north] to [ramp]
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t1 data 3 {
      wavelet.inst nop term
    }
    // expected-error @below {{two tasks on color 3 of @a: @t1 and @t2}}
    wavelet.task @t2 data 3 {
      wavelet.inst nop term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{local task color 5 is not a local color (32..63)}}
    wavelet.task @t local 5 {
      wavelet.inst nop term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{control entry 64 is not in 0..63}}
    wavelet.task @t control 64 {
      wavelet.inst nop term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{can run off its end: its last instruction neither terminates nor jumps}}
    wavelet.task @t local 33 {
      wavelet.inst fadd dsr 1, s1dsr 2
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{jumps to "nowhere", which is not a label of task @t}}
      wavelet.jump "nowhere"
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{fmac: destination names dsr 12 but there are 12}}
      wavelet.inst fmac dsr 12, s1dsr 0 term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{fadd: destination is the 32-bit register pair gpr 3, which must be even}}
      wavelet.inst fadd gpr 3, imm one term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{fadd: second source cannot be s0dsr}}
      wavelet.inst fadd dsr 1, s0dsr 2 term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{movi immediate 5000 does not fit the signed 11-bit field}}
      wavelet.inst movi gpr 1, 5000
      wavelet.inst nop term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{activate color 64 is not a task id (0..63)}}
      wavelet.inst activate 64 term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{activate cannot apply to all colors}}
      wavelet.inst activate all term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{unknown opcode 'fma'}}
      wavelet.inst fma dsr 1, s1dsr 0 term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{lds0 is written with wavelet.dsr or wavelet.jump}}
      "wavelet.inst"() {opcode = #wavelet<opcode lds0>, args = [#wavelet.operand<gpr, 1>, #wavelet.operand<lit, 2>]} : () -> ()
      wavelet.inst nop term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{ldd is written with wavelet.dsr or wavelet.jump}}
      wavelet.inst ldd gpr 1, 2
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{fmac takes 2 operands, got 1}}
      wavelet.inst fmac dsr 1 term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{movi takes a gpr first, got dsr 1}}
      wavelet.inst movi dsr 1, 2
      wavelet.inst nop term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{fadd takes register or small-immediate operands, got lit 3}}
      wavelet.inst fadd dsr 1, 3 term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{block takes a color, a gpr or all, got s1dsr 2}}
      wavelet.inst block s1dsr 2 term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{fsum: a reduction's source must be a vector (s0dsr or s1dsr)}}
      wavelet.inst fsum gpr 0, gpr 2 term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{fabin DSD needs 'length'}}
    wavelet.dsd @x at 1024 fabin {color = 1}
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{field 'length' = 40000 not in [0, 32767]}}
    wavelet.dsd @x at 1024 mem1d {length = 40000, base = 2048}
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{field 'stride' does not apply to a fabin DSD}}
    wavelet.dsd @x at 1024 fabin {length = 4, color = 1, stride = 2}
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{field 'nz' does not apply to a fabin DSD}}
    wavelet.dsd @x at 1024 fabin {length = 4, color = 1, format = "sparse16", nz}
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{a sparse send (nz) needs the sparse16 format and no ctrl}}
    wavelet.dsd @x at 1024 fabout {length = 4, color = 1, nz}
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{field 'sl' does not apply to a mem4d DSD}}
    wavelet.dsd @x at 1024 mem4d {base = 4096, xdsr = 0, sl}
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{a sliced mem1d (sl) needs stride 1, not 2}}
    wavelet.dsd @x at 1024 mem1d {length = 8, base = 4096, stride = 2, sl}
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4, colors = 4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{fabout DSD color 7 is not routable (colors 0..3)}}
    wavelet.dsd @x at 1024 fabout {length = 4, color = 7}
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4, mem = 8192>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{mem1d DSD base word 5000 is outside the PE memory of 4096 words}}
    wavelet.dsd @x at 1024 mem1d {length = 4, base = 5000}
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{descriptor @x at word 1026 must be 4-word aligned and below word 8192 (the reach of DSR loads)}}
    wavelet.dsd @x at 1026 mem1d {length = 4, base = 2048}
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.segment @w at 2048 = dense<1.0> : tensor<64xf32>
    // expected-error @below {{segment @v [2100, 2108) overlaps segment @w [2048, 2176)}}
    wavelet.segment @v at 2100 = dense<1.0> : tensor<4xf32>
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{segment @w [600, 608) overlaps code [0, 640)}}
    wavelet.segment @w at 600 = dense<1.0> : tensor<4xf32>
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{segment @w [24570, 24634) leaves the PE memory of 24576 words}}
    wavelet.segment @w at 24570 = dense<1.0> : tensor<32xf32>
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe_group @g at #weft.rect<0, 0, 2, 2> {
    // expected-error @below {{per_pe value 'tensor<2x3x4xf32>' must have leading dimensions 2x2 (the group's rows x columns)}}
    wavelet.segment @w at 2048 per_pe = dense<1.0> : tensor<2x3x4xf32>
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{XDSD dimension 1 length 0 not in [1, 255]}}
    wavelet.xdsd @x at 1024 {len = array<i64: 3, 0, 1, 1>, stride_sel = array<i64: 6, 6, 7, 7>}
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.dsd @x at 1024 fabin {length = 4, color = 1}
    wavelet.task @t local 33 {
      // expected-error @below {{fabin DSD @x cannot be a destination (ddsr)}}
      wavelet.dsr load ddsr 1, @x
      wavelet.inst nop term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{xdsr 6 does not exist (0..5)}}
      wavelet.dsr load xdsr 6, @x
      wavelet.inst nop term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.task @t local 33 {
      // expected-error @below {{@missing is not defined in this PE}}
      wavelet.dsr load s0dsr 1, @missing
      wavelet.inst nop term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{gpr 16 does not exist (0..15)}}
    wavelet.param gpr 16 = affine_map<(x, y) -> (x)>
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    wavelet.param gpr 1 = affine_map<(x, y) -> (x)>
    // expected-error @below {{gpr 1 is initialised twice}}
    wavelet.param gpr 1 = affine_map<(x, y) -> (y)>
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{unknown payload format 'dense8'}}
  wavelet.io @x input west rows 0 to 1 color 1 "dense8" : tensor<4xf32>
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{rows [0, 5) leave the 4-row fabric}}
  wavelet.io @x input west rows 0 to 5 color 1 "dense32" : tensor<4xf32>
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{only a local task can be active at load time}}
    wavelet.task @t data 3 active {
      wavelet.inst nop term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{skips zeros (nz), but only a sparse16 input can}}
  wavelet.io @x input west rows 0 to 1 color 1 "dense32" nz closeout 1 : tensor<4xf32>
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{skips zeros (nz), but only a sparse16 input can}}
  wavelet.io @y output east rows 0 to 1 color 1 "sparse16" nz closeout 1 : tensor<4xf16>
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{closeout index 64 does not fit a control wavelet's 6 bits}}
  wavelet.io @x input west rows 0 to 1 color 1 "sparse16" nz closeout 64 : tensor<4xf16>
}
