// RUN: weft-opt %s --split-input-file --weft-convert-to-fabric | FileCheck %s
// RUN: weft-opt %s --split-input-file --weft-convert-to-fabric=grid=8x4 | FileCheck %s --check-prefix=GRID

// MatMul + Add + Relu on a batch of 2: the program streams the batch rows as
// samples (per-sample host tensors, weft.batch = 2) and the kernel holds the
// layer on one row, the Add folded into a broadcast bias accumulator.

// CHECK-LABEL: fabric.program @main_graph
// CHECK-SAME: target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>
// CHECK-SAME: weft.batch = 2 : i64
// CHECK-DAG: fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
// CHECK-DAG: fabric.io @y output east rows 0 to 1 : tensor<1x3xf32>
// CHECK: fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x3xf32> scheme #fabric.dense<fan_in = 4, neurons = 3, relu = true, weights = dense<{{.*}}> : tensor<4x3xf32>, bias = dense<[5.000000e-01, -5.000000e-01, 2.500000e-01]> : tensor<3xf32>> {
// CHECK-NEXT: ^bb0(%[[X:.+]]: tensor<1x4xf32>):
// CHECK-DAG: %[[W:.+]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00], [7.000000e+00, 8.000000e+00, 9.000000e+00], [1.000000e+01, 1.100000e+01, 1.200000e+01]]> : tensor<4x3xf32>
// CHECK-DAG: %[[B:.+]] = arith.constant dense<[5.000000e-01, -5.000000e-01, 2.500000e-01]> : tensor<3xf32>
// CHECK: %[[ACC:.+]] = linalg.broadcast ins(%[[B]] : tensor<3xf32>) outs(%{{.+}} : tensor<1x3xf32>) dimensions = [0]
// CHECK: %[[MM:.+]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<1x4xf32>, tensor<4x3xf32>) outs(%[[ACC]] : tensor<1x3xf32>)
// CHECK: %[[R:.+]] = linalg.generic {{.*}} ins(%[[MM]] : tensor<1x3xf32>)
// CHECK: arith.maximumf
// CHECK: fabric.yield %[[R]] : tensor<1x3xf32>
// CHECK-DAG: fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 4>
// CHECK-DAG: fabric.stream @fc_to_y @fc[0] -> @y[0] : !fabric.wavelets<f32, 3>
// CHECK-NOT: func.func
// GRID-LABEL: fabric.program @main_graph
// GRID-SAME: target = #weft.target<8x4,
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @main_graph(%x: tensor<2x4xf32> {onnx.name = "x"}) -> (tensor<2x3xf32> {onnx.name = "y"}) {
  %b = arith.constant dense<[0.5, -0.5, 0.25]> : tensor<3xf32>
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]> : tensor<4x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %p = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32> loc("fc")
  %s = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]} ins(%p, %b : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %a = arith.addf %in, %bias : f32
    linalg.yield %a : f32
  } -> tensor<2x3xf32> loc("fc_bias")
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c0 = arith.constant 0.0 : f32
    %m = arith.maximumf %in, %c0 : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32> loc("act")
  return %r : tensor<2x3xf32>
}

// -----

// Gemm with transB and no activation: the kernel's weights are [K, M] (the
// transpose of the ONNX B), so the lowering always reads x * W. The node is
// called like the graph output, so the kernel gets a fresh symbol.

// CHECK-LABEL: fabric.program @main_graph
// CHECK-SAME: weft.batch = 1 : i64
// CHECK: fabric.kernel @y_1 : (tensor<1x2xf32>) -> tensor<1x3xf32> scheme #fabric.dense<fan_in = 2, neurons = 3, weights = {{.*}}, bias = {{.*}}>
// CHECK: arith.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK: linalg.matmul ins
// CHECK-NOT: linalg.generic
// CHECK: fabric.yield
// CHECK: fabric.stream @x_to_y_1 @x[0] -> @y_1[0] : !fabric.wavelets<f32, 2>
// CHECK: fabric.stream @y_1_to_y @y_1[0] -> @y[0] : !fabric.wavelets<f32, 3>
func.func @main_graph(%x: tensor<1x2xf32> {onnx.name = "x"}) -> (tensor<1x3xf32> {onnx.name = "y"}) {
  %b = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %e = tensor.empty() : tensor<1x3xf32>
  %acc = linalg.broadcast ins(%b : tensor<3xf32>) outs(%e : tensor<1x3xf32>) dimensions = [0]
  %y = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%x, %w : tensor<1x2xf32>, tensor<3x2xf32>) outs(%acc : tensor<1x3xf32>) -> tensor<1x3xf32> loc("y")
  return %y : tensor<1x3xf32>
}

