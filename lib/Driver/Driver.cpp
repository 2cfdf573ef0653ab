//===- Driver.cpp - Compile a model and run it on the fabric --------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The pipeline (docs/weftc.md): import -> --weft-import-cleanup ->
// --weft-fabric-prepare -> --weft-convert-to-fabric -> --weft-partition-dense
// ->
// --weft-route-streams -> --weft-allocate-colors ->
// --weft-lower-fabric-to-wavelet -> .wfb, with the figures `weftc run` and the
// Python package report read off the partitioned program and the simulator's
// statistics.
//
//===----------------------------------------------------------------------===//

#include "weft/Driver/Driver.h"
#include "weft/Driver/Report.h"

#include "fabric/FabricOps.h"
#include "wavelet/WaveletOps.h"
#include "weft/Binary/Routes.h"
#include "weft/Conversion/Passes.h"
#include "weft/FabricTransforms/Graph.h"
#include "weft/FabricTransforms/Passes.h"
#include "weft/Import/ONNXImporter.h"
#include "weft/InitDialects.h"
#include "weft/Kernels/Replicas.h"
#include "weft/Kernels/SparseActivations.h"
#include "weft/Machine/ISA.h"
#include "weft/Machine/Numerics.h"
#include "weft/Pipeline/Pipeline.h"
#include "weft/Translate/Wfb.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

using namespace llvm;
using namespace mlir;
using namespace weft::driver;
namespace wf = weft::fabric;

/// The message, prefixed with file:line:col for a .mlir input. The
/// importer's messages name the node and op themselves.
static std::string formatDiagnostic(Diagnostic &diag) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto loc = dyn_cast<FileLineColLoc>(diag.getLocation());
  if (loc && loc.getLine() > 0)
    os << loc.getFilename().getValue() << ":" << loc.getLine() << ":"
       << loc.getColumn() << ": ";
  os << diag;
  return text;
}

std::unique_ptr<MLIRContext> weft::driver::createContext() {
  DialectRegistry registry;
  weft::import::registerImportDialects(registry);
  weft::reference::registerReferenceDialects(registry);
  weft::registerAllDialects(registry);
  return std::make_unique<MLIRContext>(registry,
                                       MLIRContext::Threading::DISABLED);
}

