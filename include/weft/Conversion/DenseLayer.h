//===- DenseLayer.h - Dense layers and their fabric mapping -----*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A dense (fully connected) layer y = act(x W + b) recognised in the linalg
// IR the importer produces. How it is laid out on the fabric and what that
// costs is plain C++ in the kernel library (weft/Kernels/DenseMapping.h);
// the partition pass chooses a DenseMapping with that cost model and the
// fabric-to-wavelet lowering emits it with emitDenseLayer.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_DENSELAYER_H
#define WEFT_CONVERSION_DENSELAYER_H

#include "weft/Kernels/ConvMapping.h"
#include "weft/Kernels/DenseMapping.h"
#include "weft/Kernels/DenseTraining.h"
#include "weft/Kernels/Routing.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::conversion {

/// y[n, :] = act(x[n, :] W + b) for every row n of a batch.
struct DenseLayer {
  int64_t batch = 1; ///< rows of x (streamed as samples)
  int64_t K = 0;     ///< fan-in
  int64_t M = 0;     ///< neurons
  /// W in row-major K x M (W[k * M + m]); bias M values or empty.
  std::vector<float> weights, bias;
  bool relu = false;
  /// A convolution laid out like a dense layer (K and M its input and
  /// output elements; `weights` in ONNX's OIHW order, `bias` cout values).
  std::optional<ConvShape> conv;
  /// A fused frustum group (docs/frustum.md, "The lowering"): its layers,
  /// their weights (OIHW) and biases (empty: none); `conv` is the
  /// envelope.
  std::vector<ConvShape> frustum;
  std::vector<std::vector<float>> frustumWeights, frustumBias;
  /// Dense layers fed by a feature-map stream: the pixels of its channels
  /// (the input arrives pixel-major per row chunk, so the weight rows are
  /// taken in that order); 0 for a row-major input.
  int64_t inputPixels = 0;
  /// Sparse activations (docs/execution-model.md, "Sparse activations"):
  /// the input arrives as a sparse stream (fp16 values with their index in
  /// the chunk, then a closeout), and the ReLU results leave as one. Set by
  /// the lowering; a sparse output needs `relu`, a sparse input mixed
  /// precision.
  bool sparseIn = false, sparseOut = false;
  /// Weight-memory sparsity (docs/execution-model.md, "Sparse weights"):
  /// every PE's weight columns are sliced vectors (lane masks and packed
  /// non-zero lanes), so zero weights cost no MAC, no cycle in a word of
  /// zeros and only the mask's read energy. Set by the lowering from the
  /// kernel's `sliced_weights` mark.
  bool slicedWeights = false;
  /// The ONNX initializers W and b are, when they are one each (from the
  /// importer's NameLocs; empty otherwise), and whether the initializer is
  /// W's transpose (Gemm transB).
  std::string weightsSource, biasSource;
  bool weightsTransposed = false;
  /// The layer's input (x) and final result (y) values.
  mlir::Value input, result;
  /// The ops of the layer, producer first (matmul, bias, activation...).
  llvm::SmallVector<mlir::Operation *> ops;
};

/// Recognises the dense layer whose result is `result`: a linalg.matmul
/// (any indexing maps that express x[N,K] * W or x * W^T, with a constant
/// weight) whose accumulator is zeros or a broadcast constant bias,
/// optionally followed by an elementwise add of a constant bias row and by
/// ReLU (maximumf with 0). Fails with a sentence in `why` otherwise.
mlir::FailureOr<DenseLayer> matchDenseLayer(mlir::Value result,
                                            std::string &why);

/// Recognises the convolution whose result is `result`: an optional ReLU
/// over a linalg.conv_2d_nchw_fchw or conv_1d_ncw_fcw with constant
/// weights, whose accumulator is zeros or a constant bias per output
/// channel, reading its input through an optional zero tensor.pad of the
/// spatial dimensions; or a grouped one (`conv->groups` > 1, weights OIHW
/// with I = cin / groups): linalg.depthwise_conv_2d_nchw_chw, or
/// linalg.conv_2d_ngchw_gfchw on the input expanded to [N, G, C/G, H, W]
/// with its result collapsed back to [N, M, H, W]. The DenseLayer has `conv`
/// set, K and M its input and output elements per sample, `batch` the input's
/// first dimension. Fails with a sentence in `why` otherwise.
/// The ONNX initializer the constant `v` is (the importer's NameLoc), or ""
/// when it is none or was folded from several.
std::string initializerName(mlir::Value v);

