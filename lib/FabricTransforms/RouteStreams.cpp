//===- RouteStreams.cpp - Redistributions and per-PE routes ---------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// `--weft-route-streams` on a partitioned fabric.program:
//  - makes every layout change explicit: a dense layer wants input chunk c
//    broadcast down its column c (col_chunks) while its producer sends one
//    chunk per row (row_chunks), so a fabric.redistribute goes between them,
//    placed on the square of PEs where the chunks turn (the diagonal);
//  - gives every stream, and every kernel's internal channel, a fabric.route
//    with one fabric.switch per PE it passes (multicast included), from the
//    schemes in weft/Kernels/Routing.h.
// `--weft-allocate-colors` then colors the routes; the lowering emits them.
//
//===----------------------------------------------------------------------===//

#include "weft/FabricTransforms/Graph.h"
#include "weft/Kernels/ColorAllocation.h"
#include "weft/Kernels/Routing.h"

#include "fabric/FabricOps.h"

#include "weft/FabricTransforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/DebugLog.h"

#include <set>

#define DEBUG_TYPE "weft-route-streams"

namespace weft {
#define GEN_PASS_DEF_ROUTESTREAMS
#define GEN_PASS_DEF_ALLOCATECOLORS
#include "weft/FabricTransforms/Passes.h.inc"
} // namespace weft

using namespace mlir;
namespace fab = weft::fabric;
namespace common = weft::common;

