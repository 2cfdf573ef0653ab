//===- PartitionDense.cpp - A balanced pipeline for a chain of kernels ----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-partition-dense: the kernels of a fabric.program form one chain
// (host input -> k0 -> ... -> kn -> host output, in stream order); each is
// a dense layer (matchDenseLayer) or a column kernel (matchColumnKernel).
// partitionChain (ChainPartition.h) lays them out west to east as a
// balanced pipeline; this pass records the result: rect, smear, precision
// and predicted cycles per sample on every kernel, and the rows of the host
// ports (docs/execution-model.md, "A network on the fabric"). With
// grid=auto, chooseGrid picks the fabric first.
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricOps.h"
#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/DenseLayer.h"
#include "weft/FabricTransforms/Densities.h"
#include "weft/FabricTransforms/Graph.h"
#include "weft/FabricTransforms/KernelScheme.h"
#include "weft/FabricTransforms/Passes.h"
#include "weft/Kernels/ChainPartition.h"
#include "weft/Kernels/JoinKernel.h"
#include "weft/Kernels/Replicas.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/DebugLog.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "weft-partition-dense"

namespace weft {
#define GEN_PASS_DEF_PARTITIONDENSE
#include "weft/FabricTransforms/Passes.h.inc"
} // namespace weft

using namespace mlir;
using namespace weft;
namespace wf = weft::fabric;
namespace wc = weft::conversion;

/// The dense layers of `net` whose input may arrive sparse (before
/// placement, what `sparseIneligible` checks after it: a mixed-precision
/// dense layer reading, alone, a plain vector of ReLU results from one
/// dense layer or an fp32 host input) get the stream's expected density:
/// measured for the producer's last ONNX node or the host input, else
/// `density` or `inputDensity` (docs/execution-model.md, "Sparse
/// activations").
static void markSparseInputs(const wc::Graph &g, wc::NetworkShape &net,
                             wc::SparseMode mode, double density,
                             double inputDensity,
                             const llvm::StringMap<wc::ExpectedDensity> &measured,
                             const llvm::StringMap<wc::ExpectedDensity> &inputs) {
  if (mode == wc::SparseMode::Off)
    return;
  auto plainDense = [](const wc::Stage &st) {
    return st.info.layer.kind == wc::ChainLayer::Kind::Dense &&
           !st.info.layer.synthetic && !st.info.layer.training;
  };
  for (auto [i, st] : llvm::enumerate(g.stages)) {
    if (!plainDense(st) || st.inputs.size() != 1)
      continue;
    const wc::GraphStream &in = g.streams[size_t(st.inputs[0])];
    wf::StreamOp op = in.op;
    wf::IoOp input = in.input;
    if (in.consumers.size() != 1 || !in.outputs.empty() ||
        (op && op.getPixels()))
      continue;
    wc::ExpectedDensity expected;
    if (in.producer < 0) {
      if (op && !op.getPayload().getElementType().isF32())
        continue;
      auto it = input ? inputs.find(input.getSymName()) : inputs.end();
      expected = it != inputs.end() ? it->second
                                    : wc::ExpectedDensity(inputDensity);
    } else {
      const wc::Stage &p = g.stages[size_t(in.producer)];
      if (!plainDense(p) || !p.info.dense.relu)
        continue;
      const wc::ExpectedDensity *m = wc::measuredDensity(p.kernel, measured);
      expected = m ? *m : wc::ExpectedDensity(density);
    }
    net.layers[i].layer.sparseInput = true;
    net.layers[i].layer.inputDensity = expected;
    net.layers[i].layer.sparseOn = mode == wc::SparseMode::On;
  }
}

/// "WxH" plus the options of `base` (memory, colors, queues).
static std::optional<machine::Target> withSize(const machine::Target &base,
                                              int64_t w, int64_t h) {
  machine::TargetConfig c = base.config();
  c.width = unsigned(w);
  c.height = unsigned(h);
  return machine::Target::create(c);
}

