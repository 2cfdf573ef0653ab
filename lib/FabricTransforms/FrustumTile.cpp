//===- FrustumTile.cpp - Record frustum groups and tiles ------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-frustum-tile: finds chains of convolution and pooling kernels in an
// unplaced fabric.program, forms frustum groups over them with the kernel
// library (lib/Kernels/Frustum.cpp) and records each member's group, level
// and tile (docs/frustum.md); a residual block (an add of a run of layers'
// output and their input, or a projection of it) is one group, its add and
// projection recorded as members with their role. It also decides each
// group with the cost model: the halo policy, the tile, and whether the
// group runs fused, weighed against the network per layer as the
// partitioner lays it out (lib/Kernels/FrustumNetwork.cpp; `pace=group`:
// against its own layers, lib/Kernels/Frustum.cpp); --weft-frustum-fuse
// reads the record.
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricOps.h"
#include "weft/FabricTransforms/Graph.h"
#include "weft/FabricTransforms/Passes.h"
#include "weft/Kernels/Frustum.h"
#include "weft/Kernels/FrustumChain.h"
#include "weft/Kernels/FrustumNetwork.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

#include <map>
#include <set>

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

/// A residual block (docs/frustum.md, "Residual blocks"): layers `body`
/// (each reading the previous one's output, its only reader) from stream
/// `x`, whose last output an add `join` sums with `x` itself or with the
/// output of `projection` (a convolution of `x` that only the add reads).
struct Block {
  std::vector<size_t> body;
  size_t join = 0;
  int64_t projection = -1;
  int64_t x = -1;
};

/// The residual blocks of `g`: every add of two feature maps one of which
/// leads back through a run of frustum layers to the stream the other is
/// (or is a projection of).
std::vector<Block> residualBlocks(const wc::Graph &g) {
  std::vector<Block> blocks;
  auto onlyReader = [&](int64_t stream, size_t reader) {
    const wc::GraphStream &s = g.streams[size_t(stream)];
    return s.outputs.empty() && s.consumers.size() == 1 &&
           size_t(s.consumers[0].first) == reader;
  };
  for (auto [j, st] : llvm::enumerate(g.stages)) {
    if (!st.join || st.joinKind != wf::JoinKind::add ||
        st.info.layer.broadcast || st.inputs.size() != 2)
      continue;
    for (int p = 0; p < 2; ++p) {
      Block blk;
      blk.join = j;
      const int64_t main = st.inputs[size_t(p)], skip = st.inputs[size_t(1 - p)];
      int64_t last = g.streams[size_t(main)].producer;
      if (last < 0 || !frustumLayer(g.stages[size_t(last)]) ||
          !onlyReader(main, j))
        continue;
      blk.x = skip;
      int64_t proj = g.streams[size_t(skip)].producer;
      if (proj >= 0 && g.stages[size_t(proj)].info.layer.kind ==
                           ChainLayer::Kind::Conv &&
          frustumLayer(g.stages[size_t(proj)]) &&
          g.stages[size_t(proj)].inputs.size() == 1 && onlyReader(skip, j)) {
        // A projection unless the walk back reaches `skip` itself.
        blk.projection = proj;
        blk.x = g.stages[size_t(proj)].inputs[0];
      }
      // Back from the add's main input to a layer that reads x (or, for a
      // projection read as identity, the skip itself).
      auto walk = [&](int64_t x) {
        std::vector<size_t> body;
        int64_t cur = last;
        for (size_t steps = 0; steps < g.stages.size(); ++steps) {
          const wc::Stage &c = g.stages[size_t(cur)];
          if (!frustumLayer(c) || c.inputs.size() != 1)
            return std::vector<size_t>();
          body.insert(body.begin(), size_t(cur));
          if (c.inputs[0] == x)
            return body;
          int64_t prev = g.streams[size_t(c.inputs[0])].producer;
          if (prev < 0 || !onlyReader(c.inputs[0], size_t(cur)))
            return std::vector<size_t>();
          cur = prev;
        }
        return std::vector<size_t>();
      };
      blk.body = walk(blk.x);
      if (blk.body.empty() && blk.projection >= 0) {
        blk.projection = -1;
        blk.x = skip;
        blk.body = walk(skip);
      }
      if (blk.body.empty())
        continue;
      blocks.push_back(std::move(blk));
      break;
    }
  }
  return blocks;
}

