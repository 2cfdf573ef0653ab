// RUN: weft-opt %s --weft-linear-to-matmul --split-input-file | FileCheck %s

// A sum over the sample's only axis: W is a column of ones, the zero init
// gives a zero accumulator, and the [B, 1] product is collapsed to [B].
// CHECK-LABEL: func.func @sum_rows
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK: %[[W:.+]] = arith.constant dense<1.000000e+00> : tensor<3x1xf32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x1xf32>
// CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.+]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<2x1xf32>)
// CHECK: %[[P:.+]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<2x3xf32>, tensor<3x1xf32>) outs(%[[ACC]] : tensor<2x1xf32>)
// CHECK: %[[Y:.+]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1]] : tensor<2x1xf32> into tensor<2xf32>
// CHECK-NEXT: return %[[Y]]
func.func @sum_rows(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
       ins(%x : tensor<2x3xf32>) outs(%init : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

// ReduceMean as the importer emits it (a sum over axis 1, then a division
// by 2): one layer whose W holds 1/2 where an input is summed into an
// output. The sample is collapsed to [B, 4] first.
// CHECK-LABEL: func.func @mean_middle_axis
// CHECK: %[[C:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2]] : tensor<3x2x2xf32> into tensor<3x4xf32>
// CHECK: %[[W:.+]] = arith.constant dense<{{\[}}[5.000000e-01, 0.000000e+00], [0.000000e+00, 5.000000e-01], [5.000000e-01, 0.000000e+00], [0.000000e+00, 5.000000e-01]]> : tensor<4x2xf32>
// CHECK: %[[P:.+]] = linalg.matmul ins(%[[C]], %[[W]] : tensor<3x4xf32>, tensor<4x2xf32>)
// CHECK-NEXT: return %[[P]] : tensor<3x2xf32>
// CHECK-NOT: linalg.generic
func.func @mean_middle_axis(%x: tensor<3x2x2xf32>) -> tensor<3x2xf32> {
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
       ins(%x : tensor<3x2x2xf32>) outs(%init : tensor<3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<3x2xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
       ins(%s : tensor<3x2xf32>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.divf %in, %two : f32
    linalg.yield %r : f32
  } -> tensor<3x2xf32>
  return %m : tensor<3x2xf32>
}

// -----

// A transpose of the sample's two axes: a permutation matrix,
// y[i, j] = x[j, i] (input k = 2j + i feeds output m = 2i + j).
// CHECK-LABEL: func.func @transpose_sample
// CHECK: %[[W:.+]] = arith.constant dense<{{\[}}[1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 1.000000e+00]]> : tensor<4x4xf32>
// CHECK: %[[P:.+]] = linalg.matmul ins(%{{.+}}, %[[W]] : tensor<5x4xf32>, tensor<4x4xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[}}[0], [1, 2]] output_shape [5, 2, 2] : tensor<5x4xf32> into tensor<5x2x2xf32>
// CHECK-NOT: linalg.transpose
func.func @transpose_sample(%x: tensor<5x2x2xf32>) -> tensor<5x2x2xf32> {
  %e = tensor.empty() : tensor<5x2x2xf32>
  %t = linalg.transpose ins(%x : tensor<5x2x2xf32>) outs(%e : tensor<5x2x2xf32>) permutation = [0, 2, 1]
  return %t : tensor<5x2x2xf32>
}

// -----

// A pad with a constant: the padding is the bias, broadcast over the batch
// as the importer's Gemm bias is.
// CHECK-LABEL: func.func @pad_constant
// CHECK-SAME: (%[[X:.+]]: tensor<3x2xf32>)
// CHECK: %[[W:.+]] = arith.constant dense<{{\[}}[0.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 1.000000e+00, 0.000000e+00]]> : tensor<2x4xf32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<3x4xf32>
// CHECK: %[[B:.+]] = arith.constant dense<[7.000000e+00, 0.000000e+00, 0.000000e+00, 7.000000e+00]> : tensor<4xf32>
// CHECK: %[[ACC:.+]] = linalg.broadcast ins(%[[B]] : tensor<4xf32>) outs(%[[E]] : tensor<3x4xf32>) dimensions = [0]
// CHECK: %[[P:.+]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<3x2xf32>, tensor<2x4xf32>) outs(%[[ACC]] : tensor<3x4xf32>)
// CHECK-NEXT: return %[[P]]
func.func @pad_constant(%x: tensor<3x2xf32>) -> tensor<3x4xf32> {
  %c = arith.constant 7.0 : f32
  %p = tensor.pad %x low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c : f32
  } : tensor<3x2xf32> to tensor<3x4xf32>
  return %p : tensor<3x4xf32>
}

// -----

// A concat with a constant along the sample's axis: the constant is the
// bias.
// CHECK-LABEL: func.func @concat_constant
// CHECK-DAG: arith.constant dense<{{\[}}[1.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, 0.000000e+00]]> : tensor<2x3xf32>
// CHECK-DAG: arith.constant dense<[0.000000e+00, 0.000000e+00, 5.000000e+00]> : tensor<3xf32>
// CHECK: linalg.matmul
// CHECK-NOT: tensor.concat
func.func @concat_constant(%x: tensor<2x2xf32>) -> tensor<2x3xf32> {
  %c = arith.constant dense<[[5.0], [5.0]]> : tensor<2x1xf32>
  %y = tensor.concat dim(1) %x, %c : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// A strided slice: inputs 1 and 3 of the sample.
// CHECK-LABEL: func.func @strided_slice
// CHECK: arith.constant dense<{{\[}}[0.000000e+00, 0.000000e+00], [1.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00], [0.000000e+00, 0.000000e+00]]> : tensor<5x2xf32>
// CHECK: linalg.matmul
// CHECK-NOT: tensor.extract_slice
func.func @strided_slice(%x: tensor<4x5xf32>) -> tensor<4x2xf32> {
  %y = tensor.extract_slice %x[0, 1] [4, 2] [1, 2] : tensor<4x5xf32> to tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// A broadcast within the sample; a rank-1 input is expanded to [B, 1].
// CHECK-LABEL: func.func @broadcast_scalar_sample
// CHECK: %[[X2:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
// CHECK: %[[W:.+]] = arith.constant dense<1.000000e+00> : tensor<1x3xf32>
// CHECK: linalg.matmul ins(%[[X2]], %[[W]] : tensor<4x1xf32>, tensor<1x3xf32>)
func.func @broadcast_scalar_sample(%x: tensor<4xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %b = linalg.broadcast ins(%x : tensor<4xf32>) outs(%e : tensor<4x3xf32>) dimensions = [1]
  return %b : tensor<4x3xf32>
}

// -----

// linalg.reduce from a constant init (the same for every sample): the init
// is the bias.
// CHECK-LABEL: func.func @reduce_with_init
// CHECK-DAG: arith.constant dense<{{\[}}[1.000000e+00, 0.000000e+00], [1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<4x2xf32>
// CHECK-DAG: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: linalg.broadcast
// CHECK: linalg.matmul
// CHECK-NOT: linalg.reduce
func.func @reduce_with_init(%x: tensor<2x2x2xf32>) -> tensor<2x2xf32> {
  %init = arith.constant dense<[[1.0, 2.0], [1.0, 2.0]]> : tensor<2x2xf32>
  %r = linalg.reduce ins(%x : tensor<2x2x2xf32>) outs(%init : tensor<2x2xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<2x2xf32>
}

// -----

// A chain (a copy-like generic that transposes, then a sum over the last
// axis) composes into one matrix: y[j] = sum_i x[i, j].
// CHECK-LABEL: func.func @chain
// CHECK: arith.constant dense<{{\[}}[1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00], [1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<4x2xf32>
// CHECK: linalg.matmul
// CHECK-NOT: linalg.matmul
// CHECK-NOT: linalg.generic
func.func @chain(%x: tensor<3x2x2xf32>) -> tensor<3x2xf32> {
  %e = tensor.empty() : tensor<3x2x2xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%x : tensor<3x2x2xf32>) outs(%e : tensor<3x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<3x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<3x2xf32>) -> tensor<3x2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
       ins(%t : tensor<3x2x2xf32>) outs(%init : tensor<3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<3x2xf32>
  return %s : tensor<3x2xf32>
}

// -----

// Large matrices are dense_resource blobs, never printed inline.
// CHECK-LABEL: func.func @blob
// CHECK: arith.constant dense_resource<linear_weights> : tensor<12x12xf32>
func.func @blob(%x: tensor<2x3x4xf32>) -> tensor<2x4x3xf32> {
  %e = tensor.empty() : tensor<2x4x3xf32>
  %t = linalg.transpose ins(%x : tensor<2x3x4xf32>) outs(%e : tensor<2x4x3xf32>) permutation = [0, 2, 1]
  return %t : tensor<2x4x3xf32>
}

// -----

// An edge pad as the importer emits it (a gather: tensor.extract at clamped
// indices): output 0 repeats input 0, output 3 repeats input 1.
// CHECK-LABEL: func.func @edge_pad_gather
// CHECK: arith.constant dense<{{\[}}[1.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 1.000000e+00, 1.000000e+00]]> : tensor<2x4xf32>
// CHECK: linalg.matmul
// CHECK-NOT: tensor.extract
func.func @edge_pad_gather(%x: tensor<3x2xf32>) -> tensor<3x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<3x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
       outs(%e : tensor<3x4xf32>) {
  ^bb0(%out: f32):
    %b = linalg.index 0 : index
    %j = linalg.index 1 : index
    %s = arith.subi %j, %c1 : index
    %lo = arith.maxsi %s, %c0 : index
    %k = arith.minsi %lo, %c1 : index
    %v = tensor.extract %x[%b, %k] : tensor<3x2xf32>
    linalg.yield %v : f32
  } -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}
