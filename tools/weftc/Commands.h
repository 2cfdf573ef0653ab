//===- Commands.h - weftc subcommands and shared helpers --------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TOOLS_WEFTC_COMMANDS_H
#define WEFT_TOOLS_WEFTC_COMMANDS_H

#include "weft/Binary/Binary.h"
#include "weft/Driver/Driver.h"
#include "weft/TensorIO/TensorIO.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace weftc {

/// `weftc reference`: ReferenceCommand.cpp.
int referenceMain(int argc, char **argv);
/// `weftc conformance`: ConformanceCommand.cpp.
int conformanceMain(int argc, char **argv);
/// `weftc compile`: CompileCommand.cpp.
int compileMain(int argc, char **argv);
/// `weftc run`: RunCommand.cpp.
int runMain(int argc, char **argv);
/// `weftc train`: TrainCommand.cpp.
int trainMain(int argc, char **argv);

/// Parses a command's options (pass-manager, timing and printer options
/// registered, the rest hidden), with `--stats FILE` / `--stats=FILE`
/// (weft-sim's spelling) rewritten to `--stats-file=FILE`.
void parseWithStatsFile(int argc, char **argv,
                        llvm::cl::OptionCategory &category,
                        llvm::StringRef overview);

// The compile and its figures live in the driver library
// (include/weft/Driver/Driver.h), shared with the `weft` Python package.
using weft::driver::CompiledModel;
using weft::driver::compileModel;
using weft::driver::CompileOptions;
using weft::driver::createContext;
using weft::driver::KernelFigures;
using weft::driver::loadModel;
using weft::driver::Stage;

/// The fabric options `weftc compile` and `weftc run` share (--grid,
/// --max-grid, --precision), declared once in the command's category.
struct FabricFlags {
  explicit FabricFlags(llvm::cl::OptionCategory &category);
  llvm::cl::opt<std::string> grid, maxGrid, precision;
  llvm::cl::opt<bool> mergeLanes, fuseActivations;
  llvm::cl::opt<std::string> onlyKernels;
  /// --frustum off|auto: fuse frustum groups of convolutions.
  llvm::cl::opt<std::string> frustum;
  llvm::cl::opt<int64_t> frustumMaxTile;
  /// --replicas auto|N: copies of the network on bands of rows.
  llvm::cl::opt<std::string> replicas;
  /// --sparse-activations off|auto|on and the expected --density of
  /// non-zero ReLU results (docs/execution-model.md, "Sparse activations").
  llvm::cl::opt<std::string> sparseActivations;
  llvm::cl::opt<double> density;
  llvm::cl::opt<double> inputDensity;
  llvm::cl::opt<std::string> sparseWeights;
  llvm::cl::opt<bool> sparsePlacement;
  /// --remarks: print the passes' remarks on stderr.
  llvm::cl::opt<bool> remarks;
  /// Copies the flags into `options`.
  void apply(CompileOptions &options) const;
  /// With --remarks, prints the compile's remarks on stderr.
  void printRemarks(const char *argv0, const CompiledModel &compiled) const;
};

/// --progress and --no-progress: progress lines on stderr (the compile's
/// stages; `weftc run` also the simulator's cycles and samples), by default
/// only when stderr is a terminal.
struct ProgressFlags {
  explicit ProgressFlags(llvm::cl::OptionCategory &category);
  llvm::cl::opt<bool> progress, noProgress;
  /// Whether progress is reported: --progress, --no-progress, or whether
  /// stderr is a terminal.
  bool enabled() const;
  /// When enabled, makes the compile print each stage as it ends:
  /// "weftc: partition done in 0.61 s (0.70 s in all)".
  void apply(CompileOptions &options) const;
};

} // namespace weftc

#endif // WEFT_TOOLS_WEFTC_COMMANDS_H
