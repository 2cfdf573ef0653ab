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
    std::optional<wc::SparseMode> mode =
        wc::parseSparseMode(sparseActivations);
    if (!mode) {
      getOperation().emitError("sparse-activations must be off, auto or on, "
                               "not '")
          << sparseActivations << "'";
      return signalPassFailure();
    }
    if (!(density >= 0.0 && density <= 1.0)) {
      getOperation().emitError("density must be between 0 and 1, not ")
          << density.getValue();
      return signalPassFailure();
    }
    if (!(inputDensity >= 0.0 && inputDensity <= 1.0)) {
      getOperation().emitError("input-density must be between 0 and 1, not ")
          << inputDensity.getValue();
      return signalPassFailure();
    }
    for (const std::string &entry : densities) {
      auto [node, value] = StringRef(entry).rsplit('=');
      double d;
      if (node.empty() || value.getAsDouble(d) || !(d >= 0.0 && d <= 1.0)) {
        getOperation().emitError("densities entry '")
            << entry << "' is not NODE=D with D between 0 and 1";
        return signalPassFailure();
      }
      measured[node] = d;
    }
    for (auto program : getOperation().getOps<wf::ProgramOp>())
      if (!program.getTrainingAttr() && failed(select(program, *mode)))
        return signalPassFailure();
  }

  LogicalResult select(wf::ProgramOp program, wc::SparseMode mode);

  /// The measured density of what `kernel` sends: that of its last ONNX
  /// node (the last name in its location), if measured.
  std::optional<double> measuredDensity(Operation *kernel) const {
    std::string last;
    kernel->getLoc()->walk([&](Location l) {
      if (auto name = dyn_cast<NameLoc>(l))
        last = name.getName().str();
      return WalkResult::advance();
    });
    auto it = measured.find(last);
    if (last.empty() || it == measured.end())
      return std::nullopt;
    return it->second;
  }

  llvm::StringMap<double> measured;
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
      wc::SparseDecision d = wc::decideSparseInput(mode, inputDensity, cs);
      if (explain)
        op.emitRemark(d.sparse ? "sparse" : "stays dense")
            << ": a host input at density "
            << llvm::formatv("{0:f3}", double(inputDensity)).str()
            << "; predicted cycles per sample of @" << c.kernel.getSymName()
            << " " << d.consumerDense << " dense, " << d.consumerSparse
            << " sparse; wavelets " << d.denseWavelets << " -> "
            << d.sparseWavelets;
      if (!d.sparse)
        continue;
      io[i].in = true;
      io[i].inDensity = inputDensity;
      op.setSparseAttr(inputMark);
      ++numSparse;
      continue;
    }
    size_t pi = size_t(gs.producer);
    const wc::Stage &p = graph->stages[pi];
    wc::SparseLayerShape ps{p.layer.K, p.layer.M, p.m, !p.layer.bias.empty(),
                            io[pi]};
    wc::SparseLayerShape cs{c.layer.K, c.layer.M, c.m, !c.layer.bias.empty(),
                            io[i]};
    std::optional<double> m = measuredDensity(p.kernel);
    double expected = m ? *m : double(density);
    wc::SparseDecision d = wc::decideSparseStream(mode, expected, ps, cs);
    if (explain)
      op.emitRemark(d.sparse ? "sparse" : "stays dense")
          << ": at density "
          << llvm::formatv("{0:f3}", expected).str()
          << (m ? " (measured)" : " (expected)")
          << ", predicted cycles per sample " << d.denseCycles << " dense, "
          << d.sparseCycles << " sparse (@" << c.kernel.getSymName() << " "
          << d.consumerDense << " -> " << d.consumerSparse << "); wavelets "
          << d.denseWavelets << " -> " << d.sparseWavelets;
    if (!d.sparse)
      continue;
    io[pi].out = true;
    io[i].in = true;
    io[i].inDensity = expected;
    op.setSparseAttr(
        m ? wf::SparseAttr::get(program.getContext(), expected) : mark);
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