struct FrustumTile : weft::impl::FrustumTileBase<FrustumTile> {
  using Base::Base;

  void runOnOperation() override {
    if (precision != "fp32" && precision != "mixed") {
      getOperation().emitError() << "--weft-frustum-tile: precision must be "
                                    "fp32 or mixed, not '"
                                 << precision << "'";
      return signalPassFailure();
    }
    if (pace != "network" && pace != "group") {
      getOperation().emitError() << "--weft-frustum-tile: pace must be "
                                    "network or group, not '"
                                 << pace << "'";
      return signalPassFailure();
    }
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
  // A training program runs every kernel per layer: the trained kernels'
  // lowering (docs/training.md) has no fused frustum group.
  if (program.getTrainingAttr())
    return success();
  FailureOr<wc::Graph> g =
      wc::analyzeGraph(program, /*placed=*/false, /*withData=*/false);
  if (failed(g))
    return failure();
  wc::FrustumBudget budget =
      wc::frustumBudget(program.getModel(), codeInstructions, elementBytes);
  const int64_t width = program.getModel().width(),
                height = program.getModel().height(),
                memoryBytes = program.getModel().memoryBytes();

  const std::vector<Block> blocks = residualBlocks(*g);
  // Stages that close a block (its add and projection) are not layers of a
  // chain: they ride on the block's last layer.
  std::map<size_t, size_t> blockOfFirst, blockOfLast;
  std::set<size_t> closing;
  for (auto [b, blk] : llvm::enumerate(blocks)) {
    blockOfFirst[blk.body.front()] = b;
    blockOfLast[blk.body.back()] = b;
    closing.insert(blk.join);
    if (blk.projection >= 0)
      closing.insert(size_t(blk.projection));
  }

  // Chains: a layer continues a chain when it reads the chain's tail stream
  // (the last layer's output, or the add closing its block), alone or with
  // only its own block's add and projection beside it, and the stream is no
  // host output.
  struct Chain {
    std::vector<size_t> stages;
    std::vector<wc::ChainLink> links;
    /// The block each link closes (-1: none).
    std::vector<int64_t> closes;
    int64_t tail = -1;
  };
  std::vector<Chain> chains;
  for (auto [i, st] : llvm::enumerate(g->stages)) {
    std::optional<wc::FrustumLayer> layer = frustumLayer(st);
    if (!layer || st.inputs.size() != 1 || closing.count(i))
      continue;
    const int64_t inId = st.inputs[0];
    const wc::GraphStream &in = g->streams[size_t(inId)];
    auto first = blockOfFirst.find(i);
    bool alone = in.outputs.empty() &&
                 llvm::all_of(in.consumers, [&](const auto &c) {
                   size_t k = size_t(c.first);
                   if (k == i)
                     return true;
                   if (first == blockOfFirst.end())
                     return false;
                   const Block &blk = blocks[first->second];
                   return k == blk.join || int64_t(k) == blk.projection;
                 });
    Chain *chain = nullptr;
    for (Chain &c : chains)
      if (c.tail == inId && alone)
        chain = &c;
    if (!chain) {
      chains.emplace_back();
      chain = &chains.back();
    }
    wc::ChainLink link{*layer, -1, std::nullopt};
    int64_t closes = -1;
    chain->tail = st.output;
    if (auto last = blockOfLast.find(i); last != blockOfLast.end()) {
      const Block &blk = blocks[last->second];
      // The block's first layer is in this chain (the layers between
      // read each other alone) unless it started before a break.
      auto at = llvm::find(chain->stages, blk.body.front());
      if (at != chain->stages.end() || blk.body.front() == i) {
        link.skipFrom = at != chain->stages.end()
                            ? int64_t(at - chain->stages.begin())
                            : int64_t(chain->stages.size());
        if (blk.projection >= 0)
          link.projection = frustumLayer(g->stages[size_t(blk.projection)]);
        closes = int64_t(last->second);
        chain->tail = g->stages[blk.join].output;
      }
    }
    chain->stages.push_back(i);
    chain->links.push_back(link);
    chain->closes.push_back(closes);
  }

  // Every group of every chain, with what it is weighed against.
  struct Candidate {
    wc::NetworkFrustumGroup group;
    /// The members to record: the layers with their level, then a
    /// residual block's add and projection with their role.
    std::vector<std::pair<Operation *, NamedAttribute>> members;
  };
  OpBuilder b(program.getContext());
  std::vector<Candidate> candidates;
  const wc::Precision perLayerPrecision =
      precision == "mixed" ? wc::Precision::Mixed : wc::Precision::FP32;
  for (const Chain &chain : chains) {
    const std::vector<wc::ChainLink> &links = chain.links;
    if (links.size() < 2)
      continue;
    auto groups = wc::formGroups(links, side, budget);
    if (groups.empty()) {
      std::string why;
      wc::largestTile(wc::chainGroup(links, 0, 1), side, budget, &why);
      g->stages[chain.stages[0]].kernel.emitRemark()
          << "starts a chain of " << links.size()
          << " layers with no frustum group: " << why;
      continue;
    }
    for (auto [first, last] : groups) {
      Candidate c;
      wc::NetworkFrustumGroup &ng = c.group;
      ng.group = wc::chainGroup(links, first, last);
      std::optional<wc::FrustumTiling> t =
          wc::largestTile(ng.group, side, budget);
      // A smaller tile fits whenever a larger one does.
      if (maxTile > 0 && (t->th > maxTile || t->tw > maxTile))
        t = wc::tilingOf(ng.group, std::min<int64_t>(t->th, maxTile),
                         std::min<int64_t>(t->tw, maxTile), side, elementBytes);
      ng.bound = *t;
      // The layers per layer, each on its fastest rectangle of the whole
      // fabric (the pipeline runs at the slowest).
      auto perLayer = [&](size_t stage) {
        const ChainLayer &l = g->stages[stage].info.layer;
        ng.base.cycles.push_back(
            l.kind == ChainLayer::Kind::Pool
                ? wc::fastestPoolCycles(l.pool, height, memoryBytes)
                : wc::fastestConvCycles(l.conv, width, height, memoryBytes,
                                        perLayerPrecision));
        ng.kernels.push_back(stage);
      };
      for (size_t l = first; l <= last; ++l) {
        perLayer(chain.stages[l]);
        c.members.push_back(
            {g->stages[chain.stages[l]].kernel,
             b.getNamedAttr("level", b.getI64IntegerAttr(int64_t(l - first)))});
      }
      // A residual group: its add (the top level's closeout) and its
      // projection are members too.
      if (ng.group.residual) {
        const Block &blk = blocks[size_t(chain.closes[last])];
        if (blk.projection >= 0)
          perLayer(size_t(blk.projection));
        ng.kernels.push_back(blk.join);
        c.members.push_back({g->stages[blk.join].kernel,
                             b.getNamedAttr("role", b.getStringAttr("add"))});
        if (blk.projection >= 0)
          c.members.push_back(
              {g->stages[size_t(blk.projection)].kernel,
               b.getNamedAttr("role", b.getStringAttr("projection"))});
      }
      // A chain of plain convolutions and max pools on one PE a tile runs
      // as the band lowering, and so does an identity residual block (its
      // top level adds the skip): it is weighed as that fused kernel.
      if (side == 1 && !ng.group.projection) {
        SmallVector<Attribute> schemes;
        for (size_t l = first; l <= last; ++l)
          schemes.push_back(g->stages[chain.stages[l]].kernel.getScheme());
        if (ng.group.residual)
          schemes.push_back(g->stages[blocks[size_t(chain.closes[last])].join]
                                .kernel.getScheme());
        std::string why;
        if (std::optional<std::vector<wc::ConvShape>> levels =
                wc::frustumLevels(schemes, why);
            levels && wc::frustumChainProblem(*levels).empty())
          ng.lowered = std::move(*levels);
      }
      candidates.push_back(std::move(c));
    }
  }
  if (candidates.empty())
    return success();

  // The decisions: at the network's pace (the partitioner's figures for
  // the network per layer and for the rest of it beside the groups'
  // tiles), or each group against its own layers.
  std::vector<wc::FrustumDecision> decisions;
  if (pace == "network") {
    wc::NetworkShape net = wc::networkShapeOf(*g);
    net.mergeLanes = mergeLanes;
    std::vector<wc::NetworkFrustumGroup> groups;
    for (const Candidate &c : candidates)
      groups.push_back(c.group);
    std::string why;
    if (std::optional<wc::NetworkFrustumPlan> plan =
            wc::decideNetworkFrustums(net, groups, perLayerPrecision,
                                      program.getModel(), elementBytes, why)) {
      decisions = std::move(plan->decisions);
    } else {
      program.emitRemark()
          << "frustum groups are weighed against their own layers: the "
             "network per layer does not fit the fabric ("
          << why << ")";
    }
  }
  if (decisions.empty())
    for (const Candidate &c : candidates)
      decisions.push_back(wc::decideFastestFrustum(c.group.group, c.group.base,
                                                   c.group.bound, elementBytes,
                                                   width * height));

  for (auto [groupId, c, d] : llvm::enumerate(candidates, decisions)) {
    const wc::FrustumTiling &t = *d.tiling, &bound = c.group.bound;
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("group", b.getI64IntegerAttr(int64_t(groupId))),
        b.getNamedAttr("side", b.getI64IntegerAttr(side)),
        b.getNamedAttr("tile", b.getDenseI64ArrayAttr({t.th, t.tw})),
        b.getNamedAttr("max_tile",
                       b.getDenseI64ArrayAttr({bound.th, bound.tw})),
        b.getNamedAttr("chosen", b.getBoolAttr(d.chosen)),
        b.getNamedAttr("halo", b.getStringAttr(wc::haloPolicyName(d.policy))),
        b.getNamedAttr("overlap_cycles", b.getI64IntegerAttr(d.overlap.cycles)),
        b.getNamedAttr("exchange_cycles",
                       b.getI64IntegerAttr(d.exchange.cycles)),
        b.getNamedAttr("per_layer_cycles",
                       b.getI64IntegerAttr(d.perLayer.cycles)),
        b.getNamedAttr("hops", b.getI64IntegerAttr(d.frustum.hops)),
        b.getNamedAttr("per_layer_hops", b.getI64IntegerAttr(d.perLayer.hops)),
        b.getNamedAttr("pes", b.getI64IntegerAttr(d.frustum.pes))};
    // The figure the group was held to: the network per layer, and the
    // network with the group fused.
    if (d.networkCycles > 0)
      fields.push_back(b.getNamedAttr("network_cycles",
                                      b.getI64IntegerAttr(d.networkCycles)));
    if (!d.chosen && !d.reason.empty())
      fields.push_back(b.getNamedAttr("reason", b.getStringAttr(d.reason)));
    if (d.chosen && d.fusedNetworkCycles > 0)
      fields.push_back(b.getNamedAttr(
          "fused_network_cycles", b.getI64IntegerAttr(d.fusedNetworkCycles)));
    for (auto &[k, place] : c.members) {
      SmallVector<NamedAttribute> all(fields);
      all.push_back(place);
      k->setAttr("frustum", b.getDictionaryAttr(all));
    }
    ++numGroups;
  }
  return success();
}

} // namespace
