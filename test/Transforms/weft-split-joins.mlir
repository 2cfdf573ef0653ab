// RUN: weft-opt %s --split-input-file --weft-split-joins | FileCheck %s

// A Mean of three inputs, (a + b + c) / 3 in one generic: one generic per
// op, the adds joins of two tensors, the division a function of one with
// its constant (cloned into it).
// CHECK-LABEL: func.func @mean3
// CHECK: %[[AB:.+]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.addf
// CHECK: %[[ABC:.+]] = linalg.generic {{.*}} ins(%[[AB]], %arg2 : tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.addf
// CHECK: %[[M:.+]] = linalg.generic {{.*}} ins(%[[ABC]] : tensor<3xf32>)
// CHECK: arith.divf %{{.+}}, %[[C:.+]] : f32
// CHECK: return %[[M]]
#m = affine_map<(d0) -> (d0)>
func.func @mean3(%a: tensor<3xf32>, %b: tensor<3xf32>, %c: tensor<3xf32>) -> tensor<3xf32> {
  %three = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %y = linalg.generic {indexing_maps = [#m, #m, #m, #m], iterator_types = ["parallel"]} ins(%a, %b, %c : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%x: f32, %y0: f32, %z: f32, %o: f32):
    %s = arith.addf %x, %y0 : f32
    %t = arith.addf %s, %z : f32
    %d = arith.divf %t, %three : f32
    linalg.yield %d : f32
  } -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// Left alone: a join in one op, and an expression of one tensor.
// CHECK-LABEL: func.func @unchanged
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: linalg.generic
#m = affine_map<(d0) -> (d0)>
func.func @unchanged(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %e = tensor.empty() : tensor<3xf32>
  %j = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel"]} ins(%a, %b : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%x: f32, %y0: f32, %o: f32):
    %s = arith.maximumf %x, %y0 : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  %x2 = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel"]} ins(%a : tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.mulf %x, %x : f32
    %t = arith.addf %s, %x : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  return %j, %x2 : tensor<3xf32>, tensor<3xf32>
}
