// A grouped convolution (#fabric.conv with groups > 1) lowers to one column
// of PEs, each running the line-buffer program of docs/execution-model.md
// ("Depthwise convolution"): its groups' feature-map chunk in from the west,
// a ring of input rows, one of two output buffers set to the bias (or 0),
// one 4-D fmac per kernel row inside the input and input channel of a
// group, the ReLU in place, the row out to the east on microthread 3.
// RUN: weft-opt %s --split-input-file --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet | FileCheck %s

// Depthwise 3x3, pad 1, bias and ReLU on 2 channels of 4x4, one channel per
// row: weights and bias per PE, the 4-D vectors over (groups, multiplier,
// output columns, window columns) = (1, 1, 4, 3).
// CHECK-LABEL: wavelet.program @depthwise
// CHECK: wavelet.io @x input west rows 0 to 2 color {{[0-9]+}} "dense32" fmap : tensor<1x2x4x4xf32>
// CHECK: wavelet.pe_group @dw_r0_1 at <0, 0, 1, 2> attributes {layer = "dw"}
// CHECK: wavelet.segment @weights at [[W:[0-9]+]] per_pe = dense_resource<dw_w_0> : tensor<2x1x9xf32>
// CHECK: wavelet.segment @bias_data at [[B:[0-9]+]] per_pe = dense_resource<dw_b_1> : tensor<2x1x1xf32>
// CHECK: wavelet.dsd @recv0 at {{[0-9]+}} mem1d {base = [[RING:[0-9]+]] : i64, length = 4 : i64}
// CHECK: wavelet.dsd @win0_0 at {{[0-9]+}} mem4d {base = {{[0-9]+}} : i64, xdsr = 2 : i64}
// CHECK: wavelet.dsd @w0_0 at {{[0-9]+}} mem4d {base = [[W]] : i64, xdsr = 1 : i64}
// CHECK: wavelet.dsd @w2_0 at {{[0-9]+}} mem4d {base = {{[0-9]+}} : i64, xdsr = 1 : i64}
// CHECK: wavelet.dsd @acc0 at {{[0-9]+}} mem4d {base = [[BUF:[0-9]+]] : i64, xdsr = 0 : i64}
// CHECK: wavelet.dsd @buf0 at {{[0-9]+}} mem1d {base = [[BUF]] : i64, length = 4 : i64}
// CHECK: wavelet.dsd @send0 at {{[0-9]+}} fabout {color = {{[0-9]+}} : i64, length = 4 : i64, utid = 3 : i64}
// CHECK: wavelet.dsd @in at {{[0-9]+}} fabin {color = {{[0-9]+}} : i64, length = 4 : i64}
// CHECK: wavelet.dsd @bias at {{[0-9]+}} mem4d {base = [[B]] : i64, xdsr = 3 : i64}
// CHECK: wavelet.xdsd @x_acc at {{[0-9]+}} {len = array<i64: 1, 1, 4, 3>, stride_sel = array<i64: 0, 6, 1, 7>}
// CHECK: wavelet.xdsd @x_w at {{[0-9]+}} {len = array<i64: 1, 1, 4, 3>, stride_sel = array<i64: 0, 6, 7, 1>}
// CHECK: wavelet.xdsd @x_win at {{[0-9]+}} {len = array<i64: 1, 1, 4, 3>, stride_sel = array<i64: 2, 7, 3, 4>}
// CHECK: wavelet.xdsd @x_bias at {{[0-9]+}} {len = array<i64: 1, 4, 1, 1>, stride_sel = array<i64: 6, 7, 7, 7>}
// CHECK: wavelet.task @main local 32 active
// CHECK: wavelet.label "sample"
// Rows 0 and 1 in, then output row 0 from kernel rows 1 and 2.
// CHECK: wavelet.dsr load ddsr 2, @recv0
// CHECK-NEXT: wavelet.inst mov32 ddsr 2, s0dsr 2
// CHECK-NEXT: wavelet.dsr load ddsr 2, @recv1
// CHECK-NEXT: wavelet.inst mov32 ddsr 2, s0dsr 2
// CHECK-NEXT: wavelet.inst mov32 ddsr 3, s0dsr 3
// CHECK-NEXT: wavelet.dsr load s0dsr 0, @w1_0
// CHECK-NEXT: wavelet.dsr load s1dsr 0, @win0_0
// CHECK-NEXT: wavelet.inst fmac dsr 0, s1dsr 0
// CHECK-NEXT: wavelet.dsr load s0dsr 0, @w2_0
// CHECK-NEXT: wavelet.dsr load s1dsr 0, @win1_0
// CHECK-NEXT: wavelet.inst fmac dsr 0, s1dsr 0
// CHECK-NEXT: wavelet.inst fmax dsr 5, imm zero
// CHECK-NEXT: wavelet.inst mov32 ddsr 7, s0dsr 7
// Output row 1 into the other buffer.
// CHECK: wavelet.inst mov32 ddsr 4, s0dsr 4
// CHECK: wavelet.inst fmac dsr 1, s1dsr 1
// CHECK: wavelet.inst mov32 ddsr 8, s0dsr 8
// CHECK: wavelet.jump "sample"

