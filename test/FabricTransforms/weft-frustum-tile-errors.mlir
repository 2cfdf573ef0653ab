// --weft-frustum-tile: a chain in which no group fits gets a remark with the
// bytes a 1 x 1 tile needs; bad options are an error.
// RUN: weft-opt %s --split-input-file --verify-diagnostics --weft-frustum-tile
// RUN: not weft-opt %s --split-input-file '--weft-frustum-tile=element-bytes=3' 2>&1 | FileCheck %s --check-prefix=OPT

// RUN: not weft-opt %s --split-input-file '--weft-frustum-tile=precision=fp16' 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not weft-opt %s --split-input-file '--weft-frustum-tile=pace=fastest' 2>&1 | FileCheck %s --check-prefix=PACE

// PRECISION: error: --weft-frustum-tile: precision must be fp32 or mixed, not 'fp16'
// PACE: error: --weft-frustum-tile: pace must be network or group, not 'fastest'
// OPT: error: --weft-frustum-tile needs side >= 1, element-bytes 2 or 4 and code-instructions >= 0 (got side = 1, element-bytes = 3, code-instructions = 512)

// Two 256 -> 256 3 x 3 convolutions in fp32: 4.7 MB of weights on one PE.
fabric.program @too_big attributes {target = #weft.target<8x8, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x256x8x8xf32> {pixels = 64 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x256x8x8xf32> {pixels = 64 : i64}
  // expected-remark @below {{starts a chain of 2 layers with no frustum group: no tile of the group fits: a 1 x 1 tile needs 4755456 bytes per PE on 1 x 1 PEs (4720640 of weights, 34816 of tile buffers, 0 of the skip), but only 45824 are available (49152 of memory minus 3328 of task table and code)}}
  fabric.kernel @c1 : (tensor<1x256x8x8xf32>) -> tensor<1x256x8x8xf32> scheme #fabric.conv<in_channels = 256, out_channels = 256, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<256x256x3x3xf32>> {
  ^bb0(%a: tensor<1x256x8x8xf32>):
    fabric.yield %a : tensor<1x256x8x8xf32>
  }
  fabric.kernel @c2 : (tensor<1x256x8x8xf32>) -> tensor<1x256x8x8xf32> scheme #fabric.conv<in_channels = 256, out_channels = 256, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<256x256x3x3xf32>> {
  ^bb0(%a: tensor<1x256x8x8xf32>):
    fabric.yield %a : tensor<1x256x8x8xf32>
  }
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 16384> {pixels = 64 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 16384> {pixels = 64 : i64}
  fabric.stream @c2_to_y @c2[0] -> @y[0] : !fabric.wavelets<f32, 16384> {pixels = 64 : i64}
}

// -----

// The network per layer does not fit one PE (two kernels need two
// columns): the groups are weighed against their own layers, and a remark
// says why.
// expected-remark @below {{frustum groups are weighed against their own layers: the network per layer does not fit the fabric}}
fabric.program @one_pe attributes {target = #weft.target<1x1, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x2x4x4xf32> {pixels = 16 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x2x4x4xf32> {pixels = 16 : i64}
  fabric.kernel @c1 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 4, in_width = 4, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<1.0> : tensor<2x2x3x3xf32>> {
  ^bb0(%a: tensor<1x2x4x4xf32>):
    fabric.yield %a : tensor<1x2x4x4xf32>
  }
  fabric.kernel @c2 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 4, in_width = 4, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<2x2x3x3xf32>> {
  ^bb0(%a: tensor<1x2x4x4xf32>):
    fabric.yield %a : tensor<1x2x4x4xf32>
  }
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
  fabric.stream @c2_to_y @c2[0] -> @y[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
}
