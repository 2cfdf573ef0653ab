// A smeared convolution's per-PE program (docs/execution-model.md,
// "Convolution"), fp32 and mixed precision. Mixed: the weights are an f16
// segment (one 16-bit word each, so a kernel row's weights lie kw x Lm
// words apart), the line buffer holds fp16 (a padded row of 6 pixels is 6
// words) and a received row is converted on the way in (`ff2h`), the
// multiply-accumulate is an `fmachs` (fp16 x fp16, fp32 accumulator at an
// even word); the stride registers count elements, so they are the same.
// RUN: weft-opt %s --split-input-file --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet | FileCheck %s

// 2 -> 2 channels, 3x3, pad 1, on 4x4, ReLU, over 2 columns x 1 row.
// CHECK-LABEL: wavelet.program @conv_fp32
// CHECK: wavelet.pe @c_c0_r0 at (0, 0)
// CHECK: wavelet.segment @weights at 1004 per_pe = dense_resource<{{.*}}> : tensor<1x1x18xf32>
// CHECK: wavelet.dsd @recv0 at {{[0-9]+}} mem1d {base = 1042 : i64, length = 4 : i64}
// CHECK: wavelet.dsd @win0 at {{[0-9]+}} mem4d {base = 1040 : i64, xdsr = 2 : i64}
// CHECK: wavelet.dsd @recv1 at {{[0-9]+}} mem1d {base = 1054 : i64, length = 4 : i64}
// CHECK: wavelet.dsd @w0 at {{[0-9]+}} mem4d {base = 1004 : i64, xdsr = 1 : i64}
// CHECK: wavelet.dsd @w1 at {{[0-9]+}} mem4d {base = 1016 : i64, xdsr = 1 : i64}
// CHECK: wavelet.dsd @acc4 at {{[0-9]+}} mem4d {base = 1076 : i64, xdsr = 0 : i64}
// CHECK: wavelet.segment @stride0 at {{[0-9]+}} = dense<2> : tensor<1xi16>
// CHECK: wavelet.segment @stride1 at {{[0-9]+}} = dense<18> : tensor<1xi16>
// CHECK: wavelet.label "sample"
// CHECK: wavelet.dsr load ddsr 1, @recv0
// CHECK-NEXT: wavelet.inst mov32 ddsr 1, s0dsr 1
// CHECK-NEXT: wavelet.dsr load s0dsr 0, @w1
// CHECK-NEXT: wavelet.dsr load s1dsr 0, @win0
// CHECK-NEXT: wavelet.inst fmac dsr 0, s1dsr 0
// CHECK-NOT: ff2h
// CHECK-NOT: fmachs
// CHECK: wavelet.pe @c_c1_r0 at (1, 0)
fabric.program @conv_fp32 attributes {target = #weft.target<4x4, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x  input  west rows 0 to 2 : tensor<1x2x4x4xf32> {pixels = 16 : i64}
  fabric.io @y  output  east rows 0 to 1 : tensor<1x2x4x4xf32> {pixels = 16 : i64}
  fabric.kernel @c : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 4, in_width = 4, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<[[[[0.5, 1.0, 1.5], [2.0, 2.5, 3.0], [3.5, 4.0, 4.5]], [[-0.5, -1.0, -1.5], [-2.0, -2.5, -3.0], [-3.5, -4.0, -4.5]]], [[[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]], [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]]]> : tensor<2x2x3x3xf32>, relu = true> at <0, 0, 2, 1> attributes {precision = #fabric<precision fp32>, smear = 2 : i64} {
  ^bb0(%arg0: tensor<1x2x4x4xf32>):
    fabric.yield %arg0 : tensor<1x2x4x4xf32>
  }
  fabric.stream @x_to_c @x[0] -> @c[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
  fabric.stream @c_to_y @c[0] -> @y[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
}

// -----

// The same convolution in mixed precision.
// CHECK-LABEL: wavelet.program @conv_mixed
// CHECK: wavelet.pe @c_c0_r0 at (0, 0)
// CHECK: wavelet.segment @weights at 1004 per_pe = dense_resource<{{.*}}> : tensor<1x1x18xf16>
// CHECK: wavelet.dsd @recv0 at {{[0-9]+}} mem1d {base = 1023 : i64, length = 4 : i64}
// CHECK: wavelet.dsd @win0 at {{[0-9]+}} mem4d {base = 1022 : i64, xdsr = 2 : i64}
// CHECK: wavelet.dsd @recv1 at {{[0-9]+}} mem1d {base = 1029 : i64, length = 4 : i64}
// CHECK: wavelet.dsd @w0 at {{[0-9]+}} mem4d {base = 1004 : i64, xdsr = 1 : i64}
// CHECK: wavelet.dsd @w1 at {{[0-9]+}} mem4d {base = 1010 : i64, xdsr = 1 : i64}
// CHECK: wavelet.dsd @acc4 at {{[0-9]+}} mem4d {base = 1040 : i64, xdsr = 0 : i64}
// CHECK: wavelet.segment @stride0 at {{[0-9]+}} = dense<2> : tensor<1xi16>
// CHECK: wavelet.segment @stride1 at {{[0-9]+}} = dense<18> : tensor<1xi16>
// CHECK: wavelet.label "sample"
// CHECK: wavelet.dsr load ddsr 1, @recv0
// CHECK-NEXT: wavelet.inst ff2h ddsr 1, s0dsr 1
// CHECK-NEXT: wavelet.dsr load s0dsr 0, @w1
// CHECK-NEXT: wavelet.dsr load s1dsr 0, @win0
// CHECK-NEXT: wavelet.inst fmachs dsr 0, s1dsr 0
// The partial sums, the output buffers and the send stay fp32.
// CHECK: wavelet.inst mov32 ddsr 2, s0dsr 2
// CHECK-NOT: fmac dsr
// CHECK: wavelet.pe @c_c1_r0 at (1, 0)
// CHECK: wavelet.segment @weights at 1004 per_pe = dense_resource<{{.*}}> : tensor<1x1x18xf16>
// CHECK: wavelet.inst fadd dsr 4, s1dsr 4
// CHECK: wavelet.inst fmax dsr 6, imm zero
fabric.program @conv_mixed attributes {target = #weft.target<4x4, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x  input  west rows 0 to 2 : tensor<1x2x4x4xf32> {pixels = 16 : i64}
  fabric.io @y  output  east rows 0 to 1 : tensor<1x2x4x4xf32> {pixels = 16 : i64}
  fabric.kernel @c : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 4, in_width = 4, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<[[[[0.5, 1.0, 1.5], [2.0, 2.5, 3.0], [3.5, 4.0, 4.5]], [[-0.5, -1.0, -1.5], [-2.0, -2.5, -3.0], [-3.5, -4.0, -4.5]]], [[[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]], [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]]]> : tensor<2x2x3x3xf32>, relu = true> at <0, 0, 2, 1> attributes {precision = #fabric<precision mixed>, smear = 2 : i64} {
  ^bb0(%arg0: tensor<1x2x4x4xf32>):
    fabric.yield %arg0 : tensor<1x2x4x4xf32>
  }
  fabric.stream @x_to_c @x[0] -> @c[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
  fabric.stream @c_to_y @c[0] -> @y[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
}
