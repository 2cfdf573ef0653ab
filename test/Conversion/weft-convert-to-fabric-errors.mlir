// Every rejection names the ONNX node (from the op's location), the op and
// the reason; nothing is silently dropped.
// RUN: not weft-opt %s --split-input-file --weft-convert-to-fabric 2>&1 | FileCheck %s
// RUN: not weft-opt %s --split-input-file --weft-convert-to-fabric=grid=0x4 2>&1 | FileCheck %s --check-prefix=GRID

// GRID: error: bad grid '0x4':

// A weight the model takes as an input is no second stream of samples.
// CHECK: error: graph input 'b' has 2 samples but the first input has 1; inputs are streamed sample by sample together (weights the model takes as inputs are frozen with weftc --constant)
func.func @main_graph(%x: tensor<1x2xf32> {onnx.name = "a"}, %w: tensor<2x3xf32> {onnx.name = "b"}) -> (tensor<1x3xf32> {onnx.name = "y"}) {
  %e = tensor.empty() : tensor<1x3xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3xf32>) -> tensor<1x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<1x2xf32>, tensor<2x3xf32>) outs(%z : tensor<1x3xf32>) -> tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}

// -----

// CHECK: error: graph input 'x' has type 'tensor<2x3xi32>'; the fabric path takes static f32 tensors whose first dimension is the batch
func.func @main_graph(%x: tensor<2x3xi32> {onnx.name = "x"}) -> (tensor<2x3xi32> {onnx.name = "y"}) {
  return %x : tensor<2x3xi32>
}

// -----

// atan(-x) after the product is neither a dense layer nor an activation
// (Neg is, but no kernel computes atan, alone or in an expression).
// CHECK: error: {{.*}}node 'probs' (linalg.generic): not a layer the fabric supports: not a dense layer (it is not a matrix product (linalg.matmul) with optional bias and ReLU), nor an activation or softmax over the sample (its elementwise body is none of the per-row ops weft maps (Relu, Sigmoid, Tanh, Abs, Neg, Exp, Log, Sqrt, Reciprocal, LeakyRelu, ThresholdedRelu, Elu, Celu, Selu, Softplus, Softsign, HardSigmoid, HardSwish, Clip, Sign, Floor, Ceil, Round, Sin, Cos, Erf, Pow with a scalar exponent, or x with a scalar constant: + - * /), and as an expression its fused body has math.atan (no column kernel computes it))
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @main_graph(%x: tensor<1x2xf32> {onnx.name = "x"}) -> (tensor<1x3xf32> {onnx.name = "y"}) {
  %w = arith.constant dense<1.0> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<1x3xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3xf32>) -> tensor<1x3xf32>
  %p = linalg.matmul ins(%x, %w : tensor<1x2xf32>, tensor<2x3xf32>) outs(%z : tensor<1x3xf32>) -> tensor<1x3xf32> loc("fc")
  %s = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<1x3xf32>) outs(%e : tensor<1x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %x1 = math.atan %n : f32
    linalg.yield %x1 : f32
  } -> tensor<1x3xf32> loc("probs")
  return %s : tensor<1x3xf32>
}

// -----

// Two streams joined by an op no join kernel computes.
// CHECK: error: {{.*}}node 'res' (linalg.generic): not a layer the fabric supports: {{.*}}nor an elementwise op of two streams ('math.powf' is not an add, sub, mul, div, max or min)
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @main_graph(%x: tensor<1x2xf32> {onnx.name = "x"}) -> (tensor<1x2xf32> {onnx.name = "y"}) {
  %w = arith.constant dense<1.0> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  %h = linalg.matmul ins(%x, %w : tensor<1x2xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2xf32>) -> tensor<1x2xf32> loc("fc1")
  %y = linalg.matmul ins(%h, %w : tensor<1x2xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2xf32>) -> tensor<1x2xf32> loc("fc2")
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%y, %h : tensor<1x2xf32>, tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = math.powf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2xf32> loc("res")
  return %r : tensor<1x2xf32>
}

// -----

// A reshape that mixes samples after a dense layer: the batch is streamed,
// so it cannot be dropped (and the dense layer takes one row per sample, so
// the whole tensor cannot be one sample either).
// CHECK: error: {{.*}}node 'mix' (tensor.collapse_shape): reshapes 'tensor<2x3xf32>' to 'tensor<6xf32>' across samples; the fabric streams the batch dimension (2 samples) and only reshapes within a sample
func.func @main_graph(%x: tensor<2x3xf32> {onnx.name = "x"}) -> (tensor<6xf32> {onnx.name = "y"}) {
  %w = arith.constant dense<1.0> : tensor<3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x3xf32>, tensor<3x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32> loc("fc")
  %f = tensor.collapse_shape %y [[0, 1]] : tensor<2x3xf32> into tensor<6xf32> loc("mix")
  return %f : tensor<6xf32>
}

