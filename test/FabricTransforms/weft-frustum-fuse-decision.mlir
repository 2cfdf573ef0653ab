// --weft-frustum-fuse follows the decision --weft-frustum-tile records
// (docs/frustum.md, "The decision"): a chosen group is fused when the
// lowering can run it (overlapping halos; exchanging them is not lowered
// yet) and its bands are predicted no slower than the recorded per-layer
// cycles; a group not chosen runs per layer, with a remark saying why.
// RUN: weft-opt %s --split-input-file --verify-diagnostics --weft-frustum-fuse | FileCheck %s

// Chosen, overlapping halos: fused (its bands' program, predicted at
// 29,627 cycles per sample, is no slower than the recorded 100,000 per
// layer).
// CHECK-LABEL: fabric.program @overlap
// CHECK: fabric.kernel @c1 {{.*}}frustum_chain
// CHECK-NOT: fabric.kernel @c2
fabric.program @overlap attributes {target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4x8x8xf32> {pixels = 64 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x8x8x8xf32> {pixels = 64 : i64}
  fabric.kernel @c1 : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x8xf32> scheme #fabric.conv<in_channels = 4, out_channels = 8, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<0.5> : tensor<8x4x3x3xf32>> attributes {frustum = {chosen = true, exchange_cycles = 3000 : i64, group = 0 : i64, halo = "overlap", level = 0 : i64, overlap_cycles = 2000 : i64, per_layer_cycles = 100000 : i64, pes = 4 : i64, side = 1 : i64, tile = array<i64: 4, 4>}} {
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
  fabric.kernel @c2 : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<0.25> : tensor<8x8x3x3xf32>> attributes {frustum = {chosen = true, exchange_cycles = 3000 : i64, group = 0 : i64, halo = "overlap", level = 1 : i64, overlap_cycles = 2000 : i64, per_layer_cycles = 100000 : i64, pes = 4 : i64, side = 1 : i64, tile = array<i64: 4, 4>}} {
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

// -----

// Chosen, exchanging halos, which is not lowered: overlapping them is no
// slower than per layer either, so the group is fused with overlap, and a
// remark says so.
// CHECK-LABEL: fabric.program @exchange
// CHECK: fabric.kernel @c1 {{.*}}frustum_chain
// CHECK-NOT: fabric.kernel @c2
fabric.program @exchange attributes {target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4x8x8xf32> {pixels = 64 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x8x8x8xf32> {pixels = 64 : i64}
  // expected-remark @below {{frustum group 0 overlaps its halos (2000 cycles per sample): exchanging them (1500) is not lowered yet}}
  fabric.kernel @c1 : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x8xf32> scheme #fabric.conv<in_channels = 4, out_channels = 8, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<0.5> : tensor<8x4x3x3xf32>> attributes {frustum = {chosen = true, exchange_cycles = 1500 : i64, group = 0 : i64, halo = "exchange", level = 0 : i64, overlap_cycles = 2000 : i64, per_layer_cycles = 100000 : i64, pes = 4 : i64, side = 1 : i64, tile = array<i64: 4, 4>}} {
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
  fabric.kernel @c2 : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<0.25> : tensor<8x8x3x3xf32>> attributes {frustum = {chosen = true, exchange_cycles = 1500 : i64, group = 0 : i64, halo = "exchange", level = 1 : i64, overlap_cycles = 2000 : i64, per_layer_cycles = 100000 : i64, pes = 4 : i64, side = 1 : i64, tile = array<i64: 4, 4>}} {
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

// -----

// Chosen for exchange, but overlap would be slower than per layer: per
// layer.
// CHECK-LABEL: fabric.program @exchange_only
// CHECK: fabric.kernel @c1 :
// CHECK-NOT: frustum
// CHECK: fabric.kernel @c2
fabric.program @exchange_only attributes {target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4x8x8xf32> {pixels = 64 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x8x8x8xf32> {pixels = 64 : i64}
  // expected-remark @below {{starts frustum group 0, which runs per layer: the cost model chose to exchange its halos (1500 cycles per sample), which is not lowered yet, and overlapping them is predicted slower than per layer (5000 against 3000)}}
  fabric.kernel @c1 : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x8xf32> scheme #fabric.conv<in_channels = 4, out_channels = 8, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<0.5> : tensor<8x4x3x3xf32>> attributes {frustum = {chosen = true, exchange_cycles = 1500 : i64, group = 0 : i64, halo = "exchange", level = 0 : i64, overlap_cycles = 5000 : i64, per_layer_cycles = 3000 : i64, pes = 4 : i64, side = 1 : i64, tile = array<i64: 4, 4>}} {
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
  fabric.kernel @c2 : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<0.25> : tensor<8x8x3x3xf32>> attributes {frustum = {chosen = true, exchange_cycles = 1500 : i64, group = 0 : i64, halo = "exchange", level = 1 : i64, overlap_cycles = 5000 : i64, per_layer_cycles = 3000 : i64, pes = 4 : i64, side = 1 : i64, tile = array<i64: 4, 4>}} {
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

// -----

// Not chosen though faster: its tiles need more PEs than the fabric has.
// CHECK-LABEL: fabric.program @too_many
// CHECK-NOT: frustum
fabric.program @too_many attributes {target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4x8x8xf32> {pixels = 64 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x8x8x8xf32> {pixels = 64 : i64}
  // expected-remark @below {{starts frustum group 0, which runs per layer: its tiles need 400 PEs, more than the fabric has}}
  fabric.kernel @c1 : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x8xf32> scheme #fabric.conv<in_channels = 4, out_channels = 8, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<0.5> : tensor<8x4x3x3xf32>> attributes {frustum = {chosen = false, exchange_cycles = 3000 : i64, group = 0 : i64, halo = "overlap", level = 0 : i64, overlap_cycles = 2000 : i64, per_layer_cycles = 100000 : i64, pes = 400 : i64, side = 1 : i64, tile = array<i64: 4, 4>}} {
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
  fabric.kernel @c2 : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<0.25> : tensor<8x8x3x3xf32>> attributes {frustum = {chosen = false, exchange_cycles = 3000 : i64, group = 0 : i64, halo = "overlap", level = 1 : i64, overlap_cycles = 2000 : i64, per_layer_cycles = 100000 : i64, pes = 400 : i64, side = 1 : i64, tile = array<i64: 4, 4>}} {
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

// -----

// Chosen by the cost model's tiles, but the lowering's bands are predicted
// slower than the recorded per-layer figure: per layer.
// CHECK-LABEL: fabric.program @bands_slower
// CHECK-NOT: frustum
fabric.program @bands_slower attributes {target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4x8x8xf32> {pixels = 64 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x8x8x8xf32> {pixels = 64 : i64}
  // expected-remark @below {{starts frustum group 0, which runs per layer: it is predicted slower fused (29627 cycles per sample in 2 bands) than per layer (1000)}}
  fabric.kernel @c1 : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x8xf32> scheme #fabric.conv<in_channels = 4, out_channels = 8, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<0.5> : tensor<8x4x3x3xf32>> attributes {frustum = {chosen = true, exchange_cycles = 300 : i64, group = 0 : i64, halo = "overlap", level = 0 : i64, overlap_cycles = 200 : i64, per_layer_cycles = 1000 : i64, pes = 4 : i64, side = 1 : i64, tile = array<i64: 4, 4>}} {
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
  fabric.kernel @c2 : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<0.25> : tensor<8x8x3x3xf32>> attributes {frustum = {chosen = true, exchange_cycles = 300 : i64, group = 0 : i64, halo = "overlap", level = 1 : i64, overlap_cycles = 200 : i64, per_layer_cycles = 1000 : i64, pes = 4 : i64, side = 1 : i64, tile = array<i64: 4, 4>}} {
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

// -----

// A chosen identity residual block whose last convolution has a ReLU of
// its own before the add: the band's top level cannot apply it before
// the skip, so the block runs per layer.
// CHECK-LABEL: fabric.program @own_relu
// CHECK: fabric.kernel @c2
// CHECK: fabric.kernel @add
fabric.program @own_relu attributes {target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4x6x6xf32> {pixels = 36 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x4x6x6xf32> {pixels = 36 : i64}
  // expected-remark @below {{starts frustum group 0, which runs per layer: its member 2 adds the skip, but the block's last layer is a max pool or has an activation of its own before the add}}
  fabric.kernel @c1 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> scheme #fabric.conv<in_channels = 4, out_channels = 4, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<0.5> : tensor<4x4x3x3xf32>> attributes {frustum = {chosen = true, exchange_cycles = 3000 : i64, group = 0 : i64, halo = "overlap", level = 0 : i64, overlap_cycles = 2000 : i64, per_layer_cycles = 1000000 : i64, pes = 4 : i64, side = 1 : i64, tile = array<i64: 3, 3>}} {
  ^bb0(%a: tensor<1x4x6x6xf32>):
    fabric.yield %a : tensor<1x4x6x6xf32>
  }
  fabric.kernel @c2 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> scheme #fabric.conv<in_channels = 4, out_channels = 4, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<0.5> : tensor<4x4x3x3xf32>> attributes {frustum = {chosen = true, exchange_cycles = 3000 : i64, group = 0 : i64, halo = "overlap", level = 1 : i64, overlap_cycles = 2000 : i64, per_layer_cycles = 1000000 : i64, pes = 4 : i64, side = 1 : i64, tile = array<i64: 3, 3>}} {
  ^bb0(%a: tensor<1x4x6x6xf32>):
    fabric.yield %a : tensor<1x4x6x6xf32>
  }
  fabric.kernel @add : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> scheme #fabric.join<op = add, relu = true> attributes {frustum = {chosen = true, exchange_cycles = 3000 : i64, group = 0 : i64, halo = "overlap", role = "add", overlap_cycles = 2000 : i64, per_layer_cycles = 1000000 : i64, pes = 4 : i64, side = 1 : i64, tile = array<i64: 3, 3>}} {
  ^bb0(%a: tensor<1x4x6x6xf32>, %b: tensor<1x4x6x6xf32>):
    fabric.yield %a : tensor<1x4x6x6xf32>
  }
  fabric.stream @x_fork @x[0] -> @c1[0], @add[1] : !fabric.wavelets<f32, 144> {pixels = 36 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 144> {pixels = 36 : i64}
  fabric.stream @c2_to_add @c2[0] -> @add[0] : !fabric.wavelets<f32, 144> {pixels = 36 : i64}
  fabric.stream @add_to_y @add[0] -> @y[0] : !fabric.wavelets<f32, 144> {pixels = 36 : i64}
}

// -----

// A record whose add sums the last layer with the middle one, not with
// the block's input: the skip would add the wrong rows, so the group runs
// per layer.
// CHECK-LABEL: fabric.program @not_the_input
// CHECK: fabric.kernel @c2
// CHECK: fabric.kernel @add
fabric.program @not_the_input attributes {target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4x6x6xf32> {pixels = 36 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x4x6x6xf32> {pixels = 36 : i64}
  // expected-remark @below {{starts frustum group 0, which runs per layer: its add @add does not add the block's last layer and its input}}
  fabric.kernel @c1 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> scheme #fabric.conv<in_channels = 4, out_channels = 4, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<0.5> : tensor<4x4x3x3xf32>> attributes {frustum = {chosen = true, exchange_cycles = 3000 : i64, group = 0 : i64, halo = "overlap", level = 0 : i64, overlap_cycles = 2000 : i64, per_layer_cycles = 1000000 : i64, pes = 4 : i64, side = 1 : i64, tile = array<i64: 3, 3>}} {
  ^bb0(%a: tensor<1x4x6x6xf32>):
    fabric.yield %a : tensor<1x4x6x6xf32>
  }
  fabric.kernel @c2 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> scheme #fabric.conv<in_channels = 4, out_channels = 4, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<0.5> : tensor<4x4x3x3xf32>> attributes {frustum = {chosen = true, exchange_cycles = 3000 : i64, group = 0 : i64, halo = "overlap", level = 1 : i64, overlap_cycles = 2000 : i64, per_layer_cycles = 1000000 : i64, pes = 4 : i64, side = 1 : i64, tile = array<i64: 3, 3>}} {
  ^bb0(%a: tensor<1x4x6x6xf32>):
    fabric.yield %a : tensor<1x4x6x6xf32>
  }
  fabric.kernel @add : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> scheme #fabric.join<op = add, relu = true> attributes {frustum = {chosen = true, exchange_cycles = 3000 : i64, group = 0 : i64, halo = "overlap", role = "add", overlap_cycles = 2000 : i64, per_layer_cycles = 1000000 : i64, pes = 4 : i64, side = 1 : i64, tile = array<i64: 3, 3>}} {
  ^bb0(%a: tensor<1x4x6x6xf32>, %b: tensor<1x4x6x6xf32>):
    fabric.yield %a : tensor<1x4x6x6xf32>
  }
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 144> {pixels = 36 : i64}
  fabric.stream @c1_fork @c1[0] -> @c2[0], @add[1] : !fabric.wavelets<f32, 144> {pixels = 36 : i64}
  fabric.stream @c2_to_add @c2[0] -> @add[0] : !fabric.wavelets<f32, 144> {pixels = 36 : i64}
  fabric.stream @add_to_y @add[0] -> @y[0] : !fabric.wavelets<f32, 144> {pixels = 36 : i64}
}