// -----

// A chain (ONNX Flatten, Gemm + Relu, Gemm, LogSoftmax on a batch of 2, as
// imported): the Flatten is dropped, the ReLU fused into the first dense
// kernel, the LogSoftmax becomes a column kernel whose ops are cloned on one
// sample (the batch dimension of every result set to 1), and the streams
// run host input -> fc1 -> fc2 -> logsoftmax_2 -> host output in that order.

// CHECK-LABEL: fabric.program @main_graph
// CHECK-SAME: weft.batch = 2 : i64
// CHECK-DAG: fabric.io @x input west rows 0 to 1 : tensor<1x1x2x2xf32>
// CHECK-DAG: fabric.io @y output east rows 0 to 1 : tensor<1x2xf32>
// CHECK: fabric.kernel @fc1 : (tensor<1x4xf32>) -> tensor<1x3xf32> scheme #fabric.dense<fan_in = 4, neurons = 3, relu = true, {{.*}}> {
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<1x4xf32>, tensor<4x3xf32>)
// CHECK: arith.maximumf
// CHECK: fabric.kernel @fc2 : (tensor<1x3xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 3, neurons = 2, weights = {{.*}}, bias = {{.*}}> {
// CHECK-NOT: arith.maximumf
// CHECK: fabric.kernel @logsoftmax_2 : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.softmax<log = true> {
// CHECK-NEXT: ^bb0(%[[X:.+]]: tensor<1x2xf32>):
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1xf32>) -> tensor<1xf32>
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<1x2xf32>)
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
// CHECK: math.exp
// CHECK: math.log
// CHECK: fabric.yield %{{.+}} : tensor<1x2xf32>
// CHECK-NEXT: }
// CHECK-NEXT: fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 4>
// CHECK-NEXT: fabric.stream @fc1_to_fc2 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 3>
// CHECK-NEXT: fabric.stream @fc2_to_logsoftmax_2 @fc2[0] -> @logsoftmax_2[0] : !fabric.wavelets<f32, 2>
// CHECK-NEXT: fabric.stream @logsoftmax_2_to_y @logsoftmax_2[0] -> @y[0] : !fabric.wavelets<f32, 2>
// CHECK-NOT: func.func
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>
func.func @main_graph(%arg0: tensor<2x1x2x2xf32> {onnx.name = "x"}) -> (tensor<2x2xf32> {onnx.name = "y"}) {
  %cst = arith.constant 0xFF800000 : f32 loc("logsoftmax_2")
  %cst_0 = arith.constant dense<[[-0.275602907, 1.29406381], [-0.275602907, 1.29406381]]> : tensor<2x2xf32> loc("fc2")
  %cst_1 = arith.constant 0.000000e+00 : f32
  %cst_2 = arith.constant dense<[[-0.736454069, -0.162909955, -0.482119322], [-0.736454069, -0.162909955, -0.482119322]]> : tensor<2x3xf32> loc("fc1")
  %cst_3 = arith.constant dense<[[3.457440e-01, 0.0229335688], [-0.16884999, -0.451435059], [-0.148490012, 0.00470089028]]> : tensor<3x2xf32> loc("fc2")
  %cst_4 = arith.constant dense<[[0.172792092, 0.41080907, 0.165218532], [-0.651578605, 0.452677935, 0.223187283], [-0.268476605, 0.290559053, 0.182286203], [0.14706625, 0.014211121, 0.273356497]]> : tensor<4x3xf32> loc("fc1")
  %collapsed = tensor.collapse_shape %arg0 [[0], [1, 2, 3]] : tensor<2x1x2x2xf32> into tensor<2x4xf32> loc("flatten")
  %0 = linalg.matmul ins(%collapsed, %cst_4 : tensor<2x4xf32>, tensor<4x3xf32>) outs(%cst_2 : tensor<2x3xf32>) -> tensor<2x3xf32> loc("fc1")
  %1 = tensor.empty() : tensor<2x3xf32> loc("relu_1")
  %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<2x3xf32>) outs(%1 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %13 = arith.maximumf %in, %cst_1 : f32 loc("relu_1")
    linalg.yield %13 : f32 loc("relu_1")
  } -> tensor<2x3xf32> loc("relu_1")
  %3 = linalg.matmul ins(%2, %cst_3 : tensor<2x3xf32>, tensor<3x2xf32>) outs(%cst_0 : tensor<2x2xf32>) -> tensor<2x2xf32> loc("fc2")
  %4 = tensor.empty() : tensor<2xf32> loc("logsoftmax_2")
  %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<2xf32>) -> tensor<2xf32> loc("logsoftmax_2")
  %6 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%3 : tensor<2x2xf32>) outs(%5 : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %13 = arith.maximumf %out, %in : f32 loc("logsoftmax_2")
    linalg.yield %13 : f32 loc("logsoftmax_2")
  } -> tensor<2xf32> loc("logsoftmax_2")
  %expanded = tensor.expand_shape %6 [[0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32> loc("logsoftmax_2")
  %7 = tensor.empty() : tensor<2x2xf32> loc("logsoftmax_2")
  %8 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%3, %expanded : tensor<2x2xf32>, tensor<2x1xf32>) outs(%7 : tensor<2x2xf32>) {
  ^bb0(%in: f32, %in_6: f32, %out: f32):
    %13 = arith.subf %in, %in_6 : f32 loc("logsoftmax_2")
    linalg.yield %13 : f32 loc("logsoftmax_2")
  } -> tensor<2x2xf32> loc("logsoftmax_2")
  %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<2x2xf32>) outs(%7 : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %13 = math.exp %in : f32 loc("logsoftmax_2")
    linalg.yield %13 : f32 loc("logsoftmax_2")
  } -> tensor<2x2xf32> loc("logsoftmax_2")
  %10 = linalg.fill ins(%cst_1 : f32) outs(%4 : tensor<2xf32>) -> tensor<2xf32> loc("logsoftmax_2")
  %11 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%9 : tensor<2x2xf32>) outs(%10 : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %13 = arith.addf %out, %in : f32 loc("logsoftmax_2")
    linalg.yield %13 : f32 loc("logsoftmax_2")
  } -> tensor<2xf32> loc("logsoftmax_2")
  %expanded_5 = tensor.expand_shape %11 [[0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32> loc("logsoftmax_2")
  %12 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%8, %expanded_5 : tensor<2x2xf32>, tensor<2x1xf32>) outs(%7 : tensor<2x2xf32>) {
  ^bb0(%in: f32, %in_6: f32, %out: f32):
    %13 = math.log %in_6 : f32 loc("logsoftmax_2")
    %14 = arith.subf %in, %13 : f32 loc("logsoftmax_2")
    linalg.yield %14 : f32 loc("logsoftmax_2")
  } -> tensor<2x2xf32> loc("logsoftmax_2")
  return %12 : tensor<2x2xf32>
}


