//===- CompileCommand.cpp - weftc compile ---------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// weftc compile model.onnx -o model.wfb [--grid WxH] [--precision fp32|mixed]
//               [--batch-size N] [--constant NAME=FILE ...]
//               [--only-kernels FIRST..LAST] [--progress|--no-progress]
//               [--emit=mlir|fabric|wavelet|wfb]
//               [--until-after=import|cleanup|fabric|partition|route|wavelet]
//               [--mlir-print-ir-after-all] [--mlir-timing] ...
//
// The pipeline (docs/weftc.md; compileModel in lib/Driver/Driver.cpp runs
// it): import -> --weft-import-cleanup -> --weft-fabric-prepare ->
// --weft-convert-to-fabric -> --weft-partition-dense -> --weft-route-streams ->
// --weft-allocate-colors -> --weft-lower-fabric-to-wavelet -> .wfb.
// `--until-after` stops after a stage and prints the IR there; `--emit` names
// what to write (mlir: the imported IR, fabric: after routing and colors,
// wavelet: after lowering, wfb: the binary). Output is deterministic: the
// same model and options give the same bytes. Progress (each stage as it
// ends, with its time) goes to stderr when it is a terminal, or with
// --progress.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "weft/Binary/File.h"
#include "weft/Pipeline/Pipeline.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;
using namespace mlir;
using namespace weftc;

weftc::FabricFlags::FabricFlags(cl::OptionCategory &category)
    : grid("grid", cl::init("auto"),
           cl::desc("The fabric: WxH[,mem=B,colors=N,rq=N,cq=N], or "
                    "auto[,...] (the default: the smallest grid up to "
                    "--max-grid within 5% of the best predicted "
                    "utilization)"),
           cl::cat(category)),
      maxGrid("max-grid", cl::init(weft::machine::kFullFabric),
              cl::desc("The largest fabric --grid auto considers (default: "
                       "the whole machine)"),
              cl::cat(category)),
      precision("precision", cl::init("fp32"),
                cl::desc("fp32, or mixed (fp16 storage and multiply, fp32 "
                         "accumulate)"),
                cl::cat(category)),
      mergeLanes("merge-lanes", cl::init(false),
                 cl::desc("Let a convolution merge several of its "
                          "producer's row lanes into one column "
                          "(docs/execution-model.md, \"Merged lanes\")"),
                 cl::cat(category)),
      fuseActivations(
          "fuse-activations", cl::init(true),
          cl::desc("Fuse an activation that is the only reader of a "
                   "convolution's result into it (docs/execution-model.md, "
                   "\"Fused activations\"); =false keeps it a column kernel"),
          cl::cat(category)),
      onlyKernels("only-kernels",
                  cl::desc("Keep only the kernels FIRST..LAST after "
                           "partitioning (0-based indices in the order "
                           "`weftc run` lists them, or kernel names): a "
                           "slice fed and drained by the host "
                           "(docs/weftc.md, \"Slices\")"),
                  cl::value_desc("FIRST..LAST"), cl::cat(category)),
      frustum("frustum", cl::init("auto"),
              cl::desc("off: every convolution on its own rectangle; auto: "
                       "chains of convolutions run fused, tile by tile, "
                       "where the cost model predicts them no slower; on: "
                       "wherever they can (docs/frustum.md)"),
              cl::value_desc("off|auto|on"), cl::cat(category)),
      frustumMaxTile("frustum-max-tile", cl::init(0),
                     cl::desc("With --frustum auto: the largest tile side "
                              "(0: the largest that fits a PE)"),
                     cl::cat(category)),
      replicas("replicas", cl::init("1"),
               cl::desc("Copies of the network on bands of the fabric's "
                        "rows, each fed its own samples (round robin): N, "
                        "or auto (as many as fit the fabric; "
                        "docs/weftc.md, \"Replicas\")"),
               cl::value_desc("auto|N"), cl::cat(category)),
      sparseActivations(
          "sparse-activations", cl::init("off"),
          cl::desc("Send a dense layer's ReLU results to the next dense "
                   "layer as only their non-zero values (sparse16 "
                   "wavelets; mixed precision): off, auto (where the cost "
                   "model says it pays) or on (docs/execution-model.md, "
                   "\"Sparse activations\")"),
          cl::value_desc("off|auto|on"), cl::cat(category)),
      density("density", cl::init(0.5),
              cl::desc("The expected fraction of non-zero ReLU results the "
                       "--sparse-activations cost model assumes (0..1)"),
              cl::cat(category)),
      inputDensity(
          "input-density", cl::init(0.5),
          cl::desc("The expected fraction of non-zero values of the host "
                   "inputs the --sparse-activations cost model assumes "
                   "(0..1; weftc run measures it on its inputs when not "
                   "given)"),
          cl::cat(category)),
      sparseWeights(
          "sparse-weights", cl::init("auto"),
          cl::desc("Store a dense layer's weights as sliced vectors (lane "
                   "masks and packed non-zero weights), so zero weights "
                   "cost no MAC: off, auto (where it saves at least 10 % "
                   "of the weight reads' energy) or on "
                   "(docs/execution-model.md, \"Sparse weights\")"),
          cl::value_desc("off|auto|on"), cl::cat(category)),
      sparsePlacement(
          "sparse-placement", cl::init(true),
          cl::desc("With --sparse-activations: place a dense layer whose "
                   "input will arrive sparse at its sparse cost (default); "
                   "=false places every layer as if dense, so a run "
                   "differs from the dense one only in its streams "
                   "(docs/execution-model.md, \"Sparse activations\")"),
          cl::cat(category)),
      remarks("remarks",
              cl::desc("Print the passes' remarks on stderr: why a frustum "
                       "group runs per layer, which streams go sparse, … "
                       "(\"weftc: remark: LOCATION: text\")"),
              cl::cat(category)) {}