fabric.program @depthwise attributes {target = #weft.target<4x3, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x  input  west rows 0 to 2 : tensor<1x2x4x4xf32> {pixels = 16 : i64}
  fabric.io @y  output  east rows 0 to 2 : tensor<1x2x4x4xf32> {pixels = 16 : i64}
  fabric.kernel @dw : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 4, in_width = 4, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], groups = 2, relu = true, weights = dense<1.0> : tensor<2x1x3x3xf32>, bias = dense<[0.5, -0.5]> : tensor<2xf32>> at <0, 0, 1, 2> attributes {precision = #fabric<precision fp32>} {
  ^bb0(%arg0: tensor<1x2x4x4xf32>):
    fabric.yield %arg0 : tensor<1x2x4x4xf32>
  }
  fabric.stream @x_to_dw @x[0] -> @dw[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
  fabric.stream @dw_to_y @dw[0] -> @y[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
}

// -----

// A grouped 1x1 convolution of 4 -> 2 channels in 2 groups (2 inputs, 1
// output each), both groups on one PE, no bias: per output row a reset to
// 0 and one fmac per input channel of a group, reading the windows at
// offsets 0 and 1 (the stride over the groups is 2).
// CHECK-LABEL: wavelet.program @grouped
// CHECK: wavelet.pe @g_r0 at (0, 0)
// CHECK: wavelet.segment @weights at {{[0-9]+}} per_pe = dense_resource<g_w_0> : tensor<1x1x4xf32>
// CHECK-NOT: bias_data
// CHECK: wavelet.dsd @win0_0 at {{[0-9]+}} mem4d {base = [[R:[0-9]+]] : i64, xdsr = 2 : i64}
// CHECK: wavelet.dsd @win0_1 at {{[0-9]+}} mem4d {base = {{[0-9]+}} : i64, xdsr = 2 : i64}
// CHECK: wavelet.xdsd @x_acc at {{[0-9]+}} {len = array<i64: 2, 1, 3, 1>, stride_sel = array<i64: 0, 6, 1, 7>}
// CHECK: wavelet.segment @stride0 at {{[0-9]+}} = dense<1> : tensor<1xi16>
// CHECK: wavelet.segment @stride1 at {{[0-9]+}} = dense<2> : tensor<1xi16>
// CHECK: wavelet.segment @stride2 at {{[0-9]+}} = dense<2> : tensor<1xi16>
// CHECK: wavelet.segment @stride3 at {{[0-9]+}} = dense<4> : tensor<1xi16>
// CHECK: wavelet.label "sample"
// CHECK: wavelet.inst mov32 ddsr 3, imm zero
// CHECK-NEXT: wavelet.dsr load s0dsr 0, @w0_0
// CHECK-NEXT: wavelet.dsr load s1dsr 0, @win0_0
// CHECK-NEXT: wavelet.inst fmac dsr 0, s1dsr 0
// CHECK-NEXT: wavelet.dsr load s0dsr 0, @w0_1
// CHECK-NEXT: wavelet.dsr load s1dsr 0, @win0_1
// CHECK-NEXT: wavelet.inst fmac dsr 0, s1dsr 0
// CHECK-NEXT: wavelet.inst mov32 ddsr 7, s0dsr 7

fabric.program @grouped attributes {target = #weft.target<4x3, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x  input  west rows 0 to 1 : tensor<1x4x1x3xf32> {pixels = 3 : i64}
  fabric.io @y  output  east rows 0 to 1 : tensor<1x2x1x3xf32> {pixels = 3 : i64}
  fabric.kernel @g : (tensor<1x4x1x3xf32>) -> tensor<1x2x1x3xf32> scheme #fabric.conv<in_channels = 4, out_channels = 2, in_height = 1, in_width = 3, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], groups = 2, weights = dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>> at <0, 0, 1, 1> attributes {precision = #fabric<precision fp32>} {
  ^bb0(%arg0: tensor<1x4x1x3xf32>):
    %e = tensor.empty() : tensor<1x2x1x3xf32>
    fabric.yield %e : tensor<1x2x1x3xf32>
  }
  fabric.stream @x_to_g @x[0] -> @g[0] : !fabric.wavelets<f32, 12> {pixels = 3 : i64}
  fabric.stream @g_to_y @g[0] -> @y[0] : !fabric.wavelets<f32, 6> {pixels = 3 : i64}
}

