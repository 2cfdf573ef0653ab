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

#endif // WEFT_TRANSFORMS_PASSES
