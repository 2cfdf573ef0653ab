//===- DenseLayer.h - Dense layers and their fabric mapping -----*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A dense (fully connected) layer y = act(x W + b) recognised in the linalg
// IR the importer produces, and the plain-C++ description of how it is laid
// out on the fabric (docs/execution-model.md). The partition pass chooses a
// DenseMapping with the cost model; the fabric-to-wavelet lowering emits it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_DENSELAYER_H
#define WEFT_CONVERSION_DENSELAYER_H

#include "weft/Target/Target.h"

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

/// The precision a layer is compiled for.
enum class Precision { FP32, Mixed };

/// How a dense layer is laid out (docs/execution-model.md, "Dense layer"):
/// a rectangle of `smear` columns by `rows` rows at (x0, y0). Column c holds
/// input chunk c (the fan-in is smeared over the columns), row r holds
/// neuron chunk r; chunks are ceil(K / smear) and ceil(M / rows) long, the
/// last ones shorter. Input chunk c enters on row c and turns into column c
/// at PE (c, c), so the layer occupies max(smear, rows) rows; rows from
/// `rows` on only carry input chunks (routers and the turning PEs).
struct DenseMapping {
  int64_t x0 = 0, y0 = 0;
  int64_t smear = 1, rows = 1;
  Precision precision = Precision::FP32;
};

/// Chunk sizes: elements of chunk `i` when `n` elements are cut into
/// `parts` chunks of ceil(n / parts).
int64_t chunkSize(int64_t n, int64_t parts, int64_t i);
int64_t chunkBegin(int64_t n, int64_t parts, int64_t i);

/// The cost model (docs/execution-model.md, "Cost model"): steady-state
/// cycles per sample of the layer under `m`, from the same ISA cost table the
/// simulator uses. `bias`: the layer adds a bias (one more vector
/// instruction on the last column).
int64_t predictCyclesPerSample(int64_t K, int64_t M, const DenseMapping &m,
                               bool bias = true);

/// Bytes of PE memory the most loaded PE of the mapping needs (code, task
/// table, descriptors, weights, accumulator, bias).
int64_t memoryPerPE(int64_t K, int64_t M, const DenseMapping &m);

/// Chooses smear and rows on `target` (the rectangle starts at (0, 0)):
/// the fewest cycles per sample, then the fewest PEs. Fails with a sentence
/// in `why` saying what is needed when nothing fits (PEs, memory).
mlir::FailureOr<DenseMapping> chooseDenseMapping(int64_t K, int64_t M,
                                                 Precision p,
                                                 const target::Target &target,
                                                 std::string &why);

} // namespace weft::conversion

#endif // WEFT_CONVERSION_DENSELAYER_H
