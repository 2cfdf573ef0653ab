// Grouped convolutions the lowering cannot place or run are refused on the
// kernel, with the reason.
// RUN: weft-opt %s --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet --split-input-file --verify-diagnostics

// Rows that split a group.
fabric.program @split_group attributes {target = #weft.target<4x3>} {
  fabric.io @x input west rows 0 to 2 : tensor<1x3x2x2xf32> {pixels = 4 : i64}
  fabric.io @y output east rows 0 to 2 : tensor<1x3x2x2xf32> {pixels = 4 : i64}
  // expected-error @below {{'fabric.kernel' op is a convolution of 3 groups; its 2 rows must divide them}}
  fabric.kernel @dw : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32> scheme #fabric.conv<in_channels = 3, out_channels = 3, in_height = 2, in_width = 2, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], groups = 3, weights = dense<1.0> : tensor<3x1x1x1xf32>> at #weft.rect<0, 0, 1, 2> {
  ^bb0(%x: tensor<1x3x2x2xf32>):
    fabric.yield %x : tensor<1x3x2x2xf32>
  }
  fabric.stream @s0 @x[0] -> @dw[0] : !fabric.wavelets<f32, 12> {pixels = 4 : i64}
  fabric.stream @s1 @dw[0] -> @y[0] : !fabric.wavelets<f32, 12> {pixels = 4 : i64}
}

// -----

// Two columns: a grouped convolution is one column.
fabric.program @two_columns attributes {target = #weft.target<4x3>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x2x2x2xf32> {pixels = 4 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x2x2x2xf32> {pixels = 4 : i64}
  // expected-error @below {{'fabric.kernel' op is a depthwise conv 2x2x2 -> 2x2x2, 1x1 and must occupy one column from row 0, not 2 columns from row 0}}
  fabric.kernel @dw : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 2, in_width = 2, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], groups = 2, weights = dense<1.0> : tensor<2x1x1x1xf32>> at #weft.rect<0, 0, 2, 1> {
  ^bb0(%x: tensor<1x2x2x2xf32>):
    fabric.yield %x : tensor<1x2x2x2xf32>
  }
  fabric.stream @s0 @x[0] -> @dw[0] : !fabric.wavelets<f32, 8> {pixels = 4 : i64}
  fabric.stream @s1 @dw[0] -> @y[0] : !fabric.wavelets<f32, 8> {pixels = 4 : i64}
}

// -----

// A channel multiplier of 300: more than a 4-D descriptor dimension holds.
fabric.program @multiplier attributes {target = #weft.target<4x3>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x2x1x1xf32> {pixels = 1 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x600x1x1xf32> {pixels = 1 : i64}
  // expected-error @below {{depthwise kernel dw on 1 rows: a 4-D descriptor dimension exceeds its field}}
  fabric.kernel @dw : (tensor<1x2x1x1xf32>) -> tensor<1x600x1x1xf32> scheme #fabric.conv<in_channels = 2, out_channels = 600, in_height = 1, in_width = 1, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], groups = 2, weights = dense<1.0> : tensor<600x1x1x1xf32>> at #weft.rect<0, 0, 1, 1> {
  ^bb0(%x: tensor<1x2x1x1xf32>):
    %e = tensor.empty() : tensor<1x600x1x1xf32>
    fabric.yield %e : tensor<1x600x1x1xf32>
  }
  fabric.stream @s0 @x[0] -> @dw[0] : !fabric.wavelets<f32, 2> {pixels = 1 : i64}
  fabric.stream @s1 @dw[0] -> @y[0] : !fabric.wavelets<f32, 600> {pixels = 1 : i64}
}
