// RUN: weft-opt %s --weft-linear-to-matmul --split-input-file | FileCheck %s

// A sum over the sample's only axis: W is a column of ones, the zero init
// gives a zero accumulator, and the [B, 1] product is collapsed to [B].
// CHECK-LABEL: func.func @sum_rows
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK: %[[W:.+]] = arith.constant dense<1.000000e+00> : tensor<3x1xf32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x1xf32>
// CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.+]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<2x1xf32>)
// CHECK: %[[P:.+]] = linalg.matmul {weft.synthetic} ins(%[[X]], %[[W]] : tensor<2x3xf32>, tensor<3x1xf32>) outs(%[[ACC]] : tensor<2x1xf32>)
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
// CHECK: %[[P:.+]] = linalg.matmul {weft.synthetic} ins(%[[C]], %[[W]] : tensor<3x4xf32>, tensor<4x2xf32>)
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
// CHECK: %[[P:.+]] = linalg.matmul {weft.synthetic} ins(%{{.+}}, %[[W]] : tensor<5x4xf32>, tensor<4x4xf32>)
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
// CHECK: %[[P:.+]] = linalg.matmul {weft.synthetic} ins(%[[X]], %[[W]] : tensor<3x2xf32>, tensor<2x4xf32>) outs(%[[ACC]] : tensor<3x4xf32>)
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
// CHECK: linalg.matmul {weft.synthetic} ins(%[[X2]], %[[W]] : tensor<4x1xf32>, tensor<1x3xf32>)
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

// -----

// A transpose that moves the batch mixes batch rows: the whole tensor is
// one sample, collapsed to [1, 4] (through [4]), and W permutes it:
// x[i, j] (k = 2i + j) goes to y[j, i] (m = 2j + i). The result is
// expanded back through [4].
// CHECK-LABEL: func.func @transpose_batch
// CHECK-SAME: (%[[X:.+]]: tensor<2x2xf32>)
// CHECK: %[[F:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
// CHECK: %[[X2:.+]] = tensor.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
// CHECK: %[[W:.+]] = arith.constant dense<{{\[}}[1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 1.000000e+00]]> : tensor<4x4xf32>
// CHECK: %[[P:.+]] = linalg.matmul {weft.synthetic} ins(%[[X2]], %[[W]] : tensor<1x4xf32>, tensor<4x4xf32>) outs(%{{.+}} : tensor<1x4xf32>)
// CHECK: %[[G:.+]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
// CHECK: %[[Y:.+]] = tensor.expand_shape %[[G]] {{\[}}[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
// CHECK-NEXT: return %[[Y]]
func.func @transpose_batch(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %e = tensor.empty() : tensor<2x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) permutation = [1, 0]
  return %t : tensor<2x2xf32>
}

// -----

