//===- LowerTraining.cpp - A placed training program to wavelet programs --===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-lower-training-to-wavelet: a partitioned, routed and colored
// fabric.program marked for training by --weft-prepare-training becomes the
// wavelet.program of docs/training.md: the trained dense layers',
// convolutions', max pools', residual Adds' and column kernels' training
// programs and the loss kernel's column with the labels'
// port, every router setting and color read off the fabric.route ops
// (PlacedRoutes) and the emitted routes checked against them.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/DenseLayer.h"
#include "weft/Conversion/JoinKernel.h"
#include "weft/Conversion/PoolKernel.h"
#include "weft/Conversion/Passes.h"
#include "weft/FabricTransforms/Graph.h"
#include "weft/Kernels/ConvTraining.h"
#include "weft/Kernels/DenseTraining.h"

#include "PlacedRoutes.h"
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
      stages.size() < 2)
    return program.emitOpError(
        "is not the chain --weft-prepare-training checked");
  // The loss kernel, last (docs/training.md, "The loss kernel"): placed by
  // the partitioner like the softmax column it is.
  Stage lossStage = stages.back();
  if (!isLossKernel(lossStage.kernel))
    return program.emitOpError("has no loss kernel after its logits: run "
                               "--weft-prepare-training");
  stages.pop_back();

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
    if (s.layer.conv) {
      DenseTraining t = trainingOf(i);
      if (recomputes(i) || t.recomputesOutput)
        return k.emitOpError("is a convolution; reverse checkpoints do not "
                             "recompute convolutions yet");
      if (std::string why = trainedConvLimits(*s.layer.conv, s.m, t);
          !why.empty())
        return k.emitOpError("cannot be trained on its PEs: ") << why;
      int64_t bytes = trainedConvBytes(*s.layer.conv, s.m, t);
      if (bytes > int64_t(target.memoryBytes()))
        return k.emitOpError("needs ")
               << bytes << " bytes of memory per PE for training on its "
               << s.m.smear << " x " << s.m.rows << " PEs, more than the "
               << target.memoryBytes() << " of the target: give it more PEs";
      continue;
    }
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
  // (analyzeGraph checked that the loss column follows the last kernel and
  // takes the logits in the row chunks that kernel sends.)
  const int64_t lossX = lossStage.x, rows = lossStage.height,
                classes = lossStage.inN;

  // The gradient of each kernel's input, which it sends west on the stream
  // --weft-prepare-training added.
  auto gradientStream = [&](fab::KernelOp kernel) -> fab::StreamOp {
    for (fab::StreamOp g : graph->gradients)
      if (g.getSrc() == kernel.getSymName())
        return g;
    return {};
  };
  SmallVector<fab::KernelOp> kernels;
  for (const Stage &s : stages)
    kernels.push_back(s.kernel);
  kernels.push_back(lossStage.kernel);
  for (fab::KernelOp k : kernels)
    if (k.getInputGradient() && !gradientStream(k))
      return k.emitOpError("sends the gradient of its input, but no "
                           "gradient stream leaves it: run "
                           "--weft-prepare-training");

  // The routes and colors --weft-route-streams and --weft-allocate-colors
  // chose (the gradient streams and the kernels' training channels
  // included: docs/training.md, "Routes and colors").
  FailureOr<PlacedRoutes> routes = PlacedRoutes::read(program);
  if (failed(routes))
    return failure();
  auto name = [&](size_t i) { return stages[i].kernel.getSymName().str(); };
  auto streamColor = [&](int64_t stream) {
    return routes->stream(graph->streams[size_t(stream)].op);
  };
  auto gradientColor = [&](fab::KernelOp kernel) -> int64_t {
    fab::StreamOp g = gradientStream(kernel);
    return g ? routes->stream(g) : -1;
  };
  // Each stage's depth: the most kernels on a path from the host input to
  // it (producers come first).
  std::vector<int64_t> depth(stages.size(), 0);
  for (size_t i = 0; i < stages.size(); ++i)
    for (int64_t in : stages[i].inputs)
      if (int64_t p = graph->streams[size_t(in)].producer; p >= 0)
        depth[i] = std::max(depth[i], depth[size_t(p)] + 1);
  // The gradient streams into a kernel (two for a convolution whose output
  // forks into a residual block), and from one kernel to another.
  auto gradientsInto = [&](fab::KernelOp kernel) {
    SmallVector<int64_t> colors;
    for (fab::StreamOp g : graph->gradients)
      if (llvm::is_contained(g.getDstNames(), kernel.getSymName()))
        colors.push_back(routes->stream(g));
    return colors;
  };
  auto gradientBetween = [&](fab::KernelOp src, int64_t producer) -> int64_t {
    if (producer < 0)
      return -1;
    StringRef dst = stages[size_t(producer)].kernel.getSymName();
    for (fab::StreamOp g : graph->gradients)
      if (g.getSrc() == src.getSymName() &&
          llvm::is_contained(g.getDstNames(), dst))
        return routes->stream(g);
    return -1;
  };

  // The program.
  OpBuilder b(program);
  Location loc = program.getLoc();
  auto wprog = wv::ProgramOp::create(
      b, loc, program.getSymNameAttr(),
      common::TargetAttr::get(ctx, target.config()));
  SmallVector<Attribute> layers;
  for (Stage &s : stages)
    layers.push_back(s.kernel.getSymNameAttr());
  layers.push_back(lossStage.kernel.getSymNameAttr());
  wprog->setAttr("layers", b.getArrayAttr(layers));
  for (NamedAttribute a : program->getDiscardableAttrs())
    wprog->setAttr(a.getName(), a.getValue());
  b.setInsertionPointToStart(&wprog.getBody().emplaceBlock());

  fab::IoOp in = graph->inputs[0], out = graph->outputs[0];
  wv::IoOp::create(b, in.getLoc(), in.getSymName(), common::PortDir::input,
                   common::Edge::west, 0, stages[0].inRows,
                   streamColor(stages[0].inputs[0]), "dense32", in.getType(),
                   /*fmap=*/in.getPixels().has_value(), IntegerAttr());
  wv::IoOp::create(b, loc, "labels", common::PortDir::input,
                   common::Edge::east, 0, 1,
                   routes->channel(lossStage.kernel.getSymName(),
                                   kLabelsChannel),
                   "dense16x2",
                   RankedTensorType::get({1, 1}, b.getIntegerType(16)),
                   false, IntegerAttr());
  wv::IoOp::create(b, out.getLoc(), "probabilities", common::PortDir::output,
                   common::Edge::east, 0, rows, streamColor(lossStage.output),
                   "dense32", out.getType(), false, IntegerAttr());

  for (size_t i = 0; i < stages.size(); ++i) {
    Stage &s = stages[i];
    std::string n = name(i);
    int64_t inColor = streamColor(s.inputs[0]);
    int64_t outColor = streamColor(s.output);
    // dL/dy of this kernel comes from the kernels its output feeds (or the
    // loss).
    SmallVector<int64_t> gradIns = gradientsInto(s.kernel);
    if (s.kernel.getTrained() &&
        (gradIns.empty() ||
         (gradIns.size() > 1 && !s.layer.conv && !s.pool) ||
         gradIns.size() > 2))
      return s.kernel.emitOpError("takes ")
             << gradIns.size()
             << " gradient streams; a trained kernel takes one (a "
                "convolution or max pool that feeds a residual block two)";
    int64_t gradInColor = gradIns.empty() ? -1 : gradIns[0];
    int64_t gradOutColor = gradientColor(s.kernel);
    Location kloc = s.kernel.getLoc();
    if (s.dense) {
      DenseColors dc = routes->dense(*graph, s);
      TrainingColors tc;
      tc.gradIn = gradInColor;
      if (gradIns.size() > 1)
        tc.gradIn2 = gradIns[1];
      tc.deltaRow = routes->channel(n, kDeltaChannel);
      for (int j = 0; j < 2; ++j)
        tc.reduce[j] = routes->channel(n, kGradientReduceChannels[j]);
      tc.gradOut = gradOutColor;
      DenseTraining t = trainingOf(i);
      if (s.layer.conv) {
        if (failed(emitTrainedConvLayer(b, kloc, s.layer, s.m, dc, tc, t, n,
                                        routes->table)))
          return failure();
        continue;
      }
      // A feature-map input (after a convolution) arrives pixel-major per
      // row chunk.
      DenseLayer layer = s.layer;
      if (fab::StreamOp in = graph->streams[size_t(s.inputs[0])].op;
          in && in.getPixels())
        layer.inputPixels = int64_t(*in.getPixels());
      emitTrainedDenseLayer(b, kloc, layer, s.m, dc, tc, t, n,
                            routes->table);
      continue;
    }
    if (s.join) {
      // The Add that ends a residual block (docs/training.md, "Residual
      // blocks").
      if (!s.kernel.getTrained())
        return s.kernel.emitOpError("is a join before the first trained "
                                    "layer, which weft does not run in "
                                    "training");
      JoinKernel jk = s.info.join;
      jk.x = s.x;
      jk.layout = RowChunks{s.outN, s.height, 0};
      jk.colorA = streamColor(s.inputs[0]);
      jk.colorB = streamColor(s.inputs[1]);
      jk.outColor = outColor;
      int64_t pa = graph->streams[size_t(s.inputs[0])].producer,
              pb = graph->streams[size_t(s.inputs[1])].producer;
      // The order of the inputs' rows: by the rows of their fork each
      // needs (joinRowReadiness), the skip's first on a tie: taking a row
      // before one that can arrive earlier would stall the fork's
      // multicast or the skip's producer, hence the path
      // (docs/training.md, "Residual blocks"). Inputs that are no feature
      // maps of one fork: whole, the skip first (the one that passes fewer
      // kernels).
      const int skip = depth[size_t(pb)] < depth[size_t(pa)]   ? 1
                       : depth[size_t(pa)] < depth[size_t(pb)] ? 0
                                                               : 1;
      SmallVector<int> order;
      auto [ra, rb] = joinRowReadiness(*graph, s);
      if (!ra.ready.empty() && ra.ready.size() == rb.ready.size()) {
        const std::vector<int64_t> *ready[2] = {&ra.ready, &rb.ready};
        size_t taken[2] = {0, 0}, n = ra.ready.size();
        while (taken[0] < n || taken[1] < n) {
          int in;
          if (taken[0] == n || taken[1] == n)
            in = taken[0] == n ? 1 : 0;
          else if ((*ready[0])[taken[0]] != (*ready[1])[taken[1]])
            in = (*ready[0])[taken[0]] < (*ready[1])[taken[1]] ? 0 : 1;
          else
            in = skip;
          order.push_back(in);
          ++taken[in];
        }
      } else {
        order = {skip, 1 - skip};
      }
      const int64_t gradOut[2] = {gradientBetween(s.kernel, pa),
                                  gradientBetween(s.kernel, pb)};
      int64_t bytes = trainedJoinBytes(
          chunkSize(jk.layout.n, jk.layout.rows, 0), int64_t(order.size()) / 2);
      if (bytes > int64_t(target.memoryBytes()))
        return s.kernel.emitOpError("needs ")
               << bytes << " bytes of memory per PE for training, more than "
               << "the " << target.memoryBytes() << " of the target";
      if (failed(emitTrainedJoin(b, kloc, jk, order, gradInColor, gradOut,
                                 n, routes->table)))
        return failure();
      continue;
    }
    if (s.pool) {
      // A max pool: trained after the first trained layer (it sends the
      // gradient of its input), forward only before it.
      PoolKernel pk;
      pk.shape = s.info.layer.pool;
      pk.x = s.x;
      pk.rows = s.height;
      pk.tiles = s.width;
      pk.inColor = inColor;
      pk.outColor = outColor;
      if (failed(s.kernel.getTrained()
                     ? emitTrainedPoolKernel(
                           b, kloc, pk, gradInColor,
                           gradIns.size() > 1 ? gradIns[1] : -1, gradOutColor,
                           n, routes->table)
                     : emitPoolKernel(b, kloc, pk, n, routes->table)))
        return failure();
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
      if (failed(emitTrainedColumn(b, kloc, k, n, n, routes->table)))
        return failure();
      continue;
    }
    // A column kernel before the first dense layer: inference only.
    s.column.inColor = inColor;
    s.column.outColor = outColor;
    if (failed(emitColumnKernel(b, kloc, s.column, n, n, &routes->table)))
      return failure();
  }
  TrainedColumn loss;
  loss.kind = TrainedColumn::Kind::Loss;
  loss.x = lossX;
  loss.layout = RowChunks{classes, rows, 0};
  loss.inColor = streamColor(lossStage.inputs[0]);
  loss.outColor = streamColor(lossStage.output);
  loss.gradOut = gradientColor(lossStage.kernel);
  loss.labelColor =
      routes->channel(lossStage.kernel.getSymName(), kLabelsChannel);
  std::array<int64_t, 3> internal =
      routes->columnReduce(lossStage.kernel.getSymName());
  std::copy(internal.begin(), internal.end(), loss.internal);
  loss.batch = training.getBatch();
  // A pipelined program (CPGD, MBGD with lags): the loss double-buffers its
  // gradient.
  if (llvm::any_of(stages, [](const Stage &s) {
        return fab::KernelOp(s.kernel).getLag().has_value();
      }))
    loss.lag = 1;
  StringRef lossName = lossStage.kernel.getSymName();
  if (failed(emitTrainedColumn(b, lossStage.kernel.getLoc(), loss, lossName,
                               lossName, routes->table)))
    return failure();
  emitRelays(b, loc, wprog, routes->table);
  if (failed(routes->check(wprog, program)))
    return failure();
  program.erase();
  return success();
}

} // namespace
} // namespace weft::conversion
