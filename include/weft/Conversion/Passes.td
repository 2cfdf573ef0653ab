//===- Passes.td - conversions -----------------------------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The conversions between layers: the imported network (linalg) to the
// fabric dialect, and the fabric dialect to the wavelet dialect.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_PASSES
#define WEFT_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

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
    fabric.program @main_graph {target = #weft.target<16x16>, weft.batch = 4 : i64} {
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
                        "The target fabric (weft::machine::Target::parse "
                        "text: WxH[,mem=..,colors=..,rq=..,cq=..])">,
                 Option<"fuse", "fuse-activations", "bool", "true",
                        "Fuse an activation that is the only reader of a "
                        "convolution's result into it as its epilogue "
                        "(docs/execution-model.md, \"Fused activations\")">];
  let dependentDialects = ["weft::fabric::FabricDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
  let statistics = [Statistic<"numKernels", "num-kernels",
                              "Kernels created">,
                    Statistic<"numFused", "num-fused-activations",
                              "Activations fused into convolutions">];
}

def LowerFabricToWavelet
    : Pass<"weft-lower-fabric-to-wavelet", "mlir::ModuleOp"> {
  let summary = "Emit the per-PE wavelet programs of a placed, routed and "
                "colored fabric.program";
  let description = [{
    Every kernel becomes the wavelet.pe / wavelet.pe_group programs its
    scheme's emitter writes (dense layers, column kernels, joins; see
    docs/execution-model.md), every host port a wavelet.io, and every PE the
    routes pass that no kernel covers a router-only PE. Each PE's emitted
    router settings are checked against the fabric.route switches. A
    stream marked `sparse` (`--weft-select-sparse-streams`) is sent as
    sparse16 wavelets by its producer and read so by its consumer
    (docs/execution-model.md, "Sparse activations"); a mark on a stream that
    cannot be sparse is an error. The fabric.program is replaced by the
    wavelet.program.
  }];
  let dependentDialects = ["::weft::wavelet::WaveletDialect",
                           "::weft::fabric::FabricDialect"];
}

def Replicate : Pass<"weft-replicate", "mlir::ModuleOp"> {
  let summary = "Stack the copies partitioning decided on bands of rows";
  let description = [{
    A lowered `wavelet.program` with `weft.replicas = N` (N > 1, decided by
    `--weft-partition-dense{replicas=...}`) becomes N copies of itself
    (docs/execution-model.md, "Replicas"): copy k is every `wavelet.pe`,
    `wavelet.pe_group` and `wavelet.io` moved down by k times the h rows the
    program uses (`stackReplicas`, lib/Kernels/Replicas.cpp), so that each
    copy keeps its host ports on the west and east edges and its routes in
    its own rows. Placement, routing and the lowering lay a network out from
    row 0; a copy moved down is a translation of its PE programs (register
    parameters and per-PE segments are relative to their group), and copies
    on disjoint rows share no router, so every copy keeps the original's
    colors. A copy's symbols and layers are the original's with `_r<k>`
    appended (a free name if that one is taken); every host port carries
    `weft.replica = k` and the copies' `weft.replica_of` (the original
    port), and the program `weft.replica_rows = h`: the host deals samples
    round robin to the copies' ports and gathers their outputs in order. N
    copies that do not fit the fabric's rows are an error with the numbers;
    a program without `weft.replicas` is left as it is.

    Example (`weft.replicas = 2`, a network on rows 0 to 6 of 16):
    ```mlir
    wavelet.io @x input west rows 0 to 6 color 0 "dense32"
        : tensor<1x64xf32> {weft.replica = 0 : i64}
    wavelet.io @x_r1 input west rows 6 to 12 color 0 "dense32"
        : tensor<1x64xf32> {weft.replica = 1 : i64, weft.replica_of = "x"}
    wavelet.pe @fc1_c0_r0_r1 at (0, 6) attributes {layer = "fc1_r1"} {...}
    ```
  }];
  let dependentDialects = ["::weft::wavelet::WaveletDialect"];
  let statistics = [Statistic<"numCopies", "num-copies", "Copies made">];
}

def LowerTrainingToWavelet
    : Pass<"weft-lower-training-to-wavelet", "mlir::ModuleOp"> {
  let summary = "Emit the per-PE programs of a placed training program";
  let description = [{
    On a partitioned, routed and colored `fabric.program` with `training`
    (after `--weft-prepare-training`, `--weft-partition-dense`,
    `--weft-route-streams` and `--weft-allocate-colors`; docs/training.md):
    the trained dense kernels get the training program of
    EmitTrainedDense.cpp, the trained Relu/Tanh column kernels their
    backward step, and the loss kernel (`#fabric.softmax<loss = true>`) the
    softmax cross-entropy column, its labels entering on the east port of
    row 0 (host input `labels`, one int16 per sample, on the kernel's
    `labels` channel) and its probabilities leaving east as the program's
    output `probabilities`. Every router setting and color is read off the
    `fabric.route` ops, as the inference lowering reads them, and the
    emitted routes are checked against them. A layer whose training memory
    or matrix instructions do not fit its PEs, a program without the loss
    kernel, a kernel marked `input_gradient` without its gradient stream,
    or an unrouted stream is an error naming the op.
  }];
  let dependentDialects = ["::weft::wavelet::WaveletDialect",
                           "::weft::fabric::FabricDialect"];
}

#endif // WEFT_CONVERSION_PASSES
