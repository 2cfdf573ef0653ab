// RUN: weft-translate --wavelet-to-wfb %s --split-input-file --verify-diagnostics -o /dev/null

wavelet.program @p attributes {target = #weft.target<2x1>} {
  wavelet.pe_group @g at #weft.rect<0, 0, 2, 1> {
    // expected-error @below {{map affine_map<(d0, d1) -> (d0 floordiv 2)> is not linear in (x, y); the binary holds cx * x + cy * y + c0}}
    wavelet.param gpr 1 = affine_map<(x, y) -> (x floordiv 2)>
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<2x1>} {
  wavelet.pe_group @g at #weft.rect<0, 0, 2, 1> {
    // expected-error @below {{is not linear in (x, y)}}
    wavelet.param gpr 1 = affine_map<(x, y) -> (x + y mod 3)>
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<2x1>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{coefficient 4294967296 of affine_map<(d0, d1) -> (d0 * 4294967296)> does not fit 32 bits}}
    wavelet.param gpr 1 = affine_map<(x, y) -> (x * 4294967296)>
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<1x1>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{a control task cannot be blocked: block bits belong to task ids (colors), not control entries}}
    wavelet.task @c control 3 blocked {
      wavelet.inst nop term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<1x1>} {
  wavelet.pe @a at (0, 0) {
    // expected-error @below {{value must be dense or dense_resource elements to be emitted}}
    wavelet.segment @s at 1000 = sparse<[[0]], [1]> : tensor<4xi16>
  }
}

// -----

// Records beyond the 16 KiB reach of DSR loads cannot be addressed.
wavelet.program @p attributes {target = #weft.target<1x1, mem = 65536>} {
  wavelet.pe @a at (0, 0) {
    wavelet.segment @s at 20000 = dense<1> : tensor<1xi16>
    wavelet.task @t local 33 {
      // expected-error @below {{record @s at word 20000 is not 4-word aligned below word 8192, the reach of DSR loads and stores}}
      wavelet.dsr load stride 0, @s
      wavelet.inst nop term
    }
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<1x1>} {
  // expected-error @below {{'layer' must be a string}}
  wavelet.pe @a at (0, 0) attributes {layer = 3} {
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<1x1>, layers = ["a"]} {
  // expected-error @below {{layer "b" is not in the program's 'layers'}}
  wavelet.pe @a at (0, 0) attributes {layer = "b"} {
  }
}
