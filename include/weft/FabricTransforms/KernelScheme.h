//===- KernelScheme.h - Kernel schemes to and from the IR -------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The one place that turns what --weft-convert-to-fabric matched (a dense
// layer, a column kernel's op and constants) into a fabric.kernel's scheme
// attribute, and a scheme back into the plain descriptions the kernel
// library works on (ChainLayer for partitioning, DenseLayer and ColumnKernel
// for the emitters). Later stages read kernels through kernelInfo() only;
// nothing after the conversion matches a kernel's linalg body again.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_KERNELSCHEME_H
#define WEFT_CONVERSION_KERNELSCHEME_H

#include "weft/Kernels/ChainPartition.h"
#include "weft/Kernels/JoinKernel.h"
#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/DenseLayer.h"

#include "fabric/FabricOps.h"

#include <optional>
#include <string>
#include <vector>

namespace weft::conversion {

/// The scheme of a dense layer whose weights (K x M) and bias (M values, or
/// null) are `weights` and `bias`. `synthetic`: weft made the matrix. The
/// sources name the ONNX initializers W and b are ("" for none).
fabric::DenseSchemeAttr denseScheme(mlir::MLIRContext *ctx, int64_t K,
                                    int64_t M, bool relu, bool synthetic,
                                    mlir::ElementsAttr weights,
                                    mlir::ElementsAttr bias,
                                    llvm::StringRef weightsSource = "",
                                    bool weightsTransposed = false,
                                    llvm::StringRef biasSource = "");

/// The scheme of column kernel `op` with its constants `params` (for the
/// ops with a constant tensor, its elements, shaped as `sampleType`;
/// `name` names the blob they go in). Fails with a sentence in `why` when
/// the constants do not describe `op`.
mlir::FailureOr<fabric::KernelSchemeAttrInterface>
columnScheme(mlir::MLIRContext *ctx, ColumnOp op,
             const std::vector<float> &params, mlir::RankedTensorType sampleType,
             llvm::StringRef name, std::string &why);

/// Whether `kernel` is the loss kernel of a training program (a softmax
/// with `loss`, added by --weft-prepare-training; docs/training.md).
bool isLossKernel(fabric::KernelOp kernel);

/// The attribute of a fused frustum group (--weft-frustum-fuse): its
/// layers' convolution schemes, first to last (docs/frustum.md).
inline constexpr llvm::StringLiteral kFrustumChainAttr = "frustum_chain";

/// The levels of a fused frustum chain from its members' schemes, first to
/// last (docs/frustum.md, "The lowering"): a convolution's shape, a max
/// pool's window (frustumPoolLevel), and, last, an identity residual
/// block's add, which makes the level before it add the skip
/// (frustumSkipLevel). std::nullopt with `why` (naming the member by its
/// position) when a scheme can be no level; frustumChainProblem checks the
/// chain as a whole.
std::optional<std::vector<ConvShape>>
frustumLevels(llvm::ArrayRef<mlir::Attribute> schemes, std::string &why);

/// What the later stages know of a kernel, read off its scheme and type.
struct KernelInfo {
  fabric::KernelOp op;
  /// How the partitioner sees it (kind, sizes, column op and constants).
  ChainLayer layer;
  /// Dense kernels: the layer with its weights and bias (input and result
  /// values unset).
  DenseLayer dense;
  /// Column kernels: the op and its constants (placement and colors unset).
  ColumnKernel column;
  /// Joins: the op, and (once partitioned) the input buffered and the
  /// FIFO's depth (placement and colors unset).
  JoinKernel join;
  /// Pools: the geometry (also in `layer.pool`).
  bool isPool() const { return layer.kind == ChainLayer::Kind::Pool; }
  /// Grouped (depthwise) convolutions: laid out like a pooling, whole
  /// groups per row (the geometry in `layer.conv`, the weights in `dense`).
  bool isDepthwise() const {
    return layer.kind == ChainLayer::Kind::Conv && layer.conv.grouped();
  }
  /// Laid out as a dense layer: a dense layer or a convolution (S columns
  /// of input chunks by R rows of output chunks).
  bool isDense() const { return layer.smeared(); }
  /// Elements per sample into (input 0) and out of the kernel.
  int64_t inN = 0, outN = 0;
  /// A join's per-channel input (JoinKernel::broadcast): its elements.
  int64_t broadcastN = 0;
  /// Elements per sample into input `port`.
  int64_t inNOf(int64_t port) const {
    return join.broadcast >= 0 && port == join.broadcast ? broadcastN : inN;
  }
  /// The precision partitioning chose (fp32 before it).
  Precision precision = Precision::FP32;
  /// Multiply-accumulates per sample: the model's and the executed ones.
  int64_t modelMacs = 0, executedMacs = 0;
};

/// The kernel's info, or an error on the kernel for a scheme the kernel
/// library does not know (an unknown column op, wrong constants) or one
/// that does not fit the kernel's type. `withData`: also read a dense layer's
/// weights and bias (the emitters need them; the partitioner does not).
mlir::FailureOr<KernelInfo> kernelInfo(fabric::KernelOp kernel,
                                       bool withData = true);

/// The join kernel computing `kind`, then max(., 0) with `relu` (nothing
/// else set).
JoinKernel joinKernelOf(fabric::JoinKind kind, bool relu);

/// The conversion precision of a kernel's precision attribute, and back.
Precision precisionOf(fabric::KernelOp kernel);
/// How trained kernel `kernel` trains, read off its program's
/// #fabric.training and its own marks (input_gradient, checkpoint, lag);
/// `recomputesOutput`, which depends on the next kernel, is left false.
DenseTraining denseTrainingOf(fabric::KernelOp kernel);
fabric::Precision toFabric(Precision p);

} // namespace weft::conversion

#endif // WEFT_CONVERSION_KERNELSCHEME_H
