// RUN: weft-opt %s --split-input-file --weft-split-concat-products | FileCheck %s

// [a, b] W = a W[0:3] + b W[3:5]; the first product keeps the accumulator
// (the bias), the second starts from zeros, an add joins them.
// CHECK-LABEL: func.func @two
// CHECK-DAG: %[[WA:.+]] = arith.constant dense<{{\[}}[0.000000e+00, 1.000000e+00], [2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG: %[[WB:.+]] = arith.constant dense<{{\[}}[6.000000e+00, 7.000000e+00], [8.000000e+00, 9.000000e+00]]> : tensor<2x2xf32>
// CHECK: %[[P:.+]] = linalg.matmul ins(%arg0, %[[WA]] : tensor<4x3xf32>, tensor<3x2xf32>) outs(%[[ACC:.+]] : tensor<4x2xf32>)
// CHECK: %[[Q:.+]] = linalg.matmul ins(%arg1, %[[WB]] : tensor<4x2xf32>, tensor<2x2xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[P]], %[[Q]] : tensor<4x2xf32>, tensor<4x2xf32>)
// CHECK: arith.addf
// CHECK-NOT: tensor.concat
func.func @two(%a: tensor<4x3xf32>, %b: tensor<4x2xf32>, %acc: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x5xf32>
  %w = arith.constant dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0]]> : tensor<5x2xf32>
  %y = linalg.matmul ins(%c, %w : tensor<4x5xf32>, tensor<5x2xf32>) outs(%acc : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// W^T (Gemm's transB): the rows of W are W^T's columns.
// CHECK-LABEL: func.func @transposed
// CHECK-DAG: arith.constant dense<{{\[}}[0.000000e+00, 3.000000e+00]]> : tensor<1x2xf32>
// CHECK-DAG: arith.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00]]> : tensor<2x2xf32>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @transposed(%a: tensor<4x1xf32>, %b: tensor<4x2xf32>, %acc: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<4x1xf32>, tensor<4x2xf32>) -> tensor<4x3xf32>
  %w = arith.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %y = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%c, %w : tensor<4x3xf32>, tensor<2x3xf32>) outs(%acc : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Unchanged: a concat with one stream (--weft-linear-to-matmul's), a
// concat along the batch, a concat that feeds something else too, a
// weight that is no constant.
// CHECK-LABEL: func.func @unchanged
// CHECK-COUNT-4: tensor.concat
func.func @unchanged(%a: tensor<4x3xf32>, %b: tensor<4x2xf32>, %w2: tensor<5x2xf32>, %acc: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x5xf32>, tensor<4x2xf32>) {
  %k = arith.constant dense<1.0> : tensor<4x2xf32>
  %w = arith.constant dense<1.0> : tensor<5x2xf32>
  %c1 = tensor.concat dim(1) %a, %k : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x5xf32>
  %y1 = linalg.matmul ins(%c1, %w : tensor<4x5xf32>, tensor<5x2xf32>) outs(%acc : tensor<4x2xf32>) -> tensor<4x2xf32>
  %c2 = tensor.concat dim(1) %a, %b : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x5xf32>
  %y2 = linalg.matmul ins(%c2, %w : tensor<4x5xf32>, tensor<5x2xf32>) outs(%acc : tensor<4x2xf32>) -> tensor<4x2xf32>
  %c3 = tensor.concat dim(1) %a, %b : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x5xf32>
  %y3 = linalg.matmul ins(%c3, %w2 : tensor<4x5xf32>, tensor<5x2xf32>) outs(%acc : tensor<4x2xf32>) -> tensor<4x2xf32>
  %c4 = tensor.concat dim(0) %b, %b : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %s = tensor.extract_slice %c4[0, 0] [4, 2] [1, 1] : tensor<8x2xf32> to tensor<4x2xf32>
  return %y1, %y3, %c2, %s : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x5xf32>, tensor<4x2xf32>
}
