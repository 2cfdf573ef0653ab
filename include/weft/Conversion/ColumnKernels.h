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

} // namespace weft::conversion

#endif // WEFT_CONVERSION_COLUMNKERNELS_H
