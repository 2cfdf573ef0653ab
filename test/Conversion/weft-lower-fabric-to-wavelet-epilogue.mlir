// A convolution's fused activation (#fabric.conv `epilogue`) lowers to the
// expression's vector steps on the output buffer, just before the row's
// send (docs/execution-model.md, "Fused activations"): on a smeared
// convolution's last column only, on every PE of a depthwise column; each
// step loads into DSR 11 the records it does not already hold, the
// epilogue's buffers after the ReLU6 bound's place, its first constants in
// GPR pairs.
// RUN: weft-opt %s --split-input-file --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet | FileCheck %s

// A 1x1 convolution of 2 -> 2 channels on 3x3 over 2 columns, Sigmoid:
// fneg, fexp, fadd 1, frcp in output buffer 0 (the buffer is x and the
// result; one buffer of a row, 3 elements, for the rest).
// CHECK-LABEL: wavelet.program @conv_sigmoid
// CHECK: wavelet.pe @c_c0_r0 at (0, 0)
// CHECK-NOT: epi_v
// CHECK: wavelet.pe @c_c1_r0 at (1, 0)
// CHECK: wavelet.dsd @out_buf0 at {{[0-9]+}} mem1d {base = [[OUT:[0-9]+]] : i64, length = 3 : i64}
// CHECK: wavelet.dsd @out_buf1 at {{[0-9]+}} mem1d {base = {{[0-9]+}} : i64, length = 3 : i64}
// CHECK: wavelet.dsd @epi_v2 at {{[0-9]+}} mem1d {base = [[BUF:[0-9]+]] : i64, length = 3 : i64}
// CHECK: wavelet.label "sample"
// CHECK: wavelet.inst fadd dsr 4, s1dsr 4
// CHECK-NEXT: wavelet.dsr load ddsr 11, @epi_v2
// CHECK-NEXT: wavelet.dsr load s0dsr 11, @out_buf0
// CHECK-NEXT: wavelet.inst fneg ddsr 11, s0dsr 11
// CHECK-NEXT: wavelet.dsr load s0dsr 11, @epi_v2
// CHECK-NEXT: wavelet.inst fexp ddsr 11, s0dsr 11
// CHECK-NEXT: wavelet.inst fadd dsr 11, imm one
// CHECK-NEXT: wavelet.dsr load ddsr 11, @out_buf0
// CHECK-NEXT: wavelet.inst frcp ddsr 11, s0dsr 11
// CHECK-NEXT: wavelet.inst mov32 ddsr 6, s0dsr 6
// The next row in output buffer 1.
// CHECK: wavelet.dsr load s0dsr 11, @out_buf1
// CHECK-NEXT: wavelet.inst fneg ddsr 11, s0dsr 11
// CHECK: wavelet.inst frcp ddsr 11, s0dsr 11
// CHECK-NEXT: wavelet.inst mov32 ddsr 7, s0dsr 7
// CHECK: wavelet.jump "sample"
fabric.program @conv_sigmoid attributes {target = #weft.target<4x4, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x  input  west rows 0 to 2 : tensor<1x2x3x3xf32> {pixels = 9 : i64}
  fabric.io @y  output  east rows 0 to 2 : tensor<1x2x3x3xf32> {pixels = 9 : i64}
  fabric.kernel @c : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 3, in_width = 3, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], weights = dense<1.0> : tensor<2x2x1x1xf32>, epilogue = [#fabric.node<kind = unary, a = 0, fn = "Neg">, #fabric.node<kind = unary, a = 1, fn = "Exp">, #fabric.node<kind = constant, value = 1.0 : f32>, #fabric.node<kind = add, a = 2, b = 3>, #fabric.node<kind = unary, a = 4, fn = "Reciprocal">]> at <0, 0, 2, 2> attributes {precision = #fabric<precision fp32>, smear = 2 : i64} {
  ^bb0(%arg0: tensor<1x2x3x3xf32>):
    fabric.yield %arg0 : tensor<1x2x3x3xf32>
  }
  fabric.stream @x_to_c @x[0] -> @c[0] : !fabric.wavelets<f32, 18> {pixels = 9 : i64}
  fabric.stream @c_to_y @c[0] -> @y[0] : !fabric.wavelets<f32, 18> {pixels = 9 : i64}
}

