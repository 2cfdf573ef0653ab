// Grouped convolutions the fabric does not run are refused naming the ONNX
// node, the op and the reason.
// RUN: not weft-opt %s --split-input-file --weft-convert-to-fabric 2>&1 | FileCheck %s

// A depthwise convolution reading a pad of ones.
// CHECK: node 'dw' (linalg.depthwise_conv_2d_nchw_chw): not a convolution the fabric supports: its input pad is not a static zero pad of the spatial dimensions
func.func @one_pad(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %w = arith.constant dense<1.0> : tensor<2x3x3xf32>
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %one : f32
  } : tensor<1x2x4x4xf32> to tensor<1x2x6x6xf32>
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x2x6x6xf32>, tensor<2x3x3xf32>) outs(%init : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("dw")
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Weights that are no constant (a model taking them as an input).
// CHECK: node 'dw' (linalg.depthwise_conv_2d_nchw_chw): not a convolution the fabric supports: its weights are not a constant tensor
func.func @weights_input(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x1xf32>) -> tensor<1x1x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x1x4x4xf32>, tensor<1x1x1xf32>) outs(%init : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> loc("dw")
  return %y : tensor<1x1x4x4xf32>
}

// -----

// A grouped convolution whose input is no feature map reshaped into groups.
// CHECK: node 'g' (linalg.conv_2d_ngchw_gfchw): not a convolution the fabric supports: its input is not a feature map [N, C, H, W] reshaped to [N, G, C/G, H, W]
func.func @grouped_input(%x: tensor<1x2x2x3x3xf32>) -> tensor<1x2x2x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<1.0> : tensor<2x2x2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x3x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x3x3xf32>) -> tensor<1x2x2x3x3xf32>
  %y = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x2x3x3xf32>, tensor<2x2x2x1x1xf32>) outs(%init : tensor<1x2x2x3x3xf32>) -> tensor<1x2x2x3x3xf32> loc("g")
  return %y : tensor<1x2x2x3x3xf32>
}

// -----

// The other grouped form (filter [F, G, C/G, kh, kw]), which the importer
// never writes.
// CHECK: node 'g' (linalg.conv_2d_ngchw_fgchw): 'linalg.conv_2d_ngchw_fgchw' is not supported on the fabric yet
func.func @fgchw(%x: tensor<1x4x3x3xf32>) -> tensor<1x2x2x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<1.0> : tensor<2x2x2x1x1xf32>
  %gx = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 3, 3] : tensor<1x4x3x3xf32> into tensor<1x2x2x3x3xf32>
  %e = tensor.empty() : tensor<1x2x2x3x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x3x3xf32>) -> tensor<1x2x2x3x3xf32>
  %y = linalg.conv_2d_ngchw_fgchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%gx, %w : tensor<1x2x2x3x3xf32>, tensor<2x2x2x1x1xf32>) outs(%init : tensor<1x2x2x3x3xf32>) -> tensor<1x2x2x3x3xf32> loc("g")
  return %y : tensor<1x2x2x3x3xf32>
}
