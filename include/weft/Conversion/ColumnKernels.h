//===- ColumnKernels.h - Column kernels: matching and emission --*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The MLIR side of the column kernels (docs/execution-model.md, "Column
// kernels"): recognising them in the importer's linalg IR and emitting
// their per-PE wavelet programs. What they are, their instruction
// sequences and their cost model are plain C++ in the kernel library
// (weft/Kernels/ColumnKernel.h).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_COLUMNKERNELS_H
#define WEFT_CONVERSION_COLUMNKERNELS_H

#include "weft/Kernels/ColumnKernel.h"
#include "weft/Kernels/Routing.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace weft::conversion {

/// Recognises a per-sample elementwise activation or (log-)softmax whose
/// result is `result` (the importer's linalg form): over the whole sample
/// (Softmax, LogSoftmax) or over one axis, or adjacent axes, of it
/// (AxisSoftmax, AxisLogSoftmax, with {G, I} in `*params`).
/// Returns the op and sets `input` to its operand and, if `params` is
/// given, `*params` to its constants (columnParamCount(op) of them); fails
/// with a sentence in `why` otherwise. Scalar constants may be arith
/// constants in the body or splat constant tensors (arith.constant, or a
/// linalg.fill of one) read through extra inputs of the generic.
mlir::FailureOr<ColumnOp>
matchColumnKernel(mlir::Value result, mlir::Value &input, std::string &why,
                  std::vector<float> *params = nullptr);

/// The tensor operand of a per-row elementwise op whose result is `result`:
/// the one input of its linalg.generic that is not a splat constant; null
/// if there is not exactly one.
mlir::Value columnKernelOperand(mlir::Value result);

/// Emits the kernel's wavelet.pe / wavelet.pe_group ops at `b`'s insertion
/// point (inside a wavelet.program), named after `name`, with the layer
/// attribute `layer`. Every PE gets the router settings `routes` gives it
/// (a routed program's fabric.route ops); without `routes`, the column's
/// own from weft/Kernels/Routing.h and the kernel's colors.
mlir::LogicalResult emitColumnKernel(mlir::OpBuilder &b, mlir::Location loc,
                                     const ColumnKernel &k,
                                     llvm::StringRef name,
                                     llvm::StringRef layer,
                                     const RouteTable *routes = nullptr);

/// A column kernel of a training program (docs/training.md): Relu or Tanh
/// with their backward step, or the softmax cross-entropy loss after the
/// logits.
struct TrainedColumn {
  enum class Kind { Relu, Tanh, Loss };
  Kind kind = Kind::Relu;
  int64_t x = 0;
  RowChunks layout;
  /// The forward stream in (from the west) and out (to the east; the loss
  /// sends its probabilities).
  int64_t inColor = 0, outColor = 0;
  /// Relu, Tanh: dL/dy from the east. Every kind: dL/dx to the west.
  int64_t gradIn = -1, gradOut = -1;
  /// Loss: the labels (one int16 per sample) and the all-reduce's three
  /// colors (rows > 1), and the samples the loss averages over.
  int64_t labelColor = -1;
  int64_t internal[3] = {-1, -1, -1};
  int64_t batch = 1;
  /// Relu, Tanh under CPGD: the samples the backward step trails the
  /// forward by (a ring of lag + 1 y and gradients), and the samples of the
  /// run (0: SGD or MBGD, one sample at a time). The loss under CPGD: 1, it
  /// sends its gradient on a microthread from two buffers in turn.
  int64_t lag = 0, samples = 0;
  /// A pipelined MBGD: the rounds (`samples` a mini-batch) run `steps`
  /// times.
  int64_t steps = 1;
};

/// Emits `k`'s PEs with the routes `routes` gives them. Fails (at `loc`,
/// naming `name`) on a layout or colors it cannot run.
mlir::LogicalResult emitTrainedColumn(mlir::OpBuilder &b, mlir::Location loc,
                                      const TrainedColumn &k,
                                      llvm::StringRef name,
                                      llvm::StringRef layer,
                                      const RouteTable &routes);

} // namespace weft::conversion

#endif // WEFT_CONVERSION_COLUMNKERNELS_H