// -----

// MatMul + Add with Sigmoid then Tanh after the first layer (as imported,
// batch 1): two column kernels between the dense ones, each with the
// importer's elementwise body.

// CHECK-LABEL: fabric.program @main_graph
// CHECK: fabric.kernel @fc1 : (tensor<1x3xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 3, neurons = 4, weights = {{.*}}, bias = {{.*}}> {
// CHECK: linalg.broadcast
// CHECK: fabric.kernel @sigmoid_1 : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Sigmoid"> {
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: fabric.kernel @tanh_1 : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Tanh"> {
// CHECK: math.tanh
// CHECK: fabric.kernel @fc2 : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = {{.*}}, bias = {{.*}}> {
// CHECK: fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 3>
// CHECK-NEXT: fabric.stream @fc1_to_sigmoid_1 @fc1[0] -> @sigmoid_1[0] : !fabric.wavelets<f32, 4>
// CHECK-NEXT: fabric.stream @sigmoid_1_to_tanh_1 @sigmoid_1[0] -> @tanh_1[0] : !fabric.wavelets<f32, 4>
// CHECK-NEXT: fabric.stream @tanh_1_to_fc2 @tanh_1[0] -> @fc2[0] : !fabric.wavelets<f32, 4>
// CHECK-NEXT: fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 2>
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
func.func @main_graph(%arg0: tensor<1x3xf32> {onnx.name = "x"}) -> (tensor<1x2xf32> {onnx.name = "y"}) {
  %cst = arith.constant 1.000000e+00 : f32
  %cst_0 = arith.constant 0.000000e+00 : f32
  %cst_1 = arith.constant dense<[-2.71116257, -1.88901329]> : tensor<2xf32> loc("fc2_bias")
  %cst_2 = arith.constant dense<[[0.0198610537, -0.146228373], [-0.390954226, -0.128596127], [0.00407109037, -0.137801453], [0.647031903, 0.503362179]]> : tensor<4x2xf32> loc("fc2")
  %cst_3 = arith.constant dense<[-0.736454069, -0.162909955, -0.482119322, 0.598846197]> : tensor<4xf32> loc("fc1_bias")
  %cst_4 = arith.constant dense<[[0.199523121, 0.474361449, 0.190777928, -0.752378165], [0.522707462, 0.25771448, -0.310010105, 0.335508704], [0.210485965, 0.169817477, 0.016409589, 0.31564489]]> : tensor<3x4xf32> loc("fc1")
  %0 = tensor.empty() : tensor<1x4xf32> loc("fc1")
  %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<1x4xf32>) -> tensor<1x4xf32> loc("fc1")
  %2 = linalg.matmul ins(%arg0, %cst_4 : tensor<1x3xf32>, tensor<3x4xf32>) outs(%1 : tensor<1x4xf32>) -> tensor<1x4xf32> loc("fc1")
  %3 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%2, %cst_3 : tensor<1x4xf32>, tensor<4xf32>) outs(%0 : tensor<1x4xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %10 = arith.addf %in, %in_5 : f32 loc("fc1_bias")
    linalg.yield %10 : f32 loc("fc1_bias")
  } -> tensor<1x4xf32> loc("fc1_bias")
  %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<1x4xf32>) outs(%0 : tensor<1x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = arith.negf %in : f32 loc("sigmoid_1")
    %11 = math.exp %10 : f32 loc("sigmoid_1")
    %12 = arith.addf %11, %cst : f32 loc("sigmoid_1")
    %13 = arith.divf %cst, %12 : f32 loc("sigmoid_1")
    linalg.yield %13 : f32 loc("sigmoid_1")
  } -> tensor<1x4xf32> loc("sigmoid_1")
  %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<1x4xf32>) outs(%0 : tensor<1x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = math.tanh %in : f32 loc("tanh_1")
    linalg.yield %10 : f32 loc("tanh_1")
  } -> tensor<1x4xf32> loc("tanh_1")
  %6 = tensor.empty() : tensor<1x2xf32> loc("fc2")
  %7 = linalg.fill ins(%cst_0 : f32) outs(%6 : tensor<1x2xf32>) -> tensor<1x2xf32> loc("fc2")
  %8 = linalg.matmul ins(%5, %cst_2 : tensor<1x4xf32>, tensor<4x2xf32>) outs(%7 : tensor<1x2xf32>) -> tensor<1x2xf32> loc("fc2")
  %9 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%8, %cst_1 : tensor<1x2xf32>, tensor<2xf32>) outs(%6 : tensor<1x2xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %10 = arith.addf %in, %in_5 : f32 loc("fc2_bias")
    linalg.yield %10 : f32 loc("fc2_bias")
  } -> tensor<1x2xf32> loc("fc2_bias")
  return %9 : tensor<1x2xf32>
}


