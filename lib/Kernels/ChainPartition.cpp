//===- ChainPartition.cpp - A balanced pipeline for a chain of kernels ----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Two dynamic programs over the kernels in topological order, for a fabric
// of H rows and W columns. The state before kernel l is the rows of every
// live stream (produced before l, or a host input, and read by l or a later
// kernel) and the columns still free:
//
//  1. the fewest cycles of the slowest kernel (min over choices of the max),
//  2. at that bottleneck, the fewest PEs, then the fewest cycles summed over
//     the kernels (the pipeline's fill time).
//
// The rows of the streams entering kernel l fix its smear (dense) or its
// rows (column and join kernels, whose two inputs must agree), so the only
// choice per kernel is a dense kernel's output rows R. For a chain the one
// live stream is the vector entering the kernel: L x H x W states of at
// most H choices each; a DAG has a state per row assignment of its live
// streams (H^k for k of them). The per-kernel costs do not depend on the
// grid and are tabulated once.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ChainPartition.h"
#include "weft/Kernels/ConvTraining.h"
#include "weft/Kernels/FrustumChain.h"

#include "PartitionSearch.h"

#include "weft/Kernels/JoinKernel.h"
#include "weft/Machine/ISA.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <tuple>

namespace weft::conversion {

namespace partition {


/// Bytes of PE memory a column kernel's PE needs for a chunk of L elements
/// (the buffers emitColumnKernel allocates: none for Relu, which works in
/// place, two chunks for Tanh and LogSoftmax, one otherwise).
int64_t columnMemory(ColumnOp op, int64_t L) {
  return 2 * (kDataBase + 2 * L * columnBuffers(op));
}

/// A join on `rows` rows, as the partitioner costs it: input b buffered
/// in a FIFO of one sample (vectors; the smallest: the FIFO's depth is
/// chosen after placement, within the memory left) or of the pixels a
/// feature map's short branch runs ahead; an add, with its fused ReLU.
JoinKernel joinOf(const ChainLayer &l, int64_t rows) {
  JoinKernel k;
  k.relu = l.relu;
  k.layout = RowChunks{l.K, rows, 0};
  k.buffered = 1;
  k.fifoSamples = 1;
  k.pixels = l.pixels;
  k.fifoPixels = l.fifoPixels;
  if (l.broadcast) {
    // The feature map waits for its per-channel scale: a buffered.
    k.op = JoinOp::Mul;
    k.broadcast = 1;
    k.buffered = 0;
  }
  return k;
}

/// Join costs already replayed (the replay is the partitioner's most
/// expensive cost model; a network's joins share few shapes): by (n, rows,
/// pixels, FIFO pixels, ReLU, per-channel b).
using JoinCostCache =
    std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, bool, bool>,
             int64_t>;

/// A kernel's bands of output columns (a convolution's copies of its
/// rectangle; a max pool's or a depthwise convolution's columns:
/// docs/execution-model.md, "Bands of output columns"): the tabulated
/// numbers of bands up to `wout` that run (`problem(tiles)` empty) and are
/// faster than the kernel unbanded (`t.cost[i]`; only then are they worth
/// their PEs), at `cost(tiles)` and `memory(tiles)`, into `t.bands[i]`.
template <typename Problem, typename Cost, typename Memory>
void tabulateColumnBands(LayerTable &t, size_t i, int64_t wout,
                         Problem problem, Cost cost, Memory memory) {
  LayerTable::Bands bands;
  bands.cost.fill(-1);
  bands.memory.fill(0);
  bool any = false;
  for (size_t k = 0; k < kNumTileOptions; ++k) {
    int64_t tiles = kTileOptions[k];
    if (tiles > wout || !problem(tiles).empty())
      continue;
    int64_t c = cost(tiles);
    if (c >= t.cost[i])
      continue;
    bands.cost[k] = c;
    bands.memory[k] = memory(tiles);
    any = true;
  }
  if (any)
    t.bands.emplace(i, bands);
}

LayerTable tabulate(const ChainLayer &l, Precision p, int64_t maxH,
                    int64_t memoryBytes, JoinCostCache &joinCosts,
                    bool mergeLanes = false) {
  LayerTable t;
  t.layer = l;
  if (l.kind == ChainLayer::Kind::Dense) {
    t.maxS = std::min(l.K, maxH);
    t.maxR = std::min(l.M, maxH);
  } else if (l.kind == ChainLayer::Kind::Conv && l.conv.grouped()) {
    // Laid out as a column kernel of whole groups per row.
    t.maxS = t.maxR = std::min(l.conv.groups, maxH);
  } else if (l.kind == ChainLayer::Kind::Conv) {
    t.maxS = std::min(l.conv.cin, maxH);
    t.maxR = std::min(l.conv.cout, maxH);
  } else if (l.kind == ChainLayer::Kind::Pool) {
    // Laid out as a column kernel of whole channels per row.
    t.maxS = t.maxR = std::min(l.pool.c, maxH);
  } else {
    // A column kernel has width 1; its rows are both "S" (what enters) and
    // R (what leaves), so the table keeps S = R only.
    t.maxS = t.maxR = std::min(l.K, maxH);
  }
  size_t n = size_t((t.maxS + 1) * (t.maxR + 1));
  t.cost.assign(n, -1);
  t.memory.assign(n, 0);
  for (int64_t s = 1; s <= t.maxS; ++s) {
    if (chunkSize(l.K, s, s - 1) == 0)
      continue; // the last input chunk would be empty
    // Convolutions and poolings take whole channels per chunk.
    if ((l.kind == ChainLayer::Kind::Conv && l.conv.cin % s) ||
        (l.kind == ChainLayer::Kind::Pool && l.pool.c % s))
      continue;
    for (int64_t r = 1; r <= t.maxR; ++r) {
      if (l.kind == ChainLayer::Kind::Conv && l.conv.cout % r)
        continue;
      size_t i = size_t(s * (t.maxR + 1) + r);
      if (l.kind == ChainLayer::Kind::Join) {
        // A feature map's rows carry whole channels.
        if (r != s || (l.pixels > 0 && (l.K / l.pixels) % r))
          continue;
        int64_t L = chunkSize(l.K, r, 0);
        JoinKernel k = joinOf(l, r);
        int64_t mem = joinMemoryPerPE(k);
        // A trained Add keeps both inputs, y and dL/dy (docs/training.md).
        if (l.training)
          mem = std::max(mem, trainedJoinBytes(L, l.mapRows));
        if (L > kMaxVector || mem > memoryBytes ||
            joinFifoCapacity(k) > kMaxVector ||
            (l.broadcast && joinBroadcastDims(k).empty()))
          continue;
        auto key = std::make_tuple(l.K, r, l.pixels, l.fifoPixels, l.relu,
                                   l.broadcast);
        auto [it, fresh] = joinCosts.try_emplace(key, 0);
        if (fresh)
          it->second = predictJoinKernelCycles(k);
        t.cost[i] = it->second;
        t.memory[i] = mem;
        continue;
      }
      if (l.kind == ChainLayer::Kind::Column) {
        // AxisSoftmax: every chunk must hold whole groups.
        if (r != s || !columnRowsAllowed(l.op, l.params, l.K, r))
          continue;
        int64_t L = chunkSize(l.K, r, 0);
        int64_t mem = columnMemory(l.op, L);
        if (L > kMaxVector || mem > memoryBytes)
          continue;
        ColumnKernel k;
        k.op = l.op;
        k.params = l.params;
        k.layout = RowChunks{l.K, r, 0};
        t.cost[i] = predictColumnKernelCycles(k);
        t.memory[i] = mem;
        continue;
      }
      if (l.kind == ChainLayer::Kind::Pool && l.training) {
        // A trained max pool (docs/training.md): one column, no bands,
        // its stored rows in its memory.
        if (r != s || !trainedPoolLimits(l.pool, r).empty() ||
            trainedPoolBytes(l.pool, r) > memoryBytes)
          continue;
        t.cost[i] = predictTrainedPoolCycles(l.pool, r);
        t.memory[i] = trainedPoolBytes(l.pool, r);
        continue;
      }
      if (l.kind == ChainLayer::Kind::Pool) {
        if (r != s || !poolMappingProblem(l.pool, r, memoryBytes).empty())
          continue;
        t.cost[i] = predictPoolCycles(l.pool, r);
        t.memory[i] = poolMemoryPerPE(l.pool, r);
        tabulateColumnBands(
            t, i, l.pool.wout(),
            [&](int64_t n) {
              return poolBandsProblem(l.pool, r, n, memoryBytes);
            },
            [&](int64_t n) { return predictPoolBandsCycles(l.pool, r, n); },
            [&](int64_t n) { return poolBandsMemoryPerPE(l.pool, r, n); });
        continue;
      }
      if (l.kind == ChainLayer::Kind::Conv && l.conv.grouped()) {
        if (r != s ||
            !depthwiseMappingProblem(l.conv, r, memoryBytes, p).empty())
          continue;
        t.cost[i] = predictDepthwiseCycles(l.conv, r, p);
        t.memory[i] = depthwiseMemoryPerPE(l.conv, r, p);
        tabulateColumnBands(
            t, i, l.conv.wout(),
            [&](int64_t n) {
              return depthwiseBandsProblem(l.conv, r, n, memoryBytes, p);
            },
            [&](int64_t n) {
              return predictDepthwiseBandsCycles(l.conv, r, n, p);
            },
            [&](int64_t n) {
              return depthwiseBandsMemoryPerPE(l.conv, r, n, p);
            });
        continue;
      }
      if (l.kind == ChainLayer::Kind::Conv && !l.frustum.empty()) {
        // A fused frustum group: one PE a band, in the bands its recorded
        // tile gives (placedFrustumBands).
        if (s != 1 || r != 1)
          continue;
        size_t option = kNumTileOptions;
        const int64_t tiles =
            placedFrustumBands(l.frustum, l.frustumTiles, memoryBytes);
        for (size_t k = 0; k < kNumTileOptions; ++k)
          if (kTileOptions[k] == tiles)
            option = k;
        if (!tiles)
          continue;
        t.cost[i] = predictFrustumCycles(l.frustum, tiles);
        t.memory[i] = frustumMemoryPerPE(l.frustum, tiles);
        if (option < kNumTileOptions) {
          LayerTable::Bands bands;
          bands.cost.fill(-1);
          bands.memory.fill(0);
          bands.cost[option] = t.cost[i];
          bands.memory[option] = t.memory[i];
          t.bands.emplace(i, bands);
        }
        continue;
      }
      if (l.kind == ChainLayer::Kind::Conv && l.training) {
        // Trained (docs/training.md, "Convolutions"): one band, no merged
        // lanes, its training memory and round.
        DenseMapping m;
        m.smear = s;
        m.rows = r;
        m.precision = p;
        if (!convMappingProblem(l.conv, m, memoryBytes).empty() ||
            !trainedConvLimits(l.conv, m, *l.training).empty() ||
            trainedConvBytes(l.conv, m, *l.training) > memoryBytes)
          continue;
        t.cost[i] = predictTrainedConvCycles(l.conv, m, *l.training);
        t.memory[i] = trainedConvBytes(l.conv, m, *l.training);
        continue;
      }
      if (l.kind == ChainLayer::Kind::Conv) {
        DenseMapping m;
        m.smear = s;
        m.rows = r;
        m.precision = p;
        if (!convMappingProblem(l.conv, m, memoryBytes).empty())
          continue;
        t.cost[i] = predictConvCycles(l.conv, m);
        t.memory[i] = convMemoryPerPE(l.conv, m);
        auto banded = [m](int64_t n) {
          DenseMapping b = m;
          b.tiles = n;
          return b;
        };
        tabulateColumnBands(
            t, i, l.conv.wout(),
            [&](int64_t n) {
              return convMappingProblem(l.conv, banded(n), memoryBytes);
            },
            [&](int64_t n) { return predictConvCycles(l.conv, banded(n)); },
            [&](int64_t n) { return convMemoryPerPE(l.conv, banded(n)); });
        // Merged lanes: k s lanes (each of whole channels) into s columns.
        for (int64_t k : kMergeOptions) {
          if (!mergeLanes || s * k > maxH)
            break;
          if (l.conv.cin % (s * k))
            continue;
          m.merge = k;
          if (!convMappingProblem(l.conv, m, memoryBytes).empty())
            continue;
          t.merged[i].push_back({k, predictConvCycles(l.conv, m),
                                 convMemoryPerPE(l.conv, m)});
        }
        continue;
      }
      if (chunkSize(l.M, r, r - 1) == 0)
        continue; // the last neuron chunk would be empty
      DenseMapping m;
      m.smear = s;
      m.rows = r;
      m.precision = p;
      int64_t mem = l.training
                        ? trainedDenseBytes(l.K, l.M, l.bias, /*relu=*/true,
                                            m, *l.training)
                        : memoryPerPE(l.K, l.M, m);
      if (mem > memoryBytes ||
          (l.training && !trainedDenseLimits(l.K, l.M, m).empty()))
        continue;
      // A trained layer's period is its training round (forward, delta,
      // input gradient, chain), not its inference pace.
      t.cost[i] = l.training ? predictTrainedDenseCycles(l.K, l.M, l.bias,
                                                         l.relu, m,
                                                         *l.training)
                             : predictCyclesPerSample(l.K, l.M, m, l.bias);
      if (l.sparseInput && p == Precision::Mixed && !l.training) {
        // Its input sparse: each column at its chunk's expected density
        // (what --weft-select-sparse-streams will cost it by).
        SparseIo io;
        io.in = true;
        io.inDensity = l.inputDensity.mean;
        io.chunkDensity = l.inputDensity.chunks(l.K, s);
        int64_t sparse = predictCyclesPerSample(l.K, l.M, m, l.bias, io);
        t.cost[i] = l.sparseOn ? sparse : std::min(t.cost[i], sparse);
      }
      t.memory[i] = mem;
    }
  }
  return t;
}


using StateMap = std::map<std::vector<int64_t>, std::vector<int64_t>>;

/// Program 1: g(l, state)[w] = the fewest cycles of the slowest of kernels
/// l.. from `state` with w columns free.
class Bottleneck {
public:
  Bottleneck(const std::vector<LayerTable> &tables, const Shape &shape,
             int64_t H, int64_t W)
      : tables(tables), shape(shape), H(H), W(W), memo(tables.size() + 1) {}

