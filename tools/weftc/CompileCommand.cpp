//===- CompileCommand.cpp - weftc compile ---------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// weftc compile model.onnx -o model.wfb [--grid WxH] [--precision fp32|mixed]
//               [--batch-size N] [--constant NAME=FILE ...]
//               [--emit=mlir|fabric|wavelet|wfb]
//               [--until-after=import|cleanup|fabric|partition|route|wavelet]
//               [--mlir-print-ir-after-all] [--mlir-timing] ...
//
// The pipeline (docs/weftc.md): import -> --weft-import-cleanup ->
// --weft-fabric-prepare -> --weft-convert-to-fabric -> --weft-partition-dense ->
// --weft-route-streams -> --weft-allocate-colors ->
// --weft-lower-fabric-to-wavelet -> .wfb. `--until-after` stops after a
// stage and prints the IR there; `--emit` names what to write (mlir: the
// imported IR, fabric: after routing and colors, wavelet: after lowering, wfb: the
// binary). Output is deterministic: the same model and options give the same
// bytes.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "fabric/FabricOps.h"
#include "wavelet/WaveletOps.h"
#include "weft/Binary/File.h"
#include "weft/Binary/Routes.h"
#include "weft/FabricTransforms/Graph.h"
#include "weft/Pipeline/Pipeline.h"
#include "weft/Translate/Wfb.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using namespace llvm;
using namespace mlir;
using namespace weftc;
namespace wf = weft::fabric;

/// Freezes graph input `name` to the tensor in `file`: its uses read a
/// constant and the argument is removed.
static LogicalResult bindConstant(func::FuncOp fn, StringRef spec,
                                  std::string &error) {
  auto [name, file] = spec.split('=');
  if (name.empty() || file.empty()) {
    error = "--constant " + spec.str() + ": expected NAME=FILE";
    return failure();
  }
  std::optional<unsigned> index;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (auto n = fn.getArgAttrOfType<StringAttr>(i, "onnx.name");
        n && n.getValue() == name)
      index = i;
  if (!index) {
    error = "--constant " + spec.str() + ": the graph has no input '" +
            name.str() + "'";
    return failure();
  }
  std::string why;
  std::optional<weft::tensorio::HostTensor> t =
      weft::tensorio::readTensorFile(file.str(), &why);
  if (!t) {
    error = "cannot read '" + file.str() + "': " + why;
    return failure();
  }
  auto type = cast<RankedTensorType>(fn.getArgument(*index).getType());
  if (t->dtype != weft::tensorio::DType::F32 ||
      !type.getElementType().isF32() ||
      ArrayRef<int64_t>(t->shape) != type.getShape()) {
    std::string shape;
    for (int64_t d : t->shape)
      shape += (shape.empty() ? "" : "x") + std::to_string(d);
    error = "--constant " + spec.str() + ": the file holds " +
            weft::tensorio::dtypeName(t->dtype) + "[" + shape +
            "], but input '" + name.str() + "' is " +
            llvm::formatv("{0}", type).str();
    return failure();
  }
  ArrayRef<float> values(reinterpret_cast<const float *>(t->bytes.data()),
                         t->bytes.size() / sizeof(float));
  ElementsAttr attr;
  if (values.size() <= 16)
    attr = DenseElementsAttr::get(type, values);
  else
    attr = DenseResourceElementsAttr::get(
        type, name, HeapAsmResourceBlob::allocateAndCopyInferAlign(values));
  OpBuilder b(fn.getBody());
  Value cst =
      arith::ConstantOp::create(b, fn.getArgument(*index).getLoc(), attr);
  fn.getArgument(*index).replaceAllUsesWith(cst);
  if (failed(fn.eraseArgument(*index))) {
    error = "cannot remove input '" + name.str() + "'";
    return failure();
  }
  return success();
}