// ReduceMean over every axis, to a rank-0 result: one layer on the whole
// tensor whose W is a column of 1/4; the [1, 1] product collapses to
// tensor<f32>.
// CHECK-LABEL: func.func @mean_over_all
// CHECK: %[[W:.+]] = arith.constant dense<2.500000e-01> : tensor<4x1xf32>
// CHECK: %[[P:.+]] = linalg.matmul {weft.synthetic} ins(%{{.+}}, %[[W]] : tensor<1x4xf32>, tensor<4x1xf32>)
// CHECK: %[[Y:.+]] = tensor.collapse_shape %[[P]] [] : tensor<1x1xf32> into tensor<f32>
// CHECK-NEXT: return %[[Y]]
// CHECK-NOT: linalg.generic
func.func @mean_over_all(%x: tensor<2x2xf32>) -> tensor<f32> {
  %four = arith.constant 4.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
       ins(%x : tensor<2x2xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %m = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                       iterator_types = []}
       ins(%s : tensor<f32>) outs(%e : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.divf %in, %four : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %m : tensor<f32>
}

// -----

// A concat with a constant that differs per batch row (5 for row 0, 6 for
// row 1) is no per-sample bias: on the whole tensor the constant is the
// bias of outputs 2 and 5.
// CHECK-LABEL: func.func @concat_per_row_constant
// CHECK-DAG: arith.constant dense_resource<linear_weights> : tensor<4x6xf32>
// CHECK-DAG: %[[B:.+]] = arith.constant dense<[0.000000e+00, 0.000000e+00, 5.000000e+00, 0.000000e+00, 0.000000e+00, 6.000000e+00]> : tensor<6xf32>
// CHECK: %[[ACC:.+]] = linalg.broadcast ins(%[[B]] : tensor<6xf32>) outs(%{{.+}} : tensor<1x6xf32>) dimensions = [0]
// CHECK: linalg.matmul {weft.synthetic} ins(%{{.+}}, %{{.+}} : tensor<1x4xf32>, tensor<4x6xf32>) outs(%[[ACC]] : tensor<1x6xf32>)
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
// CHECK-NOT: tensor.concat
func.func @concat_per_row_constant(%x: tensor<2x2xf32>) -> tensor<2x3xf32> {
  %d = arith.constant dense<[[5.0], [6.0]]> : tensor<2x1xf32>
  %z = tensor.concat dim(1) %x, %d : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %z : tensor<2x3xf32>
}

// -----

// A concat along axis 0 of a rank-1 tensor (ONNX's test_concat_1d_axis_0
// with the second input frozen): [2] is expanded to [1, 2] and the
// constant follows it in the bias.
// CHECK-LABEL: func.func @concat_axis_0
// CHECK: %[[X2:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0, 1]] output_shape [1, 2] : tensor<2xf32> into tensor<1x2xf32>
// CHECK-DAG: %[[W:.+]] = arith.constant dense<{{\[}}[1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<2x4xf32>
// CHECK-DAG: arith.constant dense<[0.000000e+00, 0.000000e+00, 5.000000e+00, 6.000000e+00]> : tensor<4xf32>
// CHECK: %[[P:.+]] = linalg.matmul {weft.synthetic} ins(%[[X2]], %[[W]] : tensor<1x2xf32>, tensor<2x4xf32>)
// CHECK: tensor.collapse_shape %[[P]] {{\[}}[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
// CHECK-NOT: tensor.concat
func.func @concat_axis_0(%x: tensor<2xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<[5.0, 6.0]> : tensor<2xf32>
  %y = tensor.concat dim(0) %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A pad of the batch: a new first row of 7s, the bias of output 0.
// CHECK-LABEL: func.func @pad_batch
// CHECK-DAG: arith.constant dense<{{\[}}[0.000000e+00, 1.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 1.000000e+00]]> : tensor<2x3xf32>
// CHECK-DAG: arith.constant dense<[7.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<3xf32>
// CHECK: linalg.matmul {weft.synthetic} ins(%{{.+}}, %{{.+}} : tensor<1x2xf32>, tensor<2x3xf32>)
// CHECK-NOT: tensor.pad
func.func @pad_batch(%x: tensor<2x1xf32>) -> tensor<3x1xf32> {
  %c = arith.constant 7.0 : f32
  %p = tensor.pad %x low[1, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c : f32
  } : tensor<2x1xf32> to tensor<3x1xf32>
  return %p : tensor<3x1xf32>
}

// -----

// A gather whose sample index depends on the batch index: y[b, j] =
// x[b, b], so x[0, 0] (k = 0) feeds outputs 0 and 1, x[1, 1] (k = 3)
// outputs 2 and 3.
// CHECK-LABEL: func.func @gather_diagonal
// CHECK: arith.constant dense<{{\[}}[1.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 1.000000e+00, 1.000000e+00]]> : tensor<4x4xf32>
// CHECK: linalg.matmul {weft.synthetic} ins(%{{.+}}, %{{.+}} : tensor<1x4xf32>, tensor<4x4xf32>)
// CHECK-NOT: tensor.extract
func.func @gather_diagonal(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %e = tensor.empty() : tensor<2x2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
       outs(%e : tensor<2x2xf32>) {
  ^bb0(%out: f32):
    %b = linalg.index 0 : index
    %v = tensor.extract %x[%b, %b] : tensor<2x2xf32>
    linalg.yield %v : f32
  } -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// Two layers around a Relu: the transpose alone would be per sample
// ([2, 4] x [4, 4]), but the sum over the batch after the Relu needs the
// whole tensor, and convert-to-fabric maps a network with one batch, so
// the transpose takes the whole tensor too ([1, 8] x [8, 8]).
// CHECK-LABEL: func.func @whole_function
// CHECK: linalg.matmul {weft.synthetic} ins(%{{.+}}, %{{.+}} : tensor<1x8xf32>, tensor<8x8xf32>)
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: linalg.matmul {weft.synthetic} ins(%{{.+}}, %{{.+}} : tensor<1x8xf32>, tensor<8x4xf32>)
// CHECK-NOT: linalg.transpose
func.func @whole_function(%x: tensor<2x2x2xf32>) -> tensor<2x2xf32> {
  %e = tensor.empty() : tensor<2x2x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x2x2xf32>) outs(%e : tensor<2x2x2xf32>) permutation = [0, 2, 1]
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%t : tensor<2x2x2xf32>) outs(%e : tensor<2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>],
                       iterator_types = ["reduction", "parallel", "parallel"]}
       ins(%r : tensor<2x2x2xf32>) outs(%init : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<2x2xf32>
  return %s : tensor<2x2xf32>
}

// -----

// A gather whose index is built from 40 repeated doublings of the loop
// index, x[b, (a40 - a40) + j] with a_i = a_(i-1) + a_(i-1): each index op
// is visited once (no 2^40 walk); W is the identity.
// CHECK-LABEL: func.func @gather_doublings
// CHECK: linalg.matmul {weft.synthetic} ins(%{{.+}}, %{{.+}} : tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK-NOT: tensor.extract
func.func @gather_doublings(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %e = tensor.empty() : tensor<2x2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
       outs(%e : tensor<2x2xf32>) {
  ^bb0(%out: f32):
    %b = linalg.index 0 : index
    %a0 = linalg.index 1 : index
    %a1 = arith.addi %a0, %a0 : index
    %a2 = arith.addi %a1, %a1 : index
    %a3 = arith.addi %a2, %a2 : index
    %a4 = arith.addi %a3, %a3 : index
    %a5 = arith.addi %a4, %a4 : index
    %a6 = arith.addi %a5, %a5 : index
    %a7 = arith.addi %a6, %a6 : index
    %a8 = arith.addi %a7, %a7 : index
    %a9 = arith.addi %a8, %a8 : index
    %a10 = arith.addi %a9, %a9 : index
    %a11 = arith.addi %a10, %a10 : index
    %a12 = arith.addi %a11, %a11 : index
    %a13 = arith.addi %a12, %a12 : index
    %a14 = arith.addi %a13, %a13 : index
    %a15 = arith.addi %a14, %a14 : index
    %a16 = arith.addi %a15, %a15 : index
    %a17 = arith.addi %a16, %a16 : index
    %a18 = arith.addi %a17, %a17 : index
    %a19 = arith.addi %a18, %a18 : index
    %a20 = arith.addi %a19, %a19 : index
    %a21 = arith.addi %a20, %a20 : index
    %a22 = arith.addi %a21, %a21 : index
    %a23 = arith.addi %a22, %a22 : index
    %a24 = arith.addi %a23, %a23 : index
    %a25 = arith.addi %a24, %a24 : index
    %a26 = arith.addi %a25, %a25 : index
    %a27 = arith.addi %a26, %a26 : index
    %a28 = arith.addi %a27, %a27 : index
    %a29 = arith.addi %a28, %a28 : index
    %a30 = arith.addi %a29, %a29 : index
    %a31 = arith.addi %a30, %a30 : index
    %a32 = arith.addi %a31, %a31 : index
    %a33 = arith.addi %a32, %a32 : index
    %a34 = arith.addi %a33, %a33 : index
    %a35 = arith.addi %a34, %a34 : index
    %a36 = arith.addi %a35, %a35 : index
    %a37 = arith.addi %a36, %a36 : index
    %a38 = arith.addi %a37, %a37 : index
    %a39 = arith.addi %a38, %a38 : index
    %a40 = arith.addi %a39, %a39 : index
    %z = arith.subi %a40, %a40 : index
    %k = arith.addi %z, %a0 : index
    %v = tensor.extract %x[%b, %k] : tensor<2x2xf32>
    linalg.yield %v : f32
  } -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// A transpose within the sample of exp(x), x also returned, is no Softmax
// sum: it is a layer ([2, 12] x [12, 12]).
// CHECK-LABEL: func.func @transpose_of_exp
// CHECK: math.exp
// CHECK: linalg.matmul {weft.synthetic} ins(%{{.+}}, %{{.+}} : tensor<2x12xf32>, tensor<12x12xf32>)
// CHECK-NOT: linalg.transpose
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @transpose_of_exp(%x: tensor<2x3x4xf32>) -> (tensor<2x4x3xf32>, tensor<2x3x4xf32>) {
  %e0 = tensor.empty() : tensor<2x3x4xf32>
  %e = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%x : tensor<2x3x4xf32>) outs(%e0 : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<2x3x4xf32>
  %te = tensor.empty() : tensor<2x4x3xf32>
  %t = linalg.transpose ins(%e : tensor<2x3x4xf32>) outs(%te : tensor<2x4x3xf32>) permutation = [0, 2, 1]
  return %t, %x : tensor<2x4x3xf32>, tensor<2x3x4xf32>
}

// -----

// A transpose moving the batch whose input sin(x) is also returned is no
// chain's input, so it stays and does not switch the function to the
// whole tensor: the sum next to it is a per-sample layer ([4, 3] x [3, 1]).
// CHECK-LABEL: func.func @whole_trimmed
// CHECK: linalg.transpose
// CHECK: linalg.matmul {weft.synthetic} ins(%{{.+}}, %{{.+}} : tensor<4x3xf32>, tensor<3x1xf32>)
// CHECK-NOT: linalg.matmul
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @whole_trimmed(%x: tensor<4x3xf32>) -> (tensor<3x4xf32>, tensor<4x3xf32>, tensor<4xf32>) {
  %e0 = tensor.empty() : tensor<4x3xf32>
  %e = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
       ins(%x : tensor<4x3xf32>) outs(%e0 : tensor<4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.sin %a : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %te = tensor.empty() : tensor<3x4xf32>
  %t = linalg.transpose ins(%e : tensor<4x3xf32>) outs(%te : tensor<3x4xf32>) permutation = [1, 0]
  %g = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
       ins(%x : tensor<4x3xf32>) outs(%e0 : tensor<4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %z = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<4xf32>
  %sf = linalg.fill ins(%z : f32) outs(%se : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce ins(%g : tensor<4x3xf32>) outs(%sf : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  return %t, %e, %s : tensor<3x4xf32>, tensor<4x3xf32>, tensor<4xf32>
}