  const std::vector<int64_t> &at(size_t l, const std::vector<int64_t> &state) {
    auto it = memo[l].find(state);
    if (it != memo[l].end())
      return it->second;
    std::vector<int64_t> row(size_t(W + 1), l == tables.size() ? 0 : kInf);
    if (l < tables.size())
      if (int64_t r = shape.inputRows(l, state))
        forEachChoice(tables[l], r, H, shape.outChannels(l),
                      [&](const Choice &ch) {
                        int64_t width = ch.width, c = ch.cost;
                        const std::vector<int64_t> &rest =
                            at(l + 1, shape.next(l, state, ch.out));
                        for (int64_t w = width; w <= W; ++w)
                          row[size_t(w)] = std::min(
                              row[size_t(w)],
                              std::max(c, rest[size_t(w - width)]));
                      });
    return memo[l].emplace(state, std::move(row)).first->second;
  }

private:
  const std::vector<LayerTable> &tables;
  const Shape &shape;
  int64_t H, W;
  std::vector<StateMap> memo;
};

/// The smallest total width any layout of the network needs on H rows
/// (kInf if none).
int64_t minimumWidth(const std::vector<LayerTable> &tables, const Shape &shape,
                     int64_t H) {
  std::vector<std::map<std::vector<int64_t>, int64_t>> memo(tables.size() + 1);
  std::function<int64_t(size_t, const std::vector<int64_t> &)> at =
      [&](size_t l, const std::vector<int64_t> &state) -> int64_t {
    if (l == tables.size())
      return 0;
    auto it = memo[l].find(state);
    if (it != memo[l].end())
      return it->second;
    int64_t best = kInf;
    if (int64_t r = shape.inputRows(l, state))
      forEachChoice(tables[l], r, H, shape.outChannels(l),
                    [&](const Choice &ch) {
                      int64_t rest = at(l + 1, shape.next(l, state, ch.out));
                      if (rest < kInf)
                        best = std::min(best, ch.width + rest);
                    });
    memo[l][state] = best;
    return best;
  };
  int64_t best = kInf;
  for (const std::vector<int64_t> &s : shape.initialStates(H))
    best = std::min(best, at(0, s));
  return best;
}


/// Summed cycles and PEs as one ordered key: cycles first (the latency
/// objective). A layout's PEs are at most the fabric's, below 2^20; a
/// kernel's cycles are capped at 2^32, so the keys of up to 256 kernels
/// sum below kInf.
constexpr int64_t kPeScale = int64_t(1) << 20;
inline int64_t latencyKey(int64_t pes, int64_t cycles) {
  return std::min(cycles, int64_t(1) << 32) * kPeScale +
         std::min(pes, kPeScale - 1);
}

/// A kernel's share of a sample's latency under the latency objective: its
/// predicted cycles (its busiest PE's work), and for a smeared kernel
/// kLatencyPerHop for each of its S columns the partial sums stream across
/// and each of its R rows a reduction down a column streams across
/// (docs/training.md, "Partitioning for one sample in flight").
int64_t latencyCost(const ChainLayer &layer, const Choice &ch) {
  if (!layer.smeared())
    return ch.cost;
  return ch.cost + kLatencyPerHop * (ch.width / ch.tiles + ch.out);
}

/// Program 2 at bottleneck `T` on H x W, then the mapping it picks: the
/// fewest PEs, then the fewest summed cycles, of the layouts whose kernels
/// each take at most T cycles; with `latency`, the fewest summed cycles,
/// then the fewest PEs (T is then no bound: kInf).
ChainMapping layout(const std::vector<LayerTable> &tables, const Shape &shape,
                    int64_t H, int64_t W, int64_t T, bool latency = false) {
  auto key = [latency](int64_t pes, int64_t cycles) {
    return latency ? latencyKey(pes, cycles) : partition::key(pes, cycles);
  };
  size_t L = tables.size();
  std::vector<StateMap> memo(L + 1);
  std::function<const std::vector<int64_t> &(size_t,
                                             const std::vector<int64_t> &)>
      at = [&](size_t l,
               const std::vector<int64_t> &state) -> const std::vector<int64_t> & {
    auto it = memo[l].find(state);
    if (it != memo[l].end())
      return it->second;
    std::vector<int64_t> row(size_t(W + 1), l == L ? 0 : kInf);
    if (l < L)
      if (int64_t r = shape.inputRows(l, state))
        forEachChoice(
            tables[l], r, H, shape.outChannels(l), [&](const Choice &ch) {
              int64_t width = ch.width, c = ch.cost;
              if (c > T)
                return;
              const std::vector<int64_t> &rest =
                  at(l + 1, shape.next(l, state, ch.out));
              int64_t area = width * ch.out;
              if (latency)
                c = latencyCost(tables[l].layer, ch);
              for (int64_t w = width; w <= W; ++w)
                if (rest[size_t(w - width)] < kInf)
                  row[size_t(w)] = std::min(
                      row[size_t(w)], rest[size_t(w - width)] + key(area, c));
            });
    return memo[l].emplace(state, std::move(row)).first->second;
  };
  // Follow the choices, the smallest rows first on ties.
  ChainMapping m;
  std::vector<int64_t> state;
  int64_t best = kInf;
  for (const std::vector<int64_t> &s : shape.initialStates(H))
    if (int64_t v = at(0, s)[size_t(W)]; v < best) {
      best = v;
      state = s;
    }
  if (best >= kInf)
    return m; // nothing fits (no kernels)
  m.streamRows.assign(size_t(shape.numStreams), 0);
  for (size_t i = 0; i < state.size(); ++i)
    m.streamRows[size_t(shape.live[0][i])] = state[i];
  m.inputRows = state.empty() ? 1 : state.front();
  int64_t w = W, x = 0, lastRows = 1;
  for (size_t l = 0; l < L; ++l) {
    int64_t want = at(l, state)[size_t(w)];
    int64_t r = shape.inputRows(l, state);
    bool found = false;
    forEachChoice(
        tables[l], r, H, shape.outChannels(l), [&](const Choice &ch) {
          int64_t width = ch.width, out = ch.out, c = ch.cost;
          if (found || c > T || width > w)
            return;
          int64_t kc = latency ? latencyCost(tables[l].layer, ch) : c;
          std::vector<int64_t> next = shape.next(l, state, out);
          int64_t rest = at(l + 1, next)[size_t(w - width)];
          if (rest >= kInf || rest + key(width * out, kc) != want)
            return;
          found = true;
          ChainPlacement k;
          k.x0 = x;
          k.width = width;
          k.rows = out;
          k.footprint = ch.footprint;
          k.tiles = ch.tiles;
          k.predictedCycles = c;
          k.memoryPerPE = ch.memory;
          m.kernels.push_back(k);
          m.bottleneckCycles = std::max(m.bottleneckCycles, c);
          m.height = std::max(m.height, ch.footprint);
          m.pes += width * out;
          m.streamRows[size_t(shape.output[l])] = out;
          x += width;
          w -= width;
          lastRows = out;
          state = std::move(next);
        });
    (void)found;
  }
  m.width = x;
  m.outputRows = lastRows;
  return m;
}

/// The bottleneck the network reaches on H x W (kInf if it does not fit).
int64_t bestBottleneck(Bottleneck &g, const Shape &shape, int64_t H,
                       int64_t w) {
  int64_t T = kInf;
  for (const std::vector<int64_t> &s : shape.initialStates(H))
    T = std::min(T, g.at(0, s)[size_t(w)]);
  return T;
}


std::string describe(const ChainLayer &l) {
  if (l.kind == ChainLayer::Kind::Column)
    return std::string(columnOpName(l.op)) + " of " + std::to_string(l.K) +
           " elements";
  if (l.kind == ChainLayer::Kind::Join)
    return "join of two streams of " + std::to_string(l.K) + " elements";
  if (l.kind == ChainLayer::Kind::Conv) {
    const ConvShape &c = l.conv;
    return std::string(c.depthwise() ? "depthwise " : "") +
           (c.grouped() && !c.depthwise() ? std::to_string(c.groups) + "-group "
                                          : "") +
           "conv " + std::to_string(c.cin) + "x" + std::to_string(c.hin) + "x" +
           std::to_string(c.win) + " -> " + std::to_string(c.cout) + "x" +
           std::to_string(c.hout()) + "x" + std::to_string(c.wout());
  }
  if (l.kind == ChainLayer::Kind::Pool) {
    const PoolShape &p = l.pool;
    return std::string(p.max ? "maxpool " : "avgpool ") +
           std::to_string(p.c) + "x" + std::to_string(p.hin) + "x" +
           std::to_string(p.win) + " -> " + std::to_string(p.c) + "x" +
           std::to_string(p.hout()) + "x" + std::to_string(p.wout());
  }
  return "dense " + std::to_string(l.K) + " -> " + std::to_string(l.M);
}

/// Why nothing fits `t`: the first kernel that fits no rectangle on its
/// own, or the columns the network needs side by side.
std::string whyNothingFits(const NetworkShape &net,
                           const std::vector<LayerTable> &tables,
                           const Shape &shape, Precision p,
                           const machine::Target &t) {
  int64_t H = t.height(), W = t.width();
  for (size_t l = 0; l < net.layers.size(); ++l) {
    const ChainLayer &layer = net.layers[l].layer;
    bool any = false;
    for (int64_t r = 1; r <= H && !any; ++r)
      forEachChoice(tables[l], r, H, shape.outChannels(l),
                    [&](const Choice &) { any = true; });
    if (any)
      continue;
    if (layer.kind == ChainLayer::Kind::Conv && layer.conv.grouped()) {
      std::string why =
          depthwiseMappingProblem(layer.conv, 1, t.memoryBytes(), p);
      return "kernel " + std::to_string(l) + " (" + describe(layer) +
             ") fits no column of at most " + std::to_string(H) + " rows" +
             (why.empty() ? "" : " (on one PE: " + why + ")");
    }
    if (layer.kind == ChainLayer::Kind::Conv && layer.training &&
        layer.frustum.empty()) {
      // The limits and memory on one PE and on the largest rectangle.
      DenseMapping one, most;
      most.smear = std::min<int64_t>(W, H);
      most.rows = H;
      while (most.smear > 1 && layer.conv.cin % most.smear)
        --most.smear;
      while (most.rows > 1 && layer.conv.cout % most.rows)
        --most.rows;
      std::string limit = trainedConvLimits(layer.conv, one, *layer.training);
      if (!limit.empty())
        return "kernel " + std::to_string(l) + " (" + describe(layer) +
               ") cannot be trained: " + limit;
      return "kernel " + std::to_string(l) + " (" + describe(layer) +
             "): training it needs " +
             std::to_string(
                 trainedConvBytes(layer.conv, most, *layer.training)) +
             " bytes per PE even on " + std::to_string(most.smear) + " x " +
             std::to_string(most.rows) +
             " PEs (its stored input and gradient rows beside the "
             "weights), more than the " +
             std::to_string(t.memoryBytes()) + " of a PE";
    }
    if (layer.kind == ChainLayer::Kind::Conv && !layer.frustum.empty()) {
      std::string why = frustumMappingProblem(
          layer.frustum, std::max<int64_t>(1, layer.frustumTiles),
          t.memoryBytes());
      return "kernel " + std::to_string(l) + " (a fused frustum group of " +
             std::to_string(layer.frustum.size()) +
             " convolutions) fits no band of one PE: " +
             (why.empty() ? "no tabulated number of bands near its " +
                                std::to_string(layer.frustumTiles) +
                                " tile columns fits"
                          : why);
    }
    if (layer.kind == ChainLayer::Kind::Conv) {
      DenseMapping m;
      m.precision = p;
      std::string why = convMappingProblem(layer.conv, m, t.memoryBytes());
      return "kernel " + std::to_string(l) + " (" + describe(layer) +
             ") fits no rectangle of at most " + std::to_string(H) +
             " rows" + (why.empty() ? "" : " (on one PE: " + why + ")");
    }
    if (layer.kind == ChainLayer::Kind::Pool) {
      std::string why = poolMappingProblem(layer.pool, 1, t.memoryBytes());
      return "kernel " + std::to_string(l) + " (" + describe(layer) +
             ") fits no column of at most " + std::to_string(H) + " rows" +
             (why.empty() ? "" : " (on one PE: " + why + ")");
    }
    if (layer.kind == ChainLayer::Kind::Dense) {
      std::string why;
      if (chooseDenseMapping(layer.K, layer.M, p, t, why) && layer.training) {
        // It fits for inference: training's buffers are what do not.
        DenseMapping m;
        m.smear = std::min<int64_t>({layer.K, W, H});
        m.rows = std::min<int64_t>(layer.M, H);
        while (m.smear > 1 && chunkSize(layer.K, m.smear, m.smear - 1) == 0)
          --m.smear;
        while (m.rows > 1 && chunkSize(layer.M, m.rows, m.rows - 1) == 0)
          --m.rows;
        m.precision = p;
        // The largest rectangle has the smallest blocks: a limit it breaks
        // (the precision, a matrix instruction's size) every one breaks.
        if (std::string limit = trainedDenseLimits(layer.K, layer.M, m);
            !limit.empty())
          return "kernel " + std::to_string(l) + " (" + describe(layer) +
                 ") cannot be trained: " + limit;
        why = "training it needs " +
              std::to_string(trainedDenseBytes(layer.K, layer.M, layer.bias,
                                               true, m, *layer.training)) +
              " bytes per PE even on the largest rectangle the fabric gives "
              "it, " + std::to_string(m.smear) + " x " +
              std::to_string(m.rows) + " PEs (its inputs, gradients" +
              (layer.training->mbgd ? " and the mini-batch's weight gradient"
                                    : "") +
              " beside the weights), more than the " +
              std::to_string(t.memoryBytes()) + " of a PE";
      }
      return "kernel " + std::to_string(l) + " (" + describe(layer) +
             "): " + why;
    }
    return "kernel " + std::to_string(l) + " (" + describe(layer) +
           ") fits no column of at most " + std::to_string(H) + " rows of " +
           std::to_string(t.memoryBytes()) + "-byte PEs";
  }
  // Above the state budget, the relaxed count (every kernel's narrowest
  // choice) is still a number of columns the network needs at least.
  bool exact = withinStateBudget(tables, shape, H, kStateBudget);
  std::optional<RelaxedBounds> bounds;
  if (!exact)
    bounds.emplace(tables, allChoices(tables, shape, H), shape, H);
  int64_t minWidth =
      exact ? minimumWidth(tables, shape, H) : bounds->minimumColumns();
  if (minWidth >= kInf)
    return "no layout on at most " + std::to_string(H) +
           " rows gives the two streams into every join the same rows";
  if (!exact && minWidth <= W && !bounds->costs().empty()) {
    // The relaxed count fits but the search found nothing: say where the
    // search with no bound on the cycles runs out of columns.
    std::vector<std::vector<Partial>> levels;
    fewestColumns(tables, shape, *bounds, H, W, bounds->costs().back(),
                  kBeamWidth, levels);
    size_t l = 0;
    while (l + 1 < levels.size() && !levels[l + 1].empty())
      ++l;
    if (l < net.layers.size()) {
      int64_t used = kInf;
      for (const Partial &p : levels[l])
        used = std::min(used, p.columns);
      return "the bounded search (docs/execution-model.md) finds no layout "
             "of the network of " +
             std::to_string(net.layers.size()) + " kernels in " +
             std::to_string(W) + " columns of at most " + std::to_string(H) +
             " rows: none of its partial layouts extends to kernel " +
             std::to_string(l) + " (" + describe(net.layers[l].layer) +
             "), the narrowest of them already using " +
             std::to_string(used) + " columns, though each kernel's "
             "narrowest rectangle on its own would need only " +
             std::to_string(minWidth) +
             " columns side by side (the rows of the streams between the "
             "kernels make them wider)";
    }
  }
  int64_t bytesPerWeight = p == Precision::Mixed ? 2 : 4;
  int64_t weightBytes = 0;
  for (const NetworkLayer &l : net.layers)
    if (l.layer.kind == ChainLayer::Kind::Dense)
      weightBytes += l.layer.K * l.layer.M * bytesPerWeight;
    else if (l.layer.kind == ChainLayer::Kind::Conv)
      weightBytes += l.layer.conv.groupIn() * l.layer.conv.cout *
                     l.layer.conv.kh * l.layer.conv.kw * 4;
  int64_t usable = int64_t(t.memoryBytes()) - 2 * kDataBase;
  int64_t pes = (weightBytes + usable - 1) / std::max<int64_t>(1, usable);
  return "the network of " + std::to_string(net.layers.size()) +
         " kernels needs at least " + std::to_string(minWidth) +
         " columns of at most " + std::to_string(H) +
         " rows (each kernel's narrowest rectangle that fits the per-PE "
         "memory, side by side) and " +
         std::to_string(weightBytes) + " bytes of weights (at least " +
         std::to_string(pes) + " PEs of " + std::to_string(t.memoryBytes()) +
         " bytes), but the " + std::to_string(W) + "x" + std::to_string(H) +
         " fabric has " + std::to_string(W) + " columns";
}

/// Keeps only the S = R entries of a table that has no other (a join,
/// column kernel, pooling or grouped convolution): on 994 rows a full
/// table is 995^2 entries, 16 MB, and DenseNet-121 has some 300 such
/// kernels.
void compactDiagonal(LayerTable &t) {
  if (t.diagonal || !t.bands.empty() || !t.merged.empty() || t.maxS != t.maxR)
    return;
  size_t n = size_t(t.maxR + 1);
  for (size_t s = 0; s < n; ++s)
    for (size_t r = 0; r < n; ++r)
      if (r != s && t.cost[s * n + r] >= 0)
        return;
  std::vector<int64_t> cost(n, -1), memory(n, 0);
  for (size_t s = 0; s < n; ++s) {
    cost[s] = t.cost[s * n + s];
    memory[s] = t.memory[s * n + s];
  }
  t.cost = std::move(cost);
  t.memory = std::move(memory);
  t.diagonal = true;
}

std::vector<LayerTable> tabulateNetwork(const NetworkShape &net, Precision p,
                                        const machine::Target &t) {
  std::vector<LayerTable> tables;
  JoinCostCache joinCosts;
  for (const NetworkLayer &l : net.layers) {
    tables.push_back(tabulate(l.layer, p, int64_t(t.height()),
                              int64_t(t.memoryBytes()), joinCosts,
                              net.mergeLanes));
    compactDiagonal(tables.back());
  }
  return tables;
}

/// Checks the shape's streams: every kernel reads 1 or 2 streams written
/// by an earlier kernel or by no kernel (a host input).
bool validShape(const NetworkShape &net, std::string &why) {
  std::vector<int64_t> producer(size_t(std::max<int64_t>(0, net.numStreams)),
                                -1);
  for (size_t l = 0; l < net.layers.size(); ++l) {
    const NetworkLayer &layer = net.layers[l];
    auto bad = [&](int64_t st) { return st < 0 || st >= net.numStreams; };
    if (bad(layer.output) || producer[size_t(layer.output)] >= 0) {
      why = "kernel " + std::to_string(l) + " writes an invalid stream";
      return false;
    }
    size_t want = layer.layer.kind == ChainLayer::Kind::Join ? 2 : 1;
    if (layer.inputs.size() != want) {
      why = "kernel " + std::to_string(l) + " reads " +
            std::to_string(layer.inputs.size()) + " streams, not " +
            std::to_string(want);
      return false;
    }
    for (int64_t in : layer.inputs)
      if (bad(in) || in == layer.output ||
          (producer[size_t(in)] < 0 &&
           std::any_of(net.layers.begin() + long(l), net.layers.end(),
                       [&](const NetworkLayer &o) { return o.output == in; }))) {
        why = "kernel " + std::to_string(l) +
              " reads a stream no earlier kernel writes";
        return false;
      }
    producer[size_t(layer.output)] = int64_t(l);
  }
  return true;
}

} // namespace partition

using namespace partition;

NetworkShape NetworkShape::chain(const std::vector<ChainLayer> &chain) {
  NetworkShape net;
  for (size_t l = 0; l < chain.size(); ++l)
    net.layers.push_back({chain[l], {int64_t(l)}, int64_t(l) + 1});
  net.numStreams = int64_t(chain.size()) + 1;
  return net;
}

int64_t placedFrustumBands(const std::vector<ConvShape> &chain, int64_t bands,
                           int64_t memoryBytes) {
  if (bands <= 1 && frustumMappingProblem(chain, 1, memoryBytes).empty())
    return 1;
  auto fits = [&](int64_t n) {
    return frustumMappingProblem(chain, n, memoryBytes).empty();
  };
  for (int64_t n : partition::kTileOptions)
    if (n >= bands && fits(n))
      return n;
  for (size_t k = partition::kNumTileOptions; k-- > 0;) {
    int64_t n = partition::kTileOptions[k];
    if (n < bands && fits(n))
      return n;
  }
  return 0;
}

std::optional<ChainMapping> partitionNetwork(const NetworkShape &net,
                                             Precision precision,
                                             const machine::Target &target,
                                             std::string &why) {
  if (net.layers.empty()) {
    why = "the network has no kernels";
    return std::nullopt;
  }
  if (!validShape(net, why))
    return std::nullopt;
  std::vector<LayerTable> tables = tabulateNetwork(net, precision, target);
  Shape shape(net);
  int64_t H = target.height(), W = target.width();
  if (!withinStateBudget(tables, shape, H, kStateBudget)) {
    RelaxedBounds bounds(tables, allChoices(tables, shape, H), shape, H);
    std::optional<ChainMapping> m =
        boundedPartition(tables, shape, bounds, H, W);
    if (!m)
      why = whyNothingFits(net, tables, shape, precision, target);
    return m;
  }
  if (net.objective == NetworkShape::Objective::Latency) {
    ChainMapping m = layout(tables, shape, H, W, kInf, /*latency=*/true);
    if (m.kernels.size() != net.layers.size()) {
      why = whyNothingFits(net, tables, shape, precision, target);
      return std::nullopt;
    }
    return m;
  }
  Bottleneck g(tables, shape, H, W);
  int64_t T = bestBottleneck(g, shape, H, W);
  if (T >= kInf) {
    why = whyNothingFits(net, tables, shape, precision, target);
    return std::nullopt;
  }
  return layout(tables, shape, H, W, T);
}

std::optional<ChainMapping> partitionChain(const std::vector<ChainLayer> &chain,
                                           Precision precision,
                                           const machine::Target &target,
                                           std::string &why) {
  return partitionNetwork(NetworkShape::chain(chain), precision, target, why);
}

int64_t networkMacsPerSample(const NetworkShape &net) {
  int64_t macs = 0;
  for (const NetworkLayer &l : net.layers)
    if (l.layer.kind == ChainLayer::Kind::Dense && !l.layer.synthetic)
      macs += l.layer.K * l.layer.M;
    else if (l.layer.kind == ChainLayer::Kind::Conv)
      macs += l.layer.conv.modelMacs();
  return macs;
}

int64_t chainMacsPerSample(const std::vector<ChainLayer> &chain) {
  return networkMacsPerSample(NetworkShape::chain(chain));
}

std::vector<int64_t> candidateGridSizes(int64_t max) {
  std::vector<int64_t> sizes;
  for (int64_t s = 1; s <= max; ++s)
    if (s <= 16 || (s <= 64 && s % 4 == 0) || (s <= 128 && s % 8 == 0) ||
        s % 16 == 0 || s == max)
      sizes.push_back(s);
  return sizes;
}

std::optional<GridChoice> chooseGrid(const std::vector<ChainLayer> &chain,
                                     Precision precision,
                                     const machine::Target &largest,
                                     double tolerance, std::string &why) {
  return chooseGrid(NetworkShape::chain(chain), precision, largest, tolerance,
                    why);
}

std::optional<GridChoice> chooseGrid(const NetworkShape &net,
                                     Precision precision,
                                     const machine::Target &largest,
                                     double tolerance, std::string &why) {
  if (net.layers.empty()) {
    why = "the network has no kernels";
    return std::nullopt;
  }
  if (!validShape(net, why))
    return std::nullopt;
  std::vector<LayerTable> tables = tabulateNetwork(net, precision, largest);
  Shape shape(net);
  double macs = double(networkMacsPerSample(net));
  double peak = machine::peakMacsPerCycle(precision == Precision::Mixed);
  std::vector<int64_t> widths = candidateGridSizes(largest.width());
  std::vector<int64_t> heights = candidateGridSizes(largest.height());
  int64_t maxW = largest.width();

  struct Candidate {
    int64_t w, h, T;
    double u;
  };
  std::vector<Candidate> fits;
  // A chain without MACs (only column kernels) is judged by speed per PE
  // instead, so the same rule applies.
  double work = macs > 0 ? macs : 1.0;
  // Heights on which the exact programs would exceed the state budget
  // take the bounded search's bottlenecks, on the full width only, with a
  // beam of kGridBeamWidth, each height's bisection starting from the
  // previous bounded height's bottleneck (heights increase, so the
  // bottleneck mostly falls a little). The grid picked is searched again
  // with the full beam.
  std::set<int64_t> bounded;
  int64_t previous = kInf;
  // What the network can use: no choice of any kernel occupies, takes in
  // or gives out more rows than `tallest`, so every grid at least that tall
  // offers the same layouts. Heights above the first candidate `reached`
  // that tall are not searched (on the whole machine, most of them): they
  // take that height's bottlenecks, and so fit with a lower utilization,
  // count in gridsFitting and are never picked.
  std::vector<std::vector<Choice>> choices =
      allChoices(tables, shape, largest.height());
  int64_t tallest = 1;
  for (const std::vector<Choice> &layer : choices)
    for (const Choice &ch : layer)
      tallest = std::max({tallest, ch.footprint, ch.in, ch.out});
  bool reached = false;
  std::vector<int64_t> reachedT;
  for (int64_t h : heights) {
    if (reached) {
      for (size_t i = 0; i < widths.size(); ++i)
        if (int64_t w = widths[i], T = reachedT[i]; T < kInf)
          fits.push_back({w, h, T, work / (double(w * h) * peak * double(T))});
      continue;
    }
    std::optional<Bottleneck> g;
    std::vector<int64_t> estimates;
    if (withinStateBudget(tables, shape, h, kStateBudget)) {
      g.emplace(tables, shape, h, maxW);
    } else {
      estimates.assign(size_t(maxW + 1), kInf);
      estimates[size_t(maxW)] = boundedBottleneck(
          tables, shape, RelaxedBounds(tables, choices, shape, h), h, maxW,
          kGridBeamWidth, previous);
      if (estimates[size_t(maxW)] < kInf)
        previous = estimates[size_t(maxW)];
      bounded.insert(h);
    }
    if (h >= tallest) {
      reached = true;
      reachedT.assign(widths.size(), kInf);
    }
    for (size_t i = 0; i < widths.size(); ++i) {
      int64_t w = widths[i];
      int64_t T = g ? bestBottleneck(*g, shape, h, w) : estimates[size_t(w)];
      if (reached)
        reachedT[i] = T;
      if (T >= kInf)
        continue;
      fits.push_back({w, h, T, work / (double(w * h) * peak * double(T))});
    }
  }
  if (fits.empty()) {
    why = whyNothingFits(net, tables, shape, precision, largest);
    return std::nullopt;
  }
  const Candidate *best = &fits.front();
  for (const Candidate &c : fits)
    if (c.u > best->u)
      best = &c;
  const Candidate *pick = nullptr;
  for (const Candidate &c : fits) {
    if (c.u < (1.0 - tolerance) * best->u)
      continue;
    auto rank = [](const Candidate &x) {
      return std::make_tuple(x.w * x.h, x.T, std::abs(x.w - x.h), x.w);
    };
    if (!pick || rank(c) < rank(*pick))
      pick = &c;
  }
  GridChoice choice;
  choice.width = pick->w;
  choice.height = pick->h;
  choice.utilization = pick->u;
  choice.bestUtilization = best->u;
  choice.bestWidth = best->w;
  choice.bestHeight = best->h;
  choice.gridsFitting = int64_t(fits.size());
  // The tables were made for the largest height; the layout only looks at
  // rows up to h, so they serve every smaller grid.
  if (!bounded.count(pick->h)) {
    choice.mapping = layout(tables, shape, pick->h, pick->w, pick->T);
    return choice;
  }
  // The bounded search on the grid picked, with the full beam, starting
  // from the estimate: it may find a smaller bottleneck than the narrow
  // beam did.
  std::optional<ChainMapping> m = boundedPartition(
      tables, shape, RelaxedBounds(tables, choices, shape, pick->h), pick->h,
      pick->w, pick->T);
  if (!m) {
    why = "the bounded search found no layout on the " +
          std::to_string(pick->w) + "x" + std::to_string(pick->h) +
          " fabric it estimated";
    return std::nullopt;
  }
  if (m->bottleneckCycles != pick->T) {
    double work = macs > 0 ? macs : 1.0;
    choice.utilization = work / (double(pick->w * pick->h) * peak *
                                 double(m->bottleneckCycles));
    if (choice.utilization > choice.bestUtilization) {
      choice.bestUtilization = choice.utilization;
      choice.bestWidth = pick->w;
      choice.bestHeight = pick->h;
    }
  }
  choice.mapping = std::move(*m);
  return choice;
}

} // namespace weft::conversion
