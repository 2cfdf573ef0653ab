//===- FabricOps.cpp - fabric operations
//------------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace weft::fabric;
// The shared vocabulary: target, rectangles, ports and the DirSet directive.
using namespace weft::common;
namespace wt = weft::machine;

/// `@a[0], @b[1]`: a stream's destinations and their ports.
static ParseResult parseDests(OpAsmParser &parser, ArrayAttr &dsts,
                              DenseI64ArrayAttr &ports) {
  SmallVector<Attribute> refs;
  SmallVector<int64_t> nums;
  auto one = [&]() -> ParseResult {
    FlatSymbolRefAttr ref;
    int64_t port;
    if (parser.parseAttribute(ref) || parser.parseLSquare() ||
        parser.parseInteger(port) || parser.parseRSquare())
      return failure();
    refs.push_back(ref);
    nums.push_back(port);
    return success();
  };
  if (parser.parseCommaSeparatedList(one))
    return failure();
  dsts = parser.getBuilder().getArrayAttr(refs);
  ports = parser.getBuilder().getDenseI64ArrayAttr(nums);
  return success();
}
static void printDests(OpAsmPrinter &p, Operation *, ArrayAttr dsts,
                       DenseI64ArrayAttr ports) {
  for (auto [i, ref] : llvm::enumerate(dsts)) {
    if (i)
      p << ", ";
    p.printAttributeWithoutType(ref);
    p << "[" << (i < size_t(ports.size()) ? ports[i] : 0) << "]";
  }
}

#define GET_OP_CLASSES
#include "fabric/FabricOps.cpp.inc"

/// Checks that `r` lies inside the grid of the enclosing target.
static LogicalResult verifyRectFits(Operation *op, RectAttr r, StringRef what) {
  std::optional<wt::Target> t = getEnclosingTarget(op);
  if (!t || r.fits(*t))
    return success();
  return op->emitOpError() << what << " rectangle " << rectString(r)
                           << " leaves the " << t->width() << "x" << t->height()
                           << " fabric";
}

//===----------------------------------------------------------------------===//
// ProgramOp
//===----------------------------------------------------------------------===//

RegionKind ProgramOp::getRegionKind(unsigned) { return RegionKind::Graph; }

