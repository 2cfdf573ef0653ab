//===- LowerTraining.cpp - A placed training program to wavelet programs --===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-lower-training-to-wavelet: a partitioned fabric.program marked for
// training by --weft-prepare-training becomes the wavelet.program of
// docs/training.md: the trained dense layers' and column kernels' training
// programs, the loss column east of the network with the labels' port, and
// every route (forward, gradient, internal) from the schemes of
// weft/Kernels/Routing.h, colored by allocateColors.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/DenseLayer.h"
#include "weft/Conversion/Passes.h"
#include "weft/FabricTransforms/Graph.h"
#include "weft/Kernels/ColorAllocation.h"
#include "weft/Kernels/DenseTraining.h"

#include "WaveletBuilder.h"

#include "fabric/FabricOps.h"
#include "wavelet/WaveletOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"

namespace weft {
#define GEN_PASS_DEF_LOWERTRAININGTOWAVELET
#include "weft/Conversion/Passes.h.inc"
} // namespace weft

using namespace mlir;
namespace fab = weft::fabric;
namespace common = weft::common;
namespace wv = weft::wavelet;

namespace weft::conversion {
namespace {

/// The routes of the program by name, colored together.
class Routes {
public:
  /// Adds (or extends) route `name`; returns its index.
  size_t add(const std::string &name, const RoutePlan &plan) {
    auto [it, fresh] = index.try_emplace(name, plans.size());
    if (fresh) {
      plans.push_back(plan);
      names.push_back(name);
    } else {
      plans[it->second].append(plan);
    }
    return it->second;
  }
  /// The color of route `name`, -1 if it has no switch (or no such route).
  int64_t color(const std::string &name) const {
    auto it = index.find(name);
    return it == index.end() ? -1 : colors[it->second];
  }
  LogicalResult allocate(unsigned routable, fab::ProgramOp program) {
    std::vector<StreamRequest> requests;
    std::vector<size_t> of;
    for (size_t i = 0; i < plans.size(); ++i) {
      if (plans[i].empty())
        continue;
      requests.push_back({names[i], plans[i].pes(), -1});
      of.push_back(i);
    }
    std::string why;
    std::optional<std::vector<int64_t>> got =
        allocateColors(requests, routable, {}, why);
    if (!got)
      return program.emitOpError("cannot color its training routes: ") << why;
    colors.assign(plans.size(), -1);
    for (size_t k = 0; k < of.size(); ++k) {
      colors[of[k]] = (*got)[k];
      addRoute(table, plans[of[k]], (*got)[k]);
    }
    return success();
  }
  RouteTable table;

private:
  std::map<std::string, size_t> index;
  std::vector<RoutePlan> plans;
  std::vector<std::string> names;
  std::vector<int64_t> colors;
};

struct LowerTrainingToWaveletPass
    : weft::impl::LowerTrainingToWaveletBase<LowerTrainingToWaveletPass> {
  void runOnOperation() override {
    for (auto program : llvm::make_early_inc_range(
             getOperation().getOps<fab::ProgramOp>()))
      if (failed(lower(program)))
        return signalPassFailure();
  }

  LogicalResult lower(fab::ProgramOp program);
};

bool isTrainedColumn(const Stage &s) {
  return !s.dense && fab::KernelOp(s.kernel).getTrained();
}

bool sendsGradient(const Stage &s) {
  return fab::KernelOp(s.kernel).getInputGradient();
}

LogicalResult LowerTrainingToWaveletPass::lower(fab::ProgramOp program) {
  MLIRContext *ctx = program.getContext();
  fab::TrainingAttr training = program.getTrainingAttr();
  if (!training)
    return program.emitOpError(
        "is no training program: run --weft-prepare-training first");
  machine::Target target = program.getModel();
  FailureOr<Graph> graph = analyzeGraph(program, /*placed=*/true);
  if (failed(graph))
    return failure();
  std::vector<Stage> &stages = graph->stages;
  if (graph->inputs.size() != 1 || graph->outputs.size() != 1 ||
      stages.empty())
    return program.emitOpError(
        "is not the chain --weft-prepare-training checked");

  const bool cpgd = training.getOptimizer() == fab::Optimizer::cpgd;
  // How each dense stage trains: the marks of --weft-prepare-training and
  // the checkpoints of --weft-select-checkpoints (no attribute: save).
  auto recomputes = [&](size_t i) {
    return i < stages.size() && stages[i].dense &&
           fab::KernelOp(stages[i].kernel).getCheckpoint() ==
               fab::CheckpointPolicy::recompute;
  };
  auto trainingOf = [&](size_t i) {
    DenseTraining t = denseTrainingOf(stages[i].kernel);
    t.recomputesOutput = recomputes(i + 1);
    return t;
  };
  for (size_t i = 0; i < stages.size(); ++i) {
    Stage &s = stages[i];
    fab::KernelOp k = s.kernel;
    if (cpgd && k.getTrained() && !k.getLag())
      return k.emitOpError("is trained by cpgd but has no lag: run "
                           "--weft-prepare-training");
    if (!s.dense)
      continue;
    if (s.layer.conv)
      return k.emitOpError("is a convolution, which weft does not train yet");
    std::string why = trainedDenseLimits(s.layer.K, s.layer.M, s.m);
    if (!why.empty())
      return k.emitOpError("cannot be trained on its PEs: ") << why;
    if (recomputes(i) &&
        (i == 0 || !stages[i - 1].dense ||
         !fab::KernelOp(stages[i - 1].kernel).getTrained()))
      return k.emitOpError("recomputes its input, but the kernel before it "
                           "is no trained dense kernel to recompute it");
    DenseTraining t = trainingOf(i);
    int64_t bytes = trainedDenseBytes(s.layer.K, s.layer.M,
                                      !s.layer.bias.empty(), s.layer.relu,
                                      s.m, t);
    if (bytes > int64_t(target.memoryBytes()))
      return k.emitOpError("needs ")
             << bytes << " bytes of memory per PE for training on its "
             << s.m.smear << " x " << s.m.rows << " PEs, more than the "
             << target.memoryBytes() << " of the target: give it more PEs";
  }
  const Stage &last = stages.back();
  const int64_t lossX = graph->endX, rows = last.outRows,
                classes = last.outN;
  if (lossX >= int64_t(target.width()))
    return program.emitOpError("needs a column east of its network (column ")
           << lossX << ") for the loss, but the fabric is " << target.width()
           << " columns wide";

  // The routes.
  Routes routes;
  auto sendEnd = [&](const Stage &s) {
    return s.dense ? denseResults(s.m) : columnResults(s.x, 0, s.height);
  };
  auto recvEnd = [&](const Stage &s) {
    return s.dense ? denseRowsToDiagonal(s.m) : columnInputs(s.x, 0, s.height);
  };
  auto gradIn = [&](const Stage &s) {
    return s.dense ? denseGradientIn(s.m) : columnGradientIn(s.x, 0, s.height);
  };
  auto gradOut = [&](const Stage &s) {
    return s.dense ? denseGradientOut(s.m)
                   : columnGradientOut(s.x, 0, s.height);
  };
  auto name = [&](size_t i) { return stages[i].kernel.getSymName().str(); };
  routes.add("input", recvEnd(stages[0]));
  for (size_t i = 0; i < stages.size(); ++i) {
    const Stage &s = stages[i];
    std::string n = name(i), out = n + " out";
    routes.add(out, sendEnd(s));
    if (i + 1 < stages.size())
      routes.add(out, recvEnd(stages[i + 1]));
    else
      routes.add(out, columnInputs(lossX, 0, rows));
    if (s.dense) {
      routes.add(n + " column", denseColumns(s.m));
      routes.add(n + " psum0", densePartialSums(s.m, 0));
      routes.add(n + " psum1", densePartialSums(s.m, 1));
      routes.add(n + " delta", denseDeltaRows(s.m));
      if (sendsGradient(s)) {
        routes.add(n + " reduce0", denseGradientReduce(s.m, 0));
        routes.add(n + " reduce1", denseGradientReduce(s.m, 1));
      }
    }
    // The gradient of this kernel's input, into the kernel before it.
    if (sendsGradient(s)) {
      routes.add(n + " gradient", gradOut(s));
      routes.add(n + " gradient", gradIn(stages[i - 1]));
    }
  }
  routes.add("loss gradient", columnGradientOut(lossX, 0, rows));
  routes.add("loss gradient", gradIn(last));
  routes.add("labels", columnLabels(lossX, target.width(), 0, rows));
  routes.add("probabilities", columnResults(lossX, 0, rows));
  routes.add("probabilities", relayEast(lossX + 1, target.width(), rows));
  for (int j = 0; j < 3; ++j)
    routes.add("loss reduce" + std::to_string(j),
               columnReduce(lossX, 0, rows, j));
  if (failed(routes.allocate(target.routableColors(), program)))
    return failure();

  // The program.
  OpBuilder b(program);
  Location loc = program.getLoc();
  auto wprog = wv::ProgramOp::create(
      b, loc, program.getSymNameAttr(),
      common::TargetAttr::get(ctx, target.config()));
  SmallVector<Attribute> layers;
  for (Stage &s : stages)
    layers.push_back(s.kernel.getSymNameAttr());
  layers.push_back(b.getStringAttr("loss"));
  wprog->setAttr("layers", b.getArrayAttr(layers));
  for (NamedAttribute a : program->getDiscardableAttrs())
    wprog->setAttr(a.getName(), a.getValue());
  b.setInsertionPointToStart(&wprog.getBody().emplaceBlock());

  fab::IoOp in = graph->inputs[0], out = graph->outputs[0];
  wv::IoOp::create(b, in.getLoc(), in.getSymName(), common::PortDir::input,
                   common::Edge::west, 0, stages[0].inRows,
                   routes.color("input"), "dense32", in.getType(), false,
                   IntegerAttr());
  wv::IoOp::create(b, loc, "labels", common::PortDir::input,
                   common::Edge::east, 0, 1, routes.color("labels"),
                   "dense16x2",
                   RankedTensorType::get({1, 1}, b.getIntegerType(16)),
                   false, IntegerAttr());
  wv::IoOp::create(b, out.getLoc(), "probabilities", common::PortDir::output,
                   common::Edge::east, 0, rows, routes.color("probabilities"),
                   "dense32", out.getType(), false, IntegerAttr());

  for (size_t i = 0; i < stages.size(); ++i) {
    Stage &s = stages[i];
    std::string n = name(i);
    int64_t inColor =
        i == 0 ? routes.color("input") : routes.color(name(i - 1) + " out");
    int64_t outColor = routes.color(n + " out");
    // dL/dy of this kernel comes from the next one (or the loss).
    int64_t gradInColor = i + 1 < stages.size()
                              ? routes.color(name(i + 1) + " gradient")
                              : routes.color("loss gradient");
    int64_t gradOutColor = routes.color(n + " gradient");
    Location kloc = s.kernel.getLoc();
    if (s.dense) {
      DenseColors dc;
      dc.in = inColor;
      dc.column = routes.color(n + " column");
      dc.psum[0] = routes.color(n + " psum0");
      dc.psum[1] = routes.color(n + " psum1");
      dc.out = outColor;
      TrainingColors tc;
      tc.gradIn = gradInColor;
      tc.deltaRow = routes.color(n + " delta");
      tc.reduce[0] = routes.color(n + " reduce0");
      tc.reduce[1] = routes.color(n + " reduce1");
      tc.gradOut = gradOutColor;
      DenseTraining t = trainingOf(i);
      emitTrainedDenseLayer(b, kloc, s.layer, s.m, dc, tc, t, n,
                            routes.table);
      continue;
    }
    if (isTrainedColumn(s)) {
      TrainedColumn k;
      k.kind = s.info.layer.op == ColumnOp::Tanh ? TrainedColumn::Kind::Tanh
                                                 : TrainedColumn::Kind::Relu;
      k.x = s.x;
      k.layout = RowChunks{s.outN, s.height, 0};
      k.inColor = inColor;
      k.outColor = outColor;
      k.gradIn = gradInColor;
      k.gradOut = gradOutColor;
      k.lag = s.kernel.getLag().value_or(0);
      // The rounds' samples: the run's (CPGD) or a mini-batch's, once per
      // step (MBGD).
      bool mbgd = training.getOptimizer() == fab::Optimizer::mbgd;
      k.samples = mbgd ? training.getBatch() : training.getSamples();
      k.steps = mbgd ? training.getSamples() / training.getBatch() : 1;
      if (failed(emitTrainedColumn(b, kloc, k, n, n, routes.table)))
        return failure();
      continue;
    }
    // A column kernel before the first dense layer: inference only.
    s.column.inColor = inColor;
    s.column.outColor = outColor;
    if (failed(emitColumnKernel(b, kloc, s.column, n, n, &routes.table)))
      return failure();
  }
  TrainedColumn loss;
  loss.kind = TrainedColumn::Kind::Loss;
  loss.x = lossX;
  loss.layout = RowChunks{classes, rows, 0};
  loss.inColor = routes.color(name(stages.size() - 1) + " out");
  loss.outColor = routes.color("probabilities");
  loss.gradOut = routes.color("loss gradient");
  loss.labelColor = routes.color("labels");
  for (int j = 0; j < 3; ++j)
    loss.internal[j] = routes.color("loss reduce" + std::to_string(j));
  loss.batch = training.getBatch();
  // A pipelined program (CPGD, MBGD with lags): the loss double-buffers its
  // gradient.
  if (llvm::any_of(stages, [](const Stage &s) {
        return fab::KernelOp(s.kernel).getLag().has_value();
      }))
    loss.lag = 1;
  if (failed(emitTrainedColumn(b, loc, loss, "loss", "loss", routes.table)))
    return failure();
  emitRelays(b, loc, wprog, routes.table);
  program.erase();
  return success();
}

} // namespace
} // namespace weft::conversion
