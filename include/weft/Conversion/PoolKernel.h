//===- PoolKernel.h - Pooling kernels to wavelet programs -------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A placed pooling kernel (docs/execution-model.md, "Pooling"): one column
// x of `rows` rows from row 0, row r pooling channel chunk r of the
// feature-map stream that arrives on `inColor` from the west and sending
// its pooled chunk east on `outColor`. The schedule, cost model and memory
// map are the kernel library's (weft/Kernels/PoolMapping.h).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_POOLKERNEL_H
#define WEFT_CONVERSION_POOLKERNEL_H

#include "weft/Kernels/PoolMapping.h"
#include "weft/Kernels/Routing.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace weft::conversion {

/// A pooling recognised in the importer's IR: the shape, the batch (the
/// input's first dimension), the input and the ops, producer first.
struct PoolLayer {
  PoolShape shape;
  int64_t batch = 1;
  mlir::Value input, result;
  llvm::SmallVector<mlir::Operation *> ops;
  /// The op that names the layer (the pooling or the reduction).
  mlir::Operation *namer = nullptr;
};

/// Recognises the pooling whose result is `result`, in the importer's forms
/// (lib/Import/ImportNN.cpp): MaxPool as an optional -inf tensor.pad of the
/// spatial dimensions and linalg.pooling_nchw_max (pooling_ncw_max) into a
/// -inf fill; AveragePool as the same with 0 and pooling_nchw_sum, then a
/// linalg.generic dividing by a constant (one, or one per output pixel:
/// ONNX's pads, ceil_mode and count_include_pad are recovered from the
/// pads and divisors); GlobalMaxPool and GlobalAveragePool as a
/// linalg.generic reducing every spatial dimension (maximumf from -inf, or
/// addf from 0, reshaped, divided by the pixels). Returns failure with an
/// empty `why` when `result` is no pooling at all, with a sentence when it
/// is one the fabric does not run.
mlir::FailureOr<PoolLayer> matchPoolLayer(mlir::Value result,
                                          std::string &why);

struct PoolKernel {
  PoolShape shape;
  int64_t x = 0, rows = 1;
  /// Bands of output columns, band t on column x + t (a max pool only;
  /// docs/execution-model.md, "Pooling").
  int64_t tiles = 1;
  int64_t inColor = 1, outColor = 2;
};

/// Emits the kernel's wavelet.pe / wavelet.pe_group ops at `b`'s insertion
/// point (inside a wavelet.program), named after `name`, with the router
/// settings `routes` gives every PE. Rows that do not divide the channels,
/// a mapping the PEs cannot run (poolMappingProblem) or a column off the
/// fabric fail with a diagnostic at `loc`.
mlir::LogicalResult emitPoolKernel(mlir::OpBuilder &b, mlir::Location loc,
                                   const PoolKernel &k, llvm::StringRef name,
                                   const RouteTable &routes);

/// The training program of docs/training.md ("A trained max pool") for a
/// max pool whose windows tile its input (trainedPoolLimits), on one band:
/// dL/dy arrives on `gradIn` from the east (a pool feeding a residual
/// block: and on `gradIn2`, added; -1: none), dL/dx leaves west on
/// `gradOut`.
mlir::LogicalResult emitTrainedPoolKernel(mlir::OpBuilder &b,
                                          mlir::Location loc,
                                          const PoolKernel &k, int64_t gradIn,
                                          int64_t gradIn2, int64_t gradOut,
                                          llvm::StringRef name,
                                          const RouteTable &routes);

} // namespace weft::conversion

#endif // WEFT_CONVERSION_POOLKERNEL_H
