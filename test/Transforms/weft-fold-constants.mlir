// RUN: weft-opt %s --weft-fold-constants | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @fold_chain
// CHECK-NEXT: %[[C:.+]] = arith.constant dense<{{\[}}[2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00], [4.000000e+00, 7.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT: return %[[C]]
func.func @fold_chain() -> tensor<3x2xf32> {
  %a = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %one = arith.constant dense<1.0> : tensor<3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
       ins(%a, %one : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %e2 = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%s : tensor<2x3xf32>) outs(%e2 : tensor<3x2xf32>) permutation = [1, 0]
  return %t : tensor<3x2xf32>
}

// A reshape of a blob reuses it under the new type.
// CHECK-LABEL: func.func @reshape_blob
// CHECK-NEXT: %[[C:.+]] = arith.constant dense_resource<blob> : tensor<4x5xf32>
// CHECK-NEXT: return %[[C]]
func.func @reshape_blob() -> tensor<4x5xf32> {
  %a = arith.constant dense_resource<blob> : tensor<20xf32>
  %r = tensor.expand_shape %a [[0, 1]] output_shape [4, 5] : tensor<20xf32> into tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// Run-time operands are left alone.
// CHECK-LABEL: func.func @runtime
// CHECK: linalg.transpose
func.func @runtime(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  return %t : tensor<3x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A041"
    }
  }
#-}
