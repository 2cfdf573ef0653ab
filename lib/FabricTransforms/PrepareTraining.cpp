//===- PrepareTraining.cpp - Make a program a training program -----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-prepare-training: checks that an unplaced fabric.program is a chain
// weft can train (dense layers, convolutions, max pools and Relu/Tanh column
// kernels ending at the logits, with residual blocks: a fork into a block and
// the Add that ends it) and records the decision once: the program's training attribute
// and the kernels' `trained` and `input_gradient` marks, under CPGD each
// trained kernel's `lag`, the gradient streams, and the loss kernel after
// the logits (docs/training.md, "The IR and the pipeline", "The loss
// kernel"), so that partitioning, routing and colors treat a training
// program as they treat any other.
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricOps.h"
#include "weft/FabricTransforms/Graph.h"
#include "weft/FabricTransforms/Passes.h"
#include "weft/Kernels/ConvTraining.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"

namespace weft {
#define GEN_PASS_DEF_PREPARETRAINING
#include "weft/FabricTransforms/Passes.h.inc"
} // namespace weft

using namespace mlir;
using namespace weft;
namespace wf = weft::fabric;
namespace wc = weft::conversion;
using wc::ChainLayer;
using wc::ColumnOp;

namespace {

/// Column kernels with a backward step (docs/training.md, "Column kernels
/// in training").
bool trainableColumn(const wc::Stage &st) {
  return st.info.layer.kind == ChainLayer::Kind::Column &&
         (st.info.layer.op == ColumnOp::Relu ||
          st.info.layer.op == ColumnOp::Tanh);
}

/// "node 'fc1' (dense 784 -> 256)": the kernel is named after its ONNX
/// node.
std::string node(wf::KernelOp k) {
  return "node '" + k.getSymName().str() + "' (" +
         k.getScheme().getSummary() + ")";
}

bool isSoftmax(const wc::Stage &st) {
  if (st.info.layer.kind != ChainLayer::Kind::Column)
    return false;
  ColumnOp op = st.info.layer.op;
  return op == ColumnOp::Softmax || op == ColumnOp::LogSoftmax ||
         op == ColumnOp::AxisSoftmax || op == ColumnOp::AxisLogSoftmax;
}

struct PrepareTraining
    : weft::impl::PrepareTrainingBase<PrepareTraining> {
  using Base::Base;

  void runOnOperation() override {
    for (auto program : getOperation().getOps<wf::ProgramOp>())
      if (failed(prepare(program)))
        return signalPassFailure();
  }

  LogicalResult prepare(wf::ProgramOp program);
  void addLoss(wf::ProgramOp program, const wc::Graph &g,
               SymbolTable &symbols);
};

LogicalResult PrepareTraining::prepare(wf::ProgramOp program) {
  MLIRContext *ctx = program.getContext();
  if (program.getTrainingAttr())
    return program.emitOpError("is already a training program");
  std::optional<wf::Optimizer> opt = wf::symbolizeOptimizer(optimizer);
  if (!opt)
    return program.emitOpError("cannot train with optimizer '")
           << optimizer << "': weft trains with sgd, mbgd or cpgd";
  const bool cpgd = *opt == wf::Optimizer::cpgd;
  const bool pipelined =
      cpgd || (*opt == wf::Optimizer::mbgd && int64_t(samples) > 0);
  auto training = wf::TrainingAttr::getChecked(
      [&] { return program.emitOpError(); }, ctx, *opt,
      FloatAttr::get(Float32Type::get(ctx), lr), int64_t(batch),
      int64_t(samples));
  if (!training)
    return failure();

  FailureOr<wc::Graph> g =
      wc::analyzeGraph(program, /*placed=*/false, /*withData=*/false);
  if (failed(g))
    return failure();
  if (g->inputs.size() != 1 || g->outputs.size() != 1)
    return program.emitOpError("has ")
           << g->inputs.size() << " host inputs and " << g->outputs.size()
           << " host outputs; weft trains a chain from one input to one "
              "output (the logits)";
  if (g->stages.empty())
    return program.emitOpError("has no kernel to train");

  // A chain, with residual blocks: each kernel reads one stream, or (an
  // Add join) two; a kernel's output feeds the next kernel, or forks to a
  // block's first kernel and its join; only the last kernel's reaches the
  // host output (docs/training.md, "Residual blocks").
  for (auto [i, st] : llvm::enumerate(g->stages)) {
    wf::KernelOp k = st.kernel;
    const bool addJoin = st.join && st.joinKind == wf::JoinKind::add &&
                         st.info.join.broadcast < 0;
    if (st.inputs.size() != 1 && !(addJoin && st.inputs.size() == 2))
      return k.emitError() << node(k) << " reads " << st.inputs.size()
                           << " streams; weft trains kernels of one input "
                              "each and the Add that ends a residual block";
    for (int64_t in : st.inputs) {
      const wc::GraphStream &s = g->streams[size_t(in)];
      if (s.producer < 0 && i != 0)
        return k.emitError() << node(k)
                             << " reads the host input, which only the first "
                                "kernel of a trained network does";
    }
    if (addJoin && g->streams[size_t(st.inputs[0])].producer ==
                       g->streams[size_t(st.inputs[1])].producer)
      return k.emitError() << node(k)
                           << " adds a stream to itself; weft trains the Add "
                              "of a residual block's two paths";
    const wc::GraphStream &out = g->streams[size_t(st.output)];
    bool last = i + 1 == g->stages.size();
    size_t fanOut = out.consumers.size() + out.outputs.size();
    // (A block's input feeds its first kernel and the Add, or, a
    // downsampling block, its first kernel and the projection.)
    bool fork = fanOut == 2 && out.outputs.empty();
    if ((fanOut != 1 && !fork) || (last != !out.outputs.empty()))
      return k.emitError()
             << node(k) << " feeds " << out.consumers.size()
             << " kernels and " << out.outputs.size()
             << " host outputs; weft trains a chain (with residual blocks: a "
                "fork into a block and its Add) whose last kernel alone "
                "feeds the output";
  }

  const wc::Stage &lastStage = g->stages.back();
  wf::KernelOp lastKernel = lastStage.kernel;
  if (isSoftmax(lastStage))
    return lastKernel.emitError()
           << node(lastKernel)
           << " computes probabilities: the model's output must be the "
              "logits (weft trains with the softmax cross-entropy of the "
              "logits, on the fabric)";

  bool seenDense = false, hasConv = false;
  SmallVector<std::pair<wf::KernelOp, bool>> marks;
  // Whether a trained layer feeds each stage, directly or through others.
  std::vector<bool> trainedUpstream(g->stages.size(), false),
      trainedOrUpstream(g->stages.size(), false);
  for (auto [i, st] : llvm::enumerate(g->stages)) {
    wf::KernelOp k = st.kernel;
    // (Producers come first.)
    for (int64_t in : st.inputs)
      if (int64_t p = g->streams[size_t(in)].producer; p >= 0)
        trainedUpstream[i] = trainedUpstream[i] || trainedOrUpstream[size_t(p)];
    seenDense = trainedUpstream[i];
    auto markTrained = [&] { trainedOrUpstream[i] = true; };
    if (seenDense)
      markTrained();
    if (st.info.layer.kind == ChainLayer::Kind::Dense) {
      if (st.info.layer.synthetic)
        return k.emitError()
               << node(k)
               << " is a matrix weft made (a reshuffle of the sample), not "
                  "the model's: it has no weights to train";
      auto d = cast<wf::DenseSchemeAttr>(k.getScheme());
      if (!d.getWeightsSource() || (d.getBias() && !d.getBiasSource()))
        return k.emitError()
               << node(k) << ": its " << (d.getWeightsSource() ? "bias" : "weights")
               << " are no initializer of the model (computed, shared or "
                  "the sum of several), so the trained values have nowhere "
                  "to go";
      marks.push_back({k, seenDense});
      markTrained();
      continue;
    }
    if (st.info.layer.kind == ChainLayer::Kind::Conv &&
        st.info.layer.frustum.empty()) {
      auto cs = cast<wf::ConvSchemeAttr>(k.getScheme());
      if (cs.getGroups() > 1)
        return k.emitError() << node(k)
                             << " cannot be trained yet: weft trains "
                                "convolutions of one group";
      if (cs.getEpilogue() || cs.getReluMax())
        return k.emitError()
               << node(k)
               << " cannot be trained yet: only a ReLU may follow a trained "
                  "convolution directly, not the activation fused into it";
      if (cpgd)
        return k.emitError() << node(k)
                             << " cannot be trained by cpgd yet: weft trains "
                                "convolutions by sgd and mbgd";
      if (!cs.getWeightsSource() || (cs.getBias() && !cs.getBiasSource()))
        return k.emitError()
               << node(k) << ": its "
               << (cs.getWeightsSource() ? "bias" : "weights")
               << " are no initializer of the model (computed, shared or "
                  "folded with a batch norm), so the trained values have "
                  "nowhere to go";
      marks.push_back({k, seenDense});
      markTrained();
      hasConv = true;
      continue;
    }
    if (st.info.layer.kind == ChainLayer::Kind::Pool) {
      // Before the first trained layer a pool runs forward only.
      if (!seenDense)
        continue;
      if (cpgd)
        return k.emitError() << node(k)
                             << " cannot be trained by cpgd yet: weft trains "
                                "poolings by sgd and mbgd";
      // (Its shape; the descriptors on one channel a row, the most rows.)
      if (std::string why = wc::trainedPoolLimits(st.info.layer.pool,
                                                  st.info.layer.pool.c);
          !why.empty())
        return k.emitError() << node(k) << " cannot be trained yet: " << why;
      marks.push_back({k, true});
      hasConv = true;
      continue;
    }
    if (st.join) {
      // The Add that ends a residual block: its gradient goes back into
      // both paths (docs/training.md, "Residual blocks").
      if (!seenDense)
        return k.emitError() << node(k)
                             << " cannot be trained yet: a residual block's "
                                "Add is trained after a trained layer";
      if (cpgd)
        return k.emitError() << node(k)
                             << " cannot be trained by cpgd yet: weft trains "
                                "residual blocks by sgd and mbgd";
      marks.push_back({k, true});
      hasConv = true;
      continue;
    }
    if (trainableColumn(st)) {
      // Before the first dense layer nothing needs its gradient.
      if (seenDense)
        marks.push_back({k, true});
      continue;
    }
    return k.emitError() << node(k)
                         << " cannot be trained yet: weft trains dense layers "
                            "(Gemm, MatMul), convolutions and Relu and Tanh "
                            "between them";
  }
  if (!llvm::is_contained(trainedOrUpstream, true))
    return program.emitOpError("has no dense layer: nothing to train");

  program.setTrainingAttr(training);
  for (auto [i, mark] : llvm::enumerate(marks)) {
    auto [k, inputGradient] = mark;
    k.setTrained(true);
    k.setInputGradient(inputGradient);
    // CPGD, and MBGD given its samples: the trained kernels after it and
    // the loss; each kernel trailing one more than the next keeps it a
    // round ahead of the next (docs/training.md, "CPGD"). MBGD drains the
    // pipeline at the end of each mini-batch.
    if (pipelined && !hasConv) {
      int64_t lag = int64_t(marks.size() - i);
      int64_t rounds = cpgd ? int64_t(samples) : int64_t(batch);
      if (lag + rounds > 32767)
        return k.emitError()
               << node(k) << " trails its forward by " << lag << " samples "
               << "under " << optimizer << "; with " << rounds
               << " samples a pipeline its PEs count past 32767 rounds: "
                  "train on fewer samples a run";
      k.setLag(lag);
    }
  }
  numTrained += marks.size();

  // The gradient streams: dL/dx of every kernel that sends it, west to the
  // kernel its input comes from (a join's two: one into each path of its
  // block), right after the forward stream.
  SymbolTable symbols(program);
  OpBuilder b(ctx);
  DenseMap<int64_t, int> gradientsInto;
  for (wc::Stage &st : g->stages) {
    if (!st.kernel.getInputGradient())
      continue;
    for (auto [p, in] : llvm::enumerate(st.inputs)) {
      wc::GraphStream &s = g->streams[size_t(in)];
      if (s.producer < 0)
        return st.kernel.emitError()
               << node(st.kernel)
               << " would send the gradient of its input to the host";
      wf::KernelOp prev = g->stages[size_t(s.producer)].kernel;
      // An Add's input from a kernel that is not trained (a pool before
      // the first trained layer) takes no gradient.
      if (!prev.getTrained())
        continue;
      // Only a convolution or a max pool adds the gradients of a fork's
      // two consumers.
      ChainLayer::Kind kind = g->stages[size_t(s.producer)].info.layer.kind;
      if (++gradientsInto[s.producer] > 1 && kind != ChainLayer::Kind::Conv &&
          kind != ChainLayer::Kind::Pool)
        return prev.emitError()
               << node(prev)
               << " feeds a residual block: only a convolution or a max pool "
                  "adds the "
                  "gradients of the block's two paths yet";
      b.setInsertionPointAfter(s.op);
      std::string name = (st.kernel.getSymName() + "_grad").str();
      if (st.inputs.size() > 1)
        name += "_" + std::to_string(p);
      auto grad = wf::StreamOp::create(
          b, s.op.getLoc(), b.getStringAttr(name),
          FlatSymbolRefAttr::get(st.kernel.getSymNameAttr()),
          b.getI64IntegerAttr(0),
          b.getArrayAttr({FlatSymbolRefAttr::get(prev.getSymNameAttr())}),
          b.getDenseI64ArrayAttr({0}), s.op.getPayloadAttr(),
          /*color=*/nullptr, /*pixels=*/nullptr, b.getUnitAttr(),
          /*sparse=*/nullptr);
      symbols.insert(grad); // uniquifies the name if taken
    }
  }
  addLoss(program, *g, symbols);
  return success();
}

/// The loss kernel after the logits (docs/training.md, "The loss kernel"):
/// the logits stream goes into it, its probabilities to the host output,
/// and the gradient of its input back to the last kernel. Placement,
/// routing and colors treat it as the softmax column it is; its labels
/// arrive on its `labels` channel.
void PrepareTraining::addLoss(wf::ProgramOp program, const wc::Graph &g,
                              SymbolTable &symbols) {
  MLIRContext *ctx = program.getContext();
  wf::KernelOp lastKernel = g.stages.back().kernel;
  wf::StreamOp logits = g.streams[size_t(g.stages.back().output)].op;
  auto type = cast<RankedTensorType>(
      lastKernel.getFunctionType().getResult(0));
  Location loc = lastKernel.getLoc();
  OpBuilder b(ctx);
  b.setInsertionPointAfter(lastKernel);
  auto loss = wf::KernelOp::create(
      b, loc, b.getStringAttr("loss"),
      wf::SoftmaxSchemeAttr::get(ctx, /*log=*/false, 0, 1, /*loss=*/true),
      /*rect=*/nullptr, /*smear=*/b.getI64IntegerAttr(1),
      /*tiles=*/b.getI64IntegerAttr(1), /*merge=*/b.getI64IntegerAttr(1),
      /*tile=*/nullptr, /*precision=*/nullptr, /*predicted_cycles=*/nullptr,
      /*lane_wait_cycles=*/nullptr,
      TypeAttr::get(b.getFunctionType({type}, {type})), /*trained=*/nullptr,
      /*input_gradient=*/b.getUnitAttr(), /*checkpoint=*/nullptr,
      /*recompute_cycles=*/nullptr, /*lag=*/nullptr);
  symbols.insert(loss);
  {
    // The forward pass, as documentation: the softmax of the sample.
    OpBuilder::InsertionGuard guard(b);
    Block *body = b.createBlock(&loss.getBody(), {}, {type}, {loc});
    Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                         type.getElementType());
    Value p = linalg::SoftmaxOp::create(b, loc, type, body->getArgument(0),
                                        init, type.getRank() - 1)
                  .getResult()[0];
    wf::YieldOp::create(b, loc, ValueRange{p});
  }
  auto ref = FlatSymbolRefAttr::get(loss.getSymNameAttr());
  // The probabilities take the logits' place at the host output.
  b.setInsertionPointAfter(logits);
  auto out = wf::StreamOp::create(
      b, logits.getLoc(), b.getStringAttr((loss.getSymName() + "_out").str()),
      ref, b.getI64IntegerAttr(0), logits.getDstsAttr(),
      logits.getDstPortsAttr(), logits.getPayloadAttr(), /*color=*/nullptr,
      /*pixels=*/nullptr, /*gradient=*/nullptr, /*sparse=*/nullptr);
  symbols.insert(out);
  logits.setDstsAttr(b.getArrayAttr({ref}));
  logits.setDstPortsAttr(b.getDenseI64ArrayAttr({0}));
  auto grad = wf::StreamOp::create(
      b, logits.getLoc(),
      b.getStringAttr((loss.getSymName() + "_grad").str()), ref,
      b.getI64IntegerAttr(0),
      b.getArrayAttr({FlatSymbolRefAttr::get(lastKernel.getSymNameAttr())}),
      b.getDenseI64ArrayAttr({0}), logits.getPayloadAttr(), /*color=*/nullptr,
      /*pixels=*/nullptr, b.getUnitAttr(), /*sparse=*/nullptr);
  symbols.insert(grad);
}

} // namespace
