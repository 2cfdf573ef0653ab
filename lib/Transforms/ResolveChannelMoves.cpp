//===- ResolveChannelMoves.cpp - Channel shuffles and splits --------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-resolve-channel-moves: a channel shuffle (Reshape [N, g, C/g, ...],
// Transpose, Reshape back) and a channel split (Split or Slice along axis 1)
// move and select channels of feature maps, nothing else. Every channel of
// such a tensor is a channel of a computed feature map (a source): the pass
// follows concats, shuffles and slices along the channels to that map, and
// rewrites the ops that read the moved channels so that they read the
// sources directly:
//
//   - an op that reads every channel into every output (a convolution)
//     reads the concat of the sources' channel ranges in one canonical
//     order, its weights' input channels gathered into that order (a
//     permutation is free; --weft-split-concat-products then splits it into
//     one convolution per range, summed by joins);
//   - an op that works channel by channel (a constant spatial pad, a
//     pooling, a depthwise convolution, an elementwise op of the map alone)
//     runs once per range, its per-channel constants gathered, and its
//     result is again a moved tensor whose channels are those of the
//     per-range results.
//
// A range that is not a whole source is cut from its producer by output
// channels: a convolution computes only those channels (its weight rows and
// bias cut), an op that works channel by channel computes them from the same
// range of its input. A cut map that something still reads whole (another
// op than the moves) is read as the concat of its ranges, the gaps cut too.
// Every channel is computed once and no weight is zero, except where
// ranges overlap (a warning) or a cut map is also a graph output
// (docs/execution-model.md, "Channel shuffles and splits").
//
//===----------------------------------------------------------------------===//

#include "weft/Transforms/ChannelOps.h"
#include "weft/Transforms/ConstantData.h"
#include "weft/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

#include <map>
#include <tuple>

namespace weft {
#define GEN_PASS_DEF_RESOLVECHANNELMOVES
#include "weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace {

/// A channel of a source feature map.
using Channel = std::pair<Value, int64_t>;

/// What each channel of a tensor is; `moved` when it is not the tensor
/// itself or a plain concat of whole tensors (which
/// --weft-split-concat-products handles).
struct ChannelMap {
  SmallVector<Channel> channels;
  bool moved = false;
};

/// Channels [c0, c1) of `src`, read at positions `positions` (position of
/// channel c0 + i is positions[i]) of a moved tensor.
struct Range {
  Value src;
  int64_t c0 = 0, c1 = 0;
  SmallVector<int64_t> positions;
};

/// "node 'x' (tensor.concat)": how errors name an imported op.
std::string describeOp(Operation *op) {
  std::string name;
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations())
      if (isa<NameLoc>(l)) {
        loc = l;
        break;
      }
  if (auto n = dyn_cast<NameLoc>(loc))
    name = n.getName().str();
  std::string s = name.empty() ? "" : "node '" + name + "' ";
  return s + "(" + op->getName().getStringRef().str() + ")";
}

/// A static feature map [N, C, spatial...].
bool isFeatureMap(Type t) {
  auto type = dyn_cast<RankedTensorType>(t);
  return type && type.getRank() >= 3 && type.hasStaticShape();
}

RankedTensorType withChannels(RankedTensorType type, int64_t channels) {
  SmallVector<int64_t> shape(type.getShape());
  shape[1] = channels;
  return RankedTensorType::get(shape, type.getElementType());
}

/// The f32 values of a constant `v`, or failure.
FailureOr<SmallVector<float>> constantValues(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  auto attr = cst ? dyn_cast<ElementsAttr>(cst.getValue()) : ElementsAttr();
  if (!attr)
    return failure();
  std::string why;
  return weft::readF32(attr, why);
}

