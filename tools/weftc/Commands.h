//===- Commands.h - weftc subcommands and shared helpers --------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TOOLS_WEFTC_COMMANDS_H
#define WEFT_TOOLS_WEFTC_COMMANDS_H

#include "weft/TensorIO/TensorIO.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>

namespace weftc {

/// `weftc reference`: ReferenceCommand.cpp.
int referenceMain(int argc, char **argv);
/// `weftc conformance`: ConformanceCommand.cpp.
int conformanceMain(int argc, char **argv);

/// A context with every dialect import and the host reference need.
/// Single-threaded: conformance forks children from the driver, and runs
/// must not depend on scheduling.
std::unique_ptr<mlir::MLIRContext> createContext();

/// Imports the ONNX model in `path`, or parses it when it is a `.mlir` file
/// already in the imported form (func @main_graph on tensors). On failure
/// returns nullptr and sets `error` to the diagnostics, one per line.
mlir::OwningOpRef<mlir::ModuleOp> loadModel(mlir::MLIRContext &ctx,
                                              llvm::StringRef path,
                                              int64_t batchSize,
                                              std::string &error);

} // namespace weftc

#endif // WEFT_TOOLS_WEFTC_COMMANDS_H
