// RUN: weft-opt %s --weft-linear-to-matmul --split-input-file | FileCheck %s
// RUN: weft-opt %s --weft-linear-to-matmul=max-entries=16 --split-input-file | FileCheck %s --check-prefix=SMALL

// The pass never fails: ops it cannot write as y = W x + b, per sample (the
// first dimension is the batch) or on the whole tensor as one sample, are
// left as they are.

// A transpose of the batch whose whole-tensor matrix (6 x 6 = 36 entries)
// is over max-entries=16 stays. Then nothing needs the whole tensor, and
// the transpose within the sample next to it is rewritten per sample
// (16 entries).
// CHECK-LABEL: func.func @whole_size_guard
// SMALL-LABEL: func.func @whole_size_guard
// SMALL: linalg.transpose ins(%{{.+}} : tensor<2x3xf32>)
// SMALL: linalg.matmul {weft.synthetic} ins(%{{.+}}, %{{.+}} : tensor<2x4xf32>, tensor<4x4xf32>)
// SMALL-NOT: linalg.matmul
func.func @whole_size_guard(%x: tensor<2x3xf32>, %y: tensor<2x2x2xf32>) -> (tensor<3x2xf32>, tensor<2x2x2xf32>) {
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<2x2x2xf32>
  %u = linalg.transpose ins(%y : tensor<2x2x2xf32>) outs(%e2 : tensor<2x2x2xf32>) permutation = [0, 2, 1]
  return %t, %u : tensor<3x2xf32>, tensor<2x2x2xf32>
}

// -----

// A concat along the batch whose input is also read by a second concat:
// the fabric maps chains, so the shared input is no layer's input, per
// sample or whole.
// CHECK-LABEL: func.func @concat_shared_input
// CHECK: tensor.concat dim(0)
// CHECK: tensor.concat dim(1)
// CHECK-NOT: linalg.matmul
func.func @concat_shared_input(%x: tensor<2x2xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>) {
  %c = arith.constant dense<[[5.0, 6.0]]> : tensor<1x2xf32>
  %y = tensor.concat dim(0) %x, %c : (tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
  %d = arith.constant dense<[[5.0], [6.0]]> : tensor<2x1xf32>
  %z = tensor.concat dim(1) %x, %d : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %y, %z : tensor<3x2xf32>, tensor<2x3xf32>
}

// -----

// A pad whose value is computed at run time.
// CHECK-LABEL: func.func @pad_runtime_value
// CHECK: tensor.pad
// CHECK-NOT: linalg.matmul
func.func @pad_runtime_value(%x: tensor<2x2xf32>, %v: f32) -> tensor<2x3xf32> {
  %q = tensor.pad %x low[0, 1] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<2x2xf32> to tensor<2x3xf32>
  return %q : tensor<2x3xf32>
}

// -----

// Softmax's sum of exponentials belongs to the Softmax column kernel.
// CHECK-LABEL: func.func @softmax_sum
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: linalg.matmul
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @softmax_sum(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %e2 = tensor.empty() : tensor<2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
       ins(%exp : tensor<2x3xf32>) outs(%init : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  return %exp, %s : tensor<2x3xf32>, tensor<2xf32>
}

// -----

// Copies and scalings with identity maps are cheaper as column kernels.
// CHECK-LABEL: func.func @elementwise
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: linalg.matmul
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @elementwise(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%c : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.divf %in, %two : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  return %d : tensor<2x3xf32>
}

// -----

// A transpose of constants is --weft-fold-constants' job.
// CHECK-LABEL: func.func @constant_input
// CHECK: linalg.transpose
// CHECK-NOT: linalg.matmul
func.func @constant_input() -> tensor<1x3x2xf32> {
  %c = arith.constant dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]> : tensor<1x2x3xf32>
  %e = tensor.empty() : tensor<1x3x2xf32>
  %t = linalg.transpose ins(%c : tensor<1x2x3xf32>) outs(%e : tensor<1x3x2xf32>) permutation = [0, 2, 1]
  return %t : tensor<1x3x2xf32>
}

// -----

// A transposed sample read twice is not a chain's input.
// CHECK-LABEL: func.func @shared_input
// CHECK: linalg.transpose
// CHECK-NOT: linalg.matmul
func.func @shared_input(%x: tensor<2x2x3xf32>) -> (tensor<2x3x2xf32>, tensor<2x2x3xf32>) {
  %e = tensor.empty() : tensor<2x3x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x2x3xf32>) outs(%e : tensor<2x3x2xf32>) permutation = [0, 2, 1]
  return %t, %x : tensor<2x3x2xf32>, tensor<2x2x3xf32>
}

// -----

// With max-entries=16 a 3 x 3 transposition (81 entries) is too big; the
// 2 x 2 one (16 entries) is not.
// CHECK-LABEL: func.func @size_guard
// SMALL-LABEL: func.func @size_guard
// SMALL: linalg.transpose ins(%{{.+}} : tensor<2x3x3xf32>)
// SMALL: linalg.matmul {weft.synthetic} ins(%{{.+}}, %{{.+}} : tensor<2x4xf32>, tensor<4x4xf32>)
// SMALL-NOT: linalg.matmul
func.func @size_guard(%x: tensor<2x3x3xf32>, %y: tensor<2x2x2xf32>) -> (tensor<2x3x3xf32>, tensor<2x2x2xf32>) {
  %e = tensor.empty() : tensor<2x3x3xf32>
  %t = linalg.transpose ins(%x : tensor<2x3x3xf32>) outs(%e : tensor<2x3x3xf32>) permutation = [0, 2, 1]
  %e2 = tensor.empty() : tensor<2x2x2xf32>
  %u = linalg.transpose ins(%y : tensor<2x2x2xf32>) outs(%e2 : tensor<2x2x2xf32>) permutation = [0, 2, 1]
  return %t, %u : tensor<2x3x3xf32>, tensor<2x2x2xf32>
}