OwningOpRef<ModuleOp> weft::driver::loadModel(MLIRContext &ctx,
                                              llvm::StringRef path,
                                              int64_t batchSize,
                                              std::string &error,
                                              llvm::StringRef bytes) {
  error.clear();
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return success();
    if (!error.empty())
      error += "\n";
    error += formatDiagnostic(diag);
    return success();
  });
  OwningOpRef<ModuleOp> module;
  weft::import::ImportOptions options;
  options.batchSize = batchSize;
  if (!bytes.empty())
    module = weft::import::importOnnxBuffer(ctx, bytes, "", options);
  else if (path.ends_with(".mlir"))
    module = parseSourceFile<ModuleOp>(path, &ctx);
  else
    module = weft::import::importOnnxFile(ctx, path, options);
  if (!module && error.empty())
    error = "the importer failed without a diagnostic";
  return module;
}

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
    if (auto a = program->getAttrOfType<StringAttr>("weft.slice"))
      out.slice = a.getValue().str();
    if (auto a = program->getAttrOfType<StringAttr>("weft.replica_plan"))
      out.replicaPlan = a.getValue().str();
    out.inputNames.clear();
    out.outputNames.clear();
    out.rowsUsed = 0;
    std::map<std::string, KernelFigures> byName;
    for (Operation &op : program.getBody().front()) {
      // Copies side by side (--replicas) beyond copy 0 are not the model's.
      if (auto k = op.getAttrOfType<IntegerAttr>("weft.replica");
          k && k.getInt() > 0)
        continue;
      if (auto io = dyn_cast<wf::IoOp>(op)) {
        out.rowsUsed = std::max<int64_t>(out.rowsUsed, io.getEndRow());
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
        // A fused frustum group (docs/frustum.md): every member counts.
        if (auto chain = k->getAttrOfType<ArrayAttr>("frustum_chain")) {
          // (An identity residual block's add, last, is no layer.)
          bool block =
              isa<weft::fabric::JoinSchemeAttr>(chain[chain.size() - 1]);
          f.what =
              (block ? "frustum residual block of " : "frustum group of ") +
              std::to_string(chain.size() - (block ? 1 : 0)) + " layers (" +
              scheme.getSummary() + ", ...) of " + std::to_string(f.M);
          f.modelMacs = f.executedMacs = 0;
          for (Attribute a : chain)
            if (auto c = dyn_cast<weft::fabric::KernelSchemeAttrInterface>(a)) {
              f.modelMacs += c.getModelMacs();
              f.executedMacs += c.getExecutedMacs();
            }
        }
        if (auto r = k.getRectAttr()) {
          f.x0 = r.getX();
          f.width = r.getWidth();
          f.rows = r.getHeight();
          out.rowsUsed =
              std::max<int64_t>(out.rowsUsed, r.getY() + r.getHeight());
        }
        f.predictedCycles = k.getPredictedCycles().value_or(0);
        f.laneWaitCycles = k.getLaneWaitCycles().value_or(0);
        f.skipsZeros = k.getSlicedWeights();
        if (k.getPrecision() == weft::fabric::Precision::mixed)
          out.mixed = true;
        byName[f.name] = f;
      }
    }
    // Kernels fed by a sparse stream (directly, or through the turn routing
    // put in front of them) skip zero inputs.
    {
      std::map<std::string, std::vector<std::string>> next;
      std::vector<std::string> sparseInto;
      for (auto s : program.getBody().front().getOps<wf::StreamOp>())
        for (Attribute d : s.getDsts()) {
          std::string to =
              cast<SymbolRefAttr>(d).getRootReference().getValue().str();
          next[s.getSrc().str()].push_back(to);
          if (s.getSparseAttr())
            sparseInto.push_back(to);
        }
      for (const std::string &to : sparseInto) {
        if (auto it = byName.find(to); it != byName.end())
          it->second.skipsZeros = true;
        for (const std::string &after : next[to])
          if (auto it = byName.find(after); it != byName.end())
            it->second.skipsZeros = true;
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
        auto it = byName.find(
            st.kernel
                ->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName())
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
    out.skipsModelZeros = false;
    for (const KernelFigures &f : out.kernels) {
      out.skipsModelZeros |= f.skipsZeros && f.modelMacs > 0;
      out.predictedCycles = std::max(out.predictedCycles, f.predictedCycles);
      out.macsPerSample += f.modelMacs;
      out.executedMacsPerSample += f.executedMacs;
    }
  }
}

/// Reads the copies --weft-replicate made off the lowered program: their
/// count, rows, fabric and host ports beside the original's.
static void readReplicas(ModuleOp module, CompiledModel &out) {
  for (auto program : module.getOps<weft::wavelet::ProgramOp>()) {
    auto n = program->getAttrOfType<IntegerAttr>("weft.replicas");
    if (!n)
      continue;
    out.replicas = n.getInt();
    if (auto rows = program->getAttrOfType<IntegerAttr>("weft.replica_rows"))
      out.replicaRows = rows.getInt();
    if (auto c = program->getAttrOfType<IntegerAttr>("weft.replica_columns"))
      out.replicaColumns = std::max<int64_t>(1, c.getInt());
    weft::machine::Target t = program.getTarget().getModel();
    out.gridWidth = t.width();
    out.gridHeight = t.height();
    out.gridPEs = int64_t(t.numPEs());
    // (copy, original port) -> the copy's port.
    std::map<std::pair<int64_t, std::string>, std::string> ports;
    for (auto io : program.getBody().front().getOps<weft::wavelet::IoOp>()) {
      auto k = io->getAttrOfType<IntegerAttr>("weft.replica");
      auto of = io->getAttrOfType<StringAttr>("weft.replica_of");
      if (k && of)
        ports[{k.getInt(), of.str()}] = io.getSymName().str();
    }
    out.replicaInputs.assign(size_t(out.replicas - 1), {});
    out.replicaOutputs.assign(size_t(out.replicas - 1), {});
    for (int64_t k = 1; k < out.replicas; ++k) {
      for (const std::string &name : out.inputNames)
        out.replicaInputs[size_t(k - 1)].push_back(ports[{k, name}]);
      for (const std::string &name : out.outputNames)
        out.replicaOutputs[size_t(k - 1)].push_back(ports[{k, name}]);
    }
  }
}

