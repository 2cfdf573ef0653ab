//===- SelectSparseStreams.cpp - Which streams go sparse ------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-select-sparse-streams: describes every eligible stream between two
// dense layers of a placed program to the cost model of
// weft/Kernels/SparseActivations.h and marks the ones it chooses
// `sparse = #fabric.sparse<density = D>` (docs/execution-model.md, "Sparse
// activations"). The lowering reads the marks.
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricOps.h"
#include "weft/FabricTransforms/Densities.h"
#include "weft/FabricTransforms/Graph.h"
#include "weft/FabricTransforms/Passes.h"
#include "weft/Kernels/SparseActivations.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

namespace weft {
#define GEN_PASS_DEF_SELECTSPARSESTREAMS
#include "weft/FabricTransforms/Passes.h.inc"
} // namespace weft

using namespace mlir;
using namespace weft;
namespace wf = weft::fabric;
namespace wc = weft::conversion;

namespace {

struct SelectSparseStreamsPass
    : weft::impl::SelectSparseStreamsBase<SelectSparseStreamsPass> {
  using SelectSparseStreamsBase::SelectSparseStreamsBase;

  void runOnOperation() override {
    FailureOr<wc::SparseMode> mode = wc::parseSparseOptions(
        getOperation(), sparseActivations, density, inputDensity);
    if (failed(mode))
      return signalPassFailure();
    if (failed(parseDensities(densities, "densities", measured)) ||
        failed(parseDensities(inputDensities, "input-densities",
                              measuredInputs)))
      return signalPassFailure();
    for (auto program : getOperation().getOps<wf::ProgramOp>())
      if (!program.getTrainingAttr() && failed(select(program, *mode)))
        return signalPassFailure();
  }

  LogicalResult select(wf::ProgramOp program, wc::SparseMode mode);

  LogicalResult parseDensities(ArrayRef<std::string> entries, StringRef option,
                               llvm::StringMap<wc::ExpectedDensity> &out) {
    return wc::parseDensities(getOperation(), entries, option, out);
  }
  const wc::ExpectedDensity *measuredDensity(Operation *kernel) const {
    return wc::measuredDensity(kernel, measured);
  }

  /// How a remark names the density the decision used.
  static std::string describe(const wc::ExpectedDensity &d, const char *how,
                              const wc::SparseIo &consumer) {
    std::string s = llvm::formatv("{0:f3}", d.mean).str() + " (" + how;
    if (!consumer.chunkDensity.empty())
      s += llvm::formatv(", per element; the densest column chunk {0:f3}",
                         *llvm::max_element(consumer.chunkDensity))
               .str();
    return s + ")";
  }

  llvm::StringMap<wc::ExpectedDensity> measured, measuredInputs;
};

LogicalResult SelectSparseStreamsPass::select(wf::ProgramOp program,
                                              wc::SparseMode mode) {
  // Marks already present are replaced; the layers they made sparse get
  // their dense prediction back unless the new decision keeps them sparse.
  llvm::SmallPtrSet<Operation *, 8> wasSparse;
  for (auto s : program.getBody().front().getOps<wf::StreamOp>())
    if (s.getSparseAttr()) {
      wasSparse.insert(s);
      s.removeSparseAttr();
    }
  FailureOr<wc::Graph> graph =
      wc::analyzeGraph(program, /*placed=*/true);
  if (failed(graph))
    return failure();
  auto mark = wf::SparseAttr::get(program.getContext(), density);
  auto inputMark = wf::SparseAttr::get(program.getContext(), inputDensity);
  // Producers first: a layer's sparse input changes its cost as a producer.
  std::vector<wc::SparseIo> io(graph->stages.size());
  for (auto [i, c] : llvm::enumerate(graph->stages)) {
    if (!c.dense || c.layer.conv)
      continue;
    const wc::GraphStream &gs = graph->streams[size_t(c.inputs[0])];
    wf::StreamOp op = gs.op;
    std::string why = wc::sparseIneligible(*graph, c);
    if (!why.empty()) {
      if (explain && op)
        op.emitRemark("stays dense: ") << why;
      continue;
    }
    if (mode == wc::SparseMode::Off)
      continue;
    if (gs.producer < 0) {
      // A host input: the host sends only its non-zero values.
      wc::SparseLayerShape cs{c.layer.K, c.layer.M, c.m,
                              !c.layer.bias.empty(), io[i]};
      wf::IoOp input = gs.input;
      auto it = input ? measuredInputs.find(input.getSymName())
                      : measuredInputs.end();
      bool m = it != measuredInputs.end();
      wc::ExpectedDensity expected =
          m ? it->second : wc::ExpectedDensity(inputDensity);
      wc::SparseDecision d = wc::decideSparseInput(mode, expected, cs);
      if (explain)
        op.emitRemark(d.sparse ? "sparse" : "stays dense")
            << ": a host input at density "
            << describe(expected, m ? "measured" : "expected", d.consumerIo)
            << "; predicted cycles per sample of @" << c.kernel.getSymName()
            << " " << d.consumerDense << " dense, " << d.consumerSparse
            << " sparse; wavelets " << d.denseWavelets << " -> "
            << d.sparseWavelets;
      if (!d.sparse)
        continue;
      io[i] = d.consumerIo;
      op.setSparseAttr(
          m ? wf::SparseAttr::get(program.getContext(), expected.mean)
            : inputMark);
      ++numSparse;
      continue;
    }
    size_t pi = size_t(gs.producer);
    const wc::Stage &p = graph->stages[pi];
    wc::SparseLayerShape ps{p.layer.K, p.layer.M, p.m, !p.layer.bias.empty(),
                            io[pi]};
    wc::SparseLayerShape cs{c.layer.K, c.layer.M, c.m, !c.layer.bias.empty(),
                            io[i]};
    const wc::ExpectedDensity *m = measuredDensity(p.kernel);
    wc::ExpectedDensity expected = m ? *m : wc::ExpectedDensity(density);
    wc::SparseDecision d = wc::decideSparseStream(mode, expected, ps, cs);
    if (explain)
      op.emitRemark(d.sparse ? "sparse" : "stays dense")
          << ": at density "
          << describe(expected, m ? "measured" : "expected", d.consumerIo)
          << ", predicted cycles per sample " << d.denseCycles << " dense, "
          << d.sparseCycles << " sparse (@" << c.kernel.getSymName() << " "
          << d.consumerDense << " -> " << d.consumerSparse << "); wavelets "
          << d.denseWavelets << " -> " << d.sparseWavelets;
    if (!d.sparse)
      continue;
    io[pi].out = true;
    io[i] = d.consumerIo;
    op.setSparseAttr(
        m ? wf::SparseAttr::get(program.getContext(), expected.mean) : mark);
    ++numSparse;
  }
  // The layers whose input or output went sparse cost what the model says
  // for their new form: their predictions follow the decision.
  auto was = [&](int64_t stream) {
    return stream >= 0 && graph->streams[size_t(stream)].op &&
           wasSparse.contains(graph->streams[size_t(stream)].op);
  };
  for (auto [i, c] : llvm::enumerate(graph->stages))
    if (c.dense && !c.layer.conv &&
        (io[i].in || io[i].out || (!c.inputs.empty() && was(c.inputs[0])) ||
         was(c.output)))
      wf::KernelOp(c.kernel).setPredictedCycles(wc::predictCyclesPerSample(
          c.layer.K, c.layer.M, c.m, !c.layer.bias.empty(), io[i]));
  return success();
}

} // namespace