// -----

// The output is the input reshaped: one Copy kernel (an elementwise generic
// that yields its input) moves each sample across.

// CHECK-LABEL: fabric.program @main_graph
// CHECK-SAME: weft.batch = 2
// CHECK: fabric.kernel @layer : (tensor<1x2x2xf32>) -> tensor<1x2x2xf32> scheme #fabric.elementwise<op = "Copy"> {
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: fabric.stream @layer_to_y @layer[0] -> @y[0] : !fabric.wavelets<f32, 4>
func.func @main_graph(%x: tensor<2x2x2xf32> {onnx.name = "x"}) -> (tensor<2x4xf32> {onnx.name = "y"}) {
  %f = tensor.collapse_shape %x [[0], [1, 2]] : tensor<2x2x2xf32> into tensor<2x4xf32> loc("flatten")
  return %f : tensor<2x4xf32>
}

// -----

// A reshape that mixes the first dimension before an elementwise op: the
// whole tensor is one sample (batch 1). Clip's bounds come from splat
// constant tensors read through extra inputs of the generic.

// CHECK-LABEL: fabric.program @main_graph
// CHECK-SAME: weft.batch = 1
// CHECK: fabric.io @x input west rows 0 to 1 : tensor<2x3xf32>
// CHECK: fabric.kernel @clip : (tensor<6xf32>) -> tensor<6xf32> scheme #fabric.elementwise<op = "Clip", params = [-1.000000e+00, 1.000000e+00]> {
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: fabric.stream @clip_to_y @clip[0] -> @y[0] : !fabric.wavelets<f32, 6>
func.func @main_graph(%x: tensor<2x3xf32> {onnx.name = "x"}) -> (tensor<6xf32> {onnx.name = "y"}) {
  %lo = arith.constant dense<-1.0> : tensor<f32>
  %hi = arith.constant dense<1.0> : tensor<f32>
  %f = tensor.collapse_shape %x [[0, 1]] : tensor<2x3xf32> into tensor<6xf32> loc("mix")
  %e = tensor.empty() : tensor<6xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%f, %lo, %hi : tensor<6xf32>, tensor<f32>, tensor<f32>) outs(%e : tensor<6xf32>) {
  ^bb0(%in: f32, %l: f32, %h: f32, %out: f32):
    %0 = arith.maximumf %in, %l : f32
    %1 = arith.minimumf %0, %h : f32
    linalg.yield %1 : f32
  } -> tensor<6xf32> loc("clip")
  return %c : tensor<6xf32>
}