/// Reads the figures `weftc run` reports off the partitioned program.
static void readFabricFigures(ModuleOp module, CompiledModel &out) {
  for (auto program : module.getOps<wf::ProgramOp>()) {
    weft::machine::Target t = program.getModel();
    out.programName = program.getSymName().str();
    out.gridWidth = t.width();
    out.gridHeight = t.height();
    out.gridPEs = int64_t(t.numPEs());
    weft::machine::TargetConfig defaults;
    defaults.width = t.width();
    defaults.height = t.height();
    std::string spec = t.config().str(), plain = defaults.str();
    if (spec != plain)
      out.fabricExtras = spec.substr(spec.find(','));
    out.routableColors = t.routableColors();
    if (auto b = program->getAttrOfType<IntegerAttr>("weft.batch"))
      out.batch = b.getInt();
    if (auto a = program->getAttrOfType<StringAttr>("weft.grid_auto"))
      out.gridAuto = a.getValue().str();
    std::map<std::string, KernelFigures> byName;
    for (Operation &op : program.getBody().front()) {
      if (auto io = dyn_cast<wf::IoOp>(op)) {
        (io.getDirection() == weft::common::PortDir::input ? out.inputNames
                                                           : out.outputNames)
            .push_back(io.getSymName().str());
      } else if (auto k = dyn_cast<wf::KernelOp>(op)) {
        KernelFigures f;
        f.name = k.getSymName().str();
        auto in = cast<RankedTensorType>(k.getFunctionType().getInput(0));
        auto res = cast<RankedTensorType>(k.getFunctionType().getResult(0));
        f.K = in.getNumElements();
        f.M = res.getNumElements();
        // What the kernel is, as convert-to-fabric decided it.
        weft::fabric::KernelSchemeAttrInterface scheme = k.getScheme();
        f.dense = isa<weft::fabric::DenseSchemeAttr>(scheme);
        f.what = scheme.getSummary();
        if (!f.dense)
          f.what += " of " + std::to_string(f.M);
        f.modelMacs = scheme.getModelMacs();
        f.executedMacs = scheme.getExecutedMacs();
        if (auto r = k.getRectAttr()) {
          f.x0 = r.getX();
          f.width = r.getWidth();
          f.rows = r.getHeight();
        }
        f.predictedCycles = k.getPredictedCycles().value_or(0);
        if (k.getPrecision() == weft::fabric::Precision::mixed)
          out.mixed = true;
        byName[f.name] = f;
      }
    }
    // Topological order, as the partitioner laid the kernels out.
    out.kernels.clear();
    ScopedDiagnosticHandler quiet(module.getContext(),
                                  [](Diagnostic &) { return success(); });
    FailureOr<weft::conversion::Graph> graph = weft::conversion::analyzeGraph(
        program, /*placed=*/false, /*withData=*/false);
    if (succeeded(graph))
      for (const weft::conversion::Stage &st : graph->stages) {
        auto it = byName.find(st.kernel->getAttrOfType<StringAttr>(
                                          SymbolTable::getSymbolAttrName())
                                  .str());
        if (it == byName.end())
          continue;
        out.kernels.push_back(it->second);
        byName.erase(it);
      }
    for (auto &[name, f] : byName) // (a graph that does not analyse)
      out.kernels.push_back(f);
    out.predictedCycles = 0;
    out.macsPerSample = out.executedMacsPerSample = 0;
    for (const KernelFigures &f : out.kernels) {
      out.predictedCycles = std::max(out.predictedCycles, f.predictedCycles);
      out.macsPerSample += f.modelMacs;
      out.executedMacsPerSample += f.executedMacs;
    }
  }
}

/// Counts the distinct colors the routes of the lowered program use.
static int64_t countColors(ModuleOp module) {
  std::set<int64_t> colors;
  module.walk(
      [&](weft::wavelet::RouteOp r) { colors.insert(int64_t(r.getColor())); });
  return int64_t(colors.size());
}

