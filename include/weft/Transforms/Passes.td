//===- Passes.td - linalg-level transforms -----------------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The passes on the imported network (func/linalg/tensor/arith): its
// clean-up and the rewrites the fabric path wants before the conversion.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TRANSFORMS_PASSES
#define WEFT_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def FoldBatchNorm : Pass<"weft-fold-batchnorm", "mlir::func::FuncOp"> {
  let summary = "Fold inference batch normalization into the producing "
                "convolution or matmul";
  let description = [{
    The importer turns ONNX BatchNormalization into a `linalg.generic` over
    (x, scale, bias, mean, var) tagged `weft.batchnorm_epsilon`. When its
    input is the only use of a `linalg.conv_2d_nchw_fchw`,
    `linalg.depthwise_conv_2d_nchw_chw` or `linalg.matmul` whose weight is a
    constant and whose accumulator is zeros or a broadcast constant bias, the
    normalization is folded: W'[c] = W[c] * s[c] and
    b'[c] = (b[c] - mean[c]) * s[c] + bias[c] with
    s = scale / sqrt(var + eps). The new weights are dense_resource blobs.

    Example:
    ```mlir
    %c = linalg.conv_2d_nchw_fchw ins(%x, %w : ...) outs(%bias_bcast : ...)
    %y = linalg.generic {..., weft.batchnorm_epsilon = 1.0e-05 : f64}
           ins(%c, %scale, %beta, %mean, %var : ...) ...
    // becomes
    %y = linalg.conv_2d_nchw_fchw ins(%x, %w_folded : ...) outs(%b_bcast : ...)
    ```
    Fails when a foldable pattern's constants hold no data (an elided blob).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect"];
  let statistics = [Statistic<"numFolded", "num-folded",
                              "Batch normalizations folded">];
}

def FoldConstants : Pass<"weft-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluate tensor ops whose operands are all constants";
  let description = [{
    Evaluates, at compile time, parallel `linalg.generic`s (elementwise with
    broadcasting) whose inputs are all f32 constants and whose body uses
    arith/math ops on f32, `linalg.transpose` and `linalg.broadcast` of
    constants, and `tensor.collapse_shape`/`tensor.expand_shape` of constants
    (which reuse the blob under a new type, no copy). Results with more than
    16 elements are dense_resource blobs.

    Example:
    ```mlir
    %t = linalg.transpose ins(%cst : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 0]
    // becomes
    %t = arith.constant dense_resource<folded> : tensor<8x4xf32>
    ```
  }];
  let options = [Option<"maxElements", "max-elements", "int64_t", "1 << 24",
                        "Largest result (in elements) evaluated">];
  let dependentDialects = ["mlir::arith::ArithDialect"];
  let statistics = [Statistic<"numFolded", "num-folded", "Ops folded">];
}

def DropIdentity : Pass<"weft-drop-identity", "mlir::func::FuncOp"> {
  let summary = "Remove ops that return their input unchanged";
  let description = [{
    Removes what ONNX Identity/Dropout-like constructs leave behind: copies
    (`linalg.copy`, a `linalg.generic` yielding its only input through
    identity maps), identity `linalg.transpose`s, and same-type
    `tensor.cast`, `tensor.collapse_shape` and `tensor.expand_shape`. The
    importer already forwards ONNX Identity and inference Dropout without
    emitting anything; this pass covers IR from other sources and from
    rewrites.

    Example:
    ```mlir
    %y = linalg.copy ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    // uses of %y become uses of %x
    ```
  }];
  let statistics = [Statistic<"numDropped", "num-dropped", "Ops removed">];
}

