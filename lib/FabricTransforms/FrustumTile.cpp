//===- FrustumTile.cpp - Record frustum groups and tiles ------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-frustum-tile: finds chains of convolution and pooling kernels in an
// unplaced fabric.program, forms frustum groups over them with the kernel
// library (lib/Kernels/Frustum.cpp) and records each member's group, level
// and tile (docs/frustum.md). No later stage reads the record yet.
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricOps.h"
#include "weft/FabricTransforms/Graph.h"
#include "weft/FabricTransforms/Passes.h"
#include "weft/Kernels/Frustum.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

namespace weft {
#define GEN_PASS_DEF_FRUSTUMTILE
#include "weft/FabricTransforms/Passes.h.inc"
} // namespace weft

using namespace mlir;
using namespace weft;
namespace wf = weft::fabric;
namespace wc = weft::conversion;
using wc::ChainLayer;

namespace {

/// The frustum layer of a smeared (not grouped) convolution or a pooling
/// stage; std::nullopt for anything else.
std::optional<wc::FrustumLayer> frustumLayer(const wc::Stage &st) {
  const ChainLayer &l = st.info.layer;
  wc::FrustumLayer f;
  if (l.kind == ChainLayer::Kind::Conv && !l.conv.grouped()) {
    const wc::ConvShape &c = l.conv;
    f.cin = c.cin, f.hin = c.hin, f.win = c.win, f.cout = c.cout;
    f.kh = c.kh, f.kw = c.kw, f.sh = c.sh, f.sw = c.sw, f.dh = c.dh,
    f.dw = c.dw;
    f.pt = c.pt, f.pl = c.pl, f.pb = c.pb, f.pr = c.pr;
    return f;
  }
  if (l.kind == ChainLayer::Kind::Pool) {
    const wc::PoolShape &p = l.pool;
    f.pool = true;
    f.cin = f.cout = p.c, f.hin = p.hin, f.win = p.win;
    f.kh = p.kh, f.kw = p.kw, f.sh = p.sh, f.sw = p.sw, f.dh = p.dh,
    f.dw = p.dw;
    f.pt = p.pt, f.pl = p.pl, f.pb = p.padBottom(), f.pr = p.padRight();
    return f;
  }
  return std::nullopt;
}

struct FrustumTile : weft::impl::FrustumTileBase<FrustumTile> {
  using Base::Base;

  void runOnOperation() override {
    if (side < 1 || (elementBytes != 2 && elementBytes != 4) ||
        codeInstructions < 0 || maxTile < 0) {
      getOperation().emitError()
          << "--weft-frustum-tile needs side >= 1, element-bytes 2 or 4 and "
             "code-instructions >= 0 (got side = "
          << int64_t(side) << ", element-bytes = " << int64_t(elementBytes)
          << ", code-instructions = " << int64_t(codeInstructions) << ")";
      return signalPassFailure();
    }
    for (auto program : getOperation().getOps<wf::ProgramOp>())
      if (failed(tile(program)))
        return signalPassFailure();
  }

  LogicalResult tile(wf::ProgramOp program);
};

LogicalResult FrustumTile::tile(wf::ProgramOp program) {
  FailureOr<wc::Graph> g =
      wc::analyzeGraph(program, /*placed=*/false, /*withData=*/false);
  if (failed(g))
    return failure();
  wc::FrustumBudget budget =
      wc::frustumBudget(program.getModel(), codeInstructions, elementBytes);

  // Chains: a layer continues the chain when it reads, alone, the stream of
  // the previous layer, whose only reader it is.
  std::vector<std::vector<size_t>> chains;
  std::vector<int64_t> chainOf(g->stages.size(), -1);
  for (auto [i, st] : llvm::enumerate(g->stages)) {
    if (!frustumLayer(st) || st.inputs.size() != 1)
      continue;
    const wc::GraphStream &in = g->streams[size_t(st.inputs[0])];
    bool continues = in.producer >= 0 && chainOf[size_t(in.producer)] >= 0 &&
                     in.consumers.size() == 1 && in.outputs.empty() &&
                     chains[size_t(chainOf[size_t(in.producer)])].back() ==
                         size_t(in.producer);
    if (continues) {
      chainOf[i] = chainOf[size_t(in.producer)];
      chains[size_t(chainOf[i])].push_back(i);
    } else {
      chainOf[i] = int64_t(chains.size());
      chains.push_back({i});
    }
  }

  OpBuilder b(program.getContext());
  int64_t groupId = 0;
  for (const std::vector<size_t> &chain : chains) {
    if (chain.size() < 2)
      continue;
    std::vector<wc::ChainLink> links;
    for (size_t s : chain)
      links.push_back({*frustumLayer(g->stages[s]), -1, std::nullopt});
    auto groups = wc::formGroups(links, side, budget);
    if (groups.empty()) {
      std::string why;
      wc::largestTile(wc::chainGroup(links, 0, 1), side, budget, &why);
      g->stages[chain[0]].kernel.emitRemark()
          << "starts a chain of " << chain.size()
          << " layers with no frustum group: " << why;
      continue;
    }
    for (auto [first, last] : groups) {
      wc::FrustumGroup fg = wc::chainGroup(links, first, last);
      std::optional<wc::FrustumTiling> t = wc::largestTile(fg, side, budget);
      // A smaller tile fits whenever a larger one does.
      if (maxTile > 0)
        t->th = std::min<int64_t>(t->th, maxTile),
        t->tw = std::min<int64_t>(t->tw, maxTile);
      for (size_t l = first; l <= last; ++l) {
        NamedAttribute fields[] = {
            b.getNamedAttr("group", b.getI64IntegerAttr(groupId)),
            b.getNamedAttr("level", b.getI64IntegerAttr(int64_t(l - first))),
            b.getNamedAttr("side", b.getI64IntegerAttr(side)),
            b.getNamedAttr("tile", b.getDenseI64ArrayAttr({t->th, t->tw}))};
        g->stages[chain[l]].kernel->setAttr("frustum",
                                            b.getDictionaryAttr(fields));
      }
      ++groupId;
      ++numGroups;
    }
  }
  return success();
}

} // namespace