LogicalResult ProgramOp::verifyRegions() {

  // Placed rectangles of the same kind may not overlap. A redistribution
  // may lie on a kernel's PEs: it uses their routers and spare microthreads
  // (the diagonal turn into a dense layer's columns runs on the layer's own
  // PEs), not their datapath or the kernel's memory.
  SmallVector<std::pair<Operation *, RectAttr>> placed;
  for (Operation &op : getBody().front()) {
    RectAttr r;
    if (auto k = dyn_cast<KernelOp>(op))
      r = k.getRectAttr();
    else if (auto rd = dyn_cast<RedistributeOp>(op))
      r = rd.getRectAttr();
    if (!r)
      continue;
    for (auto &[other, otherRect] : placed)
      if (other->getName() == op.getName() && r.overlaps(otherRect))
        return op.emitOpError()
               << "rectangle " << rectString(r) << " of @"
               << mlir::SymbolTable::getSymbolName(&op).getValue()
               << " overlaps rectangle " << rectString(otherRect) << " of @"
               << mlir::SymbolTable::getSymbolName(other).getValue();
    placed.push_back({&op, r});
  }

  // One route per stream, and at most one route per color on each PE.
  llvm::StringMap<RouteOp> routeOfStream;
  llvm::DenseMap<std::tuple<int64_t, int64_t, unsigned>, RouteOp> owner;
  for (auto route : getBody().front().getOps<RouteOp>()) {
    auto [it, inserted] =
        routeOfStream.try_emplace(route.getRouteName(), route);
    if (!inserted)
      return route.emitOpError()
             << (route.getChannel() ? "" : "stream ") << route.getRouteName()
             << " has a second route";
    if (!route.getColorAttr())
      continue;
    unsigned color = route.getColorAttr().getValue();
    for (auto sw : route.getBody().front().getOps<SwitchOp>()) {
      auto key = std::make_tuple(int64_t(sw.getX()), int64_t(sw.getY()), color);
      auto [at, fresh] = owner.try_emplace(key, route);
      if (!fresh)
        return sw.emitOpError()
               << "color " << color << " at PE (" << int64_t(sw.getX()) << ", "
               << int64_t(sw.getY()) << ") is used by both "
               << at->second.getRouteName() << " and " << route.getRouteName();
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// IoOp
//===----------------------------------------------------------------------===//

LogicalResult IoOp::verify() {
  if (int64_t(getFirstRow()) < 0 ||
      int64_t(getFirstRow()) >= int64_t(getEndRow()))
    return emitOpError() << "row range [" << int64_t(getFirstRow()) << ", "
                         << int64_t(getEndRow()) << ") is empty or negative";
  std::optional<wt::Target> t = getEnclosingTarget(*this);
  if (t && int64_t(getEndRow()) > int64_t(t->height()))
    return emitOpError() << "rows [" << int64_t(getFirstRow()) << ", "
                         << int64_t(getEndRow()) << ") leave the "
                         << t->height() << "-row fabric";
  auto type = cast<RankedTensorType>(getType());
  if (!type.hasStaticShape())
    return emitOpError() << "host tensor " << type << " has a dynamic shape";
  return success();
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

LogicalResult KernelOp::verify() {
  FunctionType fn = getFunctionType();
  Block &block = getBody().front();
  if (block.getNumArguments() != fn.getNumInputs())
    return emitOpError() << "body takes " << block.getNumArguments()
                         << " arguments but the kernel type has "
                         << fn.getNumInputs() << " inputs";
  for (auto [i, arg] : llvm::enumerate(block.getArguments()))
    if (arg.getType() != fn.getInput(i))
      return emitOpError() << "body argument " << i << " has type "
                           << arg.getType() << " but input " << i << " is "
                           << fn.getInput(i);
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError() << "body must end in fabric.yield";
  if (int64_t(fn.getNumInputs()) != getScheme().getNumStreams())
    return emitOpError() << "takes " << fn.getNumInputs()
                         << " inputs but its scheme ("
                         << getScheme().getSummary() << ") consumes "
                         << getScheme().getNumStreams();
  if (fn.getNumResults() != 1)
    return emitOpError() << "returns " << fn.getNumResults()
                         << " values; a kernel produces one stream (a value "
                            "used by several kernels is forked)";
  if (yield.getResults().getTypes() != TypeRange(fn.getResults()))
    return yield.emitOpError()
           << "yields " << yield.getResults().getTypes().size()
           << " values whose types do not match the kernel results";
  if (int64_t(getSmear()) < 1)
    return emitOpError() << "smear factor " << int64_t(getSmear())
                         << " is below 1";
  if (getCheckpoint() && !getTrained())
    return emitOpError() << "has a checkpoint but is not trained";
  if (getCheckpoint() == CheckpointPolicy::recompute && !getInputGradient())
    return emitOpError() << "recomputes its input, but only a kernel that "
                            "sends its input gradient can (the first "
                            "kernel's input comes from the host once)";
  if (getRecomputeCycles() &&
      getCheckpoint() != CheckpointPolicy::recompute)
    return emitOpError() << "has recompute_cycles but does not recompute";
  if (std::optional<int64_t> lag = getLag()) {
    if (!getTrained())
      return emitOpError() << "has a lag but is not trained";
    if (*lag < 1)
      return emitOpError() << "lag " << *lag
                           << " is below 1 (the loss after it counts)";
    if (getCheckpoint() == CheckpointPolicy::recompute)
      return emitOpError() << "recomputes its input while it trails its "
                              "forward, keeping the inputs of the samples in "
                              "flight in a ring";
    auto program = (*this)->getParentOfType<ProgramOp>();
    TrainingAttr training = program ? program.getTrainingAttr() : nullptr;
    if (!training || training.getOptimizer() == Optimizer::sgd ||
        training.getSamples() < 1)
      return emitOpError() << "has a lag, but only the kernels of a cpgd or "
                              "mbgd program that knows its samples trail "
                              "their forward passes";
    // The rounds the PEs count: the run's (cpgd) or a mini-batch's (mbgd).
    int64_t rounds = training.getOptimizer() == Optimizer::cpgd
                         ? training.getSamples()
                         : training.getBatch();
    if (*lag + rounds > 32767)
      return emitOpError() << "trails by " << *lag << " samples; with "
                           << rounds << " samples a pipeline its PEs count "
                              "past 32767";
  }
  if (getSlicedWeights()) {
    if (!isa<DenseSchemeAttr>(getScheme()))
      return emitOpError() << "has sliced_weights, but only a dense layer "
                              "(a fully connected one) stores its weight "
                              "columns sliced";
    if (getTrained())
      return emitOpError() << "has sliced_weights but is trained: its "
                              "weights change, so their zeros are not known "
                              "when they are packed";
  }
  if (int64_t tiles = int64_t(getTiles()); tiles != 1) {
    if (tiles < 1)
      return emitOpError() << "tiles " << tiles << " is below 1";
    auto pool = dyn_cast<PoolSchemeAttr>(getScheme());
    if (!isa<ConvSchemeAttr>(getScheme()) &&
        !(pool && pool.getShape().max && !pool.getShape().global()))
      return emitOpError() << "is cut into " << tiles
                           << " bands of output columns, but only a "
                              "convolution or a max pool of a window can be";
    if (RectAttr r = getRectAttr();
        r && int64_t(r.getWidth()) != tiles * int64_t(getSmear()))
      return emitOpError() << "rectangle is " << r.getWidth()
                           << " columns wide, but its " << tiles
                           << " bands of " << int64_t(getSmear())
                           << " columns need " << tiles * int64_t(getSmear());
  }
  if (int64_t merge = int64_t(getMerge()); merge != 1) {
    if (merge < 1)
      return emitOpError() << "merge " << merge << " is below 1";
    if (!isa<ConvSchemeAttr>(getScheme()) || getTiles() != 1)
      return emitOpError() << "merges " << merge
                           << " input lanes into a column, but only an "
                              "unbanded convolution can";
  }
  if (auto tile = getTileAttr())
    for (int64_t s : tile.asArrayRef())
      if (s < 1)
        return emitOpError() << "tile size " << s << " is below 1";
  if (RectAttr r = getRectAttr()) {
    if (int64_t(getSmear()) > r.numPEs())
      return emitOpError() << "smear factor " << int64_t(getSmear())
                           << " exceeds the " << r.numPEs()
                           << " PEs of its rectangle";
    return verifyRectFits(*this, r, "kernel");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// RedistributeOp
//===----------------------------------------------------------------------===//

LogicalResult RedistributeOp::verify() {
  auto payload = cast<WaveletsType>(getPayload());
  for (LayoutAttr l : {getFrom(), getTo()})
    if (l.getParts() > payload.getCount())
      return emitOpError() << "layout of " << l.getParts() << " parts for "
                           << payload.getCount() << " elements";
  if (RectAttr r = getRectAttr())
    return verifyRectFits(*this, r, "redistribution");
  return success();
}

//===----------------------------------------------------------------------===//
// StreamOp
//===----------------------------------------------------------------------===//

/// Checks that `tensor` carries exactly the payload `w`.
static LogicalResult checkPayload(StreamOp op, Type tensor, WaveletsType w,
                                  StringRef end) {
  auto t = dyn_cast<RankedTensorType>(tensor);
  if (!t || !t.hasStaticShape())
    return op.emitOpError()
           << end << " type " << tensor << " is not a static tensor";
  if (t.getElementType() != w.getElementType() ||
      t.getNumElements() != w.getCount())
    return op.emitOpError()
           << end << " carries " << t << " but the stream is " << w;
  return success();
}

/// An end of a gradient stream: the gradient of input `port` of a kernel
/// marked input_gradient (source), or of output `port` of a trained kernel
/// (destination).
static LogicalResult checkGradientEndpoint(StreamOp op, Operation *node,
                                           FlatSymbolRefAttr ref, int64_t port,
                                           bool isSource) {
  auto k = dyn_cast<KernelOp>(node);
  if (!k)
    return op.emitOpError() << "is a gradient stream, but its "
                            << (isSource ? "source " : "destination ") << ref
                            << " is not a kernel";
  if (isSource ? !k.getInputGradient() : !k.getTrained())
    return op.emitOpError()
           << "is a gradient stream, but kernel " << ref
           << (isSource ? " does not send the gradient of its input (no "
                          "input_gradient)"
                        : " is not trained");
  ArrayRef<Type> types = isSource ? k.getFunctionType().getInputs()
                                  : k.getFunctionType().getResults();
  if (port < 0 || port >= int64_t(types.size()))
    return op.emitOpError() << "kernel " << ref << " has " << types.size()
                            << (isSource ? " inputs" : " outputs")
                            << " to carry the gradient of, not port " << port;
  return checkPayload(op, types[port], cast<WaveletsType>(op.getPayload()),
                      isSource ? "gradient of input" : "gradient of output");
}

/// Checks one end of a stream: `ref[port]` must be a kernel port, a host
/// port of the right direction or a redistribution, carrying `payload`.
static LogicalResult checkEndpoint(StreamOp op, SymbolTableCollection &symbols,
                                   FlatSymbolRefAttr ref, int64_t port,
                                   bool isSource) {
  auto payload = cast<WaveletsType>(op.getPayload());
  StringRef end = isSource ? "source" : "destination";
  Operation *node = symbols.lookupSymbolIn(op->getParentOp(), ref);
  if (!node)
    return op.emitOpError() << end << " " << ref << " does not exist";
  if (op.getGradient())
    return checkGradientEndpoint(op, node, ref, port, isSource);
  if (auto k = dyn_cast<KernelOp>(node)) {
    ArrayRef<Type> types = isSource ? k.getFunctionType().getResults()
                                    : k.getFunctionType().getInputs();
    if (port < 0 || port >= int64_t(types.size()))
      return op.emitOpError()
             << "kernel " << ref << " has " << types.size()
             << (isSource ? " outputs" : " inputs") << ", not port " << port;
    return checkPayload(op, types[port], payload,
                        isSource ? "source port" : "destination port");
  }
  if (auto io = dyn_cast<IoOp>(node)) {
    PortDir want = isSource ? PortDir::input : PortDir::output;
    if (io.getDirection() != want)
      return op.emitOpError() << end << " " << ref << " is a host "
                              << (isSource ? "output" : "input");
    if (port != 0)
      return op.emitOpError() << "host port " << ref << " has only port 0";
    return checkPayload(op, io.getType(), payload,
                        isSource ? "host input" : "host output");
  }
  if (auto rd = dyn_cast<RedistributeOp>(node)) {
    if (port != 0 || rd.getPayload() != payload)
      return op.emitOpError() << "redistribution " << ref
                              << " has one port carrying " << rd.getPayload();
    return success();
  }
  return op.emitOpError() << end << " " << ref << " is not a kernel, host "
                          << (isSource ? "input" : "output")
                          << " or redistribution";
}

SmallVector<StringRef> StreamOp::getDstNames() {
  SmallVector<StringRef> names;
  for (Attribute a : getDsts())
    names.push_back(cast<FlatSymbolRefAttr>(a).getValue());
  return names;
}

bool StreamOp::feeds(StringRef node) {
  return llvm::is_contained(getDstNames(), node);
}

LogicalResult StreamOp::verify() {
  if (getDsts().empty())
    return emitOpError() << "has no destination";
  if (getDsts().size() != getDstPorts().size())
    return emitOpError() << "has " << getDsts().size() << " destinations but "
                         << getDstPorts().size() << " destination ports";
  for (auto [i, a] : llvm::enumerate(getDsts())) {
    if (!isa<FlatSymbolRefAttr>(a))
      return emitOpError() << "destination " << a << " is not a flat symbol";
    for (size_t j = 0; j < i; ++j)
      if (getDsts()[j] == a && getDstPorts()[j] == getDstPorts()[i])
        return emitOpError() << "names destination " << a << "["
                             << getDstPorts()[i] << "] twice";
  }
  return success();
}

LogicalResult StreamOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (failed(checkEndpoint(*this, symbols, getSrcAttr(), int64_t(getSrcPort()),
                           /*isSource=*/true)))
    return failure();
  for (auto [a, port] : llvm::zip(getDsts(), getDstPorts()))
    if (failed(checkEndpoint(*this, symbols, cast<FlatSymbolRefAttr>(a), port,
                             /*isSource=*/false)))
      return failure();
  if (ColorAttr c = getColorAttr()) {
    std::optional<wt::Target> t = getEnclosingTarget(*this);
    if (t && !t->isRoutableColor(c.getValue()))
      return emitOpError() << "color " << c.getValue()
                           << " is not routable on this target (colors 0.."
                           << t->routableColors() - 1 << ")";
  }
  if (getSparseAttr())
    return verifySparse(symbols);
  return success();
}

/// The scheme of `node` when it is a kernel computing a dense layer.
static DenseSchemeAttr denseSchemeOf(Operation *node) {
  auto k = dyn_cast_or_null<KernelOp>(node);
  return k ? dyn_cast<DenseSchemeAttr>(k.getScheme()) : DenseSchemeAttr();
}

LogicalResult StreamOp::verifySparse(SymbolTableCollection &symbols) {
  Operation *program = (*this)->getParentOp();
  auto fail = [&](const Twine &why) {
    return emitOpError() << "is sparse but " << why
                         << " (docs/execution-model.md, \"Sparse "
                            "activations\")";
  };
  if (getGradient())
    return fail("is a gradient stream");
  if (getPixels())
    return fail("is a feature map");
  Operation *srcNode = symbols.lookupSymbolIn(program, getSrcAttr());
  // A host input may be sparse: the host sends only its non-zero values.
  auto hostIn = dyn_cast_or_null<IoOp>(srcNode);
  if (hostIn && hostIn.getDirection() != weft::common::PortDir::input)
    return fail("its source is a host output");
  DenseSchemeAttr src = denseSchemeOf(srcNode);
  if (!src && !hostIn)
    return fail("its source is neither a dense kernel nor a host input");
  if (src && !src.getRelu())
    return fail("its source has no relu");
  if (getDsts().size() != 1)
    return fail("has more than one destination");
  auto dst = cast<FlatSymbolRefAttr>(getDsts()[0]);
  Operation *node = symbols.lookupSymbolIn(program, dst);
  // Routing turns the stream into a dense kernel through a redistribution:
  // look through it to the kernel.
  if (auto rd = dyn_cast_or_null<RedistributeOp>(node)) {
    node = nullptr;
    for (auto s : cast<ProgramOp>(program).getBody().front().getOps<StreamOp>())
      if (s.getSrc() == rd.getSymName() && s.getDsts().size() == 1)
        node = symbols.lookupSymbolIn(
            program, cast<FlatSymbolRefAttr>(s.getDsts()[0]));
  }
  if (!denseSchemeOf(node))
    return fail("its destination is not a dense kernel");
  return success();
}

//===----------------------------------------------------------------------===//
// RouteOp, SwitchOp
//===----------------------------------------------------------------------===//

std::string RouteOp::getRouteName() {
  std::string name = "@" + getStream().str();
  if (std::optional<StringRef> ch = getChannel())
    name += " channel " + ch->str();
  return name;
}

LogicalResult RouteOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Operation *s =
      symbols.lookupSymbolIn((*this)->getParentOp(), getStreamAttr());
  if (getChannel()) {
    if (!isa_and_nonnull<KernelOp, RedistributeOp>(s))
      return emitOpError() << "routes channel '" << *getChannel() << "' of "
                           << getStreamAttr()
                           << ", which is not a kernel or redistribution";
  } else if (!isa_and_nonnull<StreamOp>(s)) {
    return emitOpError() << "routes " << getStreamAttr()
                         << ", which is not a stream";
  }
  if (ColorAttr c = getColorAttr()) {
    std::optional<wt::Target> t = getEnclosingTarget(*this);
    if (t && !t->isRoutableColor(c.getValue()))
      return emitOpError() << "color " << c.getValue()
                           << " is not routable on this target (colors 0.."
                           << t->routableColors() - 1 << ")";
    auto stream = dyn_cast<StreamOp>(s);
    if (stream && stream.getColorAttr() && stream.getColorAttr() != c)
      return emitOpError() << "has color " << c.getValue() << " but stream "
                           << getStreamAttr() << " has color "
                           << stream.getColorAttr().getValue();
  }
  return success();
}

LogicalResult RouteOp::verifyRegions() {
  std::optional<wt::Target> t = getEnclosingTarget(*this);
  if (!t)
    return success();
  llvm::DenseMap<std::pair<int64_t, int64_t>, SwitchOp> at;
  for (auto sw : getBody().front().getOps<SwitchOp>())
    if (!at.try_emplace({int64_t(sw.getX()), int64_t(sw.getY())}, sw).second)
      return sw.emitOpError()
             << "is a second switch of " << getRouteName() << " at PE ("
             << int64_t(sw.getX()) << ", " << int64_t(sw.getY()) << ")";
  // Walk the switches in block order, so the first problem reported is the
  // first in the source.
  auto step = [](int64_t &x, int64_t &y, wt::Dir d) {
    x += d == wt::Dir::East ? 1 : d == wt::Dir::West ? -1 : 0;
    y += d == wt::Dir::South ? 1 : d == wt::Dir::North ? -1 : 0;
  };
  for (auto sw : getBody().front().getOps<SwitchOp>()) {
    std::pair<int64_t, int64_t> pe = {int64_t(sw.getX()), int64_t(sw.getY())};
    for (unsigned d = 0; d < wt::kNumDirs; ++d) {
      auto dir = wt::Dir(d);
      if (dir == wt::Dir::Ramp)
        continue;
      int64_t nx = pe.first, ny = pe.second;
      step(nx, ny, dir);
      if (!t->contains(nx, ny))
        continue; // a host port on the west or east edge
      unsigned back = 1u << unsigned(wt::opposite(dir));
      auto it = at.find({nx, ny});
      if ((unsigned(sw.getOutputs()) & (1u << d)) &&
          (it == at.end() || !(unsigned(it->second.getInputs()) & back)))
        return sw.emitOpError()
               << "sends " << getRouteName() << " " << wt::dirName(dir)
               << " from PE (" << pe.first << ", " << pe.second << ") but PE ("
               << nx << ", " << ny
               << ") has no switch of it taking wavelets from the "
               << wt::dirName(wt::opposite(dir));
      if ((unsigned(sw.getInputs()) & (1u << d)) &&
          (it == at.end() || !(unsigned(it->second.getOutputs()) & back)))
        return sw.emitOpError()
               << "takes " << getRouteName() << " from the " << wt::dirName(dir)
               << " at PE (" << pe.first << ", " << pe.second << ") but PE ("
               << nx << ", " << ny << ") sends none of it that way";
    }
  }
  return success();
}

LogicalResult SwitchOp::verify() {
  unsigned in = unsigned(getInputs()), out = unsigned(getOutputs());
  if (in == 0 || in > wt::kAllDirs)
    return emitOpError() << "needs at least one input port";
  if (out == 0 || out > wt::kAllDirs)
    return emitOpError() << "needs at least one output port";
  if (auto positions = getPositionsAttr())
    if (std::string why = routePositionsProblem(positions.asArrayRef(), in, out);
        !why.empty())
      return emitOpError() << "at PE (" << int64_t(getX()) << ", "
                           << int64_t(getY()) << "): " << why;
  std::optional<wt::Target> t = getEnclosingTarget(*this);
  if (!t)
    return success();
  if (!t->contains(int64_t(getX()), int64_t(getY())))
    return emitOpError() << "PE (" << int64_t(getX()) << ", " << int64_t(getY())
                         << ") is outside the " << t->width() << "x"
                         << t->height() << " fabric";
  for (unsigned d = 0; d < wt::kNumDirs; ++d) {
    if (!((in | out) & (1u << d)))
      continue;
    if (!t->hasLink(int64_t(getX()), int64_t(getY()), wt::Dir(d)))
      return emitOpError() << "PE (" << int64_t(getX()) << ", "
                           << int64_t(getY()) << ") has no "
                           << wt::dirName(wt::Dir(d)) << " link on the "
                           << t->width() << "x" << t->height() << " fabric";
  }
  return success();
}