// -----

// Depthwise 3x3, pad 1, bias, HardSwish on 2 channels of 4x4: the constant
// 1/6 in GPR pair 10/11 (0.5, 1 and 0 are immediates); x copied to one
// buffer, the HardSigmoid in another, their product into the output buffer
// before the send.
// CHECK-LABEL: wavelet.program @dw_hardswish
// CHECK: wavelet.pe_group @dw_r0_1
// CHECK: wavelet.param gpr 10 =
// CHECK: wavelet.param gpr 11 =
// CHECK: wavelet.dsd @buf0 at {{[0-9]+}} mem1d {base = {{[0-9]+}} : i64, length = 4 : i64}
// CHECK: wavelet.dsd @epi_v2 at {{[0-9]+}} mem1d {base = {{[0-9]+}} : i64, length = 4 : i64}
// CHECK: wavelet.dsd @epi_v3 at {{[0-9]+}} mem1d {base = {{[0-9]+}} : i64, length = 4 : i64}
// CHECK: wavelet.label "sample"
// CHECK: wavelet.dsr load s1dsr 0, @win1_0
// CHECK-NEXT: wavelet.inst fmac dsr 0, s1dsr 0
// CHECK-NEXT: wavelet.dsr load ddsr 11, @epi_v2
// CHECK-NEXT: wavelet.dsr load s0dsr 11, @buf0
// CHECK-NEXT: wavelet.inst mov32 ddsr 11, s0dsr 11
// CHECK-NEXT: wavelet.dsr load ddsr 11, @epi_v3
// CHECK-NEXT: wavelet.dsr load s0dsr 11, @epi_v2
// CHECK-NEXT: wavelet.inst fmul dsr 11, gpr 10
// CHECK-NEXT: wavelet.dsr load s0dsr 11, @epi_v3
// CHECK-NEXT: wavelet.inst fadd dsr 11, imm half
// CHECK-NEXT: wavelet.inst fmin dsr 11, imm one
// CHECK-NEXT: wavelet.inst fmax dsr 11, imm zero
// CHECK-NEXT: wavelet.dsr load ddsr 11, @buf0
// CHECK-NEXT: wavelet.dsr load s0dsr 11, @epi_v2
// CHECK-NEXT: wavelet.dsr load s1dsr 11, @epi_v3
// CHECK-NEXT: wavelet.inst fmul dsr 11, s1dsr 11
// CHECK-NEXT: wavelet.inst mov32 ddsr 7, s0dsr 7
// CHECK: wavelet.jump "sample"
fabric.program @dw_hardswish attributes {target = #weft.target<4x3, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x  input  west rows 0 to 2 : tensor<1x2x4x4xf32> {pixels = 16 : i64}
  fabric.io @y  output  east rows 0 to 2 : tensor<1x2x4x4xf32> {pixels = 16 : i64}
  fabric.kernel @dw : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 4, in_width = 4, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], groups = 2, weights = dense<1.0> : tensor<2x1x3x3xf32>, bias = dense<[0.5, -0.5]> : tensor<2xf32>, epilogue = [#fabric.node<kind = constant, value = 0.166666672 : f32>, #fabric.node<kind = mul, a = 0, b = 1>, #fabric.node<kind = constant, value = 0.5 : f32>, #fabric.node<kind = add, a = 2, b = 3>, #fabric.node<kind = constant, value = 1.0 : f32>, #fabric.node<kind = min, a = 4, b = 5>, #fabric.node<kind = constant, value = 0.0 : f32>, #fabric.node<kind = max, a = 6, b = 7>, #fabric.node<kind = mul, a = 0, b = 8>]> at <0, 0, 1, 2> attributes {precision = #fabric<precision fp32>} {
  ^bb0(%arg0: tensor<1x2x4x4xf32>):
    fabric.yield %arg0 : tensor<1x2x4x4xf32>
  }
  fabric.stream @x_to_dw @x[0] -> @dw[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
  fabric.stream @dw_to_y @dw[0] -> @y[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
}
