// Poolings in the importer's forms (lib/Import/ImportNN.cpp) become pooling
// kernels (#fabric.pool, docs/execution-model.md, "Pooling") whose streams
// are feature maps; ONNX's pads, ceil_mode and count_include_pad are
// recovered from the pads the windows read and the divisors.
// RUN: weft-opt %s --split-input-file --weft-convert-to-fabric | FileCheck %s

// MaxPool 2x2 stride 2 on 5x5 reading one -inf row and column past the
// input (ceil_mode, or an explicit pad: the same windows).
// CHECK-LABEL: fabric.program @maxpool
// CHECK: fabric.io @x input west rows 0 to 1 : tensor<1x2x5x5xf32> {pixels = 25 : i64}
// CHECK: fabric.io @y output east rows 0 to 1 : tensor<1x2x3x3xf32> {pixels = 9 : i64}
// CHECK: fabric.kernel @pool : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> scheme #fabric.pool<kind = max, channels = 2, in_height = 5, in_width = 5, kernel = [2, 2], strides = [2, 2], dilations = [1, 1], pads = [0, 0, 1, 1]>
// CHECK: tensor.pad
// CHECK: linalg.pooling_nchw_max
// CHECK: fabric.stream @x_to_pool @x[0] -> @pool[0] : !fabric.wavelets<f32, 50> {pixels = 25 : i64}
// CHECK: fabric.stream @pool_to_y @pool[0] -> @y[0] : !fabric.wavelets<f32, 18> {pixels = 9 : i64}
func.func @maxpool(%x: tensor<2x2x5x5xf32> {onnx.name = "x"}) -> (tensor<2x2x3x3xf32> {onnx.name = "y"}) {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 0, 0] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<2x2x5x5xf32> to tensor<2x2x6x6xf32>
  %e = tensor.empty() : tensor<2x2x3x3xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x2x3x3xf32>) -> tensor<2x2x3x3xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %w : tensor<2x2x6x6xf32>, tensor<2x2xf32>) outs(%init : tensor<2x2x3x3xf32>) -> tensor<2x2x3x3xf32> loc("pool")
  return %y : tensor<2x2x3x3xf32>
}

// -----

// AveragePool 3x3 stride 2 pads 1, count_include_pad 0: divisors 4, 6, 6, 9.
// CHECK-LABEL: fabric.program @avgpool
// CHECK: scheme #fabric.pool<kind = avg, channels = 1, in_height = 4, in_width = 4, kernel = [3, 3], strides = [2, 2], dilations = [1, 1], pads = [1, 1, 1, 1]>
// CHECK: linalg.pooling_nchw_sum
// CHECK: arith.divf
func.func @avgpool(%x: tensor<1x1x4x4xf32> {onnx.name = "x"}) -> (tensor<1x1x2x2xf32> {onnx.name = "y"}) {
  %zero = arith.constant 0.0 : f32
  %div = arith.constant dense<[[4.0, 6.0], [6.0, 9.0]]> : tensor<2x2xf32>
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x1x4x4xf32> to tensor<1x1x6x6xf32>
  %e = tensor.empty() : tensor<1x1x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %s = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %w : tensor<1x1x6x6xf32>, tensor<3x3xf32>) outs(%init : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> loc("pool")
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %div : tensor<1x1x2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<1x1x2x2xf32>) {
  ^bb0(%in: f32, %d: f32, %out: f32):
    %q = arith.divf %in, %d : f32
    linalg.yield %q : f32
  } -> tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}

// -----

// The same divisors with count_include_pad 1 are 9 everywhere.
// CHECK-LABEL: fabric.program @avgpool_include_pad
// CHECK: scheme #fabric.pool<kind = avg, channels = 1, in_height = 4, in_width = 4, kernel = [3, 3], strides = [2, 2], dilations = [1, 1], pads = [1, 1, 1, 1], count_include_pad = true>
func.func @avgpool_include_pad(%x: tensor<1x1x4x4xf32> {onnx.name = "x"}) -> (tensor<1x1x2x2xf32> {onnx.name = "y"}) {
  %zero = arith.constant 0.0 : f32
  %nine = arith.constant 9.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x1x4x4xf32> to tensor<1x1x6x6xf32>
  %e = tensor.empty() : tensor<1x1x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %s = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %w : tensor<1x1x6x6xf32>, tensor<3x3xf32>) outs(%init : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> loc("pool")
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x1x2x2xf32>) outs(%e : tensor<1x1x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.divf %in, %nine : f32
    linalg.yield %q : f32
  } -> tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}

// -----

// GlobalAveragePool (a sum over the pixels, reshaped, divided by 4) and
// GlobalMaxPool: pools whose window is the whole map.
// CHECK-LABEL: fabric.program @global
// CHECK: fabric.kernel @gap : (tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32> scheme #fabric.pool<kind = avg, channels = 3, in_height = 2, in_width = 2, kernel = [2, 2], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0]>
// CHECK: fabric.kernel @gmp : (tensor<1x3x1x1xf32>) -> tensor<1x3xf32> scheme #fabric.pool<kind = max, channels = 3, in_height = 1, in_width = 1, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0]>
// CHECK: fabric.stream @x_to_gap @x[0] -> @gap[0] : !fabric.wavelets<f32, 12> {pixels = 4 : i64}
// CHECK: fabric.stream @gap_to_gmp @gap[0] -> @gmp[0] : !fabric.wavelets<f32, 3> {pixels = 1 : i64}
func.func @global(%x: tensor<1x3x2x2xf32> {onnx.name = "x"}) -> (tensor<1x3x1x1xf32> {onnx.name = "y"}) {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3xf32>) -> tensor<1x3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<1x3x2x2xf32>) outs(%init : tensor<1x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<1x3xf32> loc("gap")
  %se = tensor.expand_shape %s [[0], [1, 2, 3]] output_shape [1, 3, 1, 1] : tensor<1x3xf32> into tensor<1x3x1x1xf32>
  %e4 = tensor.empty() : tensor<1x3x1x1xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%se : tensor<1x3x1x1xf32>) outs(%e4 : tensor<1x3x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.divf %in, %four : f32
    linalg.yield %q : f32
  } -> tensor<1x3x1x1xf32>
  %init2 = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x3xf32>) -> tensor<1x3xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%m : tensor<1x3x1x1xf32>) outs(%init2 : tensor<1x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.maximumf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<1x3xf32> loc("gmp")
  %y = tensor.expand_shape %g [[0], [1, 2, 3]] output_shape [1, 3, 1, 1] : tensor<1x3xf32> into tensor<1x3x1x1xf32>
  return %y : tensor<1x3x1x1xf32>
}