// -----

// An op whose result no output uses would be dropped silently.
// CHECK: error: {{.*}}node 'side' (linalg.fill): is not on a path from the graph's inputs to its outputs; the fabric path would drop it
func.func @main_graph(%x: tensor<1x2xf32> {onnx.name = "x"}) -> (tensor<1x2xf32> {onnx.name = "y"}) {
  %w = arith.constant dense<1.0> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  %s = linalg.fill ins(%one : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32> loc("side")
  %y = linalg.matmul ins(%x, %w : tensor<1x2xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2xf32>) -> tensor<1x2xf32> loc("fc")
  return %y : tensor<1x2xf32>
}

// -----

// A pad that is no convolution's is refused, saying where pads are supported.
// CHECK: error: {{.*}}node 'pad' (tensor.pad): a pad of the sample is supported on the fabric only as a convolution's zero padding (or as a 0/1 matrix, when small)
func.func @main_graph(%x: tensor<1x2xf32> {onnx.name = "x"}) -> (tensor<1x4xf32> {onnx.name = "y"}) {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<1x2xf32> to tensor<1x4xf32> loc("pad")
  return %p : tensor<1x4xf32>
}

// -----

// A weight that is not a constant (here computed from the input).
// CHECK: error: {{.*}}node 'fc' (linalg.matmul): not a dense layer the fabric supports: its weight or bias is not a constant
func.func @main_graph(%x: tensor<2x2xf32> {onnx.name = "x"}) -> (tensor<2x2xf32> {onnx.name = "y"}) {
  %e = tensor.empty() : tensor<2x2xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = linalg.matmul ins(%x, %x : tensor<2x2xf32>, tensor<2x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32> loc("fc")
  return %y : tensor<2x2xf32>
}

// -----

// Transposed input (Gemm transA) is not a dense layer on streamed rows.
// CHECK: error: {{.*}}node 'fc' (linalg.matmul): not a dense layer the fabric supports: its matrix product transposes the input
func.func @main_graph(%x: tensor<2x1xf32> {onnx.name = "x"}) -> (tensor<1x3xf32> {onnx.name = "y"}) {
  %w = arith.constant dense<1.0> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<1x3xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3xf32>) -> tensor<1x3xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%x, %w : tensor<2x1xf32>, tensor<2x3xf32>) outs(%z : tensor<1x3xf32>) -> tensor<1x3xf32> loc("fc")
  return %y : tensor<1x3xf32>
}

// -----

// An elementwise op after the product that is neither a dense layer's
// epilogue (more than a bias add) nor a column kernel of its own (atan):
// refused, naming the dense layer's reason. (A plain Gemm alpha, x * 0.5 +
// c, maps: the dense layer, then a column kernel.)
// CHECK: error: {{.*}}node 'y' (linalg.generic): not a dense layer the fabric supports: its elementwise op computes more than x + bias or max(x, 0) (a Gemm alpha or beta other than 1?)
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (0, d1)>
func.func @main_graph(%x: tensor<2x2xf32> {onnx.name = "a"}) -> (tensor<2x3xf32> {onnx.name = "y"}) {
  %alpha = arith.constant 5.000000e-01 : f32
  %c = arith.constant dense<0.0> : tensor<1x3xf32>
  %w = arith.constant dense<1.0> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %p = linalg.matmul ins(%x, %w : tensor<2x2xf32>, tensor<2x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32> loc("y")
  %y = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]} ins(%p, %c : tensor<2x3xf32>, tensor<1x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %in_3: f32, %out: f32):
    %4 = arith.mulf %in, %alpha : f32
    %5 = arith.addf %4, %in_3 : f32
    %6 = math.atan %5 : f32
    linalg.yield %6 : f32
  } -> tensor<2x3xf32> loc("y")
  return %y : tensor<2x3xf32>
}


// -----

// A concat the fabric preparation could not split (it reaches the graph's
// output) says where it goes.
// CHECK: error: {{.*}}node 'cat' (tensor.concat): a concat is mapped only along the channels of feature maps ([N, C, ...], axis 1), read by convolutions or matrix products (directly or through poolings, depthwise convolutions, elementwise ops and flattenings); this one, along axis 1, reaches a graph output
func.func @main_graph(%x: tensor<1x2x3x3xf32> {onnx.name = "x"}) -> (tensor<1x4x3x3xf32> {onnx.name = "y"}) {
  %c = tensor.concat dim(1) %x, %x : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x4x3x3xf32> loc("cat")
  return %c : tensor<1x4x3x3xf32>
}
