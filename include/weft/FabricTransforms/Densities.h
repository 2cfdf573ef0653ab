//===- Densities.h - Expected densities of streams, as passes take them --===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The measured densities a calibration run hands to the passes that cost
// sparse streams (--weft-partition-dense, --weft-select-sparse-streams;
// docs/execution-model.md, "Calibration run"): their option syntax, and
// which measurement a kernel's output stream expects.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_FABRICTRANSFORMS_DENSITIES_H
#define WEFT_FABRICTRANSFORMS_DENSITIES_H

#include "weft/Kernels/SparseActivations.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace weft::conversion {

/// A pass's sparse-activations options, checked: the mode (off, auto, on)
/// and the expected densities of ReLU results and host inputs (0..1); an
/// error on `where` otherwise.
mlir::FailureOr<SparseMode> parseSparseOptions(mlir::Operation *where,
                                               llvm::StringRef mode,
                                               double density,
                                               double inputDensity);

/// Entries NAME=D or NAME=D:P0:P1:...:Pn-1 (D the fraction of non-zero
/// values, Pi element i's) into `out`; a malformed entry is an error on
/// `where` naming `option`.
mlir::LogicalResult parseDensities(mlir::Operation *where,
                                   llvm::ArrayRef<std::string> entries,
                                   llvm::StringRef option,
                                   llvm::StringMap<ExpectedDensity> &out);

/// The measured density of what `kernel` sends: that of its last ONNX node
/// (the last name in its location), or nullptr when not measured.
const ExpectedDensity *
measuredDensity(mlir::Operation *kernel,
                const llvm::StringMap<ExpectedDensity> &measured);

} // namespace weft::conversion

#endif // WEFT_FABRICTRANSFORMS_DENSITIES_H
