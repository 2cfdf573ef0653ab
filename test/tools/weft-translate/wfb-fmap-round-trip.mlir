// RUN: weft-translate --wavelet-to-wfb %s -o %t.wfb
// RUN: weft-translate --wfb-to-wavelet %t.wfb -o %t.mlir
// RUN: weft-translate --wavelet-to-wfb %t.mlir -o %t.2.wfb
// RUN: cmp %t.wfb %t.2.wfb
// RUN: FileCheck %s < %t.mlir

// The feature-map flag of wavelet.io is the order byte of the .wfb io entry
// (docs/binary-format.md §4.6) and comes back from the disassembly; plain
// streams stay row-major.

// CHECK-LABEL: wavelet.program @fmap
wavelet.program @fmap attributes {target = #weft.target<2x2>} {
  // CHECK: wavelet.io @x input west rows 0 to 2 color 1 "dense32" fmap : tensor<1x4x2x3xf32>
  wavelet.io @x input west rows 0 to 2 color 1 "dense32" fmap : tensor<1x4x2x3xf32>
  // CHECK: wavelet.io @y output east rows 0 to 2 color 1 "dense32" : tensor<1x4x2x3xf32>
  wavelet.io @y output east rows 0 to 2 color 1 "dense32" : tensor<1x4x2x3xf32>
  // CHECK: wavelet.io @z output east rows 0 to 1 color 2 "dense16x2" fmap : tensor<1x2xf16>
  wavelet.io @z output east rows 0 to 1 color 2 "dense16x2" fmap : tensor<1x2xf16>
  wavelet.pe_group @rows at #weft.rect<0, 0, 2, 2> {
    wavelet.route color 1 from [west] to [east]
  }
}