// -----

// A gather that reads out of bounds (x[b, j + 1] with j = 1).
// CHECK-LABEL: func.func @gather_out_of_bounds
// CHECK: tensor.extract
// CHECK-NOT: linalg.matmul
func.func @gather_out_of_bounds(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<2x2xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
       outs(%e : tensor<2x2xf32>) {
  ^bb0(%out: f32):
    %b = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.addi %j, %c1 : index
    %v = tensor.extract %x[%b, %k] : tensor<2x2xf32>
    linalg.yield %v : f32
  } -> tensor<2x2xf32>
  return %z : tensor<2x2xf32>
}

// -----

// A negative pad crops: left alone (the output index of x[b, 0] would be
// -1).
// CHECK-LABEL: func.func @pad_negative
// CHECK: tensor.pad
// CHECK-NOT: linalg.matmul
func.func @pad_negative(%x: tensor<2x4xf32>) -> tensor<2x6xf32> {
  %c = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, -1] high[0, 3] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c : f32
  } : tensor<2x4xf32> to tensor<2x6xf32>
  return %p : tensor<2x6xf32>
}

// -----

// K * M overflows int64 (2^32 x 2^32 = 2^64 for the first transpose; the
// sample of the second alone has 2^64 elements): both are too big, not
// wrapped to 0.
// CHECK-LABEL: func.func @size_overflow
// CHECK: linalg.transpose
// CHECK: linalg.transpose
// CHECK-NOT: linalg.matmul
func.func @size_overflow(%x: tensor<1x65536x65536xf32>, %y: tensor<2x4294967296x4294967296xf32>) -> (tensor<1x65536x65536xf32>, tensor<2x4294967296x4294967296xf32>) {
  %e = tensor.empty() : tensor<1x65536x65536xf32>
  %t = linalg.transpose ins(%x : tensor<1x65536x65536xf32>) outs(%e : tensor<1x65536x65536xf32>) permutation = [0, 2, 1]
  %e2 = tensor.empty() : tensor<2x4294967296x4294967296xf32>
  %u = linalg.transpose ins(%y : tensor<2x4294967296x4294967296xf32>) outs(%e2 : tensor<2x4294967296x4294967296xf32>) permutation = [0, 2, 1]
  return %t, %u : tensor<1x65536x65536xf32>, tensor<2x4294967296x4294967296xf32>
}

// -----

// An index whose computation overflows int64 (j * 2^62 * 4 + j wraps to
// j): left alone, not evaluated with wrapping arithmetic.
// CHECK-LABEL: func.func @gather_index_overflow
// CHECK: tensor.extract
// CHECK-NOT: linalg.matmul
func.func @gather_index_overflow(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %big = arith.constant 4611686018427387904 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<2x2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
       outs(%e : tensor<2x2xf32>) {
  ^bb0(%out: f32):
    %b = linalg.index 0 : index
    %j = linalg.index 1 : index
    %m = arith.muli %j, %big : index
    %m4 = arith.muli %m, %c4 : index
    %k = arith.addi %m4, %j : index
    %v = tensor.extract %x[%b, %k] : tensor<2x2xf32>
    linalg.yield %v : f32
  } -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// LogSoftmax's sum in the importer's form, sum(exp(x - max(x))): the
// Softmax column kernels map it whole (the exponentials have no other
// user, so only the Softmax match keeps the sum from being a layer).
// CHECK-LABEL: func.func @log_softmax_sum
// CHECK: math.exp
// CHECK: arith.addf
// CHECK-NOT: linalg.matmul
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#bc = affine_map<(d0, d1) -> (d0, 0)>
func.func @log_softmax_sum(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<2xf32>) -> tensor<2xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
       ins(%x : tensor<2x3xf32>) outs(%mi : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %mk = tensor.expand_shape %m [[0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %d = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x, %mk : tensor<2x3xf32>, tensor<2x1xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%d : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %si = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
       ins(%exp : tensor<2x3xf32>) outs(%si : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %sk = tensor.expand_shape %s [[0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
  %y = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]}
       ins(%d, %sk : tensor<2x3xf32>, tensor<2x1xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %l = math.log %b : f32
    %r = arith.subf %a, %l : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// GlobalAveragePool of a feature map (the importer's sum over the pixels,
// reshaped, divided by their count) is a pooling kernel's, not a 0/1
// matrix (docs/execution-model.md, "Pooling"); so is a max pool's -inf pad.
// CHECK-LABEL: func.func @global_average_pool
// CHECK: tensor.pad
// CHECK: linalg.pooling_nchw_max
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @global_average_pool(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x1x1xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %p = tensor.pad %x low[0, 0, 0, 0] high[0, 0, 0, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<2x3x4x4xf32> to tensor<2x3x4x4xf32>
  %e = tensor.empty() : tensor<2x3x2x2xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  %m = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %w : tensor<2x3x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%m : tensor<2x3x2x2xf32>) outs(%z : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<2x3xf32>
  %se = tensor.expand_shape %s [[0], [1, 2, 3]] output_shape [2, 3, 1, 1] : tensor<2x3xf32> into tensor<2x3x1x1xf32>
  %e4 = tensor.empty() : tensor<2x3x1x1xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%se : tensor<2x3x1x1xf32>) outs(%e4 : tensor<2x3x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.divf %in, %four : f32
    linalg.yield %q : f32
  } -> tensor<2x3x1x1xf32>
  return %y : tensor<2x3x1x1xf32>
}
