// --weft-frustum-fuse: a recorded group of convolutions becomes one kernel
// (docs/frustum.md, "The lowering"), the streams between its members go,
// and the partitioner places it in one band of one PE per tile column.
// RUN: weft-opt %s '--weft-frustum-tile=max-tile=4' '--weft-frustum-fuse=always=true' | FileCheck %s
// RUN: weft-opt %s '--weft-frustum-tile=max-tile=4' '--weft-frustum-fuse=always=true' --weft-partition-dense | FileCheck %s --check-prefix=PART
// Per layer is predicted faster on this fabric (the decision --weft-frustum-tile
// records): auto keeps the members.
// RUN: weft-opt %s '--weft-frustum-tile=max-tile=4' --weft-frustum-fuse --verify-diagnostics | FileCheck %s --check-prefix=AUTO

// CHECK-LABEL: fabric.program @chain
// CHECK: fabric.kernel @c1 : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x8xf32>
// CHECK-SAME: frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}level = 0 : i64, {{.*}}side = 1 : i64, tile = array<i64: 4, 4>}
// CHECK-SAME: frustum_chain = [#fabric.conv<in_channels = 4, out_channels = 8, {{.*}}>, #fabric.conv<in_channels = 8, out_channels = 8, {{.*}}>]
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: fabric.yield
// CHECK-NOT: fabric.kernel @c2
// CHECK-NOT: @c1_to_c2
// CHECK: fabric.stream @x_to_c1 @x[0] -> @c1[0]
// CHECK: fabric.stream @c2_to_y @c1[0] -> @y[0]

// PART: fabric.kernel @c1 {{.*}} at <0, 0, 2, 1>
// PART-SAME: tiles = 2

// AUTO: fabric.kernel @c1 : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x8xf32>
// AUTO-NOT: frustum
// AUTO: fabric.kernel @c2
// AUTO-NOT: frustum
fabric.program @chain attributes {target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4x8x8xf32> {pixels = 64 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x8x8x8xf32> {pixels = 64 : i64}
  // expected-remark @below {{starts frustum group 0, which runs per layer: its bands are predicted slower than the network per layer (11835 against 955 cycles per image at the fastest)}}
  fabric.kernel @c1 : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x8xf32> scheme #fabric.conv<in_channels = 4, out_channels = 8, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<0.5> : tensor<8x4x3x3xf32>> {
  ^bb0(%a: tensor<1x4x8x8xf32>):
    %pad = arith.constant 0.0 : f32
    %p = tensor.pad %a low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %pad : f32
    } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
    %w = arith.constant dense<0.5> : tensor<8x4x3x3xf32>
    %e = tensor.empty() : tensor<1x8x8x8xf32>
    %c = linalg.conv_2d_nchw_fchw ins(%p, %w : tensor<1x4x10x10xf32>, tensor<8x4x3x3xf32>) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
    fabric.yield %c : tensor<1x8x8x8xf32>
  }
  fabric.kernel @c2 : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<0.25> : tensor<8x8x3x3xf32>> {
  ^bb0(%a: tensor<1x8x8x8xf32>):
    %pad = arith.constant 0.0 : f32
    %p = tensor.pad %a low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %pad : f32
    } : tensor<1x8x8x8xf32> to tensor<1x8x10x10xf32>
    %w = arith.constant dense<0.25> : tensor<8x8x3x3xf32>
    %e = tensor.empty() : tensor<1x8x8x8xf32>
    %c = linalg.conv_2d_nchw_fchw ins(%p, %w : tensor<1x8x10x10xf32>, tensor<8x8x3x3xf32>) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
    fabric.yield %c : tensor<1x8x8x8xf32>
  }
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 256> {pixels = 64 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 512> {pixels = 64 : i64}
  fabric.stream @c2_to_y @c2[0] -> @y[0] : !fabric.wavelets<f32, 512> {pixels = 64 : i64}
}

// An identity residual group (a block and its add, recorded by
// --weft-frustum-tile) runs in bands like a chain whose top level adds the
// skip (docs/frustum.md, "Residual blocks in bands"): with `always` it is
// one kernel from the block's input to the add's output, the add's scheme
// last in its chain, and the fork of x keeps only its other reader. The
// decision keeps it per layer (auto), with the reason recorded.
// CHECK-LABEL: fabric.program @residual
// CHECK: fabric.kernel @c1 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
// CHECK-SAME: frustum_chain = [#fabric.conv<{{.*}}>, #fabric.conv<{{.*}}>, #fabric.join<op = add, relu = true>]
// CHECK-NOT: fabric.kernel
// CHECK: fabric.stream @x_fork @x[0] -> @c1[0] :
// CHECK: fabric.stream @add_to_y @c1[0] -> @y[0] :
// AUTO-LABEL: fabric.program @residual
// AUTO-NOT: frustum
// AUTO: fabric.stream @add_to_y
fabric.program @residual attributes {target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  // expected-remark @below {{starts frustum group 0, which runs per layer: its bands are predicted slower than the network per layer (13549 against 919 cycles per image at the fastest)}}
  fabric.kernel @c1 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<1.0> : tensor<8x8x3x3xf32>> {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.kernel @c2 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<8x8x3x3xf32>> {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.kernel @add : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.join<op = add, relu = true> {
  ^bb0(%a: tensor<1x8x6x6xf32>, %b: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.stream @x_fork @x[0] -> @c1[0], @add[1] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c2_to_add @c2[0] -> @add[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @add_to_y @add[0] -> @y[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
}

// A residual block with a projection (a 1 x 1 convolution of x into the
// add) is not lowered yet: it runs per layer, with or without `always`,
// and no member keeps the record.
// CHECK-LABEL: fabric.program @projected
// CHECK-NOT: frustum
// CHECK: fabric.stream @add_to_y
// AUTO-LABEL: fabric.program @projected
// AUTO-NOT: frustum
// AUTO: fabric.stream @add_to_y
fabric.program @projected attributes {target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4x6x6xf32> {pixels = 36 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  // expected-remark @below {{starts frustum group 0, which runs per layer: it is a residual block with a projection (@p), which is not lowered yet (identity blocks are)}}
  fabric.kernel @c1 : (tensor<1x4x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 4, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<1.0> : tensor<8x4x3x3xf32>> {
  ^bb0(%a: tensor<1x4x6x6xf32>):
    %e = tensor.empty() : tensor<1x8x6x6xf32>
    fabric.yield %e : tensor<1x8x6x6xf32>
  }
  fabric.kernel @c2 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<8x8x3x3xf32>> {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.kernel @p : (tensor<1x4x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 4, out_channels = 8, in_height = 6, in_width = 6, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], weights = dense<1.0> : tensor<8x4x1x1xf32>> {
  ^bb0(%a: tensor<1x4x6x6xf32>):
    %e = tensor.empty() : tensor<1x8x6x6xf32>
    fabric.yield %e : tensor<1x8x6x6xf32>
  }
  fabric.kernel @add : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.join<op = add, relu = true> {
  ^bb0(%a: tensor<1x8x6x6xf32>, %b: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.stream @x_fork @x[0] -> @c1[0], @p[0] : !fabric.wavelets<f32, 144> {pixels = 36 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c2_to_add @c2[0] -> @add[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @p_to_add @p[0] -> @add[1] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @add_to_y @add[0] -> @y[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
}