def FoldElementwiseConstants
    : Pass<"weft-fold-elementwise-constants", "mlir::func::FuncOp"> {
  let summary = "Rewrite x combined with constant tensors into the column "
                "kernels' forms";
  let description = [{
    Rewrites a parallel `linalg.generic` with exactly one non-constant input
    x (identity map) and one or more f32 constant-tensor inputs (any
    broadcasting maps) whose body is
    - affine in x (addf, subf, mulf, divf, negf with x appearing linearly,
      and any arith/math ops of constants only, such as sqrt(var + eps)):
      into `x * A` then `+ B`, A and B computed per element in double and
      rounded to f32 once (the product is dropped when A is all 1, the sum
      when B is all 0);
    - a max (min) chain of x and constants: into `max(x, M)` with M the
      maximum (minimum) of the constants, the same op kind kept.
    A constant that is equal everywhere becomes a scalar in the body;
    otherwise it keeps only the dimensions it varies along. Generics that
    are already one op of x and one constant, and everything else, are
    left alone (docs/execution-model.md).

    Example:
    ```mlir
    %y = linalg.generic {..., weft.batchnorm_epsilon = 1.0e-05 : f64}
           ins(%x, %scale, %bias, %mean, %var : ...) ...
    // becomes
    %a = linalg.generic ins(%x, %A : tensor<2x3xf32>, tensor<1x3xf32>) ... mulf
    %y = linalg.generic ins(%a, %B : tensor<2x3xf32>, tensor<1x3xf32>) ... addf
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
  let statistics = [Statistic<"numAffine", "num-affine",
                              "Affine bodies rewritten to x * A + B">,
                    Statistic<"numChains", "num-chains",
                              "Max/min chains rewritten to one max/min">];
}

def LinearToMatmul : Pass<"weft-linear-to-matmul", "mlir::func::FuncOp"> {
  let summary = "Rewrite affine maps of one sample into dense layers";
  let description = [{
    Ops that compute y = W x + b on every sample, with W and b known at
    compile time, become the importer's dense-layer form that
    `--weft-convert-to-fabric` maps: the sample collapsed to [B, K], a
    `linalg.matmul` with a constant [K, M] weight whose accumulator is a
    broadcast bias (or zeros), the result expanded back. Per sample, the
    batch (the first dimension) must be mapped identically. Covered: sum
    reductions over non-batch axes (`linalg.generic` or `linalg.reduce` with an addf
    body; a constant init is the bias), transposes, broadcasts and copies
    within the sample (`linalg.transpose`, `linalg.broadcast`, `linalg.copy`,
    one-input `linalg.generic` with projected-permutation maps),
    `tensor.pad` with a constant value (the padding is the bias),
    `tensor.concat` of the sample with constants along a non-batch axis
    (the constants are the bias), `tensor.extract_slice`, and gathers (a
    `linalg.generic` without inputs that yields a `tensor.extract` of the
    sample at indices computed from the loop indices: reflect and edge
    Pad). Consecutive
    such ops, the reshapes between them and scalings by a constant (the
    division of ReduceMean) compose into one matrix. W's entries come from
    index arithmetic (0, 1, 1/n). When an op that would be a layer of its
    own matches only over the whole tensor (it moves, reduces, pads or
    concatenates along the batch axis, or takes a constant that differs per
    batch row), every such op of the function is rewritten over the whole
    tensor as one sample ([1, B*K] x [B*K, B*M]), which
    `--weft-convert-to-fabric` maps with batch 1. A chain whose matrix has
    more than `max-entries` entries and Softmax's sum (of exp(x - max x))
    are left alone (docs/execution-model.md).

    Example:
    ```mlir
    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0)>],
                         iterator_types = ["parallel", "reduction"]}
           ins(%x : tensor<4x3xf32>) outs(%zeros : tensor<4xf32>) {...addf...}
    // becomes
    %w = arith.constant dense<1.000000e+00> : tensor<3x1xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x1xf32>) -> tensor<4x1xf32>
    %p = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x1xf32>)
           outs(%acc : tensor<4x1xf32>) -> tensor<4x1xf32>
    %s = tensor.collapse_shape %p [[0, 1]] : tensor<4x1xf32> into tensor<4xf32>
    ```
  }];
  let options = [Option<"maxEntries", "max-entries", "int64_t", "1 << 22",
                        "Largest weight matrix (K x M entries) created">];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
  let statistics = [Statistic<"numRewritten", "num-rewritten",
                              "Ops rewritten into dense layers">,
                    Statistic<"numLayers", "num-layers",
                              "Dense layers created">];
}

def FuseElementwise : Pass<"weft-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Fuse elementwise DAGs that read one tensor several times "
                "into one linalg.generic";
  let description = [{
    The importer emits one `linalg.generic` per ONNX node, so an expression
    that uses its input more than once (SiLU `x * sigmoid(x)`, GELU, a
    written-out HardSwish or Softsign) is a DAG of generics, not the chain
    `--weft-convert-to-fabric` maps. This pass finds every elementwise
    generic that joins two or more distinct non-constant tensors (splat
    constants do not count) and fuses producers into it with upstream
    `linalg::fuseElementwiseOps`, latest producer first, until it reads a
    single tensor or the latest producer is not a same-shape, identity-map,
    single-use elementwise generic. Nothing else is fused, so a dense
    layer's bias and activation and Softmax's steps keep their forms; the
    fused body becomes one column kernel (an `Expression` when no single
    known op matches; docs/execution-model.md, "Expressions").

    Example:
    ```mlir
    %s = linalg.generic ins(%x) ... { negf, exp, addf 1, divf 1 }  // sigmoid
    %y = linalg.generic ins(%x, %s) ... { mulf }
    // becomes
    %y = linalg.generic ins(%x) ... { negf, exp, addf, divf, mulf }
    ```
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
  let statistics = [Statistic<"numFused", "num-fused",
                              "Producers fused into their consumer">];
}

def ResolveChannelMoves
    : Pass<"weft-resolve-channel-moves", "mlir::func::FuncOp"> {
  let summary = "Read shuffled and split channels from the feature maps "
                "that make them";
  let description = [{
    A channel shuffle (tensor.expand_shape [N, C, ...] -> [N, g, C/g, ...],
    linalg.transpose [0, 2, 1, ...], tensor.collapse_shape back) and a
    channel split (tensor.extract_slice along dimension 1) only move and
    select channels. The pass follows them, and the tensor.concat ops along
    the channels between them, back to the computed feature maps whose
    channels they are, and rewrites what reads them:

    - a convolution (conv_2d_nchw_fchw, conv_1d_ncw_fcw) reads the concat of
      the source channel ranges in a canonical order (by source, then
      channel), its weights' input channels permuted to match (the
      permutation costs nothing; --weft-split-concat-products then makes one
      convolution per range, summed by joins);
    - an op that works channel by channel (a constant spatial tensor.pad, a
      pooling, a depthwise convolution, an elementwise generic of the map
      alone) runs once per range with its per-channel constants gathered;
      its result's channels are those of the copies.

    A range that is not a whole feature map is cut from its producer by
    output channels: a convolution keeps only those weight rows and bias
    channels, an op that works channel by channel computes them from the
    same range of its input; a cut map that is still read whole elsewhere is
    read as the concat of its ranges. Each channel is computed once and no
    weight is a zero (docs/execution-model.md, "Channel shuffles and
    splits"). Moved channels that reach anything else are an error naming
    the node.

    Example (a shuffle of two groups, then the second half):
    ```mlir
    %c = tensor.concat dim(1) %a, %b : (tensor<1x2x4x4xf32>,
        tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32>
    %e = tensor.expand_shape %c [[0], [1, 2], [3], [4]] ...
        into tensor<1x2x2x4x4xf32>
    %t = linalg.transpose ins(%e ...) ... permutation = [0, 2, 1, 3, 4]
    %s = tensor.collapse_shape %t [[0], [1, 2], [3], [4]] ...
    %x2 = tensor.extract_slice %s[0, 2, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1]
    %y = linalg.conv_2d_nchw_fchw ins(%x2, %w ...) ...
    // %x2 is channels a[1], b[1]: %y reads the concat of %a's channel 1
    // and %b's channel 1 (each cut from its convolution) with %w.
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
  let statistics = [Statistic<"numRewritten", "num-rewritten",
                              "Ops rewritten to read the sources of moved "
                              "channels">];
}

