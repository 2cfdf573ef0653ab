// RUN: weft-opt %s --weft-fuse-elementwise --split-input-file | FileCheck %s

// SiLU as the importer writes it: sigmoid(x), then x * sigmoid(x). The join
// absorbs the sigmoid; one generic reads x once.
// CHECK-LABEL: func.func @silu
// CHECK: %[[Y:.+]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x3xf32>)
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @silu(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %cst = arith.constant 1.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x3xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<2x3xf32>) outs(%0 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %e = math.exp %n : f32
    %a = arith.addf %e, %cst : f32
    %d = arith.divf %cst, %a : f32
    linalg.yield %d : f32
  } -> tensor<2x3xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %1 : tensor<2x3xf32>, tensor<2x3xf32>) outs(%0 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %m = arith.mulf %in, %in_0 : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// -----

// A chain (no join) is left alone: relu then exp stay two generics, the
// forms the dense layer and the single-op kernels match.
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK: math.exp
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @chain(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %z = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x3xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<2x3xf32>) outs(%0 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %z : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<2x3xf32>) outs(%0 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// -----

// Two graph inputs joined: nothing to fuse (no producer), left as is.
// CHECK-LABEL: func.func @two_inputs
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1
#map = affine_map<(d0) -> (d0)>
func.func @two_inputs(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg0, %arg1 : tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// x + x reads one tensor twice: it reads it once (an elementwise function
// of x, not a join of two streams).
// CHECK-LABEL: func.func @twice
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<2x6xf32>)
// CHECK: arith.addf %[[IN:.+]], %[[IN]] : f32
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @twice(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %e = tensor.empty() : tensor<2x6xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %x : tensor<2x6xf32>, tensor<2x6xf32>) outs(%e : tensor<2x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

// A join of two different tensors stays: the fabric maps it as a join
// kernel of two streams.
// CHECK-LABEL: func.func @join
// CHECK: %[[S:.+]] = linalg.generic {{.*}} ins(%arg1 : tensor<2x6xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[S]] : tensor<2x6xf32>, tensor<2x6xf32>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @join(%u: tensor<2x6xf32>, %g: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %e = tensor.empty() : tensor<2x6xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<2x6xf32>) outs(%e : tensor<2x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<2x6xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%u, %s : tensor<2x6xf32>, tensor<2x6xf32>) outs(%e : tensor<2x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}
