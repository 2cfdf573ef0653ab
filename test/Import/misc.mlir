// Broadcasting elementwise ops, softmax, transpose, slice, concat, reflect
// pad and nearest resize.
// RUN: %python %S/../models/gen_models.py misc %t.onnx
// RUN: weft-translate --import-onnx %t.onnx | FileCheck %s

// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[LAST:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @main_graph(
// CHECK-SAME: %[[X:.+]]: tensor<1x3x4xf32> {onnx.name = "x"}) -> (tensor<1x1x16x3xf32> {onnx.name = "y"})
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[LAST]], #[[ID]]]{{.*}} ins(%[[X]], %{{.+}} : tensor<1x3x4xf32>, tensor<4xf32>)
// CHECK: arith.addf
// CHECK: math.exp
// Softmax over axis 1: max-reduce, subtract, exp, sum-reduce, divide.
// CHECK: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: arith.maximumf
// CHECK: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: arith.divf
// CHECK: %[[T:.+]] = linalg.transpose {{.*}} permutation = [0, 2, 1]
// CHECK: %[[SL:.+]] = tensor.extract_slice %[[T]][0, 1, 0] [1, 3, 3] [1, 1, 1] : tensor<1x4x3xf32> to tensor<1x3x3xf32>
// CHECK: %[[CC:.+]] = tensor.concat dim(1) %[[SL]], %[[SL]] : (tensor<1x3x3xf32>, tensor<1x3x3xf32>) -> tensor<1x6x3xf32>
// Reflect padding reads the input at mirrored indices.
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<1x8x3xf32>)
// CHECK: tensor.extract %[[CC]]
// Nearest resize doubles dimension 2 through an index table.
// CHECK: linalg.generic {{.*}} ins(%{{.+}} : tensor<16xi64>) outs(%{{.+}} : tensor<1x1x16x3xf32>)
// CHECK: arith.index_cast
// CHECK: tensor.extract