/// The trained dense kernels of a partitioned training program, as placed.
static void readTrainedKernels(ModuleOp module, CompiledModel &out) {
  out.trained.clear();
  for (auto program : module.getOps<weft::fabric::ProgramOp>()) {
    weft::fabric::TrainingAttr training = program.getTrainingAttr();
    if (!training)
      continue;
    ScopedDiagnosticHandler quiet(module.getContext(),
                                  [](Diagnostic &) { return success(); });
    FailureOr<weft::conversion::Graph> graph =
        weft::conversion::analyzeGraph(program, /*placed=*/true);
    if (failed(graph))
      continue;
    for (const weft::conversion::Stage &st : graph->stages) {
      weft::fabric::KernelOp k = st.kernel;
      if (!st.dense || !k.getTrained())
        continue;
      TrainedDense t;
      t.name = k.getSymName().str();
      t.weightsSource = st.layer.weightsSource;
      t.biasSource = st.layer.biasSource;
      t.transposed = st.layer.weightsTransposed;
      t.K = st.layer.K;
      t.M = st.layer.M;
      t.bias = !st.layer.bias.empty();
      t.relu = st.layer.relu;
      t.conv = st.layer.conv;
      if (weft::fabric::StreamOp in =
              graph->streams[size_t(st.inputs[0])].op;
          in && in.getPixels())
        t.inputPixels = int64_t(*in.getPixels());
      t.x0 = st.m.x0;
      t.y0 = st.m.y0;
      t.smear = st.m.smear;
      t.rows = st.m.rows;
      t.training = weft::conversion::denseTrainingOf(k);
      t.recomputeCycles = k.getRecomputeCycles().value_or(0);
      out.trained.push_back(t);
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

bool weft::driver::compileModel(MLIRContext &ctx, StringRef path,
                                const CompileOptions &options,
                                CompiledModel &out, std::string &error) {
  DefaultTimingManager tm;
  if (options.commandLineOptions)
    applyDefaultTimingManagerCLOptions(tm);
  TimingScope root = tm.getRootScope();

  // Reports a stage's end to options.onStage.
  using Clock = std::chrono::steady_clock;
  auto stageDone = [&](StringRef name, Clock::time_point start) {
    if (options.onStage)
      options.onStage(
          name, std::chrono::duration<double>(Clock::now() - start).count());
  };

  {
    TimingScope importTimer = root.nest("import");
    Clock::time_point start = Clock::now();
    out.imported =
        loadModel(ctx, path, options.batchSize, error, options.modelBytes);
    if (!out.imported) {
      error = "cannot import '" + path.str() + "':\n" + error;
      return false;
    }
    stageDone("import", start);
  }
  out.module = OwningOpRef<ModuleOp>(out.imported->clone());

  // Everything after the import reports through this handler.
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      error += (error.empty() ? "" : "\n") + diag.str();
    if (diag.getSeverity() == DiagnosticSeverity::Remark && options.remarks) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << diag.getLocation() << ": " << diag.str();
      out.remarks.push_back(std::move(text));
    }
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
  pipeline.onlyKernels = options.onlyKernels;
  pipeline.fuseActivations = options.fuseActivations;
  if (options.frustum != "off" && options.frustum != "auto" &&
      options.frustum != "on") {
    error = "--frustum must be off, auto or on, not '" + options.frustum + "'";
    return false;
  }
  pipeline.frustum = options.frustum;
  pipeline.frustumMaxTile = options.frustumMaxTile;
  pipeline.replicas = options.replicas;
  pipeline.maxReplicas = options.maxReplicas;
  if (!options.onlyKernels.empty() &&
      StringRef(options.replicas).trim() != "1") {
    error = "--only-kernels runs a slice to measure its pace; it takes no "
            "--replicas";
    return false;
  }
  if (options.precision != "fp32" && options.precision != "mixed") {
    error = "precision must be fp32 or mixed, not '" + options.precision + "'";
    return false;
  }
  if (!weft::conversion::parseSparseMode(options.sparseActivations)) {
    error = "--sparse-activations must be off, auto or on, not '" +
            options.sparseActivations + "'";
    return false;
  }
  if (!(options.density >= 0.0 && options.density <= 1.0)) {
    error = "--density must be between 0 and 1, not " +
            std::to_string(options.density);
    return false;
  }
  if (!(options.inputDensity >= 0.0 && options.inputDensity <= 1.0)) {
    error = "--input-density must be between 0 and 1, not " +
            std::to_string(options.inputDensity);
    return false;
  }
  pipeline.sparseActivations = options.sparseActivations;
  pipeline.sparsePlacement = options.sparsePlacement;
  pipeline.objective = options.objective;
  pipeline.density = options.density;
  pipeline.inputDensity = options.inputDensity;
  // NAME=D[:P0:...] (--weft-select-sparse-streams' densities).
  auto encode = [&](const std::map<std::string,
                                   weft::conversion::ExpectedDensity> &in,
                    const char *what, std::vector<std::string> &out) {
    for (const auto &[name, d] : in) {
      bool ok = d.mean >= 0.0 && d.mean <= 1.0;
      std::string entry = name + "=" + llvm::formatv("{0:e}", d.mean).str();
      for (double p : d.perElement) {
        ok = ok && p >= 0.0 && p <= 1.0;
        char buf[32];
        std::snprintf(buf, sizeof buf, ":%.4g", p);
        entry += buf;
      }
      if (!ok) {
        error = std::string("the density of ") + what + " '" + name +
                "' must be between 0 and 1";
        return false;
      }
      out.push_back(std::move(entry));
    }
    return true;
  };
  std::vector<std::string> measured, measuredInputs;
  if (!encode(options.nodeDensities, "node", measured) ||
      !encode(options.inputDensities, "input", measuredInputs))
    return false;
  pipeline.densities = measured;
  pipeline.inputDensities = measuredInputs;
  if (!weft::conversion::parseSparseMode(options.sparseWeights)) {
    error = "--sparse-weights must be off, auto or on, not '" +
            options.sparseWeights + "'";
    return false;
  }
  pipeline.sparseWeights = options.sparseWeights;
  pipeline.precision = options.precision == "mixed"
                           ? weft::PipelinePrecision::Mixed
                           : weft::PipelinePrecision::FP32;
  auto runStage = [&](Stage stage, weft::PipelineStage ps) {
    out.failedStage = stage;
    PassManager pm(&ctx, ModuleOp::getOperationName(),
                   OpPassManager::Nesting::Implicit);
    if (options.commandLineOptions && failed(applyPassManagerCLOptions(pm)))
      return false;
    TimingScope timer = root.nest(weft::stageName(ps));
    pm.enableTiming(timer);
    weft::addPipelineStage(pm, ps, pipeline);
    Clock::time_point start = Clock::now();
    if (failed(pm.run(*out.module))) {
      if (error.empty())
        error = std::string("the '") + weft::stageName(ps) + "' stage failed";
      return false;
    }
    stageDone(weft::stageName(ps), start);
    out.failedStage.reset();
    return true;
  };

  if (!runStage(Stage::Cleanup, weft::PipelineStage::Cleanup))
    return false;
  if (options.untilAfter == Stage::Cleanup)
    return true;
  // One pass of a training program, as a stage of its own.
  auto runPass = [&](Stage stage, StringRef name, std::unique_ptr<Pass> pass) {
    out.failedStage = stage;
    PassManager pm(&ctx, ModuleOp::getOperationName(),
                   OpPassManager::Nesting::Implicit);
    if (options.commandLineOptions && failed(applyPassManagerCLOptions(pm)))
      return false;
    TimingScope timer = root.nest(name);
    pm.enableTiming(timer);
    pm.addPass(std::move(pass));
    Clock::time_point start = Clock::now();
    if (failed(pm.run(*out.module))) {
      if (error.empty())
        error = ("the '" + name + "' stage failed").str();
      return false;
    }
    stageDone(name, start);
    out.failedStage.reset();
    return true;
  };
  if (options.training && options.precision != "fp32") {
    error = "weft trains in fp32 only, not '" + options.precision + "'";
    return false;
  }
  // Training places the network and its loss kernel on a fixed fabric.
  if (options.training) {
    std::string why;
    if (!weft::machine::Target::parse(options.grid, &why)) {
      error = "training needs a fixed fabric (--grid WxH): " + why;
      return false;
    }
  }

  if (!runStage(Stage::Fabric, weft::PipelineStage::Fabric))
    return false;
  if (options.training) {
    weft::PrepareTrainingOptions po;
    po.optimizer = options.training->optimizer;
    po.lr = options.training->lr;
    po.batch = options.training->batch;
    po.samples = options.training->samples;
    if (!runPass(Stage::Fabric, "prepare-training",
                 weft::createPrepareTraining(po)))
      return false;
  }
  if (options.untilAfter == Stage::Fabric)
    return true;
  // --replicas auto puts copies side by side as the width allows; when
  // their host streams passing each other's PEs need more colors than the
  // fabric has, fewer side by side are searched (bisection on
  // --weft-partition-dense's max-columns) and the plan says so.
  bool sideBySide = StringRef(options.replicas).trim() == "auto" &&
                    options.untilAfter >= Stage::Route;
  OwningOpRef<ModuleOp> beforePartition;
  if (sideBySide)
    beforePartition = OwningOpRef<ModuleOp>(out.module->clone());
  if (!runStage(Stage::Partition, weft::PipelineStage::Partition))
    return false;
  if (options.training) {
    weft::SelectCheckpointsOptions so;
    so.policy = options.training->checkpoints;
    so.peMemory = options.training->peMemory;
    if (!runPass(Stage::Partition, "select-checkpoints",
                 weft::createSelectCheckpoints(so)))
      return false;
  }
  readFabricFigures(*out.module, out);
  if (options.training)
    readTrainedKernels(*out.module, out);
  if (options.untilAfter == Stage::Partition)
    return true;
  if (options.training) {
    // Routes and colors as for inference: the gradient streams, the loss
    // kernel's and the trained kernels' channels included.
    if (!runPass(Stage::Route, "route-streams", weft::createRouteStreams()) ||
        !runPass(Stage::Route, "allocate-colors",
                 weft::createAllocateColors()))
      return false;
    if (options.untilAfter == Stage::Route)
      return true;
    if (!runPass(Stage::Wavelet, "lower-training",
                 weft::createLowerTrainingToWavelet()))
      return false;
  } else {
    auto columnsOf = [&]() -> int64_t {
      for (auto program : out.module->getOps<wf::ProgramOp>())
        if (auto c =
                program->getAttrOfType<IntegerAttr>("weft.replica_columns"))
          return c.getInt();
      return 1;
    };
    int64_t columns = columnsOf();
    if (!runStage(Stage::Route, weft::PipelineStage::Route)) {
      if (!sideBySide || columns <= 1 ||
          error.find("needs more colors") == std::string::npos)
        return false;
      // Bisect on the most copies side by side: `good` routed (1 always
      // does: the copies share no PE then), `bad` did not.
      int64_t good = 1, bad = columns;
      OwningOpRef<ModuleOp> best;
      while (bad - good > 1 || !best) {
        int64_t cap = bad - good > 1 ? (good + bad) / 2 : good;
        pipeline.maxColumns = cap;
        out.module = OwningOpRef<ModuleOp>(beforePartition->clone());
        error.clear();
        if (!runStage(Stage::Partition, weft::PipelineStage::Partition))
          return false;
        int64_t tried = columnsOf();
        bool routed = runStage(Stage::Route, weft::PipelineStage::Route);
        if (!routed && (tried <= 1 ||
                        error.find("needs more colors") == std::string::npos))
          return false;
        if (routed) {
          good = cap;
          best = OwningOpRef<ModuleOp>(out.module->clone());
        } else {
          bad = std::min(bad, tried);
        }
      }
      out.module = std::move(best);
      error.clear();
      out.failedStage.reset();
      // The plan says what the colors allowed.
      for (auto program : out.module->getOps<wf::ProgramOp>())
        if (auto plan = program->getAttrOfType<StringAttr>("weft.replica_plan"))
          program->setAttr(
              "weft.replica_plan",
              StringAttr::get(&ctx, plan.getValue() +
                                        llvm::formatv("; at most {0} side by "
                                                      "side: {1} need more "
                                                      "colors than the fabric "
                                                      "has",
                                                      good, bad)
                                            .str()));
    }
    // Again: the route stage's decisions (sliced weights) change kernels'
    // predictions.
    readFabricFigures(*out.module, out);
    if (options.untilAfter == Stage::Route)
      return true;
    if (!runStage(Stage::Wavelet, weft::PipelineStage::Wavelet))
      return false;
  }
  out.colorsUsed = countColors(*out.module);
  readReplicas(*out.module, out);
  if (options.untilAfter == Stage::Wavelet)
    return true;

  TimingScope emitTimer = root.nest("emit-wfb");
  Clock::time_point emitStart = Clock::now();
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
  stageDone("emit-wfb", emitStart);
  return true;
}

std::optional<HostPorts>
weft::driver::mapHostPorts(const CompiledModel &compiled,
                           const std::vector<std::string> &frozen,
                           std::string &error) {
  auto sig = reference::readGraphSignature(*compiled.imported);
  if (!sig) {
    error = toString(sig.takeError());
    return std::nullopt;
  }
  HostPorts ports;
  for (reference::TensorSignature &s : sig->inputs)
    if (!llvm::is_contained(frozen, s.name))
      ports.inputs.push_back(std::move(s));
  ports.outputs = std::move(sig->outputs);
  ports.inputPorts = compiled.inputNames;
  ports.outputPorts = compiled.outputNames;
  if (ports.inputs.size() != ports.inputPorts.size()) {
    error = "the fabric program has " +
            std::to_string(ports.inputPorts.size()) + " host inputs for " +
            std::to_string(ports.inputs.size()) + " streamed graph inputs";
    return std::nullopt;
  }
  if (ports.outputs.size() != ports.outputPorts.size()) {
    error = "the fabric program has " +
            std::to_string(ports.outputPorts.size()) + " host outputs for " +
            std::to_string(ports.outputs.size()) + " graph outputs";
    return std::nullopt;
  }
  return ports;
}

std::string weft::driver::shapeOutput(tensorio::HostTensor &output,
                                      const std::vector<int64_t> &shape,
                                      int64_t samples, int64_t batch) {
  output.shape = shape;
  if (samples != batch) {
    if (!shape.empty() && shape[0] == batch)
      output.shape[0] = samples;
    else
      output.shape.insert(output.shape.begin(), samples);
  }
  return output.validate();
}

std::string weft::driver::replicaPort(const CompiledModel &compiled,
                                      StringRef port, int64_t copy) {
  if (copy == 0)
    return port.str();
  for (auto [names, copies] :
       {std::make_pair(&compiled.inputNames, &compiled.replicaInputs),
        std::make_pair(&compiled.outputNames, &compiled.replicaOutputs)})
    for (auto [i, name] : llvm::enumerate(*names))
      if (name == port && size_t(copy - 1) < copies->size())
        return (*copies)[size_t(copy - 1)][i];
  return "";
}

/// The bytes of one sample of `t`, which holds `samples` back to back.
static std::optional<size_t> sampleBytes(const weft::tensorio::HostTensor &t,
                                         int64_t samples, std::string &error) {
  if (samples < 1 || t.bytes.size() % size_t(samples) ||
      (samples > 1 && (t.shape.empty() || t.shape[0] % samples))) {
    std::string shape;
    for (int64_t d : t.shape)
      shape += (shape.empty() ? "" : "x") + std::to_string(d);
    error = "a tensor of shape [" + shape + "] does not hold " +
            std::to_string(samples) + " samples along its first dimension";
    return std::nullopt;
  }
  return t.bytes.size() / size_t(samples);
}

weft::tensorio::HostTensor
weft::driver::toStreamType(const weft::binary::IoStream &io,
                           const weft::tensorio::HostTensor &t) {
  if (io.dtype != weft::machine::ElemType::F16 ||
      t.dtype != weft::tensorio::DType::F32)
    return t;
  weft::tensorio::HostTensor h;
  h.shape = t.shape;
  h.dtype = weft::tensorio::DType::F16;
  size_t n = t.bytes.size() / 4;
  h.bytes.resize(2 * n);
  for (size_t i = 0; i < n; ++i) {
    float v;
    std::memcpy(&v, t.bytes.data() + 4 * i, 4);
    uint16_t b = weft::machine::f32ToF16(v);
    h.bytes[2 * i] = uint8_t(b);
    h.bytes[2 * i + 1] = uint8_t(b >> 8);
  }
  return h;
}

std::optional<weft::tensorio::HostTensor>
weft::driver::dealSamples(const weft::tensorio::HostTensor &all,
                          int64_t samples, int64_t copy, int64_t copies,
                          std::string &error) {
  std::optional<size_t> each = sampleBytes(all, samples, error);
  if (!each)
    return std::nullopt;
  int64_t rounds = weft::conversion::samplesOfReplica(0, samples, copies);
  int64_t own = weft::conversion::samplesOfReplica(copy, samples, copies);
  weft::tensorio::HostTensor t;
  t.dtype = all.dtype;
  t.shape = all.shape;
  if (samples > 1)
    t.shape[0] = all.shape[0] / samples * rounds;
  else if (rounds > 1)
    t.shape.insert(t.shape.begin(), rounds);
  for (int64_t r = 0; r < rounds; ++r) {
    // Copy `copy`'s sample r is sample r * copies + copy; past its own
    // samples, its last one again.
    int64_t i = own == 0 ? 0 : (std::min(r, own - 1) * copies + copy);
    auto first = all.bytes.begin() + ptrdiff_t(size_t(i) * *each);
    t.bytes.insert(t.bytes.end(), first, first + ptrdiff_t(*each));
  }
  return t;
}

std::optional<weft::tensorio::HostTensor> weft::driver::gatherSamples(
    const std::vector<weft::tensorio::HostTensor> &perCopy, int64_t samples,
    std::string &error) {
  int64_t copies = int64_t(perCopy.size());
  if (copies < 1) {
    error = "no copy's output to gather";
    return std::nullopt;
  }
  int64_t rounds = weft::conversion::samplesOfReplica(0, samples, copies);
  std::vector<size_t> each;
  for (const weft::tensorio::HostTensor &t : perCopy) {
    std::optional<size_t> e = sampleBytes(t, rounds, error);
    if (!e)
      return std::nullopt;
    if (!each.empty() && *e != each.front()) {
      error = "the copies' outputs differ in size";
      return std::nullopt;
    }
    each.push_back(*e);
  }
  weft::tensorio::HostTensor t;
  t.dtype = perCopy.front().dtype;
  t.shape = perCopy.front().shape;
  for (int64_t i = 0; i < samples; ++i) {
    const weft::tensorio::HostTensor &from =
        perCopy[size_t(weft::conversion::replicaOfSample(i, copies))];
    auto first = from.bytes.begin() + ptrdiff_t(size_t(i / copies) * each[0]);
    t.bytes.insert(t.bytes.end(), first, first + ptrdiff_t(each[0]));
  }
  // Shaped by the caller (shapeOutput); a flat vector of the samples here.
  t.shape = {int64_t(t.bytes.size() / weft::tensorio::dtypeSize(t.dtype))};
  return t;
}

void weft::driver::addCompilerFigures(json::Object &stats,
                                      const CompiledModel &compiled) {
  stats.try_emplace("model_macs_per_sample", compiled.macsPerSample);
  stats.try_emplace("executed_macs_per_sample", compiled.executedMacsPerSample);
}

void weft::driver::addRunFigures(json::Object &stats, const RunFigures &figures,
                                 const CompiledModel &compiled,
                                 int64_t samples) {
  stats["replicas"] = compiled.replicas;
  stats["samples_dealt"] = samples;
  json::Array perCopy;
  for (int64_t k = 0; k < compiled.replicas; ++k)
    perCopy.push_back(
        weft::conversion::samplesOfReplica(k, samples, compiled.replicas));
  stats["replica_samples"] = std::move(perCopy);
  stats["cycles_per_sample"] = figures.cyclesPerSample;
  stats["samples_per_million_cycles"] = figures.samplesPerMillionCycles;
  stats["utilization"] = figures.utilization;
  stats["replica"] = json::Object{
      {"rows", compiled.replicaRows ? compiled.replicaRows
                                    : int64_t(compiled.gridHeight)},
      {"pes", figures.copyPEs},
      {"cycles_per_sample", figures.copyCyclesPerSample},
      {"samples_per_million_cycles", figures.copyCyclesPerSample > 0
                                         ? 1e6 / figures.copyCyclesPerSample
                                         : 0.0},
      {"utilization", figures.copyUtilization}};
}

/// The median interval between consecutive samples: the pipeline's steady
/// state, robust to the fill (first) and drain (last) intervals.
static double medianInterval(const std::vector<int64_t> &done) {
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < done.size(); ++i)
    gaps.push_back(done[i] - done[i - 1]);
  std::sort(gaps.begin(), gaps.end());
  size_t n = gaps.size();
  return n % 2 ? double(gaps[n / 2])
               : 0.5 * double(gaps[n / 2 - 1] + gaps[n / 2]);
}

RunFigures weft::driver::readRunFigures(const json::Object *st,
                                        const binary::Program &program,
                                        const CompiledModel &compiled,
                                        int64_t samples) {
  return readRunFigures(st, readPeStats(st), program, compiled, samples);
}

RunFigures weft::driver::readRunFigures(const json::Object *st,
                                        const std::vector<sim::PeStats> &pes,
                                        const binary::Program &program,
                                        const CompiledModel &compiled,
                                        int64_t samples) {
  RunFigures figures;
  figures.cycles = st ? st->getInteger("cycles").value_or(0) : 0;
  figures.latency = st ? st->getInteger("latency").value_or(0) : 0;
  figures.macs = st ? st->getInteger("macs").value_or(0) : 0;
  figures.firstInjection =
      st ? st->getInteger("first_injection").value_or(0) : 0;
  if (const json::Array *a = st ? st->getArray("sample_done") : nullptr)
    for (const json::Value &v : *a)
      figures.done.push_back(v.getAsInteger().value_or(0));
  // Per kernel, the cycles of work of its busiest PE per sample: its CE-busy
  // cycles, except that the sends a microthread ran while the main thread
  // waited for input (a slower producer) are counted as the kernel fed at
  // its own pace runs them, in the cycles the main thread leaves the
  // datapath free, and only their excess over those cycles. The figure is
  // then the kernel's own pace (the slowest kernel's is the pipeline's)
  // whether or not it waits (docs/weftc.md).
  const std::vector<std::string> &names = program.layers;
  for (const sim::PeStats &pe : pes) {
    if (pe.layer < 0 || size_t(pe.layer) >= names.size())
      continue;
    int64_t busy = int64_t(pe.ceBusyCycles);
    int64_t sends = int64_t(pe.sendWaitCycles);
    int64_t freeCycles = int64_t(pe.freeCycles);
    int64_t work = busy - std::min(sends, freeCycles);
    std::pair<int64_t, int64_t> &b = figures.busiest[names[size_t(pe.layer)]];
    if (work > b.first)
      b = {work, busy};
  }
  // Latency of one sample (architecture §5.4): from the first injection
  // to the arrival of the first sample's last output wavelet.
  if (!figures.done.empty())
    figures.latency = figures.done.front() - figures.firstInjection;
  if (figures.done.size() >= 2)
    figures.steadyCycles = medianInterval(figures.done);
  // With copies, sample_done counts rounds (every copy's r-th sample), and
  // a round delivers one sample per copy (the first round as many as ran).
  int64_t n = std::max<int64_t>(1, compiled.replicas);
  figures.replicas = n;
  if (samples == 0)
    samples = st ? st->getInteger("samples").value_or(0) : 0;
  double perRound =
      double(n == 1 ? 1 : std::max<int64_t>(1, std::min(n, samples)));
  if (figures.steadyCycles > 0) {
    figures.copyCyclesPerSample = figures.steadyCycles;
    figures.steadyCycles /= double(n);
  }
  double t = figures.steadyCycles > 0 ? figures.steadyCycles
                                      : double(figures.latency) / perRound;
  figures.cyclesPerSample = t;
  if (figures.copyCyclesPerSample == 0)
    figures.copyCyclesPerSample = double(figures.latency);
  double peak = double(machine::peakMacsPerCycle(compiled.mixed));
  if (t > 0 && compiled.gridPEs > 0) {
    figures.utilization =
        double(compiled.macsPerSample) / (double(compiled.gridPEs) * peak * t);
    figures.executedUtilization = double(compiled.executedMacsPerSample) /
                                  (double(compiled.gridPEs) * peak * t);
    figures.samplesPerMillionCycles = 1e6 / t;
  }
  // A copy's PEs: its band's, shared by the copies side by side in it.
  figures.copyPEs = int64_t(compiled.gridWidth) *
                    (compiled.replicaRows ? compiled.replicaRows
                                          : int64_t(compiled.gridHeight)) /
                    std::max<int64_t>(1, compiled.replicaColumns);
  if (figures.copyCyclesPerSample > 0 && figures.copyPEs > 0)
    figures.copyUtilization =
        double(compiled.macsPerSample) /
        (double(figures.copyPEs) * peak * figures.copyCyclesPerSample);
  return figures;
}
