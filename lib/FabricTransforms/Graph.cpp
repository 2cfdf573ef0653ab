//===- Graph.cpp - A placed network of kernels, analysed ------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/FabricTransforms/Graph.h"
#include "weft/Kernels/JoinKernel.h"

#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <optional>

using namespace mlir;
namespace fab = weft::fabric;
namespace common = weft::common;

namespace weft::conversion {

int64_t Graph::streamOf(fab::IoOp io) const {
  for (auto [i, s] : llvm::enumerate(streams))
    if (s.input == io || llvm::is_contained(s.outputs, io))
      return int64_t(i);
  return -1;
}

/// Places a pooling or a depthwise kernel: one column from row 0, whose
/// rows divide its `units` (channels, groups) so that each holds whole ones
/// (docs/execution-model.md, "Pooling", "Depthwise convolution").
static LogicalResult placeWindowColumn(Stage &st, const KernelInfo &info,
                                       common::RectAttr rect, int64_t units,
                                       StringRef what, StringRef unit,
                                       int64_t tiles = 1) {
  fab::KernelOp kernel = st.kernel;
  int64_t rows = rect.getHeight();
  if (int64_t(rect.getWidth()) != tiles || rect.getY() != 0)
    return kernel.emitOpError("is a ")
           << kernel.getScheme().getSummary() << " and must occupy "
           << (tiles == 1 ? std::string("one column")
                          : std::to_string(tiles) + " columns (a band each)")
           << " from row 0, not " << rect.getWidth() << " columns from row "
           << rect.getY();
  if (units % rows)
    return kernel.emitOpError(what)
           << units << unit << "; its " << rows << " rows must divide them";
  st.x = rect.getX();
  st.width = tiles;
  st.height = rows;
  st.inRows = st.outRows = rows;
  st.inN = info.inN;
  st.outN = info.outN;
  return success();
}

/// The kernel's layer and placement, or an error on the kernel.
static LogicalResult placeKernel(Stage &st) {
  fab::KernelOp kernel = st.kernel;
  std::optional<common::RectAttr> rect = kernel.getRect();
  if (!rect)
    return kernel.emitOpError("is not placed: run --weft-partition-dense "
                              "first");
  KernelInfo *info = &st.info;
  Precision precision = info->precision;
  if (info->isDense()) {
    DenseLayer *layer = &info->dense;
    st.dense = true;
    DenseMapping &m = st.m;
    m.x0 = rect->getX();
    m.y0 = rect->getY();
    m.smear = int64_t(kernel.getSmear());
    m.tiles = int64_t(kernel.getTiles());
    m.merge = int64_t(kernel.getMerge());
    m.rows = rect->getHeight();
    m.precision = precision;
    if (m.tiles > 1) {
      // (The verifier checked the width: tiles x smear.)
      if (!layer->conv || layer->conv->grouped() ||
          convTiles(*layer->conv, m.tiles).empty())
        return kernel.emitOpError("cannot cut its ")
               << (layer->conv ? layer->conv->wout() : 0)
               << " output columns into " << m.tiles << " bands";
    } else if (int64_t(rect->getWidth()) != m.smear)
      return kernel.emitOpError("rectangle is ")
             << rect->getWidth() << " columns wide but the smear factor is "
             << m.smear << "; a dense layer uses one column per input chunk";
    if (m.y0 != 0)
      return kernel.emitOpError("must start at row 0, where input chunk 0 "
                                "enters");
    if (m.smear > layer->K || chunkSize(layer->K, m.smear, m.smear - 1) == 0)
      return kernel.emitOpError("smear factor ")
             << m.smear << " leaves an input chunk of " << layer->K
             << " inputs empty";
    if (m.rows > layer->M || chunkSize(layer->M, m.rows, m.rows - 1) == 0)
      return kernel.emitOpError("")
             << m.rows << " rows leave a neuron chunk of " << layer->M
             << " neurons empty";
    if (layer->conv &&
        (layer->conv->cin % m.smear || layer->conv->cout % m.rows))
      return kernel.emitOpError("is a convolution of ")
             << layer->conv->cin << " input and " << layer->conv->cout
             << " output channels; its " << m.smear << " columns and "
             << m.rows << " rows must divide them";
    if (m.merge > 1 && (!layer->conv || m.tiles > 1))
      return kernel.emitOpError("merges ")
             << m.merge << " input lanes into a column, but only an "
             << "unbanded convolution can";
    st.layer = *layer;
    st.x = m.x0;
    st.width = m.smear * m.tiles;
    st.height = m.footprint();
    st.inRows = m.lanes();
    st.outRows = m.rows;
    st.inN = st.layer.K;
    st.outN = st.layer.M;
    return success();
  }
  int64_t n = info->outN;
  if (info->isPool()) {
    // A column of whole channels per row (docs/execution-model.md,
    // "Pooling").
    int64_t tiles = int64_t(kernel.getTiles());
    if (failed(placeWindowColumn(st, *info, *rect, info->layer.pool.c,
                                 "is a pooling of ", " channels", tiles)))
      return failure();
    if (tiles > 1 && poolBands(info->layer.pool, tiles).empty())
      return kernel.emitOpError("cannot cut its ")
             << info->layer.pool.wout() << " output columns into " << tiles
             << " bands (only a max pool of a window is cut into bands)";
    st.pool = true;
    return success();
  }
  if (info->isDepthwise()) {
    // A column of whole groups per row (docs/execution-model.md,
    // "Depthwise convolution").
    int64_t tiles = int64_t(kernel.getTiles());
    if (failed(placeWindowColumn(st, *info, *rect, info->layer.conv.groups,
                                 "is a convolution of ", " groups", tiles)))
      return failure();
    if (tiles > 1 && convTiles(info->layer.conv, tiles).empty())
      return kernel.emitOpError("cannot cut its ")
             << info->layer.conv.wout() << " output columns into " << tiles
             << " bands";
    st.depthwise = true;
    st.layer = info->dense;
    return success();
  }
  if (rect->getWidth() != 1 || rect->getY() != 0)
    return kernel.emitOpError("is a ")
           << kernel.getScheme().getSummary()
           << " layer and must occupy one column from row 0, not "
           << rect->getWidth() << " columns from row " << rect->getY();
  int64_t rows = rect->getHeight();
  if (rows > n || chunkSize(n, rows, rows - 1) == 0)
    return kernel.emitOpError("")
           << rows << " rows leave a chunk of its " << n << " elements empty";
  if (info->broadcastN > 0 && info->broadcastN % rows)
    return kernel.emitOpError("")
           << rows << " rows do not divide the " << info->broadcastN
           << " channels of its per-channel input (each row takes the "
              "values of its own channels)";
  st.column = info->column;
  st.column.x = rect->getX();
  st.column.layout = RowChunks{n, rows, 0};
  st.x = rect->getX();
  st.width = 1;
  st.height = rows;
  st.inRows = st.outRows = rows;
  st.inN = st.outN = n;
  return success();
}

/// The streams and kernels of `program`, kernels in topological order.
static LogicalResult buildGraph(fab::ProgramOp program, bool withData,
                                bool strict, Graph &g) {
  Block &body = program.getBody().front();
  SymbolTable symbols(program);
  for (auto io : body.getOps<fab::IoOp>())
    (io.getDirection() == common::PortDir::input ? g.inputs : g.outputs)
        .push_back(io);
  SmallVector<fab::KernelOp> kernels(body.getOps<fab::KernelOp>());
  llvm::StringMap<int64_t> kernelIndex;
  for (auto [i, k] : llvm::enumerate(kernels))
    kernelIndex[k.getSymName()] = int64_t(i);

  // A dense kernel's turn: the redistribution, and the stream to the kernel.
  llvm::StringMap<std::pair<fab::RedistributeOp, fab::StreamOp>> turnInto;
  llvm::StringMap<int64_t> turnTarget; // redistribution -> kernel index
  for (auto s : body.getOps<fab::StreamOp>()) {
    auto rd = symbols.lookup<fab::RedistributeOp>(s.getSrc());
    if (!rd || s.getGradient())
      continue;
    SmallVector<StringRef> dsts = s.getDstNames();
    if (dsts.size() != 1 || !kernelIndex.count(dsts.front()))
      return s.emitOpError("leaves redistribution @")
             << rd.getSymName() << " for anything but one kernel";
    if (turnInto.count(dsts.front()))
      return rd.emitOpError("is a second redistribution in front of @")
             << dsts.front();
    turnInto[dsts.front()] = {rd, s};
    turnTarget[rd.getSymName()] = kernelIndex[dsts.front()];
  }

  // Kernel inputs (by port) and outputs, and the streams.
  std::vector<std::vector<int64_t>> inputsOf(kernels.size());
  std::vector<int64_t> outputOf(kernels.size(), -1);
  for (auto [i, k] : llvm::enumerate(kernels))
    inputsOf[i].assign(k.getFunctionType().getNumInputs(), -1);
  for (auto s : body.getOps<fab::StreamOp>()) {
    if (s.getGradient()) {
      g.gradients.push_back(s);
      continue;
    }
    if (symbols.lookup<fab::RedistributeOp>(s.getSrc()))
      continue; // the turn's output: the kernel's input is the stream in
    GraphStream gs;
    gs.op = s;
    gs.n = cast<fab::WaveletsType>(s.getPayload()).getCount();
    int64_t self = int64_t(g.streams.size());
    if (auto it = kernelIndex.find(s.getSrc()); it != kernelIndex.end()) {
      gs.producer = it->second;
      if (outputOf[size_t(it->second)] >= 0)
        return s.emitOpError("is a second stream out of @")
               << s.getSrc() << "; a kernel's output is one stream (a fork "
                                "is one stream with several destinations)";
      outputOf[size_t(it->second)] = self;
    } else if (auto io = symbols.lookup<fab::IoOp>(s.getSrc())) {
      gs.input = io;
      for (const GraphStream &o : g.streams)
        if (o.input == io)
          return s.emitOpError("is a second stream out of host input @")
                 << io.getSymName();
    } else {
      return s.emitOpError("leaves @") << s.getSrc()
                                       << ", which is no kernel or host input";
    }
    for (auto [dst, port] : llvm::zip(s.getDstNames(), s.getDstPorts())) {
      int64_t k = -1;
      if (auto it = kernelIndex.find(dst); it != kernelIndex.end())
        k = it->second;
      else if (auto it = turnTarget.find(dst); it != turnTarget.end())
        k = it->second;
      if (k >= 0) {
        int64_t &slot = inputsOf[size_t(k)][size_t(port)];
        if (slot >= 0)
          return s.emitOpError("feeds input ")
                 << port << " of @" << kernels[size_t(k)].getSymName()
                 << ", which another stream feeds already";
        slot = self;
        gs.consumers.push_back({k, int64_t(port)});
      } else if (auto io = symbols.lookup<fab::IoOp>(dst);
                 io && io.getDirection() == common::PortDir::output) {
        gs.outputs.push_back(io);
      } else {
        return s.emitOpError("enters @")
               << dst << ", which is no kernel, redistribution or host "
                         "output";
      }
    }
    g.streams.push_back(std::move(gs));
  }
  for (auto [i, k] : llvm::enumerate(kernels)) {
    // Unplaced, a kernel input or output without a stream is an open end
    // (a program without host ports, as written in tests): the
    // partitioner gives it rows like a host port's.
    for (auto [port, st] : llvm::enumerate(inputsOf[i])) {
      if (st >= 0)
        continue;
      if (strict)
        return k.emitOpError("has no stream into input ") << port;
      GraphStream open;
      open.n = cast<RankedTensorType>(k.getFunctionType().getInput(port))
                   .getNumElements();
      open.consumers.push_back({int64_t(i), int64_t(port)});
      st = int64_t(g.streams.size());
      g.streams.push_back(std::move(open));
    }
    if (outputOf[i] >= 0)
      continue;
    if (strict)
      return k.emitOpError("has no stream out");
    GraphStream open;
    open.producer = int64_t(i);
    open.n = cast<RankedTensorType>(k.getFunctionType().getResult(0))
                 .getNumElements();
    outputOf[i] = int64_t(g.streams.size());
    g.streams.push_back(std::move(open));
  }
  for (fab::IoOp io : g.outputs)
    if (g.streamOf(io) < 0)
      return io.emitOpError("is fed by no stream");
  for (fab::IoOp io : g.inputs)
    if (g.streamOf(io) < 0)
      return io.emitOpError("feeds no stream");

  // Topological order: kernels whose inputs are ready; first one that
  // reads the last placed kernel's result (a branch is laid out in one
  // piece, so the streams inside it are not relayed past other branches),
  // otherwise the first in body order. A chain has one order.
  std::vector<bool> done(kernels.size(), false);
  auto ready = [&](size_t k) {
    for (int64_t st : inputsOf[k]) {
      int64_t p = g.streams[size_t(st)].producer;
      if (p >= 0 && !done[size_t(p)])
        return false;
    }
    return true;
  };
  std::vector<int64_t> order;
  while (order.size() < kernels.size()) {
    size_t next = kernels.size();
    int64_t last = order.empty() ? -1 : outputOf[size_t(order.back())];
    auto readsLast = [&](size_t k) {
      return last >= 0 && llvm::is_contained(inputsOf[k], last);
    };
    for (size_t k = 0; k < kernels.size() && next == kernels.size(); ++k)
      if (!done[k] && ready(k) && readsLast(k))
        next = k;
    for (size_t k = 0; k < kernels.size() && next == kernels.size(); ++k)
      if (!done[k] && ready(k))
        next = k;
    if (next == kernels.size()) {
      for (size_t k = 0; k < kernels.size(); ++k)
        if (!done[k])
          return kernels[k].emitOpError("is on a cycle of streams");
    }
    done[next] = true;
    order.push_back(int64_t(next));
  }
  std::vector<int64_t> position(kernels.size());
  for (auto [pos, k] : llvm::enumerate(order))
    position[size_t(k)] = int64_t(pos);
  for (GraphStream &s : g.streams) {
    if (s.producer >= 0)
      s.producer = position[size_t(s.producer)];
    for (auto &[k, port] : s.consumers)
      k = position[size_t(k)];
  }
  for (int64_t k : order) {
    Stage st;
    st.kernel = kernels[size_t(k)];
    FailureOr<KernelInfo> info = kernelInfo(st.kernel, withData);
    if (failed(info))
      return failure();
    st.info = std::move(*info);
    st.inputs = inputsOf[size_t(k)];
    st.output = outputOf[size_t(k)];
    if (auto it = turnInto.find(st.kernel.getSymName()); it != turnInto.end())
      std::tie(st.turn, st.turnStream) = it->second;
    st.dense = st.info.isDense();
    st.pool = st.info.isPool();
    st.depthwise = st.info.isDepthwise();
    if (auto j = dyn_cast<fab::JoinSchemeAttr>(st.kernel.getScheme())) {
      st.join = true;
      st.joinKind = j.getOp();
      // A FIFO of pixels counts the feature map's pixels per channel.
      if (fab::StreamOp in = g.streams[size_t(st.inputs[0])].op;
          in && in.getPixels())
        st.info.join.pixels = int64_t(*in.getPixels());
    }
    st.inN = st.info.inN;
    st.outN = st.info.outN;
    g.stages.push_back(std::move(st));
  }
  return success();
}

std::vector<int64_t> streamLatencies(const Graph &g) {
  std::vector<int64_t> latency(g.streams.size(), 0);
  for (const Stage &st : g.stages) {
    int64_t in = 0;
    for (int64_t s : st.inputs)
      in = std::max(in, latency[size_t(s)]);
    latency[size_t(st.output)] =
        in + fab::KernelOp(st.kernel).getPredictedCycles().value_or(0);
  }
  return latency;
}

/// The feature maps' heights (0 for other streams): fixed by the windows,
/// carried through the elementwise ops and joins.
static std::vector<int64_t> mapHeights(const Graph &g) {
  size_t n = g.streams.size();
  auto isMap = [&](int64_t s) {
    fab::StreamOp op = g.streams[size_t(s)].op;
    return op && op.getPixels();
  };
  std::vector<int64_t> height(n, 0);
  for (bool changed = true; changed;) {
    changed = false;
    auto set = [&](int64_t s, int64_t h) {
      if (h > 0 && height[size_t(s)] == 0 && isMap(s)) {
        height[size_t(s)] = h;
        changed = true;
      }
    };
    for (const Stage &st : g.stages) {
      const ChainLayer &l = st.info.layer;
      if (l.kind == ChainLayer::Kind::Conv) {
        set(st.inputs[0], l.conv.hin);
        set(st.output, l.conv.hout());
      } else if (l.kind == ChainLayer::Kind::Pool) {
        set(st.inputs[0], l.pool.hin);
        set(st.output, l.pool.hout());
      } else if (l.kind != ChainLayer::Kind::Dense) {
        // (A join's per-channel input is a map of one pixel: not the
        // result's height.)
        std::vector<int64_t> ins = st.inputs;
        if (l.broadcast)
          ins.resize(1);
        int64_t h = height[size_t(st.output)];
        for (int64_t in : ins)
          h = std::max(h, height[size_t(in)]);
        for (int64_t in : ins)
          set(in, h);
        set(st.output, h);
      }
    }
  }
  return height;
}

std::vector<StreamRows> streamRowReadiness(const Graph &g, int64_t source) {
  std::vector<int64_t> height = mapHeights(g);
  std::vector<StreamRows> rows(g.streams.size());
  if (source < 0 || height[size_t(source)] == 0)
    return rows;
  rows[size_t(source)].source = source;
  for (int64_t h = 0; h < height[size_t(source)]; ++h)
    rows[size_t(source)].ready.push_back(h + 1);
  for (const Stage &st : g.stages) {
    const ChainLayer &l = st.info.layer;
    StreamRows &out = rows[size_t(st.output)];
    const StreamRows &a = rows[size_t(st.inputs[0])];
    if (int64_t(st.output) == source || a.ready.empty() ||
        height[size_t(st.output)] == 0)
      continue;
    std::optional<ConvShape> window;
    if (l.kind == ChainLayer::Kind::Conv)
      window = l.conv;
    else if (l.kind == ChainLayer::Kind::Pool)
      window = l.pool.window();
    if (window) {
      if (int64_t(a.ready.size()) != window->hin)
        continue;
      out.source = source;
      for (int64_t oh = 0; oh < window->hout(); ++oh) {
        int64_t last = window->inputRow(oh, window->kh - 1);
        last = std::clamp<int64_t>(last, 0, window->hin - 1);
        out.ready.push_back(a.ready[size_t(last)]);
      }
      continue;
    }
    // A per-channel join waits for its scale, which needs whole samples.
    if (l.kind == ChainLayer::Kind::Dense || l.broadcast)
      continue;
    out = a;
    for (int64_t in : st.inputs) {
      const StreamRows &b = rows[size_t(in)];
      if (b.ready.size() != a.ready.size()) {
        out = StreamRows();
        break;
      }
      for (size_t h = 0; h < b.ready.size(); ++h)
        out.ready[h] = std::max(out.ready[h], b.ready[h]);
    }
  }
  return rows;
}

std::pair<StreamRows, StreamRows> joinRowReadiness(const Graph &g,
                                                   const Stage &st) {
  if (st.inputs.size() != 2)
    return {};
  // Every stream's ancestors (the streams it is computed from).
  size_t n = g.streams.size();
  std::vector<std::vector<bool>> ancestors(n, std::vector<bool>(n, false));
  for (const Stage &s : g.stages)
    for (int64_t in : s.inputs) {
      std::vector<bool> &anc = ancestors[size_t(s.output)];
      anc[size_t(in)] = true;
      for (size_t i = 0; i < n; ++i)
        if (ancestors[size_t(in)][i])
          anc[i] = true;
    }
  // The fork: the common ancestor (or input) produced last.
  int64_t a = st.inputs[0], b = st.inputs[1], fork = -1, forkAt = -2;
  for (size_t i = 0; i < n; ++i) {
    bool inA = int64_t(i) == a || ancestors[size_t(a)][i];
    bool inB = int64_t(i) == b || ancestors[size_t(b)][i];
    if (inA && inB && g.streams[i].producer > forkAt) {
      fork = int64_t(i);
      forkAt = g.streams[i].producer;
    }
  }
  std::vector<StreamRows> rows = streamRowReadiness(g, fork);
  return {rows[size_t(a)], rows[size_t(b)]};
}

FailureOr<Graph> analyzeGraph(fab::ProgramOp program, bool placed,
                              bool withData) {
  Graph g;
  if (failed(buildGraph(program, withData, /*strict=*/placed, g)))
    return failure();
  if (!placed)
    return g;
  if (g.stages.empty())
    return program.emitOpError("has no kernel between its host ports");
  auto target = program.getTargetAttr();
  int64_t gridW = target.getWidth(), gridH = target.getHeight();
  int64_t x = 0;
  for (Stage &st : g.stages) {
    if (failed(placeKernel(st)))
      return failure();
    if (st.x != x)
      return st.kernel.emitOpError("starts at column ")
             << st.x << " but the previous layer ends at column " << x
             << "; layers are placed side by side from column 0";
    if (st.height > gridH || st.x + st.width > gridW)
      return st.kernel.emitOpError("rectangle does not fit the ")
             << gridW << "x" << gridH << " fabric (it needs " << st.width
             << " columns and " << st.height << " rows at column " << st.x
             << ")";
    x += st.width;
  }
  g.endX = x;
  // Every stream reaches its consumers in the row chunks they take.
  for (GraphStream &s : g.streams) {
    int64_t rows = 0;
    std::string from;
    if (s.producer >= 0) {
      Stage &p = g.stages[size_t(s.producer)];
      rows = p.outRows;
      from = ("@" + p.kernel.getSymName()).str();
      if (p.outN != s.n)
        return s.op.emitOpError("carries ")
               << s.n << " elements but @" << p.kernel.getSymName()
               << " sends " << p.outN;
    }
    for (auto [k, port] : s.consumers) {
      Stage &c = g.stages[size_t(k)];
      if (c.info.inNOf(port) != s.n)
        return s.op.emitOpError("carries ")
               << s.n << " elements but @" << c.kernel.getSymName()
               << " takes " << c.info.inNOf(port);
      if (rows == 0) {
        rows = c.inRows;
        from = ("@" + c.kernel.getSymName()).str();
        continue;
      }
      if (c.inRows != rows)
        return c.kernel.emitOpError("receives ")
               << s.n << " elements in " << c.inRows << " row chunks, but "
               << from << " has them in " << rows
               << " rows; weft has no redistribution between different row "
                  "chunkings (the partitioner lines them up)";
    }
    for (fab::IoOp io : s.outputs) {
      auto type = cast<RankedTensorType>(io.getType());
      if (type.getNumElements() != s.n)
        return io.emitOpError("takes ")
               << type.getNumElements() << " elements per sample but @"
               << s.op.getSymName() << " carries " << s.n;
    }
    if (s.input) {
      auto type = cast<RankedTensorType>(s.input.getType());
      if (type.getNumElements() != s.n)
        return s.input.emitOpError("gives ")
               << type.getNumElements() << " elements per sample but @"
               << s.op.getSymName() << " carries " << s.n;
    }
  }
  return g;
}

std::string sparseIneligible(const Graph &g, const Stage &c) {
  if (!c.dense || c.layer.conv)
    return "not a dense layer";
  const GraphStream &gs = g.streams[size_t(c.inputs[0])];
  // A host input: the host sends its non-zero values (architecture §5.2).
  const bool host = gs.producer < 0;
  if (fab::StreamOp in = gs.op;
      host && in && !in.getPayload().getElementType().isF32())
    return "a host input of other than fp32 values";
  if (!host) {
    const Stage &p = g.stages[size_t(gs.producer)];
    if (!p.dense || p.layer.conv)
      return "not produced by a dense layer";
    if (!p.layer.relu)
      return "not the results of a ReLU";
  }
  if (gs.consumers.size() != 1 || !gs.outputs.empty())
    return "read by more than the dense layer";
  if (c.m.precision != Precision::Mixed)
    return "read by an fp32 layer (sparse values are fp16: --precision "
           "mixed)";
  fab::StreamOp op = gs.op;
  if (c.m.merge != 1 || (op && op.getPixels()) ||
      (!host && g.stages[size_t(gs.producer)].m.rows != c.m.smear))
    return "not a row-chunked vector";
  return "";
}

std::optional<MapJoin> mapJoinOf(const Graph &g, const Stage &st) {
  // A per-channel join buffers whole samples: its scale needs one.
  if (!st.join || st.info.join.broadcast >= 0)
    return std::nullopt;
  auto [a, b] = joinRowReadiness(g, st);
  fabric::StreamOp op = g.streams[size_t(st.inputs[0])].op;
  if (a.ready.empty() || b.ready.empty() || a.ready.size() != b.ready.size() ||
      !op || !op.getPixels())
    return std::nullopt;
  MapJoin j;
  j.pixels = int64_t(*op.getPixels());
  int64_t height = int64_t(a.ready.size()), width = j.pixels / height;
  // The FIFO holds the input that runs ahead; when each runs ahead of the
  // other at some row, one FIFO of rows is not enough: whole samples.
  int64_t aheadA = joinFifoRows(b.ready, a.ready),
          aheadB = joinFifoRows(a.ready, b.ready);
  if (aheadA > 0 && aheadB > 0)
    return std::nullopt;
  j.buffered = aheadA > 0 ? 0 : 1;
  j.fifoPixels = std::max<int64_t>({1, aheadA, aheadB}) * width;
  return j;
}

NetworkShape networkShapeOf(const Graph &g) {
  NetworkShape net;
  net.numStreams = int64_t(g.streams.size());
  for (const Stage &st : g.stages) {
    net.layers.push_back({st.info.layer, st.inputs, st.output});
    if (std::optional<MapJoin> j = mapJoinOf(g, st)) {
      net.layers.back().layer.pixels = j->pixels;
      net.layers.back().layer.fifoPixels = j->fifoPixels;
    }
  }
  // A feature-map stream's rows carry whole channels.
  for (const GraphStream &s : g.streams) {
    int64_t pixels = 0;
    if (fabric::StreamOp op = s.op; op && op.getPixels())
      pixels = int64_t(*op.getPixels());
    net.streamChannels.push_back(pixels ? s.n / pixels : 0);
  }
  return net;
}

} // namespace weft::conversion