mlir::FailureOr<DenseLayer> matchConvLayer(mlir::Value result,
                                           std::string &why);

/// Whether `op` is a ReLU in the importer's form: a linalg.generic of one
/// input, all loops parallel, yielding max(x, 0) of it.
bool isRelu(mlir::Operation *op);

/// The colors of one dense layer (docs/execution-model.md, "Colors"),
/// chosen by the color allocator.
struct DenseColors {
  int64_t in = 1;           // A: input chunk c along row c (the stream in)
  int64_t column = 2;       // B: input chunk c down column c
  int64_t psum[2] = {3, 4}; // the hop leaving column c has psum[(c + 1) % 2]
  int64_t out = 5;          // the last column's results (the stream out)
};

/// Emits the layer's wavelet.pe / wavelet.pe_group ops under `m` at `b`'s
/// insertion point (inside a wavelet.program), named after `name`, with
/// the router settings `routes` gives every PE (a routed program's
/// fabric.route ops).
/// The same for a convolution (`layer.conv` set): the line-buffer program
/// of docs/execution-model.md, "Convolution".
void emitConvLayer(mlir::OpBuilder &b, mlir::Location loc,
                   const DenseLayer &layer, const DenseMapping &m,
                   const DenseColors &colors, llvm::StringRef name,
                   const RouteTable &routes);

/// A fused frustum group (`layer.frustum`) in m.tiles bands of one PE
/// each (EmitFrustum.cpp).
void emitFrustumChain(mlir::OpBuilder &b, mlir::Location loc,
                      const DenseLayer &layer, const DenseMapping &m,
                      const DenseColors &colors, llvm::StringRef name,
                      const RouteTable &routes);

void emitDenseLayer(mlir::OpBuilder &b, mlir::Location loc,
                    const DenseLayer &layer, const DenseMapping &m,
                    const DenseColors &colors, llvm::StringRef name,
                    const RouteTable &routes);

/// The backward channels of a trained dense layer (docs/training.md,
/// "Colors added per trained dense layer"; routes in Routing.h).
struct TrainingColors {
  int64_t gradIn = 6;       // dL/dy chunk r into the last column (the stream)
  /// A convolution whose output forks into a residual block: the second
  /// consumer's dL/dy, added to the first's (-1: none).
  int64_t gradIn2 = -1;
  int64_t deltaRow = 7;     // dL/dz chunk r along row r
  int64_t reduce[2] = {8, 9}; // the column reduction of dL/dx
  int64_t gradOut = 10;     // dL/dx chunk c west from the diagonal (stream)
};

/// The training program of docs/training.md for a dense layer (fp32, no
/// merged lanes, one band): forward, delta and chain passes and the SGD or
/// MBGD update, one sample loop per PE.
void emitTrainedDenseLayer(mlir::OpBuilder &b, mlir::Location loc,
                           const DenseLayer &layer, const DenseMapping &m,
                           const DenseColors &colors,
                           const TrainingColors &trainingColors,
                           const DenseTraining &training, llvm::StringRef name,
                           const RouteTable &routes);

/// The training program of docs/training.md ("A trained convolution") for
/// a convolution (fp32, one band, no merged lanes; trainedConvLimits):
/// forward, gradient rows, input gradient (upsampled gradient rows for
/// strides above 1), chain pass and the SGD or MBGD update, one sample
/// loop per PE.
mlir::LogicalResult
emitTrainedConvLayer(mlir::OpBuilder &b, mlir::Location loc,
                     const DenseLayer &layer, const DenseMapping &m,
                     const DenseColors &colors,
                     const TrainingColors &trainingColors,
                     const DenseTraining &training, llvm::StringRef name,
                     const RouteTable &routes);

} // namespace weft::conversion

#endif // WEFT_CONVERSION_DENSELAYER_H