// -----

// ReLU6 (relu_max): after the fmax against 0, an fmin of the row against a
// stride-0 vector of one word holding the bound.
// CHECK-LABEL: wavelet.program @relu6
// CHECK: wavelet.segment @clip_data at [[C:[0-9]+]] = dense<6.000000e+00> : tensor<1xf32>
// CHECK: wavelet.dsd @clip at {{[0-9]+}} mem1d {base = [[C]] : i64, length = 2 : i64, stride = 0 : i64}
// CHECK: wavelet.dsr load s1dsr 9, @clip
// CHECK: wavelet.label "sample"
// CHECK: wavelet.inst fmax dsr 5, imm zero
// CHECK-NEXT: wavelet.inst fmin dsr 9, s1dsr 9
// CHECK-NEXT: wavelet.inst mov32 ddsr 7, s0dsr 7

fabric.program @relu6 attributes {target = #weft.target<4x3, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x  input  west rows 0 to 1 : tensor<1x2x1x1xf32> {pixels = 1 : i64}
  fabric.io @y  output  east rows 0 to 1 : tensor<1x2x1x1xf32> {pixels = 1 : i64}
  fabric.kernel @dw : (tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32> scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 1, in_width = 1, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], groups = 2, relu = true, relu_max = 6.0 : f32, weights = dense<1.0> : tensor<2x1x1x1xf32>> at <0, 0, 1, 1> attributes {precision = #fabric<precision fp32>} {
  ^bb0(%arg0: tensor<1x2x1x1xf32>):
    fabric.yield %arg0 : tensor<1x2x1x1xf32>
  }
  fabric.stream @x_to_dw @x[0] -> @dw[0] : !fabric.wavelets<f32, 2> {pixels = 1 : i64}
  fabric.stream @dw_to_y @dw[0] -> @y[0] : !fabric.wavelets<f32, 2> {pixels = 1 : i64}
}

// -----

// In mixed precision (docs/execution-model.md, "Depthwise convolution",
// "Mixed precision") the weights are an f16 segment, the line buffer holds
// fp16 (a row received by ff2h; the windows of the 4 -> 2 grouped
// convolution's second input channel one 16-bit word after the first's)
// and the multiply-accumulates are fmachs; the bias, buffers and sends stay
// fp32.
// CHECK-LABEL: wavelet.program @mixed
// CHECK: wavelet.segment @weights at {{[0-9]+}} per_pe = dense_resource<m_w_0> : tensor<1x1x4xf16>
// CHECK: wavelet.dsd @win0_0 at {{[0-9]+}} mem4d {base = [[#MIXEDWIN:]] : i64, xdsr = 2 : i64}
// CHECK: wavelet.dsd @win0_1 at {{[0-9]+}} mem4d {base = [[#MIXEDWIN+1]] : i64, xdsr = 2 : i64}
// CHECK: wavelet.task @main local 32 active
// CHECK: wavelet.inst ff2h ddsr 2, s0dsr 2
// CHECK: wavelet.inst fmachs dsr 0, s1dsr 0
// CHECK: wavelet.inst fmachs dsr 0, s1dsr 0
// CHECK: wavelet.inst mov32 ddsr 7, s0dsr 7
// CHECK-NOT: fmac dsr
// CHECK: wavelet.jump "sample"
fabric.program @mixed attributes {target = #weft.target<4x3, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x  input  west rows 0 to 1 : tensor<1x4x3x3xf32> {pixels = 9 : i64}
  fabric.io @y  output  east rows 0 to 1 : tensor<1x2x3x3xf32> {pixels = 9 : i64}
  fabric.kernel @m : (tensor<1x4x3x3xf32>) -> tensor<1x2x3x3xf32> scheme #fabric.conv<in_channels = 4, out_channels = 2, in_height = 3, in_width = 3, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], groups = 2, weights = dense<0.5> : tensor<2x2x1x1xf32>> at <0, 0, 1, 1> attributes {precision = #fabric<precision mixed>} {
  ^bb0(%arg0: tensor<1x4x3x3xf32>):
    %0 = tensor.empty() : tensor<1x2x3x3xf32>
    fabric.yield %0 : tensor<1x2x3x3xf32>
  }
  fabric.stream @x_to_m @x[0] -> @m[0] : !fabric.wavelets<f32, 36> {pixels = 9 : i64}
  fabric.stream @m_to_y @m[0] -> @y[0] : !fabric.wavelets<f32, 18> {pixels = 9 : i64}
}
