//===- SelectSlicedWeights.cpp - Which dense layers slice their weights ---===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-select-sliced-weights: for every placed inference dense kernel,
// packs its weights as the lowering would (weft/Kernels/SparseWeights.h)
// and marks `sliced_weights` on the ones it chooses
// (docs/execution-model.md, "Sparse weights"). The lowering reads the mark.
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricOps.h"
#include "weft/FabricTransforms/Graph.h"
#include "weft/FabricTransforms/Passes.h"
#include "weft/Kernels/SparseWeights.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/FormatVariadic.h"

namespace weft {
#define GEN_PASS_DEF_SELECTSLICEDWEIGHTS
#include "weft/FabricTransforms/Passes.h.inc"
} // namespace weft

using namespace mlir;
using namespace weft;
namespace wf = weft::fabric;
namespace wc = weft::conversion;

namespace {

struct SelectSlicedWeightsPass
    : weft::impl::SelectSlicedWeightsBase<SelectSlicedWeightsPass> {
  using SelectSlicedWeightsBase::SelectSlicedWeightsBase;

  void runOnOperation() override {
    std::optional<wc::SparseMode> mode = wc::parseSparseMode(sparseWeights);
    if (!mode) {
      getOperation().emitError("sparse-weights must be off, auto or on, not '")
          << sparseWeights << "'";
      return signalPassFailure();
    }
    for (auto program : getOperation().getOps<wf::ProgramOp>())
      if (!program.getTrainingAttr() && failed(select(program, *mode)))
        return signalPassFailure();
  }

  LogicalResult select(wf::ProgramOp program, wc::SparseMode mode);
};

LogicalResult SelectSlicedWeightsPass::select(wf::ProgramOp program,
                                              wc::SparseMode mode) {
  // Marks already present are replaced, and their saving given back to
  // the prediction first (so the pass can run again).
  llvm::SmallPtrSet<Operation *, 8> wasSliced;
  for (auto k : program.getBody().front().getOps<wf::KernelOp>())
    if (k.getSlicedWeights()) {
      wasSliced.insert(k);
      k.removeSlicedWeightsAttr();
    }
  if (mode == wc::SparseMode::Off && !explain && wasSliced.empty())
    return success();
  FailureOr<wc::Graph> graph = wc::analyzeGraph(program, /*placed=*/true);
  if (failed(graph))
    return failure();
  const int64_t memory = int64_t(program.getModel().memoryBytes());
  for (const wc::Stage &s : graph->stages) {
    if (!s.dense || s.layer.conv || !s.layer.frustum.empty())
      continue;
    wf::KernelOp kernel = s.kernel;
    wc::SlicedWeightsEstimate e =
        wc::estimateSlicedWeights(s.layer.weights, s.layer.K, s.layer.M, s.m);
    bool sliced = wc::decideSlicedWeights(mode, e, memory);
    // The input's density: a sparse input's zeros start no task.
    double inDensity = 1.0;
    if (wf::StreamOp in = graph->streams[size_t(s.inputs[0])].op)
      if (wf::SparseAttr mark = in.getSparseAttr())
        inDensity = mark.getDensity().convertToDouble();
    int64_t saved = wc::slicedCyclesSaved(
        e, s.m.precision == wc::Precision::Mixed, inDensity);
    if (std::optional<int64_t> cycles = kernel.getPredictedCycles()) {
      int64_t base = *cycles + (wasSliced.contains(kernel) ? saved : 0);
      kernel.setPredictedCycles(sliced ? base - saved : base);
    }
    if (mode == wc::SparseMode::On && !sliced)
      return kernel.emitOpError()
             << "cannot store its weights sliced (--sparse-weights=on): its "
                "busiest PE would need "
             << e.slicedBytes << " bytes (" << e.denseBytes
             << " dense) of the " << memory << " a PE has";
    if (explain) {
      double saving =
          e.denseReadFj ? 1.0 - double(e.slicedReadFj) / double(e.denseReadFj)
                        : 0.0;
      kernel.emitRemark(sliced ? "sliced weights" : "dense weights")
          << ": " << e.zeros << " of " << e.weights
          << " weights are zero; weight reads "
          << llvm::formatv("{0:f1}", double(e.denseReadFj) / 1e3).str()
          << " pJ dense, "
          << llvm::formatv("{0:f1}", double(e.slicedReadFj) / 1e3).str()
          << " pJ sliced ("
          << llvm::formatv("{0:f1}", 100.0 * saving).str()
          << " % less); MAC groups " << e.denseGroups << " -> "
          << e.slicedGroups << " (busiest PE " << e.maxPeDenseGroups << " -> "
          << e.maxPeSlicedGroups << "); busiest PE " << e.denseBytes << " -> "
          << e.slicedBytes << " bytes of " << memory;
    }
    if (!sliced)
      continue;
    kernel.setSlicedWeights(true);
    ++numSliced;
  }
  return success();
}

} // namespace