/// The constant `v` [outer..., C, inner...] (C along dimension `dim`) with
/// its channels gathered: channel i of the result is `channels[i]` of `v`.
FailureOr<Value> gatherConstant(OpBuilder &b, Location loc, Value v, int dim,
                                ArrayRef<int64_t> channels) {
  FailureOr<SmallVector<float>> values = constantValues(v);
  if (failed(values))
    return failure();
  auto type = cast<RankedTensorType>(v.getType());
  int64_t C = type.getDimSize(dim);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d)
    outer *= type.getDimSize(d);
  for (int d = dim + 1; d < type.getRank(); ++d)
    inner *= type.getDimSize(d);
  SmallVector<float> out;
  out.reserve(size_t(outer * int64_t(channels.size()) * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c : channels)
      for (int64_t i = 0; i < inner; ++i)
        out.push_back((*values)[size_t((o * C + c) * inner + i)]);
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = int64_t(channels.size());
  return Value(arith::ConstantOp::create(
      b, loc,
      weft::makeF32(RankedTensorType::get(shape, type.getElementType()), out,
                    "channel_moves")));
}

/// An accumulator or init `v` [N, C, ...] with its channels gathered: an
/// empty tensor, a fill of an empty tensor or a constant.
FailureOr<Value> gatherInit(OpBuilder &b, Location loc, Value v,
                            ArrayRef<int64_t> channels) {
  auto type = withChannels(cast<RankedTensorType>(v.getType()),
                           int64_t(channels.size()));
  if (v.getDefiningOp<tensor::EmptyOp>())
    return Value(tensor::EmptyOp::create(b, loc, type.getShape(),
                                         type.getElementType()));
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    if (!fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
      return failure();
    Value empty =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    return linalg::FillOp::create(b, loc, fill.getInputs(), ValueRange{empty})
        .getResult(0);
  }
  return gatherConstant(b, loc, v, 1, channels);
}

/// Whether `op` works channel by channel on its operand 0; `weight` is set
/// to the operand gathered along dimension 0 with the channels (a depthwise
/// convolution's [C, k...]), or -1.
bool isChannelwise(Operation *op, int &weight) {
  weight = -1;
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    if (!pad.getConstantPaddingValue() || !isFeatureMap(pad.getType()))
      return false;
    for (ArrayRef<int64_t> side : {pad.getStaticLow(), pad.getStaticHigh()})
      if (llvm::any_of(side, ShapedType::isDynamic) || side[0] || side[1])
        return false;
    return true;
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.hasPureTensorSemantics() &&
         op->getNumResults() == 1 &&
         isFeatureMap(op->getResult(0).getType()) &&
         weft::isChannelwiseLinalgOp(op, weight);
}

/// A convolution that reads every input channel into every output channel
/// (input 0 [N, C, ...], weight 1 [F, C, k...], init 2 [N, F, ...]).
bool isConvolution(Operation *op) {
  return isa<linalg::Conv2DNchwFchwOp, linalg::Conv1DNcwFcwOp>(op) &&
         cast<linalg::LinalgOp>(op).hasPureTensorSemantics();
}

/// The channel shuffle that ends in `collapse`: collapse_shape [[0], [1, 2],
/// [3], ...] of a transpose [0, 2, 1, 3, ...] of an expand_shape [[0],
/// [1, 2], [3], ...] of a feature map; its input and its number of groups.
std::optional<std::pair<Value, int64_t>>
matchShuffle(tensor::CollapseShapeOp collapse) {
  auto isChannelPair = [](ArrayRef<ReassociationIndices> groups) {
    if (groups.size() < 3 || groups[0].size() != 1 || groups[1].size() != 2)
      return false;
    for (size_t i = 2; i < groups.size(); ++i)
      if (groups[i].size() != 1)
        return false;
    return true;
  };
  if (!isFeatureMap(collapse.getType()) ||
      !isChannelPair(collapse.getReassociationIndices()))
    return std::nullopt;
  auto transpose = collapse.getSrc().getDefiningOp<linalg::TransposeOp>();
  if (!transpose || !transpose->hasOneUse())
    return std::nullopt;
  ArrayRef<int64_t> perm = transpose.getPermutation();
  for (int64_t i = 0, e = int64_t(perm.size()); i < e; ++i)
    if (perm[i] != (i == 1 ? 2 : i == 2 ? 1 : i))
      return std::nullopt;
  auto expand = transpose.getInput().getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand || !expand->hasOneUse() || !isFeatureMap(expand.getSrcType()) ||
      !isChannelPair(expand.getReassociationIndices()) ||
      !expand.getResultType().hasStaticShape())
    return std::nullopt;
  return std::make_pair(expand.getSrc(), expand.getResultType().getDimSize(1));
}

