//===- Commands.h - weftc subcommands and shared helpers --------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TOOLS_WEFTC_COMMANDS_H
#define WEFT_TOOLS_WEFTC_COMMANDS_H

#include "weft/Binary/Binary.h"
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

/// The stages of the fabric pipeline, in order (`--until-after`).
enum class Stage { Import, Cleanup, Fabric, Partition, Route, Wavelet, Binary };

/// How `weftc compile` and `weftc run` compile a model.
struct CompileOptions {
  /// WxH[,options], or auto[,options]: the smallest fabric up to `maxGrid`
  /// within 5% of the best predicted utilization (--weft-partition-dense).
  std::string grid = "16x16";
  std::string maxGrid = "64x64";
  std::string precision = "fp32";
  /// --weft-partition-dense's merge-lanes.
  bool mergeLanes = true;
  /// --weft-convert-to-fabric's fuse-activations.
  bool fuseActivations = true;
  int64_t batchSize = 1;
  /// Graph inputs frozen into the program as constants (weights the model
  /// takes as inputs, as the ONNX node tests do): NAME=FILE.
  std::vector<std::string> constants;
  /// The last stage to run.
  Stage untilAfter = Stage::Binary;
};

/// The fabric options `weftc compile` and `weftc run` share (--grid,
/// --max-grid, --precision), declared once in the command's category.
struct FabricFlags {
  explicit FabricFlags(llvm::cl::OptionCategory &category);
  llvm::cl::opt<std::string> grid, maxGrid, precision;
  llvm::cl::opt<bool> mergeLanes, fuseActivations;
  /// Copies the flags into `options`.
  void apply(CompileOptions &options) const;
};

/// One kernel of the partitioned program, as `weftc run` reports it.
struct KernelFigures {
  std::string name;
  /// "dense 784 -> 256" or "Softmax of 10".
  std::string what;
  bool dense = true;
  /// Multiply-accumulates per sample: the model's (0 for a matrix weft
  /// made) and the executed ones.
  int64_t modelMacs = 0, executedMacs = 0;
  int64_t K = 0, M = 0, x0 = 0, width = 0, rows = 0, predictedCycles = 0;
};

/// What a compile produced, and the figures `weftc run` reports.
struct CompiledModel {
  /// The module as imported (before constants are bound): what the host
  /// reference runs.
  mlir::OwningOpRef<mlir::ModuleOp> imported;
  /// The module after the last stage that ran.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// The binary, when the pipeline ran to the end.
  std::optional<weft::binary::Program> binary;
  /// From the partitioned fabric program (when it ran that far): the host
  /// ports, the kernels in chain order, the slowest kernel's predicted
  /// cycles per sample and the dense kernels' MACs per sample.
  std::string programName;
  /// The host ports' names (the graph's inputs and outputs, in order).
  std::vector<std::string> inputNames, outputNames;
  std::vector<KernelFigures> kernels;
  /// macsPerSample counts the model's MACs (Gemm/MatMul of the graph),
  /// executedMacsPerSample every MAC the kernels execute.
  int64_t batch = 1, predictedCycles = 0, macsPerSample = 0,
          executedMacsPerSample = 0;
  int64_t gridPEs = 0;
  /// The fabric's parameters beyond its size (",mem=B,colors=N,rq=N,cq=N"),
  /// or empty when they are the machine's defaults.
  std::string fabricExtras;
  unsigned gridWidth = 0, gridHeight = 0, routableColors = 0;
  /// How --grid auto chose the fabric (empty otherwise).
  std::string gridAuto;
  /// Distinct colors the routes of the lowered program use.
  int64_t colorsUsed = 0;
  /// The stage that failed, when compileModel returned false.
  std::optional<Stage> failedStage;
  bool mixed = false;
};

/// Runs the pipeline on the model at `path` up to `options.untilAfter`.
/// Pass-manager and timing command-line options apply (they must have been
/// registered by the command). On failure returns false with `error` set to the
/// diagnostics.
bool compileModel(mlir::MLIRContext &ctx, llvm::StringRef path,
                  const CompileOptions &options, CompiledModel &out,
                  std::string &error);

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
