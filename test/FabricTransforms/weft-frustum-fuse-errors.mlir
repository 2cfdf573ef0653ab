// --weft-frustum-fuse refuses records it cannot read: a member without a
// group and a level (or the role of a residual group's add or projection),
// two members on one level, a gap between levels, and a record without the
// decision of --weft-frustum-tile.
// RUN: weft-opt %s --split-input-file --verify-diagnostics --weft-frustum-fuse

fabric.program @no_level attributes {target = #weft.target<8x8, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  // expected-error @below {{has a frustum record without group and level (or the role add or projection): {group = 0 : i64, role = "skip", side = 1 : i64}}}
  fabric.kernel @c1 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<8x8x3x3xf32>> attributes {frustum = {group = 0 : i64, role = "skip", side = 1 : i64}} {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c1_to_y @c1[0] -> @y[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
}

// -----

fabric.program @same_level attributes {target = #weft.target<8x8, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  fabric.kernel @c1 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<8x8x3x3xf32>> attributes {frustum = {chosen = false, exchange_cycles = 10 : i64, group = 0 : i64, halo = "overlap", level = 0 : i64, overlap_cycles = 10 : i64, per_layer_cycles = 5 : i64, pes = 1 : i64, side = 1 : i64, tile = array<i64: 6, 6>}} {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  // expected-error @below {{shares level 0 of frustum group 0}}
  fabric.kernel @c2 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<8x8x3x3xf32>> attributes {frustum = {chosen = false, exchange_cycles = 10 : i64, group = 0 : i64, halo = "overlap", level = 0 : i64, overlap_cycles = 10 : i64, per_layer_cycles = 5 : i64, pes = 1 : i64, side = 1 : i64, tile = array<i64: 6, 6>}} {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c2_to_y @c2[0] -> @y[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
}

// -----

fabric.program @gap attributes {target = #weft.target<8x8, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  fabric.kernel @c1 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<8x8x3x3xf32>> attributes {frustum = {chosen = false, exchange_cycles = 10 : i64, group = 0 : i64, halo = "overlap", level = 0 : i64, overlap_cycles = 10 : i64, per_layer_cycles = 5 : i64, pes = 1 : i64, side = 1 : i64, tile = array<i64: 6, 6>}} {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  // expected-error @below {{is level 2 of frustum group 0, which has no level 1}}
  fabric.kernel @c2 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<8x8x3x3xf32>> attributes {frustum = {chosen = false, exchange_cycles = 10 : i64, group = 0 : i64, halo = "overlap", level = 2 : i64, overlap_cycles = 10 : i64, per_layer_cycles = 5 : i64, pes = 1 : i64, side = 1 : i64, tile = array<i64: 6, 6>}} {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c2_to_y @c2[0] -> @y[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
}

// -----

fabric.program @gap attributes {target = #weft.target<8x8, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  // expected-error @below {{has a frustum record without the decision of --weft-frustum-tile (chosen, halo, overlap_cycles, exchange_cycles, per_layer_cycles, pes): {group = 0 : i64, level = 0 : i64, side = 1 : i64, tile = array<i64: 6, 6>}}}
  fabric.kernel @c1 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<8x8x3x3xf32>> attributes {frustum = {group = 0 : i64, level = 0 : i64, side = 1 : i64, tile = array<i64: 6, 6>}} {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.kernel @c2 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<8x8x3x3xf32>> attributes {frustum = {chosen = false, exchange_cycles = 10 : i64, group = 0 : i64, halo = "overlap", level = 1 : i64, overlap_cycles = 10 : i64, per_layer_cycles = 5 : i64, pes = 1 : i64, side = 1 : i64, tile = array<i64: 6, 6>}} {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c2_to_y @c2[0] -> @y[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
}