/// Whether `op` is the expand_shape or transpose inside a channel shuffle.
bool isInsideShuffle(Operation *op) {
  Operation *next = op;
  for (int i = 0; i < 2 && next && next->hasOneUse(); ++i) {
    next = *next->user_begin();
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(next))
      return matchShuffle(collapse).has_value();
  }
  return false;
}

class Resolver {
public:
  explicit Resolver(func::FuncOp fn) : fn(fn) {}

  LogicalResult run();
  int64_t numRewritten = 0;

private:
  /// The channels of `v`: its map, or `v` itself channel by channel.
  ChannelMap mapOf(Value v) const;
  /// Records the map of the result of a concat, a channel slice or a
  /// shuffle; false when `op` is none of those.
  bool recordMove(Operation *op);
  /// The ranges of the sources a moved tensor is made of, ordered by
  /// source (first appearance) and channel; fails when a channel is read
  /// twice.
  FailureOr<SmallVector<Range>> rangesOf(Operation *user,
                                         const ChannelMap &map);
  /// Channels [c0, c1) of `src` as a tensor of their own.
  FailureOr<Value> materialize(OpBuilder &b, Operation *user, Value src,
                               int64_t c0, int64_t c1);
  /// A copy of the channel by channel op `op` computing its channels
  /// `channels` from `input` (those channels of its input).
  FailureOr<Value> cloneChannels(OpBuilder &b, Operation *op, Value input,
                                 ArrayRef<int64_t> channels);
  LogicalResult rewriteUser(Operation *op, Value moved);

  func::FuncOp fn;
  DenseMap<Value, ChannelMap> maps;
  /// Erases what the moves and the cut producers leave behind.
  void eraseDead();
  /// A source that was cut and is still read whole elsewhere: that reader
  /// reads the concat of its ranges instead, so no channel is computed
  /// twice.
  LogicalResult readWholeFromRanges(Value src);

  std::map<std::tuple<void *, int64_t, int64_t>, Value> pieces;
  /// The ranges cut from each source, in the order they were cut.
  llvm::MapVector<Value, SmallVector<std::pair<int64_t, int64_t>>> cuts;
};

ChannelMap Resolver::mapOf(Value v) const {
  if (auto it = maps.find(v); it != maps.end())
    return it->second;
  ChannelMap m;
  int64_t C = cast<RankedTensorType>(v.getType()).getDimSize(1);
  for (int64_t c = 0; c < C; ++c)
    m.channels.push_back({v, c});
  return m;
}

bool Resolver::recordMove(Operation *op) {
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    if (concat.getDim() != 1 || !isFeatureMap(concat.getType()) ||
        !llvm::all_of(concat.getInputs(), [](Value v) {
          return isFeatureMap(v.getType()) && !matchPattern(v, m_Constant());
        }))
      return false;
    ChannelMap m;
    for (Value in : concat.getInputs()) {
      ChannelMap part = mapOf(in);
      m.moved |= part.moved;
      m.channels.append(part.channels);
    }
    maps[concat.getResult()] = std::move(m);
    return true;
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    auto srcType = slice.getSourceType();
    if (!isFeatureMap(srcType) || !isFeatureMap(slice.getType()) ||
        slice.getType().getRank() != srcType.getRank() ||
        !slice.hasUnitStride())
      return false;
    ArrayRef<int64_t> offsets = slice.getStaticOffsets();
    ArrayRef<int64_t> sizes = slice.getStaticSizes();
    for (int64_t d = 0; d < srcType.getRank(); ++d)
      if (d != 1 && (offsets[d] != 0 || sizes[d] != srcType.getDimSize(d)))
        return false;
    if (ShapedType::isDynamic(offsets[1]))
      return false;
    ChannelMap src = mapOf(slice.getSource());
    ChannelMap m;
    m.moved = true;
    m.channels.assign(src.channels.begin() + offsets[1],
                      src.channels.begin() + offsets[1] + sizes[1]);
    maps[slice.getResult()] = std::move(m);
    return true;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    std::optional<std::pair<Value, int64_t>> shuffle = matchShuffle(collapse);
    if (!shuffle)
      return false;
    ChannelMap src = mapOf(shuffle->first);
    int64_t g = shuffle->second;
    int64_t n = int64_t(src.channels.size()) / g;
    // Channel j of the result is channel (j mod g) n + j / g of the input.
    ChannelMap m;
    m.moved = true;
    for (int64_t j = 0; j < g * n; ++j)
      m.channels.push_back(src.channels[size_t((j % g) * n + j / g)]);
    maps[collapse.getResult()] = std::move(m);
    return true;
  }
  return false;
}

