// RUN: weft-translate --wavelet-to-wfb %s -o %t.wfb
// RUN: weft-translate --wfb-to-wavelet %t.wfb -o %t.mlir
// RUN: weft-translate --wavelet-to-wfb %t.mlir -o %t.2.wfb
// RUN: cmp %t.wfb %t.2.wfb
// RUN: weft-translate --wfb-to-wavelet %t.2.wfb | diff %t.mlir -
// RUN: FileCheck %s < %t.mlir
// RUN: weft-opt %t.mlir --verify-roundtrip > /dev/null

// The bundled example goes the same way.
// RUN: weft-translate --wavelet-to-wfb %S/../../../examples/vector-add.mlir -o %t.vadd.wfb
// RUN: weft-translate --wfb-to-wavelet %t.vadd.wfb | weft-translate --wavelet-to-wfb -o %t.vadd.2.wfb
// RUN: cmp %t.vadd.wfb %t.vadd.2.wfb

// Binary -> wavelet -> binary is the identity, and so is the text of the
// disassembly; op order in the input does not matter (the binary is
// canonical: routes by color, segments by address, tasks by kind and id).

// CHECK-DAG: #[[MAP4:.+]] = affine_map<(d0, d1) -> (-d0 + 7)>
// CHECK-DAG: #[[MAP5:.+]] = affine_map<(d0, d1) -> (d0 * 64 - d1 + 3)>
// CHECK-LABEL: wavelet.program @mixed
// CHECK-SAME: layers = ["conv", "fc"]
wavelet.program @mixed attributes {target = #weft.target<6x2, mem = 16384, colors = 8>, layers = ["conv", "fc"]} {
  // CHECK: wavelet.io @x input west rows 0 to 2 color 1 "dense32" : tensor<2x64xf32>
  wavelet.io @x input west rows 0 to 2 color 1 "dense32" : tensor<2x64xf32>
  // CHECK: wavelet.io @y output east rows 1 to 2 color 2 "dense16x2" : tensor<7xf16>
  wavelet.io @y output east rows 1 to 2 color 2 "dense16x2" : tensor<7xf16>

  // CHECK: wavelet.pe_group @row at <0, 0, 4, 2> attributes {layer = "conv"} {
  wavelet.pe_group @row at #weft.rect<0, 0, 4, 2> attributes {layer = "conv"} {
    // CHECK-NEXT: wavelet.param gpr 4 = #[[MAP4]]
    // CHECK-NEXT: wavelet.param gpr 5 = #[[MAP5]]
    wavelet.param gpr 5 = affine_map<(x, y) -> (x * 64 - y + 3)>
    wavelet.param gpr 4 = affine_map<(x, y) -> (7 - x)>
    // CHECK-NEXT: wavelet.route color 1 from [west] to [east, ramp]
    // CHECK-NEXT: wavelet.route color 2 from [west, ramp] to [east]
    wavelet.route color 2 from [west, ramp] to [east]
    wavelet.route color 1 from [west] to [east, ramp]
    // CHECK-NEXT: wavelet.segment @one at 1024 = dense_resource<one> : tensor<1xi16>
    // CHECK-NEXT: wavelet.segment @bias at 1100 = dense_resource<bias> : tensor<3xf32>
    // CHECK-NEXT: wavelet.segment @w at 4096 per_pe = dense_resource<w> : tensor<2x4x2xf16>
    wavelet.segment @w at 4096 per_pe = dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]], [[-1.0, -2.0], [-3.0, -4.0], [-5.0, -6.0], [-7.0, -8.0]]]> : tensor<2x4x2xf16>
    wavelet.segment @bias at 1100 = dense<[0.5, 1.5, -2.5]> : tensor<3xf32>
    wavelet.segment @one at 1024 = dense<1> : tensor<1xi16>
    // CHECK-NEXT: wavelet.dsd @xin at 1028 fabin {color = 1 : i64, format = "sparse16", length = 64 : i64, term, utid = 3 : i64}
    wavelet.dsd @xin at 1028 fabin {length = 64, color = 1, format = "sparse16", term, utid = 3}
    // CHECK-NEXT: wavelet.dsd @out at 1032 fabout {ac = 40 : i64, color = 2 : i64, ctrl, index = 9 : i64, length = 7 : i64, wli}
    wavelet.dsd @out at 1032 fabout {length = 7, color = 2, ac = 40, ctrl, index = 9, wli}
    // CHECK-NEXT: wavelet.dsd @v at 1036 mem1d {base = 4096 : i64, ix, length = 2 : i64, stride = -3 : i64}
    wavelet.dsd @v at 1036 mem1d {length = 2, base = 4096, stride = -3, ix}
    // CHECK-NEXT: wavelet.dsd @f at 1040 fifo {base = 5000 : i64, length = 8 : i64, pop_ac = 35 : i64, push_ac = 34 : i64}
    wavelet.dsd @f at 1040 fifo {length = 8, base = 5000, push_ac = 34, pop_ac = 35}
    // CHECK-NEXT: wavelet.xdsd @x4 at 1044 {len = array<i64: 4, 2, 1, 1>, stride_sel = array<i64: 6, 5, 7, 7>}
    wavelet.xdsd @x4 at 1044 {len = array<i64: 4, 2, 1, 1>, stride_sel = array<i64: 6, 5, 7, 7>}
    // CHECK-NEXT: wavelet.dsd @sparse_out at 1048 fabout {color = 2 : i64, format = "sparse16", length = 7 : i64, nz, utid = 1 : i64}
    wavelet.dsd @sparse_out at 1048 fabout {length = 7, color = 2, format = "sparse16", nz, utid = 1}

    // A control task that does not fit its single slot: its entry jumps.
    wavelet.task @ctl control 63 {
      wavelet.inst nop
      wavelet.inst nop term
    }
    // A short data task lives in its own entry.
    // CHECK: wavelet.task @short data 1 blocked {
    wavelet.task @short data 1 blocked {
      wavelet.inst fadd gpr 0, imm two term
    }
    // A long local task with labels at its start, middle and end.
    // CHECK: wavelet.task @long local 40 active {
    // CHECK-NEXT: wavelet.label "top"
    // CHECK-NEXT: wavelet.dsr load s0dsr 2, @xin
    // CHECK-NEXT: wavelet.dsr load ddsr 3, @out
    // CHECK-NEXT: wavelet.dsr load xdsr 5, @x4
    // CHECK-NEXT: wavelet.dsr store s1dsr 11, @v
    // CHECK-NEXT: wavelet.dsr store stride 5, @one
    // CHECK-NEXT: wavelet.label "mid"
    // CHECK-NEXT: wavelet.label "mid2"
    // CHECK-NEXT: wavelet.inst ceq16 gpr 4, imm zero
    // CHECK-NEXT: wavelet.jump "top" if_false
    // A jump names the first label of its target slot.
    // CHECK-NEXT: wavelet.jump "mid"{{$}}
    // CHECK-NEXT: wavelet.label "end"
    // CHECK-NEXT: }
    wavelet.task @long local 40 active {
      wavelet.label "top"
      wavelet.dsr load s0dsr 2, @xin
      wavelet.dsr load ddsr 3, @out
      wavelet.dsr load xdsr 5, @x4
      wavelet.dsr store s1dsr 11, @v
      wavelet.dsr store stride 5, @one
      wavelet.label "mid"
      wavelet.label "mid2"
      wavelet.inst ceq16 gpr 4, imm zero
      wavelet.jump "top" if_false
      wavelet.jump "mid2"
      wavelet.label "end"
    }
    // Tasks come back in canonical order: data, local, control, by id.
    // CHECK: wavelet.task @idle local 41 blocked {
    // CHECK: wavelet.task @ctl control 63 {
    // CHECK-NEXT: wavelet.inst nop
    // CHECK-NEXT: wavelet.inst nop term
    wavelet.task @idle local 41 blocked {
      wavelet.inst deactivate gpr 2
      wavelet.inst activate 41 term
    }
  }
  // CHECK: wavelet.pe @edge at (5, 1) attributes {layer = "fc"} {
  wavelet.pe @edge at (5, 1) attributes {layer = "fc"} {
    wavelet.route color 2 from [west] to [east]
  }
  // CHECK: wavelet.pe_group @lone at <4, 0, 1, 1> {
  wavelet.pe_group @lone at #weft.rect<4, 0, 1, 1> {
    wavelet.route color 3 from [south] to [ramp]
  }
}
