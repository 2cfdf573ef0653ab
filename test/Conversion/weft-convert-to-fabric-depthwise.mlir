// Grouped convolutions in the importer's forms (lib/Import/ImportNN.cpp)
// become #fabric.conv kernels with `groups` (docs/execution-model.md,
// "Depthwise convolution"): a depthwise one from
// linalg.depthwise_conv_2d_nchw_chw, the others from conv_2d_ngchw_gfchw
// between the reshapes of the input and the result. Their streams are
// feature maps, their weights OIHW with I = in_channels / groups.
// RUN: weft-opt %s --split-input-file --weft-convert-to-fabric | FileCheck %s

// Depthwise 3x3, pad 1, a bias per channel, ReLU: the pad, bias and ReLU
// fold into the kernel, whose body is the general grouped form.
// CHECK-LABEL: fabric.program @depthwise
// CHECK: fabric.io @x input west rows 0 to 1 : tensor<1x2x4x4xf32> {pixels = 16 : i64}
// CHECK: fabric.kernel @dw : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 4, in_width = 4, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], groups = 2, relu = true, weights = dense_resource<dw_weights> : tensor<2x1x3x3xf32>, bias = dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>>
// CHECK: tensor.pad
// CHECK: tensor.expand_shape {{.*}} into tensor<1x2x1x6x6xf32>
// CHECK: tensor.expand_shape {{.*}} into tensor<2x1x1x3x3xf32>
// CHECK: linalg.broadcast
// CHECK: linalg.conv_2d_ngchw_gfchw
// CHECK: tensor.collapse_shape {{.*}} into tensor<1x2x4x4xf32>
// CHECK: arith.maximumf
// CHECK: fabric.stream @x_to_dw @x[0] -> @dw[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
// CHECK: fabric.stream @dw_to_y @dw[0] -> @y[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
func.func @depthwise(%x: tensor<1x2x4x4xf32> {onnx.name = "x"}) -> (tensor<1x2x4x4xf32> {onnx.name = "y"}) {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[-1.0, -2.0, -3.0], [-4.0, -5.0, -6.0], [-7.0, -8.0, -9.0]]]> : tensor<2x3x3xf32>
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %c: index, %d: index, %e: index):
    tensor.yield %zero : f32
  } : tensor<1x2x4x4xf32> to tensor<1x2x6x6xf32>
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %bias = arith.constant dense<[[[[0.5, 0.5, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5]], [[-0.5, -0.5, -0.5, -0.5], [-0.5, -0.5, -0.5, -0.5], [-0.5, -0.5, -0.5, -0.5], [-0.5, -0.5, -0.5, -0.5]]]]> : tensor<1x2x4x4xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x2x6x6xf32>, tensor<2x3x3xf32>) outs(%bias : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("dw")
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// Depthwise with a channel multiplier of 2, stride 2, no bias: the
// ngchw_gfchw form, its input reshaped to [N, G, 1, H, W] (the importer
// groups the unit dimension with H) and its result collapsed back.
// CHECK-LABEL: fabric.program @multiplier
// CHECK: fabric.kernel @dwm : (tensor<1x2x5x5xf32>) -> tensor<1x4x2x2xf32> scheme #fabric.conv<in_channels = 2, out_channels = 4, in_height = 5, in_width = 5, kernel = [3, 3], strides = [2, 2], dilations = [1, 1], pads = [0, 0, 0, 0], groups = 2, weights = dense<2.500000e-01> : tensor<4x1x3x3xf32>>
// CHECK: linalg.fill
// CHECK: linalg.conv_2d_ngchw_gfchw
// CHECK: fabric.stream @dwm_to_y @dwm[0] -> @y[0] : !fabric.wavelets<f32, 16> {pixels = 4 : i64}
func.func @multiplier(%x: tensor<1x2x5x5xf32> {onnx.name = "x"}) -> (tensor<1x4x2x2xf32> {onnx.name = "y"}) {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<0.25> : tensor<2x2x1x3x3xf32>
  %e = tensor.empty() : tensor<1x2x2x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2x2xf32>) -> tensor<1x2x2x2x2xf32>
  %gx = tensor.expand_shape %x [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, 5, 5] : tensor<1x2x5x5xf32> into tensor<1x2x1x5x5xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%gx, %w : tensor<1x2x1x5x5xf32>, tensor<2x2x1x3x3xf32>) outs(%init : tensor<1x2x2x2x2xf32>) -> tensor<1x2x2x2x2xf32> loc("dwm")
  %y = tensor.collapse_shape %c [[0], [1, 2], [3], [4]] : tensor<1x2x2x2x2xf32> into tensor<1x4x2x2xf32>
  return %y : tensor<1x4x2x2xf32>
}

// -----

