// RUN: weft-opt %s --weft-fold-batchnorm --split-input-file --verify-diagnostics

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
// The weight blob was elided when the IR was printed: nothing to fold with.
func.func @elided_weight(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  %w = arith.constant dense_resource<__elided__> : tensor<1x1x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x1x1xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) outs(%acc : tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %p = arith.constant dense<1.0> : tensor<1xf32>
  // expected-error @below {{cannot fold batch normalization into linalg.conv_2d_nchw_fchw: blob '__elided__' holds no data}}
  %y = linalg.generic {indexing_maps = [#id, #ch, #ch, #ch, #ch, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %p, %p, %p, %p : tensor<1x1x1x1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
       outs(%e : tensor<1x1x1x1xf32>) attrs = {weft.batchnorm_epsilon = 1.0 : f64} {
  ^bb0(%v: f32, %s: f32, %b: f32, %mn: f32, %vr: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
// The tag on something that is not a normalization.
func.func @not_a_batchnorm(%x: tensor<2xf32>) -> tensor<2xf32> {
  %e = tensor.empty() : tensor<2xf32>
  // expected-error @below {{is tagged weft.batchnorm_epsilon but is not a (x, scale, bias, mean, var) normalization with a float epsilon}}
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
       ins(%x : tensor<2xf32>) outs(%e : tensor<2xf32>) attrs = {weft.batchnorm_epsilon = 1.0 : f64} {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<2xf32>
  return %y : tensor<2xf32>
}
