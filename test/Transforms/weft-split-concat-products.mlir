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

// -----

// A convolution of a concat of feature maps along the channels, through the
// zero pad in front of it: one convolution per part with its input
// channels' weights (W[:, 0:1] and W[:, 1:3]), each on its part padded the
// same way, the first onto the bias, the second onto zeros, added.
// CHECK-LABEL: func.func @conv
// CHECK-DAG: %[[WA:.+]] = arith.constant dense<{{\[}}{{\[}}{{\[}}[0.000000e+00]]], {{\[}}{{\[}}[3.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-DAG: %[[WB:.+]] = arith.constant dense<{{\[}}{{\[}}{{\[}}[1.000000e+00]], {{\[}}[2.000000e+00]]], {{\[}}{{\[}}[4.000000e+00]], {{\[}}[5.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK-DAG: %[[PA:.+]] = tensor.pad %arg0 low[0, 0, 1, 0] high[0, 0, 0, 1]
// CHECK-DAG: %[[PB:.+]] = tensor.pad %arg1 low[0, 0, 1, 0] high[0, 0, 0, 1]
// CHECK: %[[P:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[PA]], %[[WA]] : tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) outs(%arg2 : tensor<1x2x4x4xf32>)
// CHECK: %[[Z:.+]] = linalg.fill
// CHECK: %[[Q:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[PB]], %[[WB]] : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) outs(%[[Z]] : tensor<1x2x4x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[P]], %[[Q]] : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>)
// CHECK: arith.addf
// CHECK-NOT: tensor.concat
func.func @conv(%a: tensor<1x1x3x3xf32>, %b: tensor<1x2x3x3xf32>, %bias: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %c = tensor.concat dim(1) %a, %b : (tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  %p = tensor.pad %c low[0, 0, 1, 0] high[0, 0, 0, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x3x3xf32> to tensor<1x3x4x4xf32>
  %w = arith.constant dense<[[[[0.0]], [[1.0]], [[2.0]]], [[[3.0]], [[4.0]], [[5.0]]]]> : tensor<2x3x1x1xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) outs(%bias : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Ops that work channel by channel move below the concat: a max pool (its
// -inf accumulator cut), a ReLU, and a flattening in front of a matrix
// product, which then splits; no concat is left.
// CHECK-LABEL: func.func @sink
// CHECK-COUNT-2: linalg.pooling_nchw_max {{.*}} -> tensor<1x2x2x2xf32>
// CHECK-COUNT-2: arith.maximumf
// CHECK-COUNT-2: tensor.collapse_shape {{.*}} tensor<1x2x2x2xf32> into tensor<1x8xf32>
// CHECK-COUNT-2: linalg.matmul ins({{.*}} : tensor<1x8xf32>, tensor<8x3xf32>)
// CHECK-NOT: tensor.concat
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @sink(%a: tensor<1x2x3x3xf32>, %b: tensor<1x2x3x3xf32>, %acc: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %c = tensor.concat dim(1) %a, %b : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x4x3x3xf32>
  %p = tensor.pad %c low[0, 0, 0, 0] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x4x3x3xf32> to tensor<1x4x4x4xf32>
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %m = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %win : tensor<1x4x4x4xf32>, tensor<2x2xf32>) outs(%f : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%m : tensor<1x4x2x2xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<1x4x2x2xf32>
  %flat = tensor.collapse_shape %r [[0], [1, 2, 3]] : tensor<1x4x2x2xf32> into tensor<1x16xf32>
  %w = arith.constant dense<1.0> : tensor<16x3xf32>
  %y = linalg.matmul ins(%flat, %w : tensor<1x16xf32>, tensor<16x3xf32>) outs(%acc : tensor<1x3xf32>) -> tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}

// -----

// Unchanged: a concat along a spatial axis, an elementwise op that reads
// the channel index, a concat at the graph's output.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: tensor.concat
#id2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @kept(%a: tensor<1x2x3x3xf32>, %b: tensor<1x2x3x3xf32>) -> (tensor<1x2x6x3xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) {
  %c1 = tensor.concat dim(2) %a, %b : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x6x3xf32>
  %w = arith.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c2 = tensor.concat dim(1) %a, %b : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x4x3x3xf32>
  %e = tensor.empty() : tensor<1x4x3x3xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c2 : tensor<1x4x3x3xf32>) outs(%e : tensor<1x4x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %i32 = arith.index_cast %i : index to i32
    %f = arith.sitofp %i32 : i32 to f32
    %v = arith.addf %in, %f : f32
    linalg.yield %v : f32
  } -> tensor<1x4x3x3xf32>
  %c3 = tensor.concat dim(1) %b, %a : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %c1, %r, %c3 : tensor<1x2x6x3xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>
}
