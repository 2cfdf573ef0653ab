// RUN: weft-opt %s --weft-drop-identity | FileCheck %s

#id = affine_map<(d0) -> (d0)>
// A copy, an identity generic, a same-type cast and an identity transpose
// all forward their input; the negation stays.
// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[N:.+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4xf32>) outs(%[[E]] : tensor<4xf32>)
// CHECK: arith.negf
// CHECK: return %[[X]], %[[N]]
func.func @identities(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %c = linalg.copy ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
       ins(%c : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %k = tensor.cast %g : tensor<4xf32> to tensor<4xf32>
  %t = linalg.transpose ins(%k : tensor<4xf32>) outs(%e : tensor<4xf32>) permutation = [0]
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
       ins(%t : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.negf %v : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %t, %n : tensor<4xf32>, tensor<4xf32>
}
