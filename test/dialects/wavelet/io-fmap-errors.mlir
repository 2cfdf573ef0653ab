// RUN: weft-opt %s --split-input-file --verify-diagnostics

// The wavelet.io verifier's feature-map checks (docs/architecture.md §5.2).

wavelet.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{feature map 'tensor<64xf32>' needs shape [1, C, spatial...] (rank >= 2)}}
  wavelet.io @x input west rows 0 to 1 color 1 "dense32" fmap : tensor<64xf32>
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{feature map 'tensor<2x4x3xf32>' has dimension 0 of size 2; the dimensions before the channels (dimension 1) must be 1}}
  wavelet.io @x input west rows 0 to 2 color 1 "dense32" fmap : tensor<2x4x3xf32>
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{feature map 'tensor<1x6x5x5xf32>' has 6 channels on 4 rows; the rows must divide the channels}}
  wavelet.io @y output east rows 0 to 4 color 2 "dense32" fmap : tensor<1x6x5x5xf32>
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{feature map 'tensor<1x3xf16>' has 3 channels on 2 rows; the rows must divide the channels}}
  wavelet.io @c input west rows 2 to 4 color 1 "dense16x2" fmap : tensor<1x3xf16>
}