def SplitConcatProducts
    : Pass<"weft-split-concat-products", "mlir::func::FuncOp"> {
  let summary = "Split a matrix product of a concat of streams into a sum "
                "of products";
  let description = [{
    [a, b] W = a W_a + b W_b: a linalg.matmul whose input is a tensor.concat
    of two or more streamed (non-constant) tensors along the feature axis
    (dimension 1 of [N, K]) and whose weight is a constant (W, or W^T as
    Gemm's transB writes it) becomes one product per part with W's matching
    rows, the first onto the original accumulator (the bias), the others onto
    zeros, summed by elementwise adds. On the fabric, two towers joined by
    Concat in front of a dense layer become a dense layer per tower and joins
    (docs/execution-model.md, "Networks of layers"), with exactly the model's
    MACs. A concat with one stream (the others constants) is
    --weft-linear-to-matmul's.

    Concats of feature maps along the channels (dimension 1 of
    [N, C, spatial...]) split the same way at the convolutions that read
    them (conv_2d_nchw_fchw, conv_1d_ncw_fcw with constant weights, through
    a constant pad of the spatial dimensions): one convolution per part with
    the weights of its input channels, summed by adds. Ops that work channel
    by channel (max and sum poolings, depthwise convolutions, elementwise
    ops of the map alone) and flattenings move below such a concat, so that
    it reaches the product that splits it (docs/execution-model.md, "Concat
    along the channels"). A concat of streams that feeds anything else is
    left alone.

    Example:
    ```mlir
    %c = tensor.concat dim(1) %a, %b : (tensor<4x3xf32>, tensor<4x5xf32>)
        -> tensor<4x8xf32>
    %y = linalg.matmul ins(%c, %w : tensor<4x8xf32>, tensor<8x2xf32>) ...
    // becomes
    %p = linalg.matmul ins(%a, %w_a : tensor<4x3xf32>, tensor<3x2xf32>) ...
    %q = linalg.matmul ins(%b, %w_b : tensor<4x5xf32>, tensor<5x2xf32>) ...
    %y = linalg.generic {...} ins(%p, %q ...) { arith.addf }
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
  let statistics = [Statistic<"numSplit", "num-split",
                              "Products of concats split">];
}

def SplitJoins : Pass<"weft-split-joins", "mlir::func::FuncOp"> {
  let summary = "Split an elementwise body of several tensors op by op";
  let description = [{
    An elementwise linalg.generic that combines two or more different
    tensors in a body of several ops (a variadic Max, Sum or Mean of three
    inputs: max(max(a, b), c), (a + b + c) / 3) becomes one generic per op of
    its body, each reading one or two tensors: the fabric maps an op of two
    streams as a join kernel and an op of one stream and constants as a
    column kernel. Run after --weft-fuse-elementwise, which fuses what is a
    function of one tensor; generics of one tensor, and of two tensors in
    one op, are left alone.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
  let statistics = [Statistic<"numSplit", "num-split",
                              "Generics split op by op">];
}

#endif // WEFT_TRANSFORMS_PASSES
