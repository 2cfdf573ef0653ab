//===- FrustumFuse.cpp - Fuse recorded frustum groups into one kernel -----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-frustum-fuse: reads the groups --weft-frustum-tile recorded and
// replaces each group of plain convolutions and max pools that can run fused
// (lib/Kernels/FrustumChain.cpp), or an identity residual block of them with
// its add, by one kernel carrying its members' schemes (docs/frustum.md,
// "The lowering", "Residual blocks in bands"). The decision is the record's:
// the pass re-derives nothing, it only refuses what the lowering cannot run.
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricOps.h"
#include "weft/FabricTransforms/KernelScheme.h"
#include "weft/FabricTransforms/Passes.h"
#include "weft/Kernels/ChainPartition.h"
#include "weft/Kernels/FrustumChain.h"
#include "weft/Kernels/PoolMapping.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <limits>
#include <map>

namespace weft {
#define GEN_PASS_DEF_FRUSTUMFUSE
#include "weft/FabricTransforms/Passes.h.inc"
} // namespace weft

using namespace mlir;
using namespace weft;
namespace wf = weft::fabric;
namespace wc = weft::conversion;

namespace {

/// The most bands the partitioner tabulates (lib/Kernels/PartitionSearch.h).
constexpr int64_t kMostBands = 32;

struct FrustumFuse : weft::impl::FrustumFuseBase<FrustumFuse> {
  using Base::Base;

  void runOnOperation() override {
    for (auto program : getOperation().getOps<wf::ProgramOp>())
      if (failed(fuse(program)))
        return signalPassFailure();
  }