namespace {

struct PartitionDense : weft::impl::PartitionDenseBase<PartitionDense> {
  using Base::Base;

  void runOnOperation() override {
    wc::Precision p;
    if (precision == "fp32") {
      p = wc::Precision::FP32;
    } else if (precision == "mixed") {
      p = wc::Precision::Mixed;
    } else {
      getOperation().emitError()
          << "precision must be fp32 or mixed, not '" << precision << "'";
      return signalPassFailure();
    }
    FailureOr<wc::SparseMode> mode = wc::parseSparseOptions(
        getOperation(), sparseActivations, density, inputDensity);
    if (failed(mode))
      return signalPassFailure();
    sparseMode = *mode;
    if (failed(wc::parseDensities(getOperation(), densities, "densities",
                                  measured)) ||
        failed(wc::parseDensities(getOperation(), inputDensities,
                                  "input-densities", measuredInputs)))
      return signalPassFailure();
    if (objective != "auto" && objective != "interval" &&
        objective != "latency") {
      getOperation().emitError()
          << "objective must be auto, interval or latency, not '" << objective
          << "'";
      return signalPassFailure();
    }
    for (auto program : getOperation().getOps<wf::ProgramOp>())
      if (failed(partition(program, p)))
        return signalPassFailure();
  }

  wc::SparseMode sparseMode = wc::SparseMode::Off;
  llvm::StringMap<wc::ExpectedDensity> measured, measuredInputs;

  /// `objective`, with `auto` read off the program: the latency objective
  /// for SGD, which holds one sample in flight, so that its period is the
  /// sum of the kernels' cycles rather than the slowest's. (MBGD one
  /// sample at a time under reverse checkpoints keeps the interval
  /// objective: its weights are then bit-identical to the pipelined
  /// schedule's, whose layout sums the partial sums in the same order;
  /// docs/training.md. A network with convolutions, never pipelined, is
  /// partitioned for its latency.)
  wc::NetworkShape::Objective objectiveOf(wf::ProgramOp program) const {
    using Objective = wc::NetworkShape::Objective;
    if (objective != "auto")
      return objective == "latency" ? Objective::Latency : Objective::Interval;
    wf::TrainingAttr training = program.getTrainingAttr();
    if (!training)
      return Objective::Interval;
    if (training.getOptimizer() == wf::Optimizer::sgd)
      return Objective::Latency;
    // An MBGD that --weft-prepare-training did not pipeline although its
    // samples were given (a network with convolutions or poolings, which
    // train one sample at a time) holds one sample in flight, as SGD.
    bool lags = false;
    for (auto k : program.getBody().front().getOps<wf::KernelOp>())
      lags |= k.getLag().has_value();
    return training.getOptimizer() == wf::Optimizer::mbgd &&
                   training.getSamples() > 0 && !lags
               ? Objective::Latency
               : Objective::Interval;
  }

  /// The target to partition for: the program's, or `grid`.
  FailureOr<machine::Target> chooseTarget(wf::ProgramOp program,
                                         const wc::NetworkShape &net,
                                         wc::Precision p) {
    machine::Target t = program.getModel();
    if (grid.empty())
      return t;
    std::string why;
    if (grid != "auto") {
      std::optional<machine::Target> g = machine::Target::parse(grid, &why);
      if (!g)
        return program.emitError() << "bad grid '" << grid << "': " << why;
      return *g;
    }
    std::optional<machine::Target> largest =
        machine::Target::parse(maxGrid, &why);
    if (!largest)
      return program.emitError() << "bad max-grid '" << maxGrid << "': " << why;
    std::optional<wc::GridChoice> choice =
        wc::chooseGrid(net, p, *largest, /*tolerance=*/0.05, why);
    if (!choice)
      return program.emitOpError()
             << "does not fit any fabric up to " << largest->width() << "x"
             << largest->height() << ": " << why;
    std::optional<machine::Target> chosen =
        withSize(*largest, choice->width, choice->height);
    if (!chosen)
      return program.emitOpError() << "grid auto chose an invalid fabric";
    Builder b(program.getContext());
    program->setAttr(
        "weft.grid_auto",
        b.getStringAttr(
            llvm::formatv("{0}x{1}: predicted utilization "
                          "{2:P} (best {3:P} on {4}x{5}; {6} "
                          "grids fit up to {7}x{8})",
                          choice->width, choice->height, choice->utilization,
                          choice->bestUtilization, choice->bestWidth,
                          choice->bestHeight, choice->gridsFitting,
                          largest->width(), largest->height())
                .str()));
    return *chosen;
  }