void weftc::FabricFlags::printRemarks(const char *argv0,
                                      const CompiledModel &compiled) const {
  for (const std::string &r : compiled.remarks)
    llvm::errs() << llvm::sys::path::filename(argv0) << ": remark: " << r
                 << "\n";
}

void weftc::FabricFlags::apply(CompileOptions &options) const {
  options.grid = grid;
  options.maxGrid = maxGrid;
  options.precision = precision;
  options.mergeLanes = mergeLanes;
  options.onlyKernels = onlyKernels;
  options.fuseActivations = fuseActivations;
  options.frustum = frustum;
  options.frustumMaxTile = frustumMaxTile;
  options.replicas = replicas;
  options.sparseActivations = sparseActivations;
  options.density = density;
  options.inputDensity = inputDensity;
  options.sparseWeights = sparseWeights;
  options.sparsePlacement = sparsePlacement;
  options.remarks = remarks;
}

weftc::ProgressFlags::ProgressFlags(cl::OptionCategory &category)
    : progress("progress",
               cl::desc("Print progress on stderr (the default when stderr "
                        "is a terminal)"),
               cl::cat(category)),
      noProgress("no-progress", cl::desc("Print no progress"),
                 cl::cat(category)) {}

bool weftc::ProgressFlags::enabled() const {
  if (noProgress)
    return false;
  return progress || sys::Process::StandardErrIsDisplayed();
}

void weftc::ProgressFlags::apply(CompileOptions &options) const {
  if (!enabled())
    return;
  auto start = std::chrono::steady_clock::now();
  options.onStage = [start](StringRef stage, double seconds) {
    double all = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start)
                     .count();
    errs() << formatv("weftc: {0} done in {1:F2} s ({2:F2} s in all)\n",
                      stage, seconds, all);
  };
}

int weftc::compileMain(int argc, char **argv) {
  cl::OptionCategory category("weftc compile options");
  cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                                 cl::desc("<model.onnx or imported .mlir>"),
                                 cl::cat(category));
  cl::opt<std::string> outputPath("o", cl::init("-"),
                                  cl::desc("Output file ('-' for stdout; a "
                                           ".wfb needs a file)"),
                                  cl::value_desc("FILE"), cl::cat(category));
  FabricFlags fabric(category);
  ProgressFlags progress(category);
  cl::opt<int64_t> batchSize(
      "batch-size", cl::init(1),
      cl::desc("Size bound to a symbolic batch dimension (batch rows are "
               "streamed as samples)"),
      cl::cat(category));
  cl::list<std::string> constants(
      "constant",
      cl::desc("Freeze graph input NAME to the tensor in FILE (weights the "
               "model takes as inputs)"),
      cl::value_desc("NAME=FILE"), cl::cat(category));
  cl::opt<std::string> emit(
      "emit", cl::init("wfb"),
      cl::desc("What to write: mlir (imported IR), fabric (placed, routed "
               "and colored), wavelet (after lowering), wfb (the binary)"),
      cl::cat(category));
  cl::opt<std::string> untilAfter(
      "until-after", cl::init(""),
      cl::desc("Stop after a stage and print its IR: import, cleanup, "
               "fabric, partition, route, wavelet"),
      cl::cat(category));
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "compile an ONNX model to a fabric binary\n");

  auto fail = [&](const Twine &message) {
    errs() << argv[0] << ": error: " << message << "\n";
    return 1;
  };

  CompileOptions options;
  fabric.apply(options);
  progress.apply(options);
  options.batchSize = batchSize;
  options.constants.assign(constants.begin(), constants.end());
  StringMap<Stage> stages = {{"import", Stage::Import},
                             {"cleanup", Stage::Cleanup},
                             {"fabric", Stage::Fabric},
                             {"partition", Stage::Partition},
                             {"route", Stage::Route},
                             {"wavelet", Stage::Wavelet}};
  StringMap<Stage> emits = {{"mlir", Stage::Import},
                            {"fabric", Stage::Route},
                            {"wavelet", Stage::Wavelet},
                            {"wfb", Stage::Binary}};
  if (!emits.count(emit))
    return fail("--emit must be mlir, fabric, wavelet or wfb, not '" + emit +
                "'");
  options.untilAfter = emits.lookup(emit);
  if (!untilAfter.empty()) {
    if (!stages.count(untilAfter))
      return fail("--until-after must be import, cleanup, fabric, "
                  "partition, route or wavelet, not '" +
                  untilAfter + "'");
    options.untilAfter =
        std::min(options.untilAfter, stages.lookup(untilAfter));
  }
  if (options.untilAfter == Stage::Binary && outputPath == "-")
    return fail("a .wfb needs an output file (-o FILE), or choose "
                "--emit=mlir|fabric|wavelet");

  weft::registerAllPasses();
  std::unique_ptr<MLIRContext> ctx = createContext();
  CompiledModel compiled;
  std::string error;
  bool compiledOk = compileModel(*ctx, modelPath, options, compiled, error);
  fabric.printRemarks(argv[0], compiled);
  if (!compiledOk)
    return fail(error);

  if (options.untilAfter == Stage::Binary) {
    if (!weft::binary::writeFile(outputPath, *compiled.binary, &error))
      return fail("cannot write '" + outputPath + "': " + error);
    return 0;
  }
  std::error_code ec;
  ToolOutputFile file(outputPath, ec, sys::fs::OF_Text);
  if (ec)
    return fail("cannot write '" + outputPath + "': " + ec.message());
  compiled.module->print(file.os());
  file.os() << "\n";
  file.keep();
  return 0;
}