FailureOr<SmallVector<Range>> Resolver::rangesOf(Operation *user,
                                                 const ChannelMap &map) {
  llvm::MapVector<Value, SmallVector<std::pair<int64_t, int64_t>>> bySource;
  for (auto [pos, ch] : llvm::enumerate(map.channels))
    bySource[ch.first].push_back({ch.second, int64_t(pos)});
  SmallVector<Range> ranges;
  for (auto &[src, chans] : bySource) {
    llvm::sort(chans);
    for (size_t i = 0; i < chans.size(); ++i) {
      if (i && chans[i].first == chans[i - 1].first)
        return user->emitError()
               << describeOp(user) << ": reads channel " << chans[i].first
               << " of a feature map twice through channel moves; weft maps "
                  "a channel read once";
      if (i && chans[i].first == chans[i - 1].first + 1) {
        ranges.back().c1 = chans[i].first + 1;
        ranges.back().positions.push_back(chans[i].second);
        continue;
      }
      ranges.push_back(
          {src, chans[i].first, chans[i].first + 1, {chans[i].second}});
    }
  }
  return ranges;
}

FailureOr<Value> Resolver::cloneChannels(OpBuilder &b, Operation *op,
                                         Value input,
                                         ArrayRef<int64_t> channels) {
  int weight = -1;
  isChannelwise(op, weight);
  Location loc = op->getLoc();
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  // The gathered constants first: the copy reads them.
  Value w, acc;
  if (weight >= 0) {
    FailureOr<Value> g =
        gatherConstant(b, loc, op->getOperand(weight), 0, channels);
    if (failed(g))
      return op->emitError() << describeOp(op)
                             << ": reads moved channels with weights that "
                                "are not constant";
    w = *g;
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (linalgOp) {
    FailureOr<Value> g = gatherInit(
        b, loc, op->getOperand(linalgOp.getNumDpsInputs()), channels);
    if (failed(g))
      return op->emitError() << describeOp(op)
                             << ": reads moved channels into an accumulator "
                                "that is neither empty, a fill nor a "
                                "constant";
    acc = *g;
  }
  Operation *copy = b.clone(*op);
  copy->setOperand(0, input);
  if (w)
    copy->setOperand(weight, w);
  if (acc)
    copy->setOperand(linalgOp.getNumDpsInputs(), acc);
  copy->getResult(0).setType(withChannels(outType, int64_t(channels.size())));
  return copy->getResult(0);
}

FailureOr<Value> Resolver::materialize(OpBuilder &b, Operation *user, Value src,
                                       int64_t c0, int64_t c1) {
  auto type = cast<RankedTensorType>(src.getType());
  if (c0 == 0 && c1 == type.getDimSize(1))
    return src;
  auto key = std::make_tuple(src.getAsOpaquePointer(), c0, c1);
  if (auto it = pieces.find(key); it != pieces.end())
    return it->second;
  Operation *def = src.getDefiningOp();
  // The piece goes right after its producer, where every reader of the
  // producer sees it.
  OpBuilder::InsertionGuard guard(b);
  if (def)
    b.setInsertionPointAfter(def);
  SmallVector<int64_t> channels = llvm::to_vector(llvm::seq<int64_t>(c0, c1));
  FailureOr<Value> piece = failure();
  int weight = -1;
  if (def && isConvolution(def)) {
    // The convolution's output channels [c0, c1): its weight rows and its
    // accumulator's channels.
    Location loc = def->getLoc();
    FailureOr<Value> w =
        gatherConstant(b, loc, def->getOperand(1), 0, channels);
    FailureOr<Value> acc = gatherInit(b, loc, def->getOperand(2), channels);
    if (failed(w) || failed(acc))
      return user->emitError()
             << describeOp(user) << ": reads channels [" << c0 << ", " << c1
             << ") of " << describeOp(def)
             << ", whose weights or accumulator are not constant";
    Operation *copy = b.clone(*def);
    copy->setOperand(1, *w);
    copy->setOperand(2, *acc);
    copy->getResult(0).setType(withChannels(type, c1 - c0));
    piece = copy->getResult(0);
  } else if (def && isChannelwise(def, weight)) {
    FailureOr<Value> input = materialize(b, user, def->getOperand(0), c0, c1);
    if (failed(input))
      return failure();
    piece = cloneChannels(b, def, *input, channels);
  } else {
    InFlightDiagnostic d = user->emitError()
                           << describeOp(user) << ": reads channels [" << c0
                           << ", " << c1 << ") of a feature map of "
                           << type.getDimSize(1) << " channels made by ";
    if (def)
      d << describeOp(def);
    else
      d << "a graph input";
    d << "; weft cuts channel ranges only from convolutions and ops that "
         "work channel by channel";
    return failure();
  }
  if (failed(piece))
    return failure();
  pieces[key] = *piece;
  cuts[src].push_back({c0, c1});
  return piece;
}

LogicalResult Resolver::rewriteUser(Operation *op, Value moved) {
  ChannelMap map = maps.lookup(moved);
  int weight = -1;
  bool conv = isConvolution(op) && op->getOperand(0) == moved;
  bool channelwise = !conv && isChannelwise(op, weight) &&
                     op->getOperand(0) == moved &&
                     llvm::count(op->getOperands(), moved) == 1;
  if (!conv && !channelwise)
    return op->emitError()
           << describeOp(op)
           << ": reads channels moved by a channel shuffle or split; weft "
              "maps moved channels only into convolutions and ops that work "
              "channel by channel (pads, poolings, depthwise convolutions, "
              "elementwise ops), which read them from where they are made";
  FailureOr<SmallVector<Range>> ranges = rangesOf(op, map);
  if (failed(ranges))
    return failure();
  OpBuilder b(op);
  Location loc = op->getLoc();
  SmallVector<Value> parts;
  for (const Range &r : *ranges) {
    FailureOr<Value> piece = materialize(b, op, r.src, r.c0, r.c1);
    if (failed(piece))
      return failure();
    parts.push_back(*piece);
  }
  if (conv) {
    // Canonical channel j is position order[j] of the moved tensor.
    SmallVector<int64_t> order;
    for (const Range &r : *ranges)
      order.append(r.positions);
    FailureOr<Value> w = gatherConstant(b, loc, op->getOperand(1), 1, order);
    if (failed(w))
      return op->emitError() << describeOp(op)
                             << ": reads moved channels with weights that "
                                "are not constant";
    Value input = parts.front();
    if (parts.size() > 1)
      input = tensor::ConcatOp::create(b, loc, 1, parts);
    op->setOperand(0, input);
    op->setOperand(1, *w);
    ++numRewritten;
    return success();
  }
  // One copy of the op per range; the result's channels are theirs.
  ChannelMap result;
  result.moved = true;
  result.channels.resize(map.channels.size());
  for (auto [r, part] : llvm::zip(*ranges, parts)) {
    FailureOr<Value> out = cloneChannels(b, op, part, r.positions);
    if (failed(out))
      return failure();
    for (auto [i, pos] : llvm::enumerate(r.positions))
      result.channels[size_t(pos)] = {*out, int64_t(i)};
  }
  maps[op->getResult(0)] = std::move(result);
  ++numRewritten;
  return success();
}

LogicalResult Resolver::run() {
  for (Block &block : fn.getBody()) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      Value moved;
      for (Value v : op.getOperands())
        if (auto it = maps.find(v); it != maps.end() && it->second.moved) {
          moved = v;
          break;
        }
      if (recordMove(&op))
        continue;
      if (!moved)
        continue;
      if (isInsideShuffle(&op))
        continue;
      if (failed(rewriteUser(&op, moved)))
        return failure();
    }
  }
  eraseDead();
  // Iterate over a copy: covering a source may cut more ranges.
  SmallVector<Value> cutSources;
  for (auto &entry : cuts)
    cutSources.push_back(entry.first);
  for (Value src : cutSources)
    if (failed(readWholeFromRanges(src)))
      return failure();
  eraseDead();
  return success();
}

