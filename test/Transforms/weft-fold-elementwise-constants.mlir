// RUN: weft-opt %s --weft-fold-elementwise-constants | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#ch = affine_map<(d0, d1) -> (d1)>

// Inference batch normalization without a producer to fold into:
// (x - mean) / sqrt(var + eps) * scale + bias = x * A + B per channel with
// s = sqrt(var + eps) = [2, 1, 4], A = scale / s = [1, 3, 2] and
// B = bias - mean * A = [-0.5, -5, -6], constants of one sample kept per
// channel (tensor<1x3xf32>, map (d0, d1) -> (0, d1)).
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[CH:.+]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @batchnorm
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK: %[[A:.+]] = arith.constant dense<{{\[}}[1.000000e+00, 3.000000e+00, 2.000000e+00]]> : tensor<1x3xf32>
// CHECK: %[[XA:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[ID]]]
// CHECK-SAME: ins(%[[X]], %[[A]] : tensor<2x3xf32>, tensor<1x3xf32>)
// CHECK: arith.mulf
// CHECK: %[[B:.+]] = arith.constant dense<{{\[}}[-5.000000e-01, -5.000000e+00, -6.000000e+00]]> : tensor<1x3xf32>
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[ID]]]
// CHECK-SAME: ins(%[[XA]], %[[B]] : tensor<2x3xf32>, tensor<1x3xf32>)
// CHECK: arith.addf
// CHECK-NOT: weft.batchnorm_epsilon
// CHECK: return %[[Y]]
func.func @batchnorm(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %scale = arith.constant dense<[2.0, 3.0, 8.0]> : tensor<3xf32>
  %bias = arith.constant dense<[0.5, 1.0, 0.0]> : tensor<3xf32>
  %mean = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %var = arith.constant dense<[3.0, 0.0, 15.0]> : tensor<3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #ch, #ch, #ch, #id],
                       iterator_types = ["parallel", "parallel"]}
       ins(%x, %scale, %bias, %mean, %var : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
       outs(%e : tensor<2x3xf32>) attrs = {weft.batchnorm_epsilon = 1.0 : f64} {
  ^bb0(%v: f32, %s: f32, %b: f32, %mn: f32, %vr: f32, %o: f32):
    %d = arith.subf %v, %mn : f32
    %eps = arith.constant 1.0 : f32
    %ve = arith.addf %vr, %eps : f32
    %sd = math.sqrt %ve : f32
    %q = arith.divf %d, %sd : f32
    %m = arith.mulf %q, %s : f32
    %r = arith.addf %m, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}


// A and B are computed in double and rounded once: A = scale / sqrt(var)
// with scale = 3 and var = 2 is 2.1213203435... -> 0x4007C3B6 (2.12132025),
// where 3 / fl(sqrt(2)) in f32 would give 0x4007C3B7 (2.1213205), one ulp
// off; B = -mean * A with mean = fl(0.1) is -0.212132037.
// CHECK-LABEL: func.func @rounded_once
// CHECK: arith.constant 2.12132025 : f32
// CHECK: arith.mulf
// CHECK: arith.constant -0.212132037 : f32
// CHECK: arith.addf
func.func @rounded_once(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %scale = arith.constant dense<3.0> : tensor<3xf32>
  %mean = arith.constant dense<0.1> : tensor<3xf32>
  %var = arith.constant dense<2.0> : tensor<3xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #ch, #ch, #id],
                       iterator_types = ["parallel", "parallel"]}
       ins(%x, %scale, %mean, %var : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
       outs(%e : tensor<4x3xf32>) {
  ^bb0(%v: f32, %s: f32, %mn: f32, %vr: f32, %o: f32):
    %d = arith.subf %v, %mn : f32
    %sd = math.sqrt %vr : f32
    %q = arith.divf %d, %sd : f32
    %m = arith.mulf %q, %s : f32
    linalg.yield %m : f32
  } -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}


#v = affine_map<(d0) -> (d0)>

// ONNX Sum(x, C1, C2) on [3] (the whole tensor varies along d0, so the
// constant keeps it): A = 1 is dropped, B = C1 + C2.
// CHECK-LABEL: func.func @sum
// CHECK-SAME: (%[[X:.+]]: tensor<3xf32>)
// CHECK: %[[B:.+]] = arith.constant dense<[5.000000e+00, 7.000000e+00, 9.000000e+00]> : tensor<3xf32>
// CHECK-NOT: arith.mulf
// CHECK: %[[Y:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[B]] : tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.addf
// CHECK: return %[[Y]]
func.func @sum(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c1 = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %c2 = arith.constant dense<[4.0, 5.0, 6.0]> : tensor<3xf32>
  %e = tensor.empty() : tensor<3xf32>
  %y = linalg.generic {indexing_maps = [#v, #v, #v, #v], iterator_types = ["parallel"]}
       ins(%x, %c1, %c2 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %c : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  return %y : tensor<3xf32>
}


// ONNX Mean(x, C1, C2): A = 1/3 everywhere becomes a scalar in the body,
// B = (C1 + C2) / 3.
// CHECK-LABEL: func.func @mean
// CHECK-SAME: (%[[X:.+]]: tensor<3xf32>)
// CHECK: %[[XA:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<3xf32>)
// CHECK: %[[K:.+]] = arith.constant 0.333333343 : f32
// CHECK: arith.mulf %{{.+}}, %[[K]] : f32
// CHECK: %[[B:.+]] = arith.constant dense<[1.66666663, 2.33333325, 3.000000e+00]> : tensor<3xf32>
// CHECK: %[[Y:.+]] = linalg.generic
// CHECK-SAME: ins(%[[XA]], %[[B]] : tensor<3xf32>, tensor<3xf32>)
// CHECK: return %[[Y]]
func.func @mean(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c1 = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %c2 = arith.constant dense<[4.0, 5.0, 6.0]> : tensor<3xf32>
  %e = tensor.empty() : tensor<3xf32>
  %y = linalg.generic {indexing_maps = [#v, #v, #v, #v], iterator_types = ["parallel"]}
       ins(%x, %c1, %c2 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %c : f32
    %n = arith.constant 3.0 : f32
    %m = arith.divf %t, %n : f32
    linalg.yield %m : f32
  } -> tensor<3xf32>
  return %y : tensor<3xf32>
}


// ONNX Max(x, C1, C2): one maximumf with max(C1, C2), NaN kept.
// CHECK-LABEL: func.func @max_chain
// CHECK-SAME: (%[[X:.+]]: tensor<3xf32>)
// CHECK: %[[M:.+]] = arith.constant dense<[4.000000e+00, 0x7FC00000, 6.000000e+00]> : tensor<3xf32>
// CHECK: %[[Y:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[M]] : tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.maximumf
// CHECK-NOT: arith.maximumf
// CHECK: return %[[Y]]
func.func @max_chain(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c1 = arith.constant dense<[1.0, 0x7FC00000, 6.0]> : tensor<3xf32>
  %c2 = arith.constant dense<[4.0, 5.0, -2.0]> : tensor<3xf32>
  %e = tensor.empty() : tensor<3xf32>
  %y = linalg.generic {indexing_maps = [#v, #v, #v, #v], iterator_types = ["parallel"]}
       ins(%x, %c1, %c2 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %s = arith.maximumf %a, %b : f32
    %t = arith.maximumf %s, %c : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  return %y : tensor<3xf32>
}


// ONNX Min(C1, x, C2) where min(C1, C2) is the same everywhere: a scalar.
// CHECK-LABEL: func.func @min_chain_splat
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: arith.constant dense
// CHECK: %[[Y:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<2x3xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[K:.+]] = arith.constant -3.000000e+00 : f32
// CHECK: arith.minimumf %[[IN]], %[[K]] : f32
// CHECK: return %[[Y]]
func.func @min_chain_splat(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c1 = arith.constant dense<[-1.0, 0.0, 2.0]> : tensor<3xf32>
  %c2 = arith.constant dense<[[-3.0], [-3.0]]> : tensor<2x1xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %y = linalg.generic {indexing_maps = [#ch, #id, affine_map<(d0, d1) -> (d0, 0)>, #id],
                       iterator_types = ["parallel", "parallel"]}
       ins(%c1, %x, %c2 : tensor<3xf32>, tensor<2x3xf32>, tensor<2x1xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %s = arith.minimumf %a, %b : f32
    %t = arith.minimumf %s, %c : f32
    linalg.yield %t : f32
  } -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// The same with min(C1, C2) constant along dimension 1: the constant keeps
// dimension 0 only (tensor<2x1xf32>, map (d0, d1) -> (d0, 0)). The chain
// may mix constant-only ops in (here -C2).
// CHECK-LABEL: func.func @min_chain_rows
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK: %[[M:.+]] = arith.constant dense<{{\[}}[-3.000000e+00], [-5.000000e+00]]> : tensor<2x1xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]]
// CHECK-SAME: ins(%[[X]], %[[M]] : tensor<2x3xf32>, tensor<2x1xf32>)
// CHECK: arith.minimumf
// CHECK-NOT: arith.minimumf
func.func @min_chain_rows(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c1 = arith.constant dense<[-1.0, 0.0, 2.0]> : tensor<3xf32>
  %c2 = arith.constant dense<[[3.0], [5.0]]> : tensor<2x1xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %y = linalg.generic {indexing_maps = [#ch, #id, affine_map<(d0, d1) -> (d0, 0)>, #id],
                       iterator_types = ["parallel", "parallel"]}
       ins(%c1, %x, %c2 : tensor<3xf32>, tensor<2x3xf32>, tensor<2x1xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %s = arith.minimumf %a, %b : f32
    %n = arith.negf %c : f32
    %t = arith.minimumf %s, %n : f32
    linalg.yield %t : f32
  } -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// C - x + 0: A = -1 everywhere (a scalar), B = C varies along both
// dimensions (the batch included) and keeps the whole shape.
// CHECK-LABEL: func.func @per_element
// CHECK-SAME: (%[[X:.+]]: tensor<2x2xf32>)
// CHECK: %[[XA:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<2x2xf32>)
// CHECK: arith.constant -1.000000e+00 : f32
// CHECK: arith.mulf
// CHECK: %[[B:.+]] = arith.constant dense<{{\[}}[2.000000e+00, 3.000000e+00], [1.000000e+00, 5.000000e+00]]> : tensor<2x2xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[XA]], %[[B]] : tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK: arith.addf
func.func @per_element(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c = arith.constant dense<[[2.0, 3.0], [1.0, 5.0]]> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%c, %x : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %n = arith.negf %b : f32
    %s = arith.addf %a, %n : f32
    %z = arith.constant 0.0 : f32
    %t = arith.addf %s, %z : f32
    linalg.yield %t : f32
  } -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// Gemm with beta = 0 (x + C * 0): A = 1 and B = 0, so nothing is left.
// CHECK-LABEL: func.func @identity
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[X]]
func.func @identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x, %c : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.mulf %b, %zero : f32
    %r = arith.addf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// One constant listed twice (CSE merges BatchNorm's equal scale and
// variance, say): folded once, and the constant erased once.
// CHECK-LABEL: func.func @same_constant_twice
// CHECK: %[[C:.*]] = arith.constant dense<{{\[\[}}2.000000e+00, 4.000000e+00, 6.000000e+00], [8.000000e+00, 1.000000e+01, 1.200000e+01]]> : tensor<2x3xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[C]] :
// CHECK: arith.addf
// CHECK-NOT: arith.addf
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @same_constant_twice(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %d: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %d : f32
    linalg.yield %t : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
