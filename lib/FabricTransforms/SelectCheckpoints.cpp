//===- SelectCheckpoints.cpp - Reverse-checkpoint selection ---------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-select-checkpoints: describes each trained kernel of a placed
// training program to the algorithm of weft/Kernels/Checkpoints.h (its
// fullest PE with and without its stored input, the cycles of recomputing
// it) and records the choice on the kernels (docs/training.md, "Reverse
// checkpoints").
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricOps.h"
#include "weft/FabricTransforms/Graph.h"
#include "weft/FabricTransforms/Passes.h"
#include "weft/Kernels/Checkpoints.h"
#include "weft/Kernels/ConvTraining.h"
#include "weft/Kernels/Chunks.h"
#include "weft/Kernels/DenseTraining.h"

#include "mlir/IR/Builders.h"

namespace weft {
#define GEN_PASS_DEF_SELECTCHECKPOINTS
#include "weft/FabricTransforms/Passes.h.inc"
} // namespace weft

using namespace mlir;
using namespace weft;
namespace wf = weft::fabric;
namespace wc = weft::conversion;

namespace {

struct SelectCheckpointsPass
    : weft::impl::SelectCheckpointsBase<SelectCheckpointsPass> {
  using SelectCheckpointsBase::SelectCheckpointsBase;

  void runOnOperation() override {
    wc::CheckpointPolicy p;
    std::string error;
    if (!wc::CheckpointPolicy::parse(policy, p, error)) {
      getOperation().emitError(error);
      return signalPassFailure();
    }
    for (auto program : getOperation().getOps<wf::ProgramOp>())
      if (program.getTrainingAttr() && failed(select(program, p)))
        return signalPassFailure();
  }

  LogicalResult select(wf::ProgramOp program, const wc::CheckpointPolicy &p);
};

LogicalResult SelectCheckpointsPass::select(wf::ProgramOp program,
                                            const wc::CheckpointPolicy &p) {
  machine::Target target = program.getModel();
  const int64_t memory = int64_t(target.memoryBytes());
  const int64_t budget = peMemory > 0 ? int64_t(peMemory) : memory;
  if (budget > memory)
    return program.emitOpError("cannot give a PE ")
           << budget << " bytes (pe-memory): the target's PEs have " << memory;
  FailureOr<wc::Graph> graph = wc::analyzeGraph(program, /*placed=*/true);
  if (failed(graph))
    return failure();
  wf::TrainingAttr training = program.getTrainingAttr();
  // Under CPGD the layer before has updated its weights between a sample's
  // forward and its backward pass, so no input is recomputed: every layer
  // keeps its ring (docs/training.md, "CPGD").
  const bool cpgd = training.getOptimizer() == wf::Optimizer::cpgd;
  // A pipelined MBGD keeps its inputs in rings too: no kernel recomputes.
  const bool pipelined =
      cpgd || (training.getOptimizer() == wf::Optimizer::mbgd &&
               training.getSamples() > 0);

  // The chain's nodes: the trained kernels in order, then the loss column.
  std::vector<wc::CheckpointNode> nodes;
  std::vector<wf::KernelOp> kernels; // the dense ones; null for columns
  const wc::Stage *prev = nullptr;
  for (const wc::Stage &s : graph->stages) {
    wf::KernelOp k = s.kernel;
    const wc::Stage *before = prev;
    prev = &s;
    if (!k.getTrained())
      continue;
    wc::CheckpointNode n;
    n.name = k.getSymName().str();
    if (s.dense && s.layer.conv) {
      // A trained convolution keeps its input rows; nothing recomputes
      // them yet (docs/training.md, "Convolutions").
      n.inputLiveUntilBackward = true;
      n.fixedBytes = wc::trainedConvBytes(*s.layer.conv, s.m,
                                          wc::denseTrainingOf(k));
    } else if (s.dense) {
      wc::DenseTraining t = wc::denseTrainingOf(k);
      t.storesInput = true;
      const bool bias = !s.layer.bias.empty();
      // The input is rebuilt by the dense kernel before, whose own input is
      // still in its memory then (dx overwrites it only later).
      n.mayDrop = !pipelined && t.inputGradient && before && before->dense &&
                  !before->layer.conv &&
                  wf::KernelOp(before->kernel).getTrained();
      n.inputLiveUntilBackward = true;
      n.activationBytes = n.mayDrop
                              ? wc::trainedDenseInputBytes(
                                    s.layer.K, s.layer.M, bias, s.layer.relu,
                                    s.m, t)
                              : 0;
      n.fixedBytes = wc::trainedDenseBytes(s.layer.K, s.layer.M, bias,
                                           s.layer.relu, s.m, t) -
                     n.activationBytes;
      n.forwardCycles = wc::trainedDenseForwardCycles(s.layer.K, s.layer.M,
                                                      bias, s.layer.relu, s.m);
      n.receiveCycles = wc::trainedDenseReceiveCycles(s.layer.K, s.m);
    } else if (s.pool) {
      // A trained max pool keeps its input and output rows.
      n.fixedBytes = wc::trainedPoolBytes(s.info.layer.pool, s.height);
    } else if (s.join) {
      // A residual block's Add keeps both inputs, y and dL/dy.
      n.fixedBytes =
          wc::trainedJoinBytes(wc::chunkSize(s.outN, s.height, 0),
                               s.info.layer.mapRows);
    } else {
      // A Relu or Tanh column keeps y for its backward step.
      n.fixedBytes = wc::trainedColumnBytes(
          wc::chunkSize(s.outN, s.height, 0), /*loss=*/false,
          k.getLag().value_or(0));
    }
    nodes.push_back(n);
    kernels.push_back(s.dense ? k : wf::KernelOp());
  }
  if (!graph->stages.empty()) {
    const wc::Stage &last = graph->stages.back();
    wc::CheckpointNode loss;
    loss.name = "loss";
    loss.fixedBytes = wc::trainedColumnBytes(
        wc::chunkSize(last.outN, last.outRows, 0), /*loss=*/true,
        pipelined ? 1 : 0);
    nodes.push_back(loss);
  }

  wc::CheckpointPlan plan;
  std::string error;
  if (!wc::selectCheckpoints(nodes, budget, p, plan, error))
    return emitError(program.getLoc(), "cannot train within ")
           << budget << " bytes per PE with checkpoints " << p.str() << ": "
           << error;
  for (size_t i = 0; i < kernels.size(); ++i) {
    wf::KernelOp k = kernels[i];
    if (!k)
      continue;
    k.setCheckpoint(plan.store[i] ? wf::CheckpointPolicy::save
                                  : wf::CheckpointPolicy::recompute);
    if (plan.store[i]) {
      k.removeRecomputeCyclesAttr();
    } else {
      k.setRecomputeCycles(plan.recomputeCycles[i]);
      ++numRecomputed;
    }
  }
  return success();
}

} // namespace