void Resolver::eraseDead() {
  for (Block &block : fn.getBody())
    for (Operation &op :
         llvm::make_early_inc_range(llvm::reverse(block.getOperations()))) {
      if (!isOpTriviallyDead(&op))
        continue;
      // Forget the values that go with it.
      for (Value v : op.getResults()) {
        cuts.erase(v);
        maps.erase(v);
      }
      void *result =
          op.getNumResults() ? op.getResult(0).getAsOpaquePointer() : nullptr;
      for (auto it = pieces.begin(); it != pieces.end();) {
        if (it->second.getDefiningOp() == &op ||
            std::get<0>(it->first) == result)
          it = pieces.erase(it);
        else
          ++it;
      }
      op.erase();
    }
}

LogicalResult Resolver::readWholeFromRanges(Value src) {
  // A graph output keeps the whole map (its channels are then computed
  // twice: by the producer and by the cuts).
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : src.getUses())
    if (!isa<func::ReturnOp>(use.getOwner()))
      uses.push_back(&use);
  if (uses.empty())
    return success();
  SmallVector<std::pair<int64_t, int64_t>> ranges = cuts.lookup(src);
  llvm::sort(ranges);
  ranges.erase(llvm::unique(ranges), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second) {
      // Overlapping ranges: the overlap is computed twice (correct, not
      // minimal); say so instead of hiding it.
      mlir::emitWarning(src.getLoc())
          << "channels [" << ranges[i].first << ", " << ranges[i - 1].second
          << ") of a feature map are read in overlapping ranges and computed "
             "twice";
      return success();
    }
  Operation *user = uses.front()->getOwner();
  int64_t C = cast<RankedTensorType>(src.getType()).getDimSize(1);
  OpBuilder b(user);
  SmallVector<Value> parts;
  int64_t c = 0;
  auto cover = [&](int64_t c0, int64_t c1) -> LogicalResult {
    FailureOr<Value> piece = materialize(b, user, src, c0, c1);
    if (failed(piece))
      return failure();
    parts.push_back(*piece);
    return success();
  };
  for (auto [c0, c1] : ranges) {
    if (c < c0 && failed(cover(c, c0)))
      return failure();
    if (failed(cover(c0, c1)))
      return failure();
    c = c1;
  }
  if (c < C && failed(cover(c, C)))
    return failure();
  // The concat right before each remaining reader (the pieces follow the
  // producer, so they come first).
  for (OpOperand *use : uses) {
    Operation *reader = use->getOwner();
    b.setInsertionPoint(reader);
    use->set(tensor::ConcatOp::create(b, reader->getLoc(), 1, parts));
  }
  return success();
}

struct ResolveChannelMoves
    : weft::impl::ResolveChannelMovesBase<ResolveChannelMoves> {
  void runOnOperation() override {
    Resolver resolver(getOperation());
    if (failed(resolver.run()))
      return signalPassFailure();
    numRewritten += resolver.numRewritten;
  }
};

} // namespace
