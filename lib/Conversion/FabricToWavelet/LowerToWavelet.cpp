//===- LowerToWavelet.cpp - Placed chains of layers to per-PE programs ----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-lower-fabric-to-wavelet: turns a partitioned, routed and colored
// fabric.program into a wavelet.program. The host I/O, the colors and the
// router settings come from the fabric ops; each kernel's PEs come from its
// emitter (emitDenseLayer in EmitDenseLayer.cpp, emitColumnKernel in
// EmitColumnKernel.cpp), and the PEs east of the chain relay the results to
// the east edge. The emitted routes are checked against the fabric.route
// switches.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/Passes.h"

#include "PlacedRoutes.h"
#include "WaveletBuilder.h"
#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/DenseLayer.h"
#include "weft/Conversion/DepthwiseKernel.h"
#include "weft/Conversion/JoinKernel.h"
#include "weft/Conversion/PoolKernel.h"
#include "weft/FabricTransforms/Graph.h"

#include "fabric/FabricOps.h"
#include "wavelet/WaveletOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"

#include <map>
#include <set>

namespace weft {
#define GEN_PASS_DEF_LOWERFABRICTOWAVELET
#include "weft/Conversion/Passes.h.inc"
} // namespace weft

using namespace mlir;
namespace fab = weft::fabric;
namespace common = weft::common;
namespace wv = weft::wavelet;

