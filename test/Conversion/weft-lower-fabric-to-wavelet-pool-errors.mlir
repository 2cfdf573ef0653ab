// Pooling kernels the lowering cannot place or run are refused on the
// kernel, with the reason.
// RUN: weft-opt %s --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet --split-input-file --verify-diagnostics

// Rows that split a channel.
fabric.program @split_channel attributes {target = #weft.target<4x3>} {
  fabric.io @x input west rows 0 to 2 : tensor<1x3x2x2xf32> {pixels = 4 : i64}
  fabric.io @y output east rows 0 to 2 : tensor<1x3x1x1xf32> {pixels = 1 : i64}
  // expected-error @below {{'fabric.kernel' op is a pooling of 3 channels; its 2 rows must divide them}}
  fabric.kernel @pool : (tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32> scheme #fabric.pool<kind = max, channels = 3, in_height = 2, in_width = 2, kernel = [2, 2], strides = [2, 2], dilations = [1, 1], pads = [0, 0, 0, 0]> at #weft.rect<0, 0, 1, 2> {
  ^bb0(%x: tensor<1x3x2x2xf32>):
    %e = tensor.empty() : tensor<1x3x1x1xf32>
    fabric.yield %e : tensor<1x3x1x1xf32>
  }
  fabric.stream @s0 @x[0] -> @pool[0] : !fabric.wavelets<f32, 12> {pixels = 4 : i64}
  fabric.stream @s1 @pool[0] -> @y[0] : !fabric.wavelets<f32, 3> {pixels = 1 : i64}
}

// -----

// Two columns: a pooling is one column.
fabric.program @two_columns attributes {target = #weft.target<4x3>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x1x2x2xf32> {pixels = 4 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x1x1x1xf32> {pixels = 1 : i64}
  // expected-error @below {{'fabric.kernel' op is a maxpool 1x2x2 -> 1x1x1, 2x2 and must occupy one column from row 0, not 2 columns from row 0}}
  fabric.kernel @pool : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32> scheme #fabric.pool<kind = max, channels = 1, in_height = 2, in_width = 2, kernel = [2, 2], strides = [2, 2], dilations = [1, 1], pads = [0, 0, 0, 0]> at #weft.rect<0, 0, 2, 1> {
  ^bb0(%x: tensor<1x1x2x2xf32>):
    %e = tensor.empty() : tensor<1x1x1x1xf32>
    fabric.yield %e : tensor<1x1x1x1xf32>
  }
  fabric.stream @s0 @x[0] -> @pool[0] : !fabric.wavelets<f32, 4> {pixels = 4 : i64}
  fabric.stream @s1 @pool[0] -> @y[0] : !fabric.wavelets<f32, 1> {pixels = 1 : i64}
}

// -----

// 600 output columns: more than a 4-D descriptor dimension holds.
fabric.program @too_wide attributes {target = #weft.target<4x3>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x1x1x600xf32> {pixels = 600 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x1x1x600xf32> {pixels = 600 : i64}
  // expected-error @below {{pooling kernel pool on 1 rows: a 4-D descriptor dimension exceeds its field}}
  fabric.kernel @pool : (tensor<1x1x1x600xf32>) -> tensor<1x1x1x600xf32> scheme #fabric.pool<kind = max, channels = 1, in_height = 1, in_width = 600, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0]> at #weft.rect<0, 0, 1, 1> {
  ^bb0(%x: tensor<1x1x1x600xf32>):
    fabric.yield %x : tensor<1x1x1x600xf32>
  }
  fabric.stream @s0 @x[0] -> @pool[0] : !fabric.wavelets<f32, 600> {pixels = 600 : i64}
  fabric.stream @s1 @pool[0] -> @y[0] : !fabric.wavelets<f32, 600> {pixels = 600 : i64}
}
