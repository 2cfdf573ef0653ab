// --weft-frustum-tile records frustum groups and tiles (docs/frustum.md);
// nothing reads them yet. The worked example: two 3 x 3 stride-1 pad-1
// convolutions 16 -> 32 -> 32 on 33 x 33 in fp16 on 48 KiB PEs (the task
// table reserved): the largest tile is 11 x 11 at the top (15 x 15 at the
// input). A smaller memory forces a smaller tile; on 2 x 2 PEs a tile holds
// a quarter of the weights and half of each level's tile.
// RUN: weft-opt %s --split-input-file '--weft-frustum-tile=element-bytes=2 code-instructions=0' | FileCheck %s
// RUN: weft-opt %s --split-input-file '--weft-frustum-tile=element-bytes=2 code-instructions=2000' | FileCheck %s --check-prefix=CODE
// RUN: weft-opt %s --split-input-file '--weft-frustum-tile=element-bytes=2 side=2' | FileCheck %s --check-prefix=SIDE

// CHECK-LABEL: fabric.program @worked
// CHECK: fabric.kernel @c1 {{.*}} attributes {frustum = {group = 0 : i64, level = 0 : i64, side = 1 : i64, tile = array<i64: 11, 11>}}
// CHECK: fabric.kernel @c2 {{.*}} attributes {frustum = {group = 0 : i64, level = 1 : i64, side = 1 : i64, tile = array<i64: 11, 11>}}
// CODE-LABEL: fabric.program @worked
// CODE: fabric.kernel @c1 {{.*}} tile = array<i64: 8, 8>
// SIDE-LABEL: fabric.program @worked
// SIDE: fabric.kernel @c1 {{.*}} side = 2 : i64, tile = array<i64: 24, 24>
fabric.program @worked attributes {target = #weft.target<8x8, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x16x33x33xf32> {pixels = 1089 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x32x33x33xf32> {pixels = 1089 : i64}
  fabric.kernel @c1 : (tensor<1x16x33x33xf32>) -> tensor<1x32x33x33xf32> scheme #fabric.conv<in_channels = 16, out_channels = 32, in_height = 33, in_width = 33, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<32x16x3x3xf32>> {
  ^bb0(%a: tensor<1x16x33x33xf32>):
    %e = tensor.empty() : tensor<1x32x33x33xf32>
    fabric.yield %e : tensor<1x32x33x33xf32>
  }
  fabric.kernel @c2 : (tensor<1x32x33x33xf32>) -> tensor<1x32x33x33xf32> scheme #fabric.conv<in_channels = 32, out_channels = 32, in_height = 33, in_width = 33, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<32x32x3x3xf32>> {
  ^bb0(%a: tensor<1x32x33x33xf32>):
    fabric.yield %a : tensor<1x32x33x33xf32>
  }
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 17424> {pixels = 1089 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 34848> {pixels = 1089 : i64}
  fabric.stream @c2_to_y @c2[0] -> @y[0] : !fabric.wavelets<f32, 34848> {pixels = 1089 : i64}
}

// -----

// c1's map is also a host output: it must leave the fabric whole, so c1 and
// c2 form no chain and nothing is recorded.
// CHECK-LABEL: fabric.program @fork
// CHECK-NOT: frustum
fabric.program @fork attributes {target = #weft.target<8x8, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4x8x8xf32> {pixels = 64 : i64}
  fabric.io @h output east rows 0 to 1 : tensor<1x4x8x8xf32> {pixels = 64 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x4x8x8xf32> {pixels = 64 : i64}
  fabric.kernel @c1 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> scheme #fabric.conv<in_channels = 4, out_channels = 4, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<4x4x3x3xf32>> {
  ^bb0(%a: tensor<1x4x8x8xf32>):
    fabric.yield %a : tensor<1x4x8x8xf32>
  }
  fabric.kernel @c2 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> scheme #fabric.conv<in_channels = 4, out_channels = 4, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<4x4x3x3xf32>> {
  ^bb0(%a: tensor<1x4x8x8xf32>):
    fabric.yield %a : tensor<1x4x8x8xf32>
  }
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 256> {pixels = 64 : i64}
  fabric.stream @c1_fork @c1[0] -> @c2[0], @h[0] : !fabric.wavelets<f32, 256> {pixels = 64 : i64}
  fabric.stream @c2_to_y @c2[0] -> @y[0] : !fabric.wavelets<f32, 256> {pixels = 64 : i64}
}
