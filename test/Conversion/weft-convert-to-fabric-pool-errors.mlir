// Poolings the fabric does not run are refused naming the ONNX node, the op
// and the reason.
// RUN: not weft-opt %s --split-input-file --weft-convert-to-fabric 2>&1 | FileCheck %s

// A max pool reading zero pads (not ONNX's MaxPool).
// CHECK: node 'pool' (linalg.pooling_nchw_max): not a pooling the fabric supports: its input pad is not -inf (a max pool reads -inf pads)
func.func @zero_pad_max(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x1x4x4xf32> to tensor<1x1x6x6xf32>
  %e = tensor.empty() : tensor<1x1x2x2xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %w : tensor<1x1x6x6xf32>, tensor<3x3xf32>) outs(%init : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> loc("pool")
  return %y : tensor<1x1x2x2xf32>
}

// -----

// An average pool whose divisor is no count of window positions.
// CHECK: node 'pool' (linalg.generic): not a pooling the fabric supports: its output size, pads and divisors match no ONNX pooling (kernel, strides, pads, ceil_mode, count_include_pad)
func.func @bad_divisor(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %five = arith.constant 5.0 : f32
  %e = tensor.empty() : tensor<1x1x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  %s = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x1x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x1x2x2xf32>) outs(%e : tensor<1x1x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.divf %in, %five : f32
    linalg.yield %q : f32
  } -> tensor<1x1x2x2xf32> loc("pool")
  return %y : tensor<1x1x2x2xf32>
}

// -----

// A sum pool with no division (no ONNX pooling).
// CHECK: node 'pool' (linalg.pooling_nchw_sum): not a pooling the fabric supports: a sum pool without its division is no AveragePool
func.func @sum_pool(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  %s = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x1x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> loc("pool")
  return %s : tensor<1x1x2x2xf32>
}

// -----

// A sum over the pixels divided by anything but their count.
// CHECK: node 'mean' (linalg.generic): not a pooling the fabric supports: a sum over the feature map is a pooling only when divided by its 4 pixels (GlobalAveragePool)
func.func @global_bad_count(%x: tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32> {
  %zero = arith.constant 0.0 : f32
  %three = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<1x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3xf32>) -> tensor<1x3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<1x3x2x2xf32>) outs(%init : tensor<1x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<1x3xf32>
  %se = tensor.expand_shape %s [[0], [1, 2, 3]] output_shape [1, 3, 1, 1] : tensor<1x3xf32> into tensor<1x3x1x1xf32>
  %e4 = tensor.empty() : tensor<1x3x1x1xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%se : tensor<1x3x1x1xf32>) outs(%e4 : tensor<1x3x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.divf %in, %three : f32
    linalg.yield %q : f32
  } -> tensor<1x3x1x1xf32> loc("mean")
  return %m : tensor<1x3x1x1xf32>
}
