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
// fabric-to-wavelet lowering emits it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_DENSELAYER_H
#define WEFT_CONVERSION_DENSELAYER_H

#include "weft/Kernels/DenseMapping.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
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

} // namespace weft::conversion

#endif // WEFT_CONVERSION_DENSELAYER_H
