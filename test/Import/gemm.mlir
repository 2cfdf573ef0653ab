// Gemm: transB through matmul's indexing maps (the weight is not copied), a
// [N] bias as the broadcast accumulator; alpha/beta with a [M, N] C as one
// elementwise generic after the product.
// RUN: %python %S/../models/gen_models.py gemm %t.onnx
// RUN: weft-translate --import-onnx %t.onnx --mlir-elide-resource-strings-if-larger=1 | FileCheck %s

// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BT:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @main_graph(
// CHECK-SAME: %[[X:.+]]: tensor<2x16xf32> {onnx.name = "x"}) -> (tensor<2x4xf32> {onnx.name = "y"})
// CHECK-DAG: %[[W1:.+]] = arith.constant dense_resource<w1> : tensor<32x16xf32>
// CHECK-DAG: %[[B1:.+]] = arith.constant dense_resource<b1> : tensor<32xf32>
// CHECK-DAG: %[[W2:.+]] = arith.constant dense_resource<w2> : tensor<32x4xf32>
// CHECK-DAG: %[[C2:.+]] = arith.constant dense<{{.*}}> : tensor<2x4xf32>
// CHECK: %[[ACC:.+]] = linalg.broadcast ins(%[[B1]] : tensor<32xf32>) outs(%{{.+}} : tensor<2x32xf32>) dimensions = [0]
// CHECK: %[[H:.+]] = linalg.matmul indexing_maps = [#[[A]], #[[BT]], #[[C]]] ins(%[[X]], %[[W1]] : tensor<2x16xf32>, tensor<32x16xf32>) outs(%[[ACC]] : tensor<2x32xf32>)
// CHECK: %[[R:.+]] = linalg.generic {{.*}} ins(%[[H]] : tensor<2x32xf32>)
// CHECK: arith.maximumf
// CHECK: %[[Z:.+]] = linalg.fill
// CHECK: %[[P:.+]] = linalg.matmul ins(%[[R]], %[[W2]] : tensor<2x32xf32>, tensor<32x4xf32>) outs(%[[Z]] : tensor<2x4xf32>)
// CHECK: %[[Y:.+]] = linalg.generic {{.*}} ins(%[[P]], %[[C2]] : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK-NEXT: ^bb0(%[[PV:.+]]: f32, %[[CV:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[ALPHA:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[AP:.+]] = arith.mulf %[[PV]], %[[ALPHA]] : f32
// CHECK-NEXT: %[[BETA:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[BC:.+]] = arith.mulf %[[CV]], %[[BETA]] : f32
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[AP]], %[[BC]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[Y]]
