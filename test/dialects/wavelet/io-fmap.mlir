// RUN: weft-opt %s --verify-roundtrip | FileCheck %s
// RUN: weft-opt %s --mlir-print-op-generic | weft-opt | FileCheck %s

// Feature-map host streams: `fmap` marks a [1, C, spatial...] tensor that the
// host streams pixel-major, whole channels per row (docs/architecture.md
// §5.2). The rows must divide the channels; [1, C] (one pixel) is legal.

// CHECK-LABEL: wavelet.program @fmaps
wavelet.program @fmaps attributes {target = #weft.target<4x4>} {
  // CHECK: wavelet.io @x input west rows 0 to 2 color 1 "dense32" fmap : tensor<1x8x5x5xf32>
  wavelet.io @x input west rows 0 to 2 color 1 "dense32" fmap : tensor<1x8x5x5xf32>
  // CHECK: wavelet.io @c input west rows 1 to 4 color 2 "dense16x2" fmap : tensor<1x6xf16>
  wavelet.io @c input west rows 1 to 4 color 2 "dense16x2" fmap : tensor<1x6xf16>
  // CHECK: wavelet.io @v output east rows 0 to 4 color 3 "sparse16" fmap : tensor<1x4x2x2x3xi16>
  wavelet.io @v output east rows 0 to 4 color 3 "sparse16" fmap : tensor<1x4x2x2x3xi16>
  // Without the keyword the stream is row-major, as before.
  // CHECK: wavelet.io @y output east rows 0 to 3 color 4 "dense32" : tensor<1x8x5x5xf32>
  wavelet.io @y output east rows 0 to 3 color 4 "dense32" : tensor<1x8x5x5xf32>
}
