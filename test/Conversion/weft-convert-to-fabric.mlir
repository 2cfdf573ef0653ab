// RUN: weft-opt %s --split-input-file --weft-convert-to-fabric | FileCheck %s
// RUN: weft-opt %s --split-input-file --weft-convert-to-fabric=grid=8x4 | FileCheck %s --check-prefix=GRID

// MatMul + Add + Relu on a batch of 2: the program streams the batch rows as
// samples (per-sample host tensors, weft.batch = 2) and the kernel holds the
// layer on one row, the Add folded into a broadcast bias accumulator.

// CHECK-LABEL: fabric.program @main_graph
// CHECK-SAME: target = #fabric.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>
// CHECK-SAME: weft.batch = 2 : i64
// CHECK-DAG: fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
// CHECK-DAG: fabric.io @y output east rows 0 to 1 : tensor<1x3xf32>
// CHECK: fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x3xf32> {
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
// GRID-SAME: target = #fabric.target<8x4,
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
// CHECK: fabric.kernel @y_1 : (tensor<1x2xf32>) -> tensor<1x3xf32>
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