  /// Every join buffers the input that arrives first. A join of feature
  /// maps that run behind one source by rows buffers the rows its short
  /// branch runs ahead (mapJoinOf); any other join a FIFO deep enough for
  /// the samples the other branch holds in flight (the latency of a
  /// stream: the sum of predicted cycles per sample along the slowest path
  /// from the host to it; each kernel needs a whole sample before its
  /// result is complete). Recorded in the join's scheme, with the cycles
  /// the chosen plan predicts.
  void decideJoins(wc::Graph &graph, const wc::ChainMapping &mapping,
                   const machine::Target &t) {
    // (The kernels' predicted cycles are set: the latencies read them.)
    std::vector<int64_t> latency = wc::streamLatencies(graph);
    for (auto [st, placed] : llvm::zip(graph.stages, mapping.kernels)) {
      auto scheme = dyn_cast<wf::JoinSchemeAttr>(st.kernel.getScheme());
      if (!scheme)
        continue;
      int64_t la = latency[size_t(st.inputs[0])],
              lb = latency[size_t(st.inputs[1])];
      wc::JoinKernel k = wc::joinKernelOf(scheme.getOp(), scheme.getRelu());
      k.layout = wc::RowChunks{st.info.outN, placed.rows, 0};
      if (std::optional<wc::MapJoin> j = wc::mapJoinOf(graph, st)) {
        k.buffered = j->buffered;
        k.fifoSamples = 0;
        k.pixels = j->pixels;
        k.fifoPixels = j->fifoPixels;
      } else {
        k.buffered = la < lb ? 0 : 1;
        if (st.info.join.broadcast >= 0) {
          // The feature map (a) runs ahead of its own scale.
          k.broadcast = st.info.join.broadcast;
          k.pixels = st.info.join.pixels;
          k.buffered = 0;
        }
        k.fifoSamples = wc::joinFifoSamplesFor(
            k, std::abs(la - lb),
            std::max<int64_t>(1, mapping.bottleneckCycles),
            int64_t(t.memoryBytes()));
        k.fifoSamples = std::max<int64_t>(1, k.fifoSamples);
      }
      st.kernel.setSchemeAttr(wf::JoinSchemeAttr::get(
          st.kernel.getContext(), scheme.getOp(), scheme.getRelu(), k.buffered,
          k.fifoSamples, k.fifoPixels, scheme.getBroadcast()));
      st.kernel.setPredictedCycles(wc::predictJoinKernelCycles(k));
      LDBG() << "@" << st.kernel.getSymName() << ": buffers input "
             << k.buffered << " in a FIFO of " << k.fifoSamples
             << " samples / " << k.fifoPixels << " pixels (latencies " << la
             << " and " << lb << ")";
    }
  }

