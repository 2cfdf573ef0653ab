// RUN: weft-opt %s --split-input-file --verify-diagnostics --weft-resolve-channel-moves

// Moved channels that reach a graph output.
func.func @to_output(%a: tensor<1x2x4x4xf32>, %b: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32>
  %x = tensor.extract_slice %c[0, 1, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x4x4x4xf32> to tensor<1x2x4x4xf32>
  // expected-error @+1 {{(func.return): reads channels moved by a channel shuffle or split; weft maps moved channels only into convolutions and ops that work channel by channel}}
  return %x : tensor<1x2x4x4xf32>
}

// -----

// A channel range of a graph input cannot be cut from its producer.
func.func @input_range(%a: tensor<1x4x4x4xf32>, %acc: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %x = tensor.extract_slice %a[0, 2, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x4x4x4xf32> to tensor<1x2x4x4xf32>
  %w = arith.constant dense<1.0> : tensor<1x2x1x1xf32>
  // expected-error @+1 {{(linalg.conv_2d_nchw_fchw): reads channels [2, 4) of a feature map of 4 channels made by a graph input; weft cuts channel ranges only from convolutions and ops that work channel by channel}}
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) outs(%acc : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %y : tensor<1x1x4x4xf32>
}

// -----

// A channel read twice.
func.func @twice(%a: tensor<1x2x4x4xf32>, %acc: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %c = tensor.concat dim(1) %a, %a : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32>
  %x = tensor.extract_slice %c[0, 1, 0, 0] [1, 3, 4, 4] [1, 1, 1, 1] : tensor<1x4x4x4xf32> to tensor<1x3x4x4xf32>
  %w = arith.constant dense<1.0> : tensor<1x3x1x1xf32>
  // expected-error @+1 {{(linalg.conv_2d_nchw_fchw): reads channel 1 of a feature map twice through channel moves; weft maps a channel read once}}
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x4x4xf32>, tensor<1x3x1x1xf32>) outs(%acc : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %y : tensor<1x1x4x4xf32>
}

// -----

// Two readers of overlapping ranges of a map that a third reads whole:
// channel 1 is computed twice, and the pass says so.
func.func @overlap(%x: tensor<1x3x4x4xf32>, %acc: tensor<1x1x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x3x4x4xf32>) {
  %w = arith.constant dense<1.0> : tensor<3x3x1x1xf32>
  %acc3 = arith.constant dense<0.5> : tensor<1x3x4x4xf32>
  // expected-warning @+1 {{channels [1, 2) of a feature map are read in overlapping ranges and computed twice}}
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x4x4xf32>, tensor<3x3x1x1xf32>) outs(%acc3 : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %s = tensor.extract_slice %a[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x3x4x4xf32> to tensor<1x2x4x4xf32>
  %t = tensor.extract_slice %a[0, 1, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x3x4x4xf32> to tensor<1x2x4x4xf32>
  %w2 = arith.constant dense<1.0> : tensor<1x2x1x1xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%s, %w2 : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) outs(%acc : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %z = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%t, %w2 : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) outs(%acc : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x3x4x4xf32>) outs(%acc3 : tensor<1x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.negf %in : f32
    linalg.yield %m : f32
  } -> tensor<1x3x4x4xf32>
  return %y, %z, %r : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x3x4x4xf32>
}