// A grouped convolution of 4 -> 6 channels in 2 groups (2 inputs and 3
// outputs each) with a bias, feeding a depthwise one: the consumer reads
// the grouped convolution's reshaped result as its own input.
// CHECK-LABEL: fabric.program @grouped
// CHECK: fabric.kernel @g : (tensor<1x4x3x3xf32>) -> tensor<1x6x3x3xf32> scheme #fabric.conv<in_channels = 4, out_channels = 6, in_height = 3, in_width = 3, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], groups = 2, weights = dense<1.000000e+00> : tensor<6x2x1x1xf32>, bias = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00]> : tensor<6xf32>>
// CHECK: fabric.kernel @d : (tensor<1x6x3x3xf32>) -> tensor<1x6x3x3xf32> scheme #fabric.conv<in_channels = 6, out_channels = 6, in_height = 3, in_width = 3, kernel = [1, 1], {{.*}} groups = 6,
// CHECK: fabric.stream @g_to_d @g[0] -> @d[0] : !fabric.wavelets<f32, 54> {pixels = 9 : i64}
func.func @grouped(%x: tensor<1x4x3x3xf32> {onnx.name = "x"}) -> (tensor<1x6x3x3xf32> {onnx.name = "y"}) {
  %w = arith.constant dense<1.0> : tensor<2x3x2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x3x3x3xf32>
  %bias = arith.constant dense<[[[[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0], [2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0], [3.0, 3.0, 3.0], [3.0, 3.0, 3.0]]], [[[4.0, 4.0, 4.0], [4.0, 4.0, 4.0], [4.0, 4.0, 4.0]], [[5.0, 5.0, 5.0], [5.0, 5.0, 5.0], [5.0, 5.0, 5.0]], [[6.0, 6.0, 6.0], [6.0, 6.0, 6.0], [6.0, 6.0, 6.0]]]]]> : tensor<1x2x3x3x3xf32>
  %gx = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 3, 3] : tensor<1x4x3x3xf32> into tensor<1x2x2x3x3xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%gx, %w : tensor<1x2x2x3x3xf32>, tensor<2x3x2x1x1xf32>) outs(%bias : tensor<1x2x3x3x3xf32>) -> tensor<1x2x3x3x3xf32> loc("g")
  %g = tensor.collapse_shape %c [[0], [1, 2], [3], [4]] : tensor<1x2x3x3x3xf32> into tensor<1x6x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %dw = arith.constant dense<2.0> : tensor<6x1x1xf32>
  %e2 = tensor.empty() : tensor<1x6x3x3xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x6x3x3xf32>) -> tensor<1x6x3x3xf32>
  %d = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%g, %dw : tensor<1x6x3x3xf32>, tensor<6x1x1xf32>) outs(%init2 : tensor<1x6x3x3xf32>) -> tensor<1x6x3x3xf32> loc("d")
  return %d : tensor<1x6x3x3xf32>
}

// -----

// ReLU6 (ONNX's Clip 0..6, the bounds as 0-d constant tensors) after a
// depthwise convolution folds into it (relu_max); a Clip from 1 does not
// (it stays a column kernel).
// CHECK-LABEL: fabric.program @relu6
// CHECK: fabric.kernel @dw6 : {{.*}} groups = 2, relu = true, relu_max = 6.000000e+00 : f32, weights
// CHECK: arith.maximumf
// CHECK-NEXT: arith.constant 6.000000e+00 : f32
// CHECK-NEXT: arith.minimumf
// CHECK: fabric.kernel @clip1 : {{.*}} scheme #fabric.elementwise<op = "Clip", params = [1.000000e+00, 6.000000e+00]>
// CHECK: fabric.stream @dw6_to_clip1 @dw6[0] -> @clip1[0] : !fabric.wavelets<f32, 8> {pixels = 4 : i64}
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#sc = affine_map<(d0, d1, d2, d3) -> ()>
func.func @relu6(%x: tensor<1x2x2x2xf32> {onnx.name = "x"}) -> (tensor<1x2x2x2xf32> {onnx.name = "y"}) {
  %zero = arith.constant 0.0 : f32
  %lo = arith.constant dense<0.0> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %hi = arith.constant dense<6.0> : tensor<f32>
  %w = arith.constant dense<3.0> : tensor<2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc("dw6")
  %r = linalg.generic {indexing_maps = [#id, #sc, #sc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %lo, %hi : tensor<1x2x2x2xf32>, tensor<f32>, tensor<f32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %a: f32, %b: f32, %out: f32):
    %m = arith.maximumf %in, %a : f32
    %n = arith.minimumf %m, %b : f32
    linalg.yield %n : f32
  } -> tensor<1x2x2x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #sc, #sc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %one, %hi : tensor<1x2x2x2xf32>, tensor<f32>, tensor<f32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %a: f32, %b: f32, %out: f32):
    %m = arith.maximumf %in, %a : f32
    %n = arith.minimumf %m, %b : f32
    linalg.yield %n : f32
  } -> tensor<1x2x2x2xf32> loc("clip1")
  return %y : tensor<1x2x2x2xf32>
}