// -----

// A residual connection: x feeds fc1 and the join (one stream, two
// destinations), fc1 feeds fc2 and the join; the join adds fc2's output to
// fc1's, and both the join and fc1 are graph outputs (a fork to a kernel
// and a host port).
// CHECK-LABEL: fabric.program @main_graph
// CHECK: fabric.io @x input west
// CHECK: fabric.io @y output east
// CHECK: fabric.io @h output east
// CHECK: fabric.kernel @fc1 : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 2, neurons = 2,
// CHECK: fabric.kernel @fc2 : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 2, neurons = 2,
// CHECK: fabric.kernel @res : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.join<op = add> {
// CHECK: fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 2>
// CHECK: fabric.stream @fc1_fork @fc1[0] -> @fc2[0], @res[1], @h[0] : !fabric.wavelets<f32, 2>
// CHECK: fabric.stream @fc2_to_res @fc2[0] -> @res[0] : !fabric.wavelets<f32, 2>
// CHECK: fabric.stream @res_to_y @res[0] -> @y[0] : !fabric.wavelets<f32, 2>
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @main_graph(%x: tensor<1x2xf32> {onnx.name = "x"}) -> (tensor<1x2xf32> {onnx.name = "y"}, tensor<1x2xf32> {onnx.name = "h"}) {
  %w = arith.constant dense<1.0> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  %h = linalg.matmul ins(%x, %w : tensor<1x2xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2xf32>) -> tensor<1x2xf32> loc("fc1")
  %y = linalg.matmul ins(%h, %w : tensor<1x2xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2xf32>) -> tensor<1x2xf32> loc("fc2")
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%y, %h : tensor<1x2xf32>, tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2xf32> loc("res")
  return %r, %h : tensor<1x2xf32>, tensor<1x2xf32>
}