  LogicalResult fuse(wf::ProgramOp program);
  /// Why `members` cannot run fused, or an empty string; `add`, when
  /// set, closes an identity residual block around them.
  std::string problem(ArrayRef<wf::KernelOp> members, wf::KernelOp add,
                      int64_t memoryBytes);
  /// Why the tile pass's decision for `members` keeps them per layer, or
  /// an empty string.
  std::string decided(ArrayRef<wf::KernelOp> members);
  void merge(wf::ProgramOp program, ArrayRef<wf::KernelOp> members,
             wf::KernelOp add);
};

/// The cycles per sample a group must not exceed: the network's per
/// layer when the group was weighed at the network's pace, else its own
/// layers'.
static int64_t paceOf(DictionaryAttr record) {
  if (auto network = record.getAs<IntegerAttr>("network_cycles"))
    return network.getInt();
  return record.getAs<IntegerAttr>("per_layer_cycles").getInt();
}

std::string FrustumFuse::decided(ArrayRef<wf::KernelOp> members) {
  auto record = members.front()->getAttrOfType<DictionaryAttr>("frustum");
  if (always)
    return "";
  int64_t overlap = record.getAs<IntegerAttr>("overlap_cycles").getInt(),
          exchange = record.getAs<IntegerAttr>("exchange_cycles").getInt(),
          perLayer = paceOf(record);
  bool exchangeChosen = record.getAs<StringAttr>("halo").getValue() != "overlap";
  int64_t chosen = exchangeChosen ? exchange : overlap;
  const char *against =
      record.get("network_cycles") ? "the network per layer" : "per layer";
  // The decision's own sentence when it recorded one.
  if (auto reason = record.getAs<StringAttr>("reason");
      reason && !record.getAs<BoolAttr>("chosen").getValue())
    return reason.str();
  if (!record.getAs<BoolAttr>("chosen").getValue())
    return chosen > perLayer
               ? "the cost model predicts its tiles slower than " +
                     std::string(against) + " (" + std::to_string(chosen) +
                     " against " + std::to_string(perLayer) +
                     " cycles per sample)"
           : record.get("network_cycles")
               ? "beside its " +
                     std::to_string(record.getAs<IntegerAttr>("pes").getInt()) +
                     " PEs of tiles, the rest of the network is predicted "
                     "slower than the network per layer, or does not fit"
               : "its tiles need " +
                     std::to_string(record.getAs<IntegerAttr>("pes").getInt()) +
                     " PEs, more than the fabric has";
  // Exchanging halos is not lowered yet: overlap, where it is no slower
  // than per layer either.
  if (exchangeChosen && overlap > perLayer)
    return "the cost model chose to exchange its halos (" +
           std::to_string(exchange) +
           " cycles per sample), which is not "
           "lowered yet, and overlapping them is predicted slower than " +
           std::string(against) + " (" + std::to_string(overlap) + " against " +
           std::to_string(perLayer) + ")";
  if (exchangeChosen)
    wf::KernelOp(members.front()).emitRemark()
        << "frustum group " << record.getAs<IntegerAttr>("group").getInt()
        << " overlaps its halos (" << overlap
        << " cycles per sample): exchanging them (" << exchange
        << ") is not lowered yet";
  return "";
}

std::string FrustumFuse::problem(ArrayRef<wf::KernelOp> members,
                                 wf::KernelOp add, int64_t memoryBytes) {
  SmallVector<Attribute> schemes;
  for (wf::KernelOp k : members) {
    if (k->hasAttr(wc::kFrustumChainAttr))
      return "its member @" + k.getSymName().str() + " is fused already";
    schemes.push_back(k.getScheme());
  }
  // An identity residual block: its add, last, must add the block's last
  // layer and its input (what the first member reads).
  if (add) {
    auto sourcesOf = [&](wf::KernelOp k) {
      std::map<int64_t, std::pair<std::string, int64_t>> in;
      for (wf::StreamOp s :
           k->getParentOp()->getRegion(0).front().getOps<wf::StreamOp>())
        for (auto [d, port] : llvm::zip(s.getDsts(), s.getDstPorts()))
          if (cast<FlatSymbolRefAttr>(d).getValue() == k.getSymName())
            in[port] = {s.getSrc().str(), int64_t(s.getSrcPort())};
      return in;
    };
    auto addIn = sourcesOf(add),
         firstIn = sourcesOf(wf::KernelOp(members.front()));
    wf::KernelOp last = members.back();
    std::pair<std::string, int64_t> fromLast = {last.getSymName().str(), 0};
    if (addIn.size() != 2 || !firstIn.count(0) ||
        !((addIn[0] == fromLast && addIn[1] == firstIn[0]) ||
          (addIn[1] == fromLast && addIn[0] == firstIn[0])))
      return "its add @" + add.getSymName().str() +
             " does not add the block's last layer and its input";
    schemes.push_back(add.getScheme());
  }
  std::string why;
  std::optional<std::vector<wc::ConvShape>> levels =
      wc::frustumLevels(schemes, why);
  if (!levels)
    return "its " + why;
  const std::vector<wc::ConvShape> &shapes = *levels;
  auto record = members.front()->getAttrOfType<DictionaryAttr>("frustum");
  auto side = record.getAs<IntegerAttr>("side");
  auto tile = record.getAs<DenseI64ArrayAttr>("tile");
  if (!side || !tile || tile.size() != 2)
    return "its record has no side and tile = [th, tw]";
  if (side.getInt() != 1)
    return "a tile on " + std::to_string(side.getInt()) + " x " +
           std::to_string(side.getInt()) +
           " PEs is not lowered yet (only side = 1)";
  why = wc::frustumChainProblem(shapes);
  if (!why.empty())
    return why;
  // The bands the partitioner places it in (its tile's, rounded to a
  // tabulated number), what the decision weighed.
  const int64_t tileBands = wc::frustumBandsForTile(shapes, tile[1]);
  const int64_t bands = wc::placedFrustumBands(shapes, tileBands, memoryBytes);
  if (!bands) {
    why = wc::frustumMappingProblem(shapes, tileBands, memoryBytes);
    return why.empty()
               ? "no tabulated number of bands near its " +
                     std::to_string(tileBands) + " tile columns (at most " +
                     std::to_string(kMostBands) + ") fits"
               : why;
  }
  if (always)
    return "";
  // The lowering's bands are not the decision's tiles: never slower than
  // the per-layer figure the decision weighed them against.
  int64_t perLayer = paceOf(record);
  int64_t fused = wc::predictFrustumCycles(shapes, bands);
  if (fused > perLayer)
    return "it is predicted slower fused (" + std::to_string(fused) +
           " cycles per sample in " + std::to_string(bands) + " bands) than " +
           (record.get("network_cycles") ? "the network per layer ("
                                         : "per layer (") +
           std::to_string(perLayer) + ")";
  return "";
}

void FrustumFuse::merge(wf::ProgramOp program, ArrayRef<wf::KernelOp> members,
                        wf::KernelOp add) {
  wf::KernelOp first = members.front(), last = members.back();
  MLIRContext *ctx = program.getContext();
  SmallVector<Attribute> schemes;
  for (wf::KernelOp k : members)
    schemes.push_back(k.getScheme());
  // A residual block's add closes the chain: its scheme last.
  if (add)
    schemes.push_back(add.getScheme());

  // The body: the members' bodies in order, each reading the previous
  // one's result.
  Block &body = first.getBody().front();
  for (wf::KernelOp k : members.drop_front()) {
    auto yield = cast<wf::YieldOp>(body.getTerminator());
    IRMapping map;
    map.map(k.getBody().front().getArgument(0), yield.getOperand(0));
    OpBuilder b(yield);
    Operation *newYield = nullptr;
    for (Operation &op : k.getBody().front())
      newYield = b.clone(op, map);
    yield.erase();
    (void)newYield;
  }
  if (add) {
    // The add's body: the chain's result on the port the last member
    // feeds, the block's input (the first member's) on the other.
    auto yield = cast<wf::YieldOp>(body.getTerminator());
    int64_t mainPort = 0;
    for (wf::StreamOp s : program.getBody().front().getOps<wf::StreamOp>())
      if (s.getSrc() == last.getSymName())
        for (auto [d, port] : llvm::zip(s.getDsts(), s.getDstPorts()))
          if (cast<FlatSymbolRefAttr>(d).getValue() == add.getSymName())
            mainPort = port;
    Block &addBody = add.getBody().front();
    IRMapping map;
    map.map(addBody.getArgument(unsigned(mainPort)), yield.getOperand(0));
    map.map(addBody.getArgument(unsigned(1 - mainPort)), body.getArgument(0));
    OpBuilder b(yield);
    for (Operation &op : addBody)
      b.clone(op, map);
    yield.erase();
    last = add;
  }
  first.setFunctionTypeAttr(TypeAttr::get(FunctionType::get(
      ctx, first.getFunctionType().getInputs(),
      last.getFunctionType().getResults())));
  first->setAttr(wc::kFrustumChainAttr, ArrayAttr::get(ctx, schemes));

  // The streams: those between members go, the group's output now leaves
  // the first member.
  llvm::SmallDenseSet<StringRef> inner;
  for (wf::KernelOp k : members.drop_front())
    inner.insert(k.getSymName());
  if (add)
    inner.insert(add.getSymName());
  for (wf::StreamOp s :
       llvm::make_early_inc_range(program.getBody().front().getOps<wf::StreamOp>())) {
    if (s.getSrc() == last.getSymName()) {
      s.setSrcAttr(FlatSymbolRefAttr::get(first.getSymNameAttr()));
      continue;
    }
    // A stream into members goes; the block's input, a fork into the
    // first member and the add, keeps only its other readers.
    SmallVector<Attribute> dsts;
    SmallVector<int64_t> ports;
    for (auto [d, port] : llvm::zip(s.getDsts(), s.getDstPorts()))
      if (!inner.contains(cast<FlatSymbolRefAttr>(d).getValue())) {
        dsts.push_back(d);
        ports.push_back(port);
      }
    if (dsts.size() == s.getDsts().size())
      continue;
    if (dsts.empty()) {
      s.erase();
      continue;
    }
    s.setDstsAttr(ArrayAttr::get(ctx, dsts));
    s.setDstPorts(ports);
  }
  for (wf::KernelOp k : members.drop_front())
    k.erase();
  if (add)
    add.erase();
}

LogicalResult FrustumFuse::fuse(wf::ProgramOp program) {
  // The groups, their members by level, and a residual group's add and
  // projection (recorded with their role instead of a level).
  std::map<int64_t, std::map<int64_t, wf::KernelOp>> groups;
  std::map<int64_t, SmallVector<wf::KernelOp>> roles;
  for (wf::KernelOp k : program.getBody().front().getOps<wf::KernelOp>()) {
    auto record = k->getAttrOfType<DictionaryAttr>("frustum");
    if (!record)
      continue;
    auto group = record.getAs<IntegerAttr>("group");
    auto level = record.getAs<IntegerAttr>("level");
    auto role = record.getAs<StringAttr>("role");
    if (group && !level && role &&
        (role.getValue() == "add" || role.getValue() == "projection")) {
      roles[group.getInt()].push_back(k);
      continue;
    }
    if (!group || !level)
      return k.emitOpError()
             << "has a frustum record without group and level (or the role "
                "add or projection): "
             << record;
    if (!record.getAs<BoolAttr>("chosen") || !record.getAs<StringAttr>("halo") ||
        !record.getAs<IntegerAttr>("overlap_cycles") ||
        !record.getAs<IntegerAttr>("exchange_cycles") ||
        !record.getAs<IntegerAttr>("per_layer_cycles") ||
        !record.getAs<IntegerAttr>("pes"))
      return k.emitOpError()
             << "has a frustum record without the decision of "
                "--weft-frustum-tile (chosen, halo, overlap_cycles, "
                "exchange_cycles, per_layer_cycles, pes): "
             << record;
    if (!groups[group.getInt()].emplace(level.getInt(), k).second)
      return k.emitOpError() << "shares level " << level.getInt()
                             << " of frustum group " << group.getInt();
  }
  const int64_t memoryBytes = program.getModel().memoryBytes();
  for (auto &[id, byLevel] : groups) {
    SmallVector<wf::KernelOp> members;
    for (auto &[level, k] : byLevel) {
      if (level != int64_t(members.size()))
        return k.emitOpError() << "is level " << level << " of frustum group "
                               << id << ", which has no level "
                               << members.size();
      members.push_back(k);
    }
    const SmallVector<wf::KernelOp> &extra = roles[id];
    // An identity residual block (its add alone beside the levels) runs in
    // bands as a chain whose top level adds the skip; a projection is not
    // lowered yet.
    wf::KernelOp add;
    std::string why;
    if (extra.size() == 1 && extra[0]->getAttrOfType<DictionaryAttr>("frustum")
                                     .getAs<StringAttr>("role")
                                     .getValue() == "add")
      add = extra[0];
    if (extra.empty() || add) {
      why = decided(members);
      if (why.empty())
        why = problem(members, add, memoryBytes);
    } else {
      why = "it is a residual block with a projection";
      for (wf::KernelOp k : extra)
        if (k->getAttrOfType<DictionaryAttr>("frustum")
                .getAs<StringAttr>("role")
                .getValue() == "projection")
          why += " (@" + k.getSymName().str() + ")";
      why += ", which is not lowered yet (identity blocks are)";
    }
    if (!why.empty()) {
      wf::KernelOp(members.front()).emitRemark()
          << "starts frustum group " << id << ", which runs per layer: "
          << why;
      // Per layer is the decision: no later stage sees the record.
      for (wf::KernelOp k : members)
        k->removeAttr("frustum");
      for (wf::KernelOp k : extra)
        k->removeAttr("frustum");
      continue;
    }
    merge(program, members, add);
    ++numFused;
  }
  return success();
}

} // namespace