  /// One copy's layout: on the whole target `t`, or with `replicas` other
  /// than 1 on the band of rows each copy gets (chooseReplicas), recording
  /// the copies on the program (and with grid=auto growing its target to
  /// hold them).
  FailureOr<wc::ChainMapping> replicate(wf::ProgramOp program,
                                        const wc::NetworkShape &net,
                                        wc::Precision p, machine::Target t) {
    std::string why;
    StringRef text = StringRef(replicas).trim();
    std::optional<int64_t> copies;
    if (text != "auto") {
      int64_t n;
      if (text.getAsInteger(10, n) || n < 1)
        return program.emitError("replicas must be auto or a number of "
                                 "copies of at least 1, not '")
               << replicas << "'";
      copies = n;
    }
    bool gridAuto = grid == "auto";
    if ((copies && *copies == 1) || (!copies && gridAuto)) {
      // One copy (the grid auto chose is for one copy: auto adds none).
      std::optional<wc::ChainMapping> mapping =
          wc::partitionNetwork(net, p, t, why);
      if (!mapping)
        return program.emitOpError() << "does not fit: " << why;
      return std::move(*mapping);
    }
    machine::Target fabric = t;
    if (gridAuto) {
      // N copies of the grid auto chose, stacked: a taller fabric.
      std::optional<machine::Target> largest = machine::Target::parse(maxGrid);
      int64_t rows = *copies * int64_t(t.height());
      if (!largest ||
          *copies > int64_t(largest->height()) / int64_t(t.height()))
        return program.emitOpError("cannot stack ")
               << *copies << " copies of the " << t.width() << "x" << t.height()
               << " fabric grid auto chose for one copy: they "
               << "need " << rows << " rows, more than the "
               << (largest ? largest->height() : 0) << " of max-grid";
      std::optional<machine::Target> tall = withSize(t, t.width(), rows);
      if (!tall)
        return program.emitOpError("a fabric of ")
               << t.width() << "x" << rows << " is not a valid target";
      fabric = *tall;
    }
    int64_t most = maxReplicas;
    if (most < 0) {
      auto batch = program->getAttrOfType<IntegerAttr>("weft.batch");
      most = batch ? std::max<int64_t>(1, batch.getInt()) : 0;
    }
    std::optional<wc::ReplicaChoice> choice =
        wc::chooseReplicas(net, p, fabric, copies, why, most, maxColumns);
    if (!choice)
      return program.emitOpError("does not fit ")
             << (copies ? std::to_string(*copies) + " copies"
                        : std::string("any number of copies"))
             << ": " << why;
    MLIRContext *ctx = program.getContext();
    Builder b(ctx);
    if (gridAuto) {
      // The smallest fabric that holds the copies.
      std::optional<machine::Target> held =
          withSize(t, t.width(), choice->copies * choice->copyRows);
      if (!held)
        return program.emitOpError("the copies' fabric is not a valid target");
      program.setTargetAttr(common::TargetAttr::get(ctx, held->config()));
    }
    std::string plan = llvm::formatv(
        "{0} {1} of {2}x{3} PEs (each partitioned for {6}x{4}: predicted "
        "{5} cycles per sample)",
        choice->copies, choice->copies == 1 ? "copy" : "copies",
        choice->columns > 1 ? int64_t(choice->copyColumns) : int64_t(t.width()),
        choice->copyRows, choice->bandRows, choice->mapping.bottleneckCycles,
        t.width());
    if (!copies && most > 0)
      plan +=
          llvm::formatv("; at most {0} (the samples of the run)", most).str();
    if (!copies)
      plan += llvm::formatv("; one copy on the whole {0}x{1} fabric: {2}; "
                            "{3} of {4} bands fit",
                            fabric.width(), fabric.height(),
                            choice->singleBottleneck
                                ? std::to_string(choice->singleBottleneck) +
                                      " cycles per sample"
                                : std::string("does not fit"),
                            choice->bandsFitting, choice->bandsTried)
                  .str();
    if (choice->columns > 1)
      plan += llvm::formatv("; {0} side by side in each of {1} bands of rows",
                            choice->columns, choice->copies / choice->columns)
                  .str();
    program->setAttr("weft.replica_plan", b.getStringAttr(plan));
    if (choice->copies > 1)
      program->setAttr("weft.replicas", b.getI64IntegerAttr(choice->copies));
    if (choice->columns > 1)
      program->setAttr("weft.replica_columns",
                       b.getI64IntegerAttr(choice->columns));
    LDBG() << "replicas: " << plan;
    return std::move(choice->mapping);
  }

