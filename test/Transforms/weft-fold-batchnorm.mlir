// RUN: weft-opt %s --weft-fold-batchnorm --split-input-file | FileCheck %s

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
// s = scale / sqrt(var + eps) = [2 / 1, 1 / 2]; W' = W * s; b' = b * s + beta.
// CHECK-LABEL: func.func @conv_bias
// CHECK-SAME: (%[[X:.+]]: tensor<1x1x2x2xf32>)
// CHECK-DAG: %[[W:.+]] = arith.constant dense<{{\[}}[{{\[}}[2.000000e+00]]], {{\[}}[{{\[}}1.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-DAG: %[[B:.+]] = arith.constant dense<[1.000000e+00, 5.000000e-01]> : tensor<2xf32>
// CHECK: %[[ACC:.+]] = linalg.broadcast ins(%[[B]] : tensor<2xf32>) outs(%{{.+}} : tensor<1x2x2x2xf32>) dimensions = [0, 2, 3]
// CHECK: %[[C:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ACC]] : {{.*}})
// CHECK-NOT: linalg.generic
// CHECK: return %[[C]]
func.func @conv_bias(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = arith.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %scale = arith.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %beta = arith.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = arith.constant dense<[0.0, 0.0]> : tensor<2xf32>
  %var = arith.constant dense<[0.0, 3.0]> : tensor<2xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %acc = linalg.broadcast ins(%b : tensor<2xf32>) outs(%e : tensor<1x2x2x2xf32>) dimensions = [0, 2, 3]
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%acc : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %e2 = tensor.empty() : tensor<1x2x2x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #ch, #ch, #ch, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %scale, %beta, %mean, %var : tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
       outs(%e2 : tensor<1x2x2x2xf32>) attrs = {weft.batchnorm_epsilon = 1.0 : f64} {
  ^bb0(%v: f32, %s: f32, %bt: f32, %m: f32, %vr: f32, %o: f32):
    %eps = arith.constant 1.0 : f32
    %d = arith.subf %v, %m : f32
    %ve = arith.addf %vr, %eps : f32
    %sq = math.sqrt %ve : f32
    %n = arith.divf %d, %sq : f32
    %sc = arith.mulf %n, %s : f32
    %r = arith.addf %sc, %bt : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#ch2 = affine_map<(d0, d1) -> (d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
// A Gemm with transB (weight [N, K]) and no bias: rows of W scale.
// CHECK-LABEL: func.func @matmul_transb
// CHECK-DAG: %[[W:.+]] = arith.constant dense<{{\[}}[2.000000e+00, 4.000000e+00], [1.500000e+00, 2.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: %[[B:.+]] = arith.constant dense<[-2.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK: %[[ACC:.+]] = linalg.broadcast ins(%[[B]] : tensor<2xf32>) outs(%{{.+}} : tensor<1x2xf32>) dimensions = [0]
// CHECK: linalg.matmul indexing_maps = {{.*}} ins(%{{.+}}, %[[W]] : tensor<1x2xf32>, tensor<2x2xf32>) outs(%[[ACC]] : tensor<1x2xf32>)
func.func @matmul_transb(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  %m = linalg.matmul indexing_maps = [#a, #bt, #c]
       ins(%x, %w : tensor<1x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<1x2xf32>) -> tensor<1x2xf32>
  %scale = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %beta = arith.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = arith.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = arith.constant dense<[0.0, 0.0]> : tensor<2xf32>
  %e2 = tensor.empty() : tensor<1x2xf32>
  %y = linalg.generic {indexing_maps = [#id2, #ch2, #ch2, #ch2, #ch2, #id2],
                       iterator_types = ["parallel", "parallel"]}
       ins(%m, %scale, %beta, %mean, %var : tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
       outs(%e2 : tensor<1x2xf32>) attrs = {weft.batchnorm_epsilon = 1.0 : f64} {
  ^bb0(%v: f32, %s: f32, %b: f32, %mn: f32, %vr: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch3 = affine_map<(d0, d1, d2, d3) -> (d1)>
// Run-time statistics (a function argument) leave the normalization alone.
// CHECK-LABEL: func.func @runtime_stats
// CHECK: linalg.generic {{.*}}weft.batchnorm_epsilon
func.func @runtime_stats(%x: tensor<1x1x1x1xf32>, %var: tensor<1xf32>) -> tensor<1x1x1x1xf32> {
  %w = arith.constant dense<1.0> : tensor<1x1x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x1x1xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) outs(%acc : tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %p = arith.constant dense<1.0> : tensor<1xf32>
  %y = linalg.generic {indexing_maps = [#id3, #ch3, #ch3, #ch3, #ch3, #id3],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %p, %p, %p, %var : tensor<1x1x1x1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
       outs(%e : tensor<1x1x1x1xf32>) attrs = {weft.batchnorm_epsilon = 1.0 : f64} {
  ^bb0(%v: f32, %s: f32, %b: f32, %mn: f32, %vr: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}