bool weftc::compileModel(MLIRContext &ctx, StringRef path,
                         const CompileOptions &options, CompiledModel &out,
                         std::string &error) {
  DefaultTimingManager tm;
  applyDefaultTimingManagerCLOptions(tm);
  TimingScope root = tm.getRootScope();

  {
    TimingScope importTimer = root.nest("import");
    out.imported = loadModel(ctx, path, options.batchSize, error);
    if (!out.imported) {
      error = "cannot import '" + path.str() + "':\n" + error;
      return false;
    }
  }
  out.module = OwningOpRef<ModuleOp>(out.imported->clone());

  // Everything after the import reports through this handler.
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      error += (error.empty() ? "" : "\n") + diag.str();
    return success();
  });
  error.clear();

  if (!options.constants.empty()) {
    auto fns = out.module->getOps<func::FuncOp>();
    if (fns.empty()) {
      error = "the model has no graph function";
      return false;
    }
    for (const std::string &spec : options.constants)
      if (failed(bindConstant(*fns.begin(), spec, error)))
        return false;
  }
  if (options.untilAfter == Stage::Import)
    return true;

  // The stages of the pipeline library, one pass manager each (timed,
  // and stopped after as --until-after asks); `weft-opt --weft-pipeline`
  // runs the same passes with the same options.
  weft::PipelineOptions pipeline;
  pipeline.grid = options.grid;
  pipeline.maxGrid = options.maxGrid;
  pipeline.mergeLanes = options.mergeLanes;
  pipeline.fuseActivations = options.fuseActivations;
  if (options.precision != "fp32" && options.precision != "mixed") {
    error = "precision must be fp32 or mixed, not '" + options.precision + "'";
    return false;
  }
  pipeline.precision = options.precision == "mixed"
                           ? weft::PipelinePrecision::Mixed
                           : weft::PipelinePrecision::FP32;
  auto runStage = [&](Stage stage, weft::PipelineStage ps) {
    out.failedStage = stage;
    PassManager pm(&ctx, ModuleOp::getOperationName(),
                   OpPassManager::Nesting::Implicit);
    if (failed(applyPassManagerCLOptions(pm)))
      return false;
    TimingScope timer = root.nest(weft::stageName(ps));
    pm.enableTiming(timer);
    weft::addPipelineStage(pm, ps, pipeline);
    if (failed(pm.run(*out.module))) {
      if (error.empty())
        error = std::string("the '") + weft::stageName(ps) + "' stage failed";
      return false;
    }
    out.failedStage.reset();
    return true;
  };

  if (!runStage(Stage::Cleanup, weft::PipelineStage::Cleanup))
    return false;
  if (options.untilAfter == Stage::Cleanup)
    return true;
  if (!runStage(Stage::Fabric, weft::PipelineStage::Fabric))
    return false;
  if (options.untilAfter == Stage::Fabric)
    return true;
  if (!runStage(Stage::Partition, weft::PipelineStage::Partition))
    return false;
  readFabricFigures(*out.module, out);
  if (options.untilAfter == Stage::Partition)
    return true;
  if (!runStage(Stage::Route, weft::PipelineStage::Route))
    return false;
  if (options.untilAfter == Stage::Route)
    return true;
  if (!runStage(Stage::Wavelet, weft::PipelineStage::Wavelet))
    return false;
  out.colorsUsed = countColors(*out.module);
  if (options.untilAfter == Stage::Wavelet)
    return true;

  TimingScope emitTimer = root.nest("emit-wfb");
  out.failedStage = Stage::Binary;
  auto programs = out.module->getOps<weft::wavelet::ProgramOp>();
  if (programs.empty()) {
    error = "the lowering left no wavelet.program";
    return false;
  }
  FailureOr<weft::binary::Program> binary =
      weft::translate::lowerToBinary(*programs.begin());
  if (failed(binary)) {
    if (error.empty())
      error = "the binary emitter failed";
    return false;
  }
  // The static check before emission: every route complete, every host
  // stream and every task color connected (the simulator's hang report is
  // only the backstop).
  std::vector<std::string> problems = weft::binary::checkRoutes(*binary);
  if (!problems.empty()) {
    error = "the compiled routes are incomplete (" +
            std::to_string(problems.size()) + " problem(s)):";
    for (size_t i = 0; i < problems.size() && i < 10; ++i)
      error += "\n  " + problems[i];
    return false;
  }
  out.binary = std::move(*binary);
  out.failedStage.reset();
  return true;
}

weftc::FabricFlags::FabricFlags(cl::OptionCategory &category)
    : grid("grid", cl::init("16x16"),
           cl::desc("The fabric: WxH[,mem=B,colors=N,rq=N,cq=N], or "
                    "auto[,...] (the smallest grid up to --max-grid within 5% "
                    "of the best predicted utilization)"),
           cl::cat(category)),
      maxGrid("max-grid", cl::init("64x64"),
              cl::desc("The largest fabric --grid auto considers"),
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
          cl::cat(category)) {}

void weftc::FabricFlags::apply(CompileOptions &options) const {
  options.grid = grid;
  options.maxGrid = maxGrid;
  options.precision = precision;
  options.mergeLanes = mergeLanes;
  options.fuseActivations = fuseActivations;
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
  if (!compileModel(*ctx, modelPath, options, compiled, error))
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