  /// Copies 1 .. columns - 1 of the placed network side by side, copy k
  /// `width` x k columns east of copy 0 with its symbols suffixed `_r<k>`
  /// (a free name if that one is taken) and `weft.replica = k` on its
  /// kernels and host ports (`weft.replica_of`: copy 0's port). Routing
  /// relays each copy's host streams through the others' PEs.
  void tileColumns(wf::ProgramOp program, int64_t columns, int64_t width) {
    MLIRContext *ctx = program.getContext();
    Block &body = program.getBody().front();
    SymbolTable symbols(program);
    SmallVector<Operation *> originals;
    for (Operation &op : body)
      if (isa<wf::KernelOp, wf::IoOp, wf::StreamOp>(op))
        originals.push_back(&op);
    Builder b(ctx);
    for (Operation *op : originals)
      if (isa<wf::IoOp>(op))
        op->setAttr("weft.replica", b.getI64IntegerAttr(0));
    OpBuilder ob(ctx);
    ob.setInsertionPointToEnd(&body);
    for (int64_t k = 1; k < columns; ++k) {
      // Names first: streams refer to kernels and ports.
      llvm::StringMap<std::string> renamed;
      SmallVector<Operation *> copies;
      for (Operation *op : originals) {
        Operation *copy = ob.clone(*op);
        copies.push_back(copy);
        StringRef name = SymbolTable::getSymbolName(op).getValue();
        std::string base = (name + "_r" + Twine(k)).str(), fresh = base;
        for (unsigned i = 1; symbols.lookup(fresh); ++i)
          fresh = (base + "_" + Twine(i)).str();
        SymbolTable::setSymbolName(copy, fresh);
        symbols.insert(copy);
        renamed[name] = fresh;
        copy->setAttr("weft.replica", b.getI64IntegerAttr(k));
        if (isa<wf::IoOp>(copy))
          copy->setAttr("weft.replica_of", b.getStringAttr(name));
      }
      auto ref = [&](StringRef name) {
        return FlatSymbolRefAttr::get(ctx, renamed.lookup(name));
      };
      for (Operation *copy : copies) {
        if (auto kernel = dyn_cast<wf::KernelOp>(copy)) {
          common::RectAttr r = kernel.getRectAttr();
          kernel.setRectAttr(common::RectAttr::get(ctx, r.getX() + k * width,
                                                   r.getY(), r.getWidth(),
                                                   r.getHeight()));
        } else if (auto stream = dyn_cast<wf::StreamOp>(copy)) {
          stream.setSrcAttr(ref(stream.getSrc()));
          SmallVector<Attribute> dsts;
          for (StringRef d : stream.getDstNames())
            dsts.push_back(ref(d));
          stream.setDstsAttr(b.getArrayAttr(dsts));
        }
      }
    }
  }