namespace weft::conversion {
namespace {

struct LowerFabricToWaveletPass
    : weft::impl::LowerFabricToWaveletBase<LowerFabricToWaveletPass> {
  using LowerFabricToWaveletBase::LowerFabricToWaveletBase;

  void runOnOperation() override {
    SmallVector<fab::ProgramOp> programs(
        getOperation().getOps<fab::ProgramOp>());
    for (fab::ProgramOp program : programs)
      if (failed(lower(program)))
        return signalPassFailure();
  }

  LogicalResult lower(fab::ProgramOp program) {
    MLIRContext *ctx = program.getContext();
    if (program.getTrainingAttr())
      return program.emitOpError("is a training program: lower it with "
                                 "--weft-lower-training-to-wavelet");
    FailureOr<Graph> graph = analyzeGraph(program, /*placed=*/true);
    if (failed(graph))
      return failure();
    std::vector<Stage> &stages = graph->stages;
    std::vector<int64_t> latency = streamLatencies(*graph);
    auto target = program.getTargetAttr();

    // The routes and colors --weft-route-streams and --weft-allocate-colors
    // chose.
    FailureOr<PlacedRoutes> routes = PlacedRoutes::read(program);
    if (failed(routes))
      return failure();
    const RouteTable &table = routes->table;
    auto streamColor = [&](int64_t stream) {
      return routes->stream(graph->streams[size_t(stream)].op);
    };

    // Sparse activations: the streams --weft-select-sparse-streams marked.
    std::vector<SparseIo> sparseIo(stages.size());
    SmallVector<Attribute> sparseStreams;
    for (auto [i, c] : llvm::enumerate(stages)) {
      if (c.inputs.empty())
        continue;
      const GraphStream &gs = graph->streams[size_t(c.inputs[0])];
      fab::StreamOp op = gs.op;
      if (!op || !op.getSparseAttr())
        continue;
      std::string why = sparseIneligible(*graph, c);
      if (!why.empty())
        return op.emitOpError("is sparse but ")
               << why << " (docs/execution-model.md, \"Sparse activations\")";
      if (gs.producer >= 0) // (a host input has no producer to change)
        sparseIo[size_t(gs.producer)].out = true;
      sparseIo[i].in = true;
      sparseStreams.push_back(op.getSymNameAttr());
    }
    for (auto s : program.getBody().front().getOps<fab::StreamOp>())
      if (s.getSparseAttr() &&
          !llvm::is_contained(sparseStreams, s.getSymNameAttr()))
        return s.emitOpError("is sparse but feeds no dense layer's first "
                             "input");

    OpBuilder b(program);
    Location loc = program.getLoc();
    auto wprog =
        wv::ProgramOp::create(b, loc, program.getSymNameAttr(), target);
    if (!sparseStreams.empty())
      wprog->setAttr("weft.sparse_streams", b.getArrayAttr(sparseStreams));
    // Discardable: the model's layers in order, and what the program carried
    // (weft.batch).
    SmallVector<Attribute> names;
    for (Stage &s : stages)
      names.push_back(s.kernel.getSymNameAttr());
    wprog->setAttr("layers", b.getArrayAttr(names));
    for (NamedAttribute a : program->getDiscardableAttrs())
      wprog->setAttr(a.getName(), a.getValue());
    b.setInsertionPointToStart(&wprog.getBody().emplaceBlock());

    // A fabric.io with `pixels` is a feature map: the host streams it
    // pixel-major (wavelet.io ... fmap, docs/architecture.md §5.2).
    // A sparse host input (its stream marked sparse): the host converts the
    // values to fp16 as the layer would and sends only the non-zero ones,
    // then a closeout per chunk (index 1, as a sparse producer's).
    auto io = [&](fab::IoOp op, bool output, int64_t end, int64_t color,
                  bool sparse = false) -> LogicalResult {
      bool fmap = false;
      if (std::optional<int64_t> pixels = op.getPixels()) {
        auto type = cast<RankedTensorType>(op.getType());
        if (type.getRank() < 2)
          return op.emitOpError()
                 << "has pixels = " << *pixels << " but " << type
                 << " is no feature map [1, C, spatial...]";
        int64_t product = 1;
        for (int64_t d : type.getShape().drop_front(2))
          product *= d;
        if (*pixels != product)
          return op.emitOpError()
                 << "has pixels = " << *pixels << " but " << type << " has "
                 << product << " pixels (the product of the dims after the "
                 << "channels)";
        if (end <= 0 || type.getDimSize(1) % end != 0)
          return op.emitOpError()
                 << "is a feature map of " << type.getDimSize(1)
                 << " channels streamed on " << end
                 << " rows; the rows must divide the channels";
        fmap = true;
      }
      auto type = cast<RankedTensorType>(op.getType());
      if (sparse)
        type = type.clone(b.getF16Type());
      auto wio = wv::IoOp::create(
          b, op.getLoc(), op.getSymName(),
          output ? common::PortDir::output : common::PortDir::input,
          output ? common::Edge::east : common::Edge::west,
          /*first_row=*/0, end, color, sparse ? "sparse16" : "dense32", type,
          fmap, sparse ? b.getI64IntegerAttr(1) : IntegerAttr());
      // (Which copy of the network the port feeds: weft.replica.)
      for (NamedAttribute a : op->getDiscardableAttrs())
        wio->setAttr(a.getName(), a.getValue());
      return success();
    };
    // The rows a stream arrives in: its producer's, or (a host input) its
    // consumers'.
    auto streamRows = [&](int64_t stream) -> int64_t {
      const GraphStream &gs = graph->streams[size_t(stream)];
      if (gs.producer >= 0)
        return stages[size_t(gs.producer)].outRows;
      return stages[size_t(gs.consumers.front().first)].inRows;
    };
    for (fab::IoOp in : graph->inputs) {
      int64_t st = graph->streamOf(in);
      fab::StreamOp sop = graph->streams[size_t(st)].op;
      bool sparse = sop && sop.getSparseAttr();
      if (sparse && !cast<RankedTensorType>(in.getType()).getElementType().isF32())
        return in.emitOpError("is sparse but its values are not fp32");
      if (failed(io(in, false, streamRows(st), streamColor(st), sparse)))
        return failure();
    }
    for (fab::IoOp out : graph->outputs) {
      int64_t st = graph->streamOf(out);
      if (failed(io(out, true, streamRows(st), streamColor(st))))
        return failure();
    }

    for (auto [si, s] : llvm::enumerate(stages)) {
      StringRef name = s.kernel.getSymName();
      int64_t cout = streamColor(s.output);
      if (s.dense) {
        if (!s.turn)
          return s.kernel.emitOpError("has no redistribution in front: run "
                                      "--weft-route-streams first");
        fab::RedistributeOp t = s.turn;
        // The turn the partitioner decided: the producer's lanes (k of
        // them per column when it merged them) into the S columns, on the
        // S x kS rectangle where they turn.
        const int64_t S = s.m.smear, lanes = s.m.lanes();
        auto rowChunks =
            fab::LayoutAttr::get(ctx, fab::LayoutKind::row_chunks, lanes);
        auto colChunks =
            fab::LayoutAttr::get(ctx, fab::LayoutKind::col_chunks, S);
        if (t.getFrom() != rowChunks || t.getTo() != colChunks ||
            t.getRectAttr() !=
                common::RectAttr::get(ctx, s.m.x0, s.m.y0, S, lanes))
          return t.emitOpError("is not the turn of @")
                 << name << " (from " << rowChunks << " to " << colChunks
                 << " at the " << S << "x" << lanes
                 << " rectangle where its columns start, " << s.m.merge
                 << " lane(s) a column); weft lowers only the turn of the "
                    "lanes a kernel takes";
        DenseColors dc = routes->dense(*graph, s);
        if (!s.layer.frustum.empty()) {
          emitFrustumChain(b, s.kernel.getLoc(), s.layer, s.m, dc, name,
                           table);
        } else if (s.layer.conv) {
          emitConvLayer(b, s.kernel.getLoc(), s.layer, s.m, dc, name, table);
        } else {
          // A feature-map input arrives pixel-major per row chunk.
          DenseLayer layer = s.layer;
          if (fab::StreamOp in = graph->streams[size_t(s.inputs[0])].op;
              in && in.getPixels())
            layer.inputPixels = int64_t(*in.getPixels());
          layer.sparseIn = sparseIo[si].in;
          layer.sparseOut = sparseIo[si].out;
          layer.slicedWeights = s.kernel.getSlicedWeights();
          emitDenseLayer(b, s.kernel.getLoc(), layer, s.m, dc, name, table);
        }
      } else if (s.pool) {
        PoolKernel k;
        k.shape = s.info.layer.pool;
        k.x = s.x;
        k.rows = s.height;
        k.tiles = s.width;
        k.inColor = streamColor(s.inputs[0]);
        k.outColor = cout;
        if (failed(emitPoolKernel(b, s.kernel.getLoc(), k, name, table)))
          return failure();
      } else if (s.depthwise) {
        DepthwiseKernel k;
        k.shape = *s.layer.conv;
        k.weights = s.layer.weights;
        k.bias = s.layer.bias;
        k.x = s.x;
        k.rows = s.height;
        k.tiles = s.width;
        k.inColor = streamColor(s.inputs[0]);
        k.outColor = cout;
        k.precision = s.info.precision;
        if (failed(emitDepthwiseKernel(b, s.kernel.getLoc(), k, name, table)))
          return failure();
      } else if (s.join) {
        JoinKernel k = s.info.join;
        if (k.buffered < 0)
          return s.kernel.emitOpError("has no FIFO chosen: run "
                                      "--weft-partition-dense first");
        // The deadlock rule (docs/execution-model.md, "Networks of
        // layers"): the buffered input is the one that arrives first; of
        // feature maps, the one that runs ahead by rows, with a FIFO for
        // the rows it does.
        auto [rowsA, rowsB] = joinRowReadiness(*graph, s);
        const StreamRows &mineRows = k.buffered ? rowsB : rowsA,
                         &otherRows = k.buffered ? rowsA : rowsB;
        if (k.fifoPixels > 0) {
          int64_t height = int64_t(mineRows.ready.size());
          int64_t ahead = joinFifoRows(mineRows.ready, otherRows.ready),
                  need = joinFifoRows(otherRows.ready, mineRows.ready);
          if (height == 0 || otherRows.ready.size() != mineRows.ready.size())
            return s.kernel.emitOpError("holds a FIFO of ")
                   << k.fifoPixels << " pixels, but its inputs are no "
                   << "feature maps that run behind one source by rows";
          if (ahead > 0)
            return s.kernel.emitOpError("buffers input ")
                   << k.buffered << ", but input " << 1 - k.buffered
                   << " runs up to " << ahead - 3 << " rows ahead of it: "
                   << "the fork feeding both branches would deadlock";
          int64_t width = k.pixels / height;
          if (k.fifoPixels < need * width)
            return s.kernel.emitOpError("holds a FIFO of ")
                   << k.fifoPixels << " pixels, but input " << k.buffered
                   << " runs up to " << need - 3 << " rows of " << width
                   << " pixels ahead (it needs " << need * width
                   << "): the fork feeding both branches would deadlock";
        }
        int64_t mine = latency[size_t(s.inputs[size_t(k.buffered)])],
                other = latency[size_t(s.inputs[size_t(1 - k.buffered)])];
        if (k.fifoPixels == 0 && mine > other)
          return s.kernel.emitOpError("buffers input ")
                 << k.buffered << ", whose branch arrives later (predicted "
                 << "latency " << mine << " cycles against " << other
                 << "): the fork feeding both branches would deadlock; "
                    "buffer input "
                 << 1 - k.buffered;
        k.x = s.x;
        k.layout = RowChunks{s.outN, s.height, 0};
        k.colorA = streamColor(s.inputs[0]);
        k.colorB = streamColor(s.inputs[1]);
        k.outColor = cout;
        if (failed(emitJoinKernel(b, s.kernel.getLoc(), k, name, name, &table)))
          return failure();
      } else {
        s.column.inColor = streamColor(s.inputs[0]);
        s.column.outColor = cout;
        for (int64_t c : routes->columnReduce(name))
          s.column.internal.push_back(c);
        if (failed(emitColumnKernel(b, s.kernel.getLoc(), s.column, name, name,
                                    &table)))
          return failure();
      }
    }
    emitRelays(b, loc, wprog, table);
    if (failed(routes->check(wprog, program)))
      return failure();
    program.erase();
    return success();
  }
};

} // namespace

/// Router-only PEs: every PE the routes pass that no kernel's program
/// covers gets its router settings alone (relays between kernels and to
/// the east edge). PEs with equal settings form rectangles: runs down a
/// column, merged with the same run of the column to the west.
void emitRelays(OpBuilder &b, Location loc, Operation *wprog,
                       const RouteTable &table) {
  MLIRContext *ctx = b.getContext();
  std::set<std::pair<int64_t, int64_t>> covered;
  for (Operation &op : wprog->getRegion(0).front()) {
    if (auto g = dyn_cast<wv::PeGroupOp>(op)) {
      common::RectAttr r = g.getRect();
      for (int64_t dx = 0; dx < int64_t(r.getWidth()); ++dx)
        for (int64_t dy = 0; dy < int64_t(r.getHeight()); ++dy)
          covered.insert({r.getX() + dx, r.getY() + dy});
    } else if (auto pe = dyn_cast<wv::PeOp>(op)) {
      covered.insert({int64_t(pe.getX()), int64_t(pe.getY())});
    }
  }
  auto same = [&](std::pair<int64_t, int64_t> a,
                  std::pair<int64_t, int64_t> c) {
    const auto &x = table.at(a), &y = table.at(c);
    if (x.size() != y.size())
      return false;
    for (auto [p, q] : llvm::zip(x, y))
      if (p.first != q.first || p.second.in != q.second.in ||
          p.second.out != q.second.out)
        return false;
    return true;
  };
  // Runs down each column: (x, y0, height), in column order.
  struct Run {
    int64_t x, y, w, h;
  };
  std::vector<Run> runs;
  for (auto it = table.begin(); it != table.end(); ++it) {
    auto [pe, colors] = *it;
    if (covered.count(pe))
      continue;
    if (!runs.empty()) {
      Run &last = runs.back();
      if (last.x == pe.first && last.y + last.h == pe.second &&
          same({last.x, last.y}, pe)) {
        ++last.h;
        continue;
      }
    }
    runs.push_back({pe.first, pe.second, 1, 1});
  }
  // Merge equal runs of neighbouring columns into rectangles.
  std::vector<Run> rects;
  for (const Run &r : runs) {
    auto prev = llvm::find_if(llvm::reverse(rects), [&](const Run &q) {
      return q.x + q.w == r.x && q.y == r.y && q.h == r.h;
    });
    if (prev != rects.rend()) {
      bool equal = true;
      for (int64_t dy = 0; dy < r.h && equal; ++dy)
        equal = same({prev->x, r.y + dy}, {r.x, r.y + dy});
      if (equal) {
        ++prev->w;
        continue;
      }
    }
    rects.push_back(r);
  }
  for (const Run &r : rects) {
    std::string name =
        ("relay_" + Twine(r.x) + "_" + Twine(r.y)).str();
    Operation *pe;
    if (r.w * r.h > 1)
      pe = wv::PeGroupOp::create(
          b, loc, name, common::RectAttr::get(ctx, r.x, r.y, r.w, r.h));
    else
      pe = wv::PeOp::create(b, loc, name, r.x, r.y);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&pe->getRegion(0).emplaceBlock());
    WaveletBuilder(b, loc).routesAt(table, r.x, r.y);
  }
}

} // namespace weft::conversion