namespace weft::conversion {
namespace {

/// What routing did to one program (the pass's statistics).
struct RoutingCounts {
  int64_t redistributions = 0, routes = 0, switches = 0;
};

/// Creates `fabric.route @ref [channel] { switches }` at `b`'s insertion
/// point; nothing for an empty plan.
void createRoute(OpBuilder &b, Location loc, StringRef ref,
                 std::optional<StringRef> channel, const RoutePlan &plan,
                 RoutingCounts &counts) {
  if (plan.empty())
    return;
  ++counts.routes;
  counts.switches += int64_t(plan.get().size());
  auto route = fab::RouteOp::create(
      b, loc, ref, channel ? b.getStringAttr(*channel) : nullptr,
      /*color=*/nullptr);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&route.getBody().emplaceBlock());
  for (const auto &[pe, sw] : plan.get()) {
    DenseI64ArrayAttr positions;
    if (!sw.positions.empty()) {
      SmallVector<int64_t> flat;
      for (const SwitchPosition &p : sw.positions)
        flat.append({int64_t(p.in), int64_t(p.out), p.count});
      positions = b.getDenseI64ArrayAttr(flat);
    }
    fab::SwitchOp::create(b, loc, pe.first, pe.second, uint32_t(sw.in),
                          uint32_t(sw.out), positions);
  }
}

/// Routes gradient stream `op` (docs/training.md, "Routes and colors"): out
/// of its source kernel's west side and into its destination's east side,
/// which must meet (kernels side by side).
LogicalResult routeGradient(OpBuilder &b, fab::StreamOp op,
                            const llvm::StringMap<Stage *> &stageOf,
                            RoutingCounts &counts) {
  Stage *src = stageOf.lookup(op.getSrc());
  SmallVector<StringRef> dsts = op.getDstNames();
  Stage *dst = dsts.size() == 1 ? stageOf.lookup(dsts.front()) : nullptr;
  if (!src || !dst)
    return op.emitOpError("is a gradient stream, which goes from one kernel "
                          "to one kernel");
  // A convolution trains on one band without merged lanes: its gradient
  // routes are a dense layer's (docs/training.md, "Convolutions").
  auto untrainable = [](const Stage *st) {
    return (st->join && (st->joinKind != fab::JoinKind::add ||
                         st->info.join.broadcast >= 0)) ||
           (st->pool && st->width > 1) || st->depthwise ||
           (st->dense && st->layer.conv &&
            (st->m.tiles > 1 || st->m.merge > 1 ||
             !st->layer.frustum.empty()));
  };
  if (untrainable(src) || untrainable(dst))
    return op.emitOpError("carries a gradient between @")
           << src->kernel.getSymName() << " and @" << dst->kernel.getSymName()
           << ", but weft trains only dense layers, convolutions of one band, "
              "the Add of a residual block and column kernels";
  if (dst->x + dst->width > src->x || dst->outRows != src->inRows)
    return op.emitOpError("carries a gradient from @")
           << src->kernel.getSymName() << " (column " << src->x
           << ") west to @" << dst->kernel.getSymName()
           << ", which does not end west of it in the row chunks it "
              "receives";
  RoutePlan plan = src->dense ? denseGradientOut(src->m)
                              : columnGradientOut(src->x, 0, src->height);
  // A residual block's skip: the routers of the kernels in between pass
  // the gradient west along its rows.
  const int64_t y0 = dst->dense ? dst->m.y0 : 0;
  for (int64_t x = dst->x + dst->width; x < src->x; ++x)
    for (int64_t r = 0; r < dst->outRows; ++r)
      plan.add(x, y0 + r, machine::dirBit(machine::Dir::East),
               machine::dirBit(machine::Dir::West));
  plan.append(dst->dense ? denseGradientIn(dst->m)
                         : columnGradientIn(dst->x, 0, dst->height));
  createRoute(b, op.getLoc(), op.getSymName(), std::nullopt, plan, counts);
  return success();
}

/// Inserts the redistributions and routes every stream and channel of
/// `program` (the pass's description in Passes.td).
LogicalResult routeProgram(fab::ProgramOp program, RoutingCounts &counts) {
  Block &body = program.getBody().front();
  // Logical routes (empty bodies) are what routing fills: they are
  // replaced by the computed ones.
  bool routed = !body.getOps<fab::RedistributeOp>().empty() ||
                llvm::any_of(body.getOps<fab::RouteOp>(), [](fab::RouteOp r) {
                  return !r.getBody().front().empty();
                });
  if (routed)
    return program.emitOpError("is already routed (it has fabric.switch or "
                               "fabric.redistribute ops)");
  for (auto r : llvm::make_early_inc_range(body.getOps<fab::RouteOp>()))
    r.erase();
  FailureOr<Graph> graph = analyzeGraph(program, /*placed=*/true);
  if (failed(graph))
    return failure();
  MLIRContext *ctx = program.getContext();
  SymbolTable symbols(program);
  OpBuilder b(ctx);

  // Explicit redistributions in front of the dense layers: the stream into
  // the layer enters the turn instead, and a new stream leaves the turn.
  for (Stage &st : graph->stages) {
    if (!st.dense)
      continue;
    fab::StreamOp into = graph->streams[size_t(st.inputs[0])].op;
    b.setInsertionPoint(st.kernel);
    // The producer's lanes (k per column when the partitioner merged
    // them) turn into the S columns on the S x kS rectangle where they
    // meet them.
    int64_t S = st.m.smear, lanes = st.m.lanes();
    auto payload = cast<fab::WaveletsType>(into.getPayload());
    auto rd = fab::RedistributeOp::create(
        b, st.kernel.getLoc(),
        b.getStringAttr((st.kernel.getSymName() + "_turn").str()),
        fab::LayoutAttr::get(ctx, fab::LayoutKind::row_chunks, lanes),
        fab::LayoutAttr::get(ctx, fab::LayoutKind::col_chunks, S), payload,
        common::RectAttr::get(ctx, st.m.x0, st.m.y0, S, lanes));
    symbols.insert(rd); // uniquifies the name if taken
    st.turn = rd;
    ++counts.redistributions;
    LDBG() << "redistribution @" << rd.getSymName() << " in front of @"
           << st.kernel.getSymName();
    // src -> kernel becomes src -> turn and turn -> kernel.
    b.setInsertionPointAfter(into);
    auto out = fab::StreamOp::create(
        b, into.getLoc(),
        b.getStringAttr(
            (rd.getSymName() + "_to_" + st.kernel.getSymName()).str()),
        FlatSymbolRefAttr::get(rd.getSymNameAttr()), b.getI64IntegerAttr(0),
        b.getArrayAttr({FlatSymbolRefAttr::get(st.kernel.getSymNameAttr())}),
        b.getDenseI64ArrayAttr({0}), TypeAttr::get(payload),
        /*color=*/nullptr, into.getPixelsAttr(), /*gradient=*/nullptr,
        /*sparse=*/nullptr);
    symbols.insert(out);
    st.turnStream = out;
    SmallVector<Attribute> dsts(into.getDsts().begin(), into.getDsts().end());
    for (auto [i, d] : llvm::enumerate(dsts))
      if (cast<FlatSymbolRefAttr>(d).getValue() == st.kernel.getSymName())
        d = FlatSymbolRefAttr::get(rd.getSymNameAttr());
    into.setDstsAttr(b.getArrayAttr(dsts));
  }

  // The sending end of every producer, and the receiving end of every
  // consumer with the relays from the producer's east edge to it.
  int64_t gridW = program.getTargetAttr().getWidth();
  auto sending = [&](const GraphStream &s) {
    if (s.producer < 0)
      return RoutePlan(); // the host input feeds the west edge
    const Stage &st = graph->stages[size_t(s.producer)];
    if (st.dense && st.layer.conv)
      return convResults(*st.layer.conv, st.m);
    if (st.depthwise)
      return windowBandResults(*st.layer.conv, st.x, st.height, st.width);
    if (st.pool)
      return windowBandResults(st.info.layer.pool.window(), st.x,
                                  st.height, st.width);
    return st.dense ? denseResults(st.m) : columnResults(st.x, 0, st.height);
  };
  auto eastEdge = [&](const GraphStream &s) -> int64_t {
    if (s.producer < 0)
      return 0;
    const Stage &st = graph->stages[size_t(s.producer)];
    return st.x + st.width;
  };
  auto rowsOf = [&](const GraphStream &s) -> int64_t {
    if (s.producer >= 0)
      return graph->stages[size_t(s.producer)].outRows;
    return graph->stages[size_t(s.consumers.front().first)].inRows;
  };
  // Routes in the order of the streams in the program (the turns' streams
  // where routing put them).
  llvm::DenseMap<Operation *, GraphStream *> graphStream;
  for (GraphStream &s : graph->streams)
    graphStream[s.op] = &s;
  llvm::DenseMap<Operation *, Stage *> turnOf;
  for (Stage &st : graph->stages)
    if (st.dense)
      turnOf[st.turnStream] = &st;
  SmallVector<fab::StreamOp> streams(body.getOps<fab::StreamOp>());
  b.setInsertionPointToEnd(&body);
  llvm::StringMap<Stage *> stageOf;
  for (Stage &st : graph->stages)
    stageOf[st.kernel.getSymName()] = &st;
  for (fab::StreamOp op : streams) {
    if (op.getGradient()) {
      if (failed(routeGradient(b, op, stageOf, counts)))
        return failure();
      continue;
    }
    if (Stage *st = turnOf.lookup(op)) {
      createRoute(b, op.getLoc(), op.getSymName(), std::nullopt,
                  denseColumns(st->m), counts);
      continue;
    }
    GraphStream &s = *graphStream.lookup(op);
    RoutePlan plan = sending(s);
    int64_t from = eastEdge(s), rows = rowsOf(s);
    for (auto [k, port] : s.consumers) {
      Stage &c = graph->stages[size_t(k)];
      if (c.x < from)
        return s.op.emitOpError("flows west from column ")
               << from << " to @" << c.kernel.getSymName() << " at column "
               << c.x << "; streams flow east";
      plan.append(relayEast(from, c.x, rows));
      // A banded convolution whose lanes go on to a reader further east
      // takes its columns off a copy of each row.
      bool passThrough =
          !s.outputs.empty() ||
          llvm::any_of(s.consumers, [&](std::pair<int64_t, int64_t> o) {
            return graph->stages[size_t(o.first)].x > c.x;
          });
      if (c.dense && c.layer.conv)
        plan.append(convRowsToDiagonals(*c.layer.conv, c.m, passThrough));
      else if (c.depthwise)
        plan.append(windowBandInputs(*c.layer.conv, c.x, c.height, c.width,
                                        passThrough));
      else if (c.pool)
        plan.append(windowBandInputs(c.info.layer.pool.window(), c.x,
                                        c.height, c.width, passThrough));
      else
        plan.append(c.dense ? denseRowsToDiagonal(c.m)
                            : columnInputs(c.x, 0, c.height));
    }
    if (!s.outputs.empty())
      plan.append(relayEast(from, gridW, rows));
    if (plan.empty())
      return s.op.emitOpError("connects @")
             << s.op.getSrc() << " to its destinations without passing a "
                                 "router; nothing to route";
    createRoute(b, s.op.getLoc(), s.op.getSymName(), std::nullopt, plan,
                counts);
  }
  for (Stage &st : graph->stages) {
    StringRef k = st.kernel.getSymName();
    if (st.dense) {
      for (int j = 0; j < 2; ++j)
        createRoute(b, st.kernel.getLoc(), k,
                    StringRef(kPartialSumChannels[j]),
                    densePartialSums(st.m, j), counts);
      // A trained layer's backward channels (docs/training.md).
      if (st.kernel.getTrained())
        createRoute(b, st.kernel.getLoc(), k, StringRef(kDeltaChannel),
                    denseDeltaRows(st.m), counts);
      if (st.kernel.getInputGradient())
        for (int j = 0; j < 2; ++j)
          createRoute(b, st.kernel.getLoc(), k,
                      StringRef(kGradientReduceChannels[j]),
                      denseGradientReduce(st.m, j), counts);
    } else if (internalColors(st.column.op) == 3) {
      for (int j = 0; j < 3; ++j)
        createRoute(b, st.kernel.getLoc(), k,
                    StringRef(kColumnReduceChannels[j]),
                    columnReduce(st.x, 0, st.height, j), counts);
      // The loss kernel's labels, from the east edge's row 0 port
      // (docs/training.md, "Routes and colors").
      if (isLossKernel(st.kernel))
        createRoute(b, st.kernel.getLoc(), k, StringRef(kLabelsChannel),
                    columnLabels(st.x, gridW, 0, st.height), counts);
    }
  }
  return success();
}

/// Colors every route of `program` (the pass's description in Passes.td);
/// `used` gets the colors chosen.
LogicalResult colorProgram(fab::ProgramOp program,
                           const std::vector<int64_t> &reserved,
                           std::set<int64_t> &used) {
  Block &body = program.getBody().front();
  SmallVector<fab::RouteOp> routes(body.getOps<fab::RouteOp>());
  SymbolTable symbols(program);
  auto streamOf = [&](fab::RouteOp r) {
    return r.getChannel() ? fab::StreamOp()
                          : symbols.lookup<fab::StreamOp>(r.getStream());
  };
  std::vector<StreamRequest> req;
  for (fab::RouteOp r : routes) {
    StreamRequest s{r.getRouteName(), {}, -1};
    for (auto sw : r.getBody().front().getOps<fab::SwitchOp>())
      s.pes.push_back({int64_t(sw.getX()), int64_t(sw.getY())});
    if (s.pes.empty())
      return r.emitOpError("is logical (no switches): run "
                           "--weft-route-streams first");
    if (fab::ColorAttr c = r.getColorAttr())
      s.fixed = c.getValue();
    else if (auto st = streamOf(r); st && st.getColorAttr())
      s.fixed = st.getColorAttr().getValue(); // a color set on the stream
    req.push_back(std::move(s));
  }
  for (auto s : body.getOps<fab::StreamOp>()) {
    bool routed = llvm::any_of(routes, [&](fab::RouteOp r) {
      return !r.getChannel() && r.getStream() == s.getSymName();
    });
    if (!routed)
      return s.emitOpError("has no route: run --weft-route-streams first");
  }
  std::string why;
  std::optional<std::vector<int64_t>> colors = allocateColors(
      req, program.getTargetAttr().getRoutableColors(), reserved, why);
  if (!colors)
    return program.emitOpError("needs more colors than the fabric has: ")
           << why;
  MLIRContext *ctx = program.getContext();
  for (size_t i = 0; i < routes.size(); ++i) {
    auto color = fab::ColorAttr::get(ctx, unsigned((*colors)[i]));
    routes[i].setColorAttr(color);
    if (fab::StreamOp s = streamOf(routes[i]))
      s.setColorAttr(color);
    used.insert((*colors)[i]);
  }
  return success();
}

} // namespace
} // namespace weft::conversion

namespace {

struct RouteStreams : weft::impl::RouteStreamsBase<RouteStreams> {
  void runOnOperation() override {
    SmallVector<fab::ProgramOp> programs(
        getOperation().getOps<fab::ProgramOp>());
    for (fab::ProgramOp program : programs) {
      weft::conversion::RoutingCounts counts;
      if (failed(weft::conversion::routeProgram(program, counts)))
        return signalPassFailure();
      numRedistributions += counts.redistributions;
      numRoutes += counts.routes;
      numSwitches += counts.switches;
    }
  }
};

struct AllocateColors : weft::impl::AllocateColorsBase<AllocateColors> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<fab::ProgramOp> programs(
        getOperation().getOps<fab::ProgramOp>());
    std::vector<int64_t> keepOut(reserved.begin(), reserved.end());
    std::set<int64_t> used;
    for (fab::ProgramOp program : programs)
      if (failed(weft::conversion::colorProgram(program, keepOut, used)))
        return signalPassFailure();
    numColors += int64_t(used.size());
  }
};

} // namespace