  LogicalResult partition(wf::ProgramOp program, wc::Precision p) {
    FailureOr<wc::Graph> graph =
        wc::analyzeGraph(program, /*placed=*/false, /*withData=*/false);
    if (failed(graph))
      return failure();
    if (graph->stages.empty())
      return success();
    wc::NetworkShape net = wc::networkShapeOf(*graph);
    net.mergeLanes = mergeLanes;
    net.objective = objectiveOf(program);
    // The latency objective is recorded (the interval objective is the
    // default and is not).
    if (net.objective == wc::NetworkShape::Objective::Latency)
      program->setAttr("weft.objective",
                       StringAttr::get(program.getContext(), "latency"));
    if (p == wc::Precision::Mixed && !program.getTrainingAttr())
      markSparseInputs(*graph, net, sparseMode, density, inputDensity,
                       measured, measuredInputs);
    FailureOr<machine::Target> t = chooseTarget(program, net, p);
    if (failed(t))
      return failure();
    MLIRContext *ctx = program.getContext();
    program.setTargetAttr(common::TargetAttr::get(ctx, t->config()));

    // A dense layer that fits no rectangle of the fabric on its own is
    // named on its kernel, with what it needs.
    std::string why;
    for (wc::Stage &st : graph->stages)
      if (st.info.layer.kind == wc::ChainLayer::Kind::Dense &&
          !wc::chooseDenseMapping(st.info.layer.K, st.info.layer.M, p, *t,
                                  why))
        return st.kernel.emitOpError() << "does not fit: " << why;
    FailureOr<wc::ChainMapping> mapping = replicate(program, net, p, *t);
    if (failed(mapping))
      return failure();

    auto precisionAttr = wf::PrecisionAttr::get(ctx, wc::toFabric(p));
    for (auto [st, placed] : llvm::zip(graph->stages, mapping->kernels)) {
      wf::KernelOp k = st.kernel;
      k.setRectAttr(
          common::RectAttr::get(ctx, placed.x0, 0, placed.width, placed.rows));
      k.setSmear(placed.width / placed.tiles);
      if (placed.tiles > 1)
        k.setTiles(placed.tiles);
      // A convolution narrower than the rows entering it merges their
      // lanes, inRows / S per column (docs/execution-model.md, "Merged
      // lanes").
      if (int64_t inRows = mapping->streamRows[size_t(st.inputs[0])];
          st.info.layer.kind == wc::ChainLayer::Kind::Conv &&
          placed.tiles == 1 && inRows > placed.width)
        k.setMerge(inRows / placed.width);
      // (Fused frustum groups run in fp32 whatever the network's
      // precision.)
      const wc::ChainLayer &l = st.info.layer;
      bool fp32Only =
          l.kind == wc::ChainLayer::Kind::Conv && !l.frustum.empty();
      k.setPrecisionAttr(
          fp32Only ? wf::PrecisionAttr::get(ctx, wf::Precision::fp32)
                   : precisionAttr);
      k.setPredictedCycles(placed.predictedCycles);
      // Bands of output columns: the part of the prediction beyond the
      // busiest band's work, what the bands wait on their shared lanes.
      int64_t wait = 0;
      if (placed.tiles > 1 && !fp32Only &&
          l.kind == wc::ChainLayer::Kind::Conv && !l.conv.grouped()) {
        wc::DenseMapping bm;
        bm.smear = placed.width / placed.tiles;
        bm.rows = placed.rows;
        bm.tiles = placed.tiles;
        bm.precision = p;
        wait = wc::convBandsLaneWait(l.conv, bm);
      } else if (placed.tiles > 1 && l.kind == wc::ChainLayer::Kind::Pool) {
        wait = wc::poolBandsLaneWait(l.pool, placed.rows, placed.tiles);
      }
      if (wait > 0)
        k.setLaneWaitCycles(wait);
      LDBG() << "@" << k.getSymName() << ": " << st.info.layer.K << " -> "
             << st.info.layer.M << " on " << placed.width << " x "
             << placed.rows << " PEs at (" << placed.x0 << ", 0), footprint "
             << placed.footprint << " rows, " << placed.predictedCycles
             << " cycles per sample, " << placed.memoryPerPE
             << " bytes per PE";
      ++numPartitioned;
    }
    decideJoins(*graph, *mapping, *t);
    for (wf::IoOp io : graph->inputs) {
      io.setFirstRow(0);
      io.setEndRow(mapping->streamRows[size_t(graph->streamOf(io))]);
    }
    for (wf::IoOp io : graph->outputs) {
      io.setFirstRow(0);
      io.setEndRow(mapping->streamRows[size_t(graph->streamOf(io))]);
    }
    bottleneck = mapping->bottleneckCycles;
    if (auto c = program->getAttrOfType<IntegerAttr>("weft.replica_columns"))
      tileColumns(program, c.getInt(), std::max<int64_t>(1, mapping->width));
    return success();
  }
};

} // namespace
