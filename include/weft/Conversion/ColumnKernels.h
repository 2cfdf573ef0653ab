//===- ColumnKernels.h - Per-row layers on one column of PEs ----*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Layers that work on a row-chunked vector in place: elementwise
// activations and Softmax/LogSoftmax (docs/execution-model.md, "Column
// kernels"). Such a layer occupies one column of PEs, one PE per row chunk
// of its input; each PE receives its chunk from the west, computes, and sends
// the result east, chunk for chunk, so the layout is unchanged. Softmax
// reduces the row maxima and sums across the column and broadcasts them back.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_COLUMNKERNELS_H
#define WEFT_CONVERSION_COLUMNKERNELS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>
#include <vector>

namespace weft::conversion {

/// n elements cut into `rows` chunks of ceil(n / rows), chunk r on fabric
/// row y0 + r (the I/O map's and the dense layer's chunking).
struct RowChunks {
  int64_t n = 0, rows = 1, y0 = 0;
};

enum class ColumnOp {
  Relu,       ///< max(x, 0)
  Sigmoid,    ///< 1 / (1 + exp(-x))
  Tanh,       ///< 2 * sigmoid(2x) - 1
  Softmax,    ///< exp(x - max) / sum(exp(x - max)) over the whole vector
  LogSoftmax, ///< x - max - log(sum(exp(x - max)))
};
const char *columnOpName(ColumnOp op);

/// Recognises a per-sample elementwise activation or (log-)softmax over the
/// last dimension whose result is `result` (the importer's linalg form).
/// Returns the op and sets `input` to its operand; fails with a sentence in
/// `why` otherwise.
mlir::FailureOr<ColumnOp> matchColumnKernel(mlir::Value result,
                                           mlir::Value &input,
                                           std::string &why);

struct ColumnKernel {
  ColumnOp op = ColumnOp::Relu;
  int64_t x = 0; ///< the fabric column
  RowChunks layout;
  int64_t inColor = 0, outColor = 0;
  /// Colors used inside the column (internalColors(op) of them), distinct
  /// from inColor and outColor.
  std::vector<int64_t> internal;
};

/// How many colors the kernel needs besides its input and output.
int64_t internalColors(ColumnOp op);

/// Emits the kernel's wavelet.pe / wavelet.pe_group ops at `b`'s insertion
/// point (inside a wavelet.program), named after `name`, with the layer
/// attribute `layer`.
mlir::LogicalResult emitColumnKernel(mlir::OpBuilder &b, mlir::Location loc,
                                     const ColumnKernel &k,
                                     llvm::StringRef name,
                                     llvm::StringRef layer);

/// Steady-state cycles per sample of the kernel, from the ISA cost table.
int64_t predictColumnKernelCycles(const ColumnKernel &k);

} // namespace weft::conversion

#endif // WEFT_CONVERSION_COLUMNKERNELS_H
