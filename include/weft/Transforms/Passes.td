//===- Passes.td - weft's passes ---------------------------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The single source of truth for weft's passes (mlir-tblgen -gen-pass-decls).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TRANSFORMS_PASSES
#define WEFT_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Clean-up of imported networks
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Fabric conversion
//===----------------------------------------------------------------------===//

def ConvertToFabric : Pass<"weft-convert-to-fabric", "mlir::ModuleOp"> {
  let summary = "Turn an imported network (a chain of layers) into a fabric.program";
  let description = [{
    Replaces the imported `func.func` (after `--weft-import-cleanup`) with a
    `fabric.program` of the same name on the target given by `grid`: one
    `fabric.io` for the graph input (west) and one for the output (east),
    named after `onnx.name`, one `fabric.kernel` per layer, and the
    `fabric.stream`s of the chain input -> k0 -> k1 -> ... -> output, created
    in chain order. The batch dimension is streamed: every tensor of the
    program is per sample, and the batch is recorded as `weft.batch`.

    A layer is either dense (Gemm or MatMul, optional bias, an optional ReLU
    fused; the body rebuilt on one sample so `matchDenseLayer` recognises
    it again) or a column kernel (Relu, Sigmoid, Tanh, Softmax or
    LogSoftmax over the whole per-sample vector: the imported ops cloned on
    one sample, recognised by `matchColumnKernel`). Reshapes of the sample
    (Reshape, Flatten, Squeeze, Unsqueeze: `tensor.collapse_shape`,
    `tensor.expand_shape`, `tensor.reshape` keeping the batch dimension) do
    not change the row-major order and are dropped. Anything else is an
    error naming the ONNX node, the op and the reason. Rows are placeholders
    until `--weft-partition-dense`.

    Example:
    ```mlir
    func.func @main_graph(%x: tensor<4x64xf32> {onnx.name = "x"})
        -> (tensor<4x32xf32> {onnx.name = "y"}) { ... }
    // becomes
    fabric.program @main_graph {target = #fabric.target<16x16>, weft.batch = 4 : i64} {
      fabric.io @x input west rows 0 to 1 : tensor<1x64xf32>
      fabric.io @y output east rows 0 to 1 : tensor<1x32xf32>
      fabric.kernel @fc : (tensor<1x64xf32>) -> tensor<1x32xf32> { ... }
      fabric.kernel @probs : (tensor<1x32xf32>) -> tensor<1x32xf32> { ... }
      fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 64>
      fabric.stream @fc_to_probs @fc[0] -> @probs[0] : !fabric.wavelets<f32, 32>
      fabric.stream @probs_to_y @probs[0] -> @y[0] : !fabric.wavelets<f32, 32>
    }
    ```
  }];
  let options = [Option<"grid", "grid", "std::string", "\"16x16\"",
                        "The target fabric (weft::target::Target::parse "
                        "text: WxH[,mem=..,colors=..,rq=..,cq=..])">];
  let dependentDialects = ["weft::fabric::FabricDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
  let statistics = [Statistic<"numKernels", "num-kernels",
                              "Kernels created">];
}

def PartitionDense : Pass<"weft-partition-dense", "mlir::ModuleOp"> {
  let summary = "Lay a chain of kernels out as a balanced pipeline";
  let description = [{
    For the chain of `fabric.kernel`s of each program (host input -> k0 ->
    ... -> host output, dense layers and column kernels), chooses the
    smear of the first dense kernel and the rows of every kernel so that the
    slowest kernel's predicted cycles per sample are the fewest, then the
    PEs (`partitionChain`, docs/execution-model.md): rectangles west to east
    from column 0, all at row 0, a dense kernel (x, 0, S, R) with smear S
    equal to the rows of the kernel before it, a column kernel (x, 0, 1, R).
    Records `rect`, `smear`, `weft.precision` ("fp32" or "mixed") and
    `weft.predicted_cycles` on every kernel and the rows of the host ports.
    `grid=auto` first chooses the fabric (`chooseGrid`: the smallest grid up
    to `max-grid` whose predicted utilization is within 5% of the best) and
    rewrites the program's target; `grid=WxH` replaces it; the default keeps
    the target of `--weft-convert-to-fabric`. A chain that does not fit is
    an error saying what it needs.

    Example:
    ```mlir
    fabric.kernel @fc : (tensor<1x784xf32>) -> tensor<1x256xf32>
        at #fabric.rect<0, 0, 4, 16> attributes {smear = 4 : i64,
        weft.precision = "fp32", weft.predicted_cycles = 1234 : i64} {...}
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"fp32\"",
           "fp32, or mixed (fp16 storage and multiply, fp32 accumulate)">,
    Option<"grid", "grid", "std::string", "\"\"",
           "Empty (keep the program's target), auto (choose the fabric up "
           "to max-grid), or WxH[,mem=..,colors=..]">,
    Option<"maxGrid", "max-grid", "std::string", "\"64x64\"",
           "The largest fabric grid=auto considers (its memory and colors "
           "apply to every grid)">];
  let statistics = [Statistic<"numPartitioned", "num-partitioned",
                              "Kernels partitioned">,
                    Statistic<"bottleneck", "bottleneck-cycles",
                              "Predicted cycles per sample of the slowest "
                              "kernel">];
}

def RouteStreams : Pass<"weft-route-streams", "mlir::ModuleOp"> {
  let summary = "Make layout changes explicit and route every stream PE by PE";
  let description = [{
    On a partitioned `fabric.program` (docs/execution-model.md, "Chains of
    layers"): inserts a `fabric.redistribute` from `row_chunks S` to
    `col_chunks S` in front of every dense layer, on the S x S square where
    its input chunks turn into its columns (the stream into the layer
    becomes producer -> redistribution -> layer), and gives every stream and
    every kernel's internal channel (`channel "psum_even"`, ...) a
    `fabric.route` with one `fabric.switch` per PE it passes, multicast and
    the receiving PE included. The switch settings come from the schemes of
    weft/Kernels/Routing.h. Logical (empty) routes are replaced; a
    program that already has switches or redistributions is an error, as is
    a chain whose layouts do not line up.

    Example:
    ```mlir
    fabric.redistribute @fc_turn : !fabric.wavelets<f32, 64> at <0, 0, 6, 6>
        from <row_chunks, 6> to <col_chunks, 6>
    fabric.stream @x_to_fc @x[0] -> @fc_turn[0] : !fabric.wavelets<f32, 64>
    fabric.stream @fc_turn_to_fc @fc_turn[0] -> @fc[0] : !fabric.wavelets<f32, 64>
    fabric.route @x_to_fc {
      fabric.switch (0, 0) from [west] to [ramp]
      fabric.switch (0, 1) from [west] to [east]
      ...
    }
    ```
  }];
  let dependentDialects = ["weft::fabric::FabricDialect"];
  let statistics = [
    Statistic<"numRedistributions", "num-redistributions",
              "Redistributions inserted">,
    Statistic<"numRoutes", "num-routes", "Routes of streams and channels">,
    Statistic<"numSwitches", "num-switches", "Per-PE router settings">];
}

def AllocateColors : Pass<"weft-allocate-colors", "mlir::ModuleOp"> {
  let summary = "Color every route so that no two meet on a router";
  let description = [{
    Two routes that share a PE need different colors (a router has one
    route per color). DSATUR over the routes' PEs (`allocateColors`,
    lib/Conversion/ColorAllocation.cpp; deterministic) within the target's
    routable colors minus `reserved`; a color already set on a route, or on
    the stream of a route without one, is kept. Sets `color` on every route
    and on the stream it routes. When the colors do not suffice, the error
    names a route, one it meets, the PE where they meet and how many colors
    they would need.
  }];
  let dependentDialects = ["weft::fabric::FabricDialect"];
  let options = [ListOption<"reserved", "reserved", "int64_t",
                            "Colors the allocator must not use">];
  let statistics = [Statistic<"numColors", "num-colors",
                              "Distinct colors used">];
}

//===----------------------------------------------------------------------===//
// Preparation for the fabric
//===----------------------------------------------------------------------===//

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

#endif // WEFT_TRANSFORMS_PASSES
