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

namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;

/// Word addresses of the PE memory map both kernel kinds share
/// (docs/execution-model.md): data from word 1152.
constexpr int64_t kDataBase = 1152;
/// The longest vector a DSD describes.
constexpr int64_t kMaxVector = 32767;

/// The numbers of bands of output columns a convolution may be cut into
/// besides 1 (docs/execution-model.md, "Bands of output columns").
constexpr int64_t kTileOptions[] = {2, 3, 4, 6, 8, 12, 16, 24, 32};
constexpr size_t kNumTileOptions = std::size(kTileOptions);

/// The numbers of input lanes an unbanded convolution may merge into one
/// column besides 1 (docs/execution-model.md, "Merged lanes").
constexpr int64_t kMergeOptions[] = {2, 4, 8, 16, 32, 64, 128, 256, 512};

/// The costs of one kernel for every (S, R) up to the largest fabric: -1
/// where the mapping is not allowed (an empty chunk, too much memory); a
/// convolution's also for every number of bands in kTileOptions.
struct LayerTable {
  ChainLayer layer;
  int64_t maxS = 0, maxR = 0;
  std::vector<int64_t> cost, memory;
  /// Convolutions, by (S, R) index where banding is allowed: the cost and
  /// memory of each option of kTileOptions (-1: not allowed or no faster).
  struct Bands {
    std::array<int64_t, kNumTileOptions> cost, memory;
  };
  std::map<size_t, Bands> bands;
  /// cost and memory keep only S = R, indexed by S (compactDiagonal).
  bool diagonal = false;
  /// Unbanded convolutions, by (S, R) index: the cost and memory when the
  /// input arrives on k S lanes, k of them merging into each column.
  struct Merged {
    int64_t k, cost, memory;
  };
  std::map<size_t, std::vector<Merged>> merged;

  int64_t at(int64_t s, int64_t r) const {
    if (s < 1 || r < 1 || s > maxS || r > maxR)
      return -1;
    if (diagonal)
      return s == r ? cost[size_t(s)] : -1;
    return cost[size_t(s * (maxR + 1) + r)];
  }
  int64_t mem(int64_t s, int64_t r) const {
    return memory[size_t(diagonal ? s : s * (maxR + 1) + r)];
  }
};

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
      if (l.kind == ChainLayer::Kind::Pool) {
        if (r != s || !poolMappingProblem(l.pool, r, memoryBytes).empty())
          continue;
        t.cost[i] = predictPoolCycles(l.pool, r);
        t.memory[i] = poolMemoryPerPE(l.pool, r);
        continue;
      }
      if (l.kind == ChainLayer::Kind::Conv && l.conv.grouped()) {
        if (r != s || !depthwiseMappingProblem(l.conv, r, memoryBytes).empty())
          continue;
        t.cost[i] = predictDepthwiseCycles(l.conv, r);
        t.memory[i] = depthwiseMemoryPerPE(l.conv, r);
        // Bands of output columns, a column each.
        LayerTable::Bands bands;
        bands.cost.fill(-1);
        bands.memory.fill(0);
        bool any = false;
        for (size_t k = 0; k < kNumTileOptions; ++k) {
          int64_t tiles = kTileOptions[k];
          if (tiles > l.conv.wout() ||
              !depthwiseBandsProblem(l.conv, r, tiles, memoryBytes).empty())
            continue;
          int64_t c = predictDepthwiseBandsCycles(l.conv, r, tiles);
          if (c >= t.cost[i])
            continue;
          bands.cost[k] = c;
          bands.memory[k] = depthwiseBandsMemoryPerPE(l.conv, r, tiles);
          any = true;
        }
        if (any)
          t.bands.emplace(i, bands);
        continue;
      }
      if (l.kind == ChainLayer::Kind::Conv) {
        DenseMapping m;
        m.smear = s;
        m.rows = r;
        m.precision = Precision::FP32;
        if (!convMappingProblem(l.conv, m, memoryBytes).empty())
          continue;
        t.cost[i] = predictConvCycles(l.conv, m);
        t.memory[i] = convMemoryPerPE(l.conv, m);
        LayerTable::Bands bands;
        bands.cost.fill(-1);
        bands.memory.fill(0);
        bool any = false;
        for (size_t k = 0; k < kNumTileOptions; ++k) {
          m.tiles = kTileOptions[k];
          if (m.tiles > l.conv.wout() ||
              !convMappingProblem(l.conv, m, memoryBytes).empty())
            continue;
          int64_t c = predictConvCycles(l.conv, m);
          // Only bands that make the kernel faster are worth their PEs.
          if (c >= t.cost[i])
            continue;
          bands.cost[k] = c;
          bands.memory[k] = convMemoryPerPE(l.conv, m);
          any = true;
        }
        if (any)
          t.bands.emplace(i, bands);
        // Merged lanes: k s lanes (each of whole channels) into s columns.
        m.tiles = 1;
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
      int64_t mem = memoryPerPE(l.K, l.M, m);
      if (mem > memoryBytes)
        continue;
      t.cost[i] = predictCyclesPerSample(l.K, l.M, m, l.bias);
      t.memory[i] = mem;
    }
  }
  return t;
}

/// One way to lay out a kernel: its columns, the rows leaving it, the rows
/// it occupies, its predicted cycles per sample, bands and PE memory (and
/// the input lanes merged into each column: the rows entering / width).
struct Choice {
  int64_t width = 1, out = 1, footprint = 1, cost = 0, tiles = 1, memory = 0;
  /// The rows entering (set by allChoices only).
  int64_t in = 0;
};

/// The choices of kernel l when `r` rows enter it, for every allowed R in
/// increasing R (a convolution's unbanded first, then by bands).
/// `channels`: what the rows leaving must divide (0: anything).
template <typename F>
void forEachChoice(const LayerTable &t, int64_t r, int64_t H, int64_t channels,
                   F f) {
  if (!t.layer.smeared()) {
    int64_t c = t.at(r, r);
    if (c < 0 || r > H || (channels && channels % r))
      return;
    f(Choice{1, r, r, c, 1, t.mem(r, r)});
    // A depthwise convolution in bands: a column a band.
    auto it = t.bands.find(size_t(r * (t.maxR + 1) + r));
    if (it != t.bands.end())
      for (size_t k = 0; k < kNumTileOptions; ++k)
        if (int64_t ct = it->second.cost[k]; ct >= 0)
          f(Choice{kTileOptions[k], r, r, ct, kTileOptions[k],
                   it->second.memory[k]});
    return;
  }
  if (r > H)
    return;
  for (int64_t R = 1; R <= std::min(t.maxR, H); ++R) {
    int64_t c = t.at(r, R);
    if (c < 0 || (channels && channels % R))
      continue;
    f(Choice{r, R, std::max(r, R), c, 1, t.mem(r, R)});
    auto it = t.bands.find(size_t(r * (t.maxR + 1) + R));
    if (it == t.bands.end())
      continue;
    for (size_t k = 0; k < kNumTileOptions; ++k)
      if (int64_t ct = it->second.cost[k]; ct >= 0)
        f(Choice{r * kTileOptions[k], R, std::max(r, R), ct, kTileOptions[k],
                 it->second.memory[k]});
  }
  // Merged lanes: S = r / k columns, k lanes each.
  if (t.merged.empty())
    return;
  for (int64_t k : kMergeOptions) {
    if (r % k)
      continue;
    int64_t S = r / k;
    for (int64_t R = 1; R <= std::min(t.maxR, H); ++R) {
      if (S > t.maxS || (channels && channels % R))
        continue;
      auto it = t.merged.find(size_t(S * (t.maxR + 1) + R));
      if (it == t.merged.end())
        continue;
      for (const LayerTable::Merged &mg : it->second)
        if (mg.k == k)
          f(Choice{S, R, std::max(r, R), mg.cost, 1, mg.memory});
    }
  }
}

/// The structure the programs walk: per kernel its input streams and
/// output stream, and the streams live before each kernel.
struct Shape {
  std::vector<std::vector<int64_t>> inputs;
  std::vector<int64_t> output;
  /// live[l]: the streams whose rows the state before kernel l holds
  /// (live[L] is empty).
  std::vector<std::vector<int64_t>> live;
  int64_t numStreams = 0;
  /// What the rows of each stream must divide (0: anything).
  std::vector<int64_t> channels;
  int64_t outChannels(size_t l) const { return channels[size_t(output[l])]; }

  explicit Shape(const NetworkShape &net) {
    size_t L = net.layers.size();
    numStreams = net.numStreams;
    channels = net.streamChannels;
    channels.resize(size_t(numStreams), 0);
    std::vector<int64_t> producer(size_t(numStreams), -1),
        lastUse(size_t(numStreams), -1);
    for (size_t l = 0; l < L; ++l) {
      inputs.push_back(net.layers[l].inputs);
      output.push_back(net.layers[l].output);
      producer[size_t(net.layers[l].output)] = int64_t(l);
      for (int64_t in : net.layers[l].inputs)
        lastUse[size_t(in)] = int64_t(l);
    }
    live.resize(L + 1);
    for (size_t l = 0; l <= L; ++l)
      for (int64_t st = 0; st < numStreams; ++st)
        if (producer[size_t(st)] < int64_t(l) && lastUse[size_t(st)] >= int64_t(l))
          live[l].push_back(st);
  }

  /// The rows of stream `st` in `state` (the state before kernel l).
  int64_t rowsOf(size_t l, const std::vector<int64_t> &state,
                 int64_t st) const {
    auto it = std::lower_bound(live[l].begin(), live[l].end(), st);
    return state[size_t(it - live[l].begin())];
  }
  /// The rows kernel l's inputs arrive in, or 0 when they disagree.
  int64_t inputRows(size_t l, const std::vector<int64_t> &state) const {
    int64_t r = 0;
    for (int64_t in : inputs[l]) {
      int64_t ri = rowsOf(l, state, in);
      if (r && ri != r)
        return 0;
      r = ri;
    }
    return r;
  }
  /// The state before kernel l + 1 when kernel l sends `out` rows.
  std::vector<int64_t> next(size_t l, const std::vector<int64_t> &state,
                            int64_t out) const {
    std::vector<int64_t> n;
    nextInto(l, state, out, n);
    return n;
  }
  /// next() into `n`, reusing its storage.
  void nextInto(size_t l, const std::vector<int64_t> &state, int64_t out,
                std::vector<int64_t> &n) const {
    n.clear();
    for (int64_t st : live[l + 1])
      n.push_back(st == output[l] ? out : rowsOf(l, state, st));
  }
  /// Every assignment of 1..H rows to the streams live before kernel 0,
  /// in lexicographic order.
  std::vector<std::vector<int64_t>> initialStates(int64_t H) const {
    std::vector<std::vector<int64_t>> all;
    std::vector<int64_t> s(live[0].size(), 1);
    if (s.empty())
      return {s};
    auto allowed = [&] {
      for (size_t i = 0; i < s.size(); ++i) {
        int64_t c = channels[size_t(live[0][i])];
        if (c && c % s[i])
          return false;
      }
      return true;
    };
    while (true) {
      if (allowed())
        all.push_back(s);
      size_t i = s.size();
      while (i-- > 0) {
        if (++s[i] <= H)
          break;
        s[i] = 1;
      }
      if (i == size_t(-1))
        return all;
    }
  }
};

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

/// PEs and summed cycles as one ordered key: PEs first.
constexpr int64_t kCycleScale = int64_t(1) << 30;
int64_t key(int64_t pes, int64_t cycles) {
  return pes * kCycleScale + std::min(cycles, kCycleScale - 1);
}

/// Program 2 at bottleneck `T` on H x W, then the mapping it picks.
ChainMapping layout(const std::vector<LayerTable> &tables, const Shape &shape,
                    int64_t H, int64_t W, int64_t T) {
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
          std::vector<int64_t> next = shape.next(l, state, out);
          int64_t rest = at(l + 1, next)[size_t(w - width)];
          if (rest >= kInf || rest + key(width * out, c) != want)
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

//===----------------------------------------------------------------------===//
// Above the state budget: a bounded forward search
//===----------------------------------------------------------------------===//

/// The exact programs keep a row of W + 1 values per reachable state, and
/// the states are the row assignments of the live streams: exponential in
/// the streams live at once (GoogLeNet's split concatenations keep up to 12).
/// Whether the states the exact programs would reach on H rows number at
/// most `budget` (over all kernels), by enumerating them forward.
bool withinStateBudget(const std::vector<LayerTable> &tables,
                       const Shape &shape, int64_t H, size_t budget) {
  std::set<std::vector<int64_t>> states;
  for (std::vector<int64_t> &s : shape.initialStates(H))
    states.insert(std::move(s));
  size_t total = states.size();
  for (size_t l = 0; l < tables.size(); ++l) {
    std::set<std::vector<int64_t>> next;
    for (const std::vector<int64_t> &s : states)
      if (int64_t r = shape.inputRows(l, s))
        forEachChoice(tables[l], r, H, shape.outChannels(l),
                      [&](const Choice &ch) {
                        next.insert(shape.next(l, s, ch.out));
                      });
    total += next.size();
    if (total > budget)
      return false;
    states = std::move(next);
  }
  return true;
}

/// The exact programs' memo budget: at W = 750 two rows of 751 values per
/// state, about 240 MB at the budget.
constexpr size_t kStateBudget = 20000;
/// The bounded search keeps at most this many partial layouts per kernel.
constexpr size_t kBeamWidth = 1024;
/// The beam of the bounded search while `--grid auto` compares heights.
constexpr size_t kGridBeamWidth = 64;

/// Every kernel's choices on H rows, for every rows entering it.
std::vector<std::vector<Choice>> allChoices(const std::vector<LayerTable> &tables,
                                           const Shape &shape, int64_t H) {
  std::vector<std::vector<Choice>> all(tables.size());
  for (size_t l = 0; l < tables.size(); ++l)
    for (int64_t r = 1; r <= std::min(H, tables[l].maxS); ++r)
      forEachChoice(tables[l], r, H, shape.outChannels(l),
                    [&](const Choice &ch) {
                      all[l].push_back(ch);
                      all[l].back().in = r;
                    });
  return all;
}

/// Per kernel and bottleneck, bounds that ignore how the streams tie the
/// kernels together (every kernel takes any rows in and out): the fewest
/// columns and the smallest PE-and-cycle key of the kernels l.. when every
/// kernel takes at most T cycles. They rank the partial layouts of the
/// bounded search and drop those that cannot fit.
class RelaxedBounds {
public:
  /// `all`: every kernel's choices on the largest fabric (allChoices);
  /// those of footprint at most H count.
  RelaxedBounds(const std::vector<LayerTable> &tables,
                const std::vector<std::vector<Choice>> &all, const Shape &shape,
                int64_t H) {
    size_t L = all.size();
    for (const LayerTable &t : tables)
      passes.push_back(!t.layer.smeared());
    byCost.resize(L);
    readers.resize(size_t(shape.numStreams));
    narrowest.assign(L, std::vector<int64_t>(size_t(H + 1), kInf));
    for (size_t l = 0; l < L; ++l) {
      for (int64_t in : shape.inputs[l])
        readers[size_t(in)].push_back(l);
      // narrowest[l][r]: the narrowest choice on r rows in; [0] any.
      for (const Choice &ch : all[l]) {
        if (ch.footprint > H)
          continue;
        int64_t r = ch.in;
        narrowest[l][size_t(r)] = std::min(narrowest[l][size_t(r)], ch.width);
        narrowest[l][0] = std::min(narrowest[l][0], ch.width);
      }
    }
    std::vector<int64_t> costs;
    for (size_t l = 0; l < L; ++l) {
      for (const Choice &ch : all[l])
        if (ch.footprint <= H) {
          byCost[l].push_back(ch);
          costs.push_back(ch.cost);
        }
      std::sort(byCost[l].begin(), byCost[l].end(),
                [](const Choice &a, const Choice &b) {
                  return std::tie(a.cost, a.width) < std::tie(b.cost, b.width);
                });
    }
    // Thresholds: the distinct costs, at most kLevels of them (quantiles,
    // each rounded up to a cost that occurs).
    std::sort(costs.begin(), costs.end());
    costs.erase(std::unique(costs.begin(), costs.end()), costs.end());
    allCosts = costs;
    constexpr size_t kLevels = 1024;
    if (costs.size() > kLevels) {
      std::vector<int64_t> q;
      for (size_t i = 1; i <= kLevels; ++i)
        q.push_back(costs[i * costs.size() / kLevels - 1]);
      costs = std::move(q);
    }
    thresholds = std::move(costs);
    // suffixWidth[l][i]: the fewest columns of kernels l.. at thresholds[i]
    // (the narrowest choice of each whose cost is at most the threshold).
    suffixWidth.assign(L + 1, std::vector<int64_t>(thresholds.size(), 0));
    for (size_t l = L; l-- > 0;) {
      size_t j = 0;
      int64_t w = kInf;
      for (size_t i = 0; i < thresholds.size(); ++i) {
        for (; j < byCost[l].size() && byCost[l][j].cost <= thresholds[i]; ++j)
          w = std::min(w, byCost[l][j].width);
        suffixWidth[l][i] = std::min(kInf, w + suffixWidth[l + 1][i]);
      }
    }
  }

  /// The columns the kernels l.. reading the streams of `state` (the state
  /// before l) need beyond the relaxed counts, as the streams' rows fix
  /// their input (a dense kernel or convolution is as wide as its input's
  /// rows); kInf when one of them has no choice on those rows or a later
  /// join's two live inputs disagree.
  int64_t extraColumns(const Shape &shape, size_t l,
                       const std::vector<int64_t> &state) const {
    int64_t extra = 0;
    // (stream, rows): a column or join kernel passes its input's rows on.
    std::vector<std::pair<int64_t, int64_t>> &work = scratch;
    work.clear();
    for (size_t i = 0; i < state.size(); ++i)
      work.push_back({shape.live[l][i], state[i]});
    while (!work.empty()) {
      auto [st, r] = work.back();
      work.pop_back();
      for (size_t j : readers[size_t(st)]) {
        if (j < l)
          continue;
        const std::vector<int64_t> &byRows = narrowest[j];
        if (r >= int64_t(byRows.size()) || byRows[size_t(r)] >= kInf)
          return kInf;
        extra += byRows[size_t(r)] - byRows[0];
        for (int64_t other : shape.inputs[j])
          if (other != st &&
              std::binary_search(shape.live[l].begin(), shape.live[l].end(),
                                 other) &&
              shape.rowsOf(l, state, other) != r)
            return kInf;
        // A join reached from both inputs passes its rows on once.
        if (passes[j] && shape.inputs[j].front() == st)
          work.push_back({shape.output[j], r});
      }
    }
    return extra;
  }

  /// Every kernel's distinct costs, sorted.
  const std::vector<int64_t> &costs() const { return allCosts; }

  /// The fewest columns any layout needs (kInf: some kernel has no choice).
  int64_t minimumColumns() const {
    return suffixWidth[0].empty() ? kInf : suffixWidth[0].back();
  }

  /// A lower bound (up to the thresholds' rounding) of the bottleneck of
  /// kernels l.. in `w` columns; kInf if they fit in no `w` columns.
  int64_t bottleneck(size_t l, int64_t w) const {
    const std::vector<int64_t> &s = suffixWidth[l];
    if (s.empty() || s.back() > w)
      return s.empty() ? 0 : kInf;
    // suffixWidth is nonincreasing in the threshold.
    size_t i = size_t(std::partition_point(s.begin(), s.end(),
                                           [&](int64_t x) { return x > w; }) -
                      s.begin());
    return thresholds[i];
  }

  /// At bottleneck T: the fewest columns and the smallest key of kernels l..
  void atBottleneck(int64_t T, std::vector<int64_t> &width,
                    std::vector<int64_t> &keys) const;

private:
  /// extraColumns' work list, kept to spare the allocation.
  mutable std::vector<std::pair<int64_t, int64_t>> scratch;
  std::vector<int64_t> allCosts;
  std::vector<std::vector<size_t>> readers;
  /// Per kernel: its output has its input's rows (not smeared).
  std::vector<bool> passes;
  std::vector<std::vector<int64_t>> narrowest;
  /// Per kernel, its choices by increasing cost.
  std::vector<std::vector<Choice>> byCost;
  std::vector<int64_t> thresholds;
  std::vector<std::vector<int64_t>> suffixWidth;
};

void RelaxedBounds::atBottleneck(int64_t T, std::vector<int64_t> &width,
                                 std::vector<int64_t> &keys) const {
  size_t L = byCost.size();
  width.assign(L + 1, 0);
  keys.assign(L + 1, 0);
  for (size_t l = L; l-- > 0;) {
    int64_t w = kInf, k = kInf;
    for (const Choice &ch : byCost[l])
      if (ch.cost <= T) {
        w = std::min(w, ch.width);
        k = std::min(k, key(ch.width * ch.out, ch.cost));
      }
    width[l] = std::min(kInf, w + width[l + 1]);
    keys[l] = std::min(kInf, k + keys[l + 1]);
  }
}

/// One partial layout of kernels 0 .. l - 1: the rows of the streams live
/// before l, the columns used, the value so far (the bottleneck, or the
/// summed PE-and-cycle key), and how it was reached.
struct Partial {
  std::vector<int64_t> state;
  int64_t columns = 0, value = 0;
  int64_t parent = -1; ///< index in the previous kernel's partials
  Choice choice;
};

/// A hash of a row assignment (the bounded search's program 1 keeps one
/// partial per assignment).
struct StateHash {
  size_t operator()(const std::vector<int64_t> &s) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t v : s)
      h = (h ^ uint64_t(v)) * 1099511628211ull;
    return size_t(h);
  }
};

/// The bounded search: the programs of the exact search run forward over
/// the kernels, keeping per row assignment only the partial layouts no
/// other one beats in both columns and value, and at most `beam` of them
/// per kernel, the best by `rank` (deterministic: ties by columns, then by
/// the rows). `T` < kInf: program 2 at bottleneck T; otherwise program 1.
/// `columnsOnly` (program 1, whose value is always 0): per row assignment
/// only the fewest columns count, so the expansion keeps one partial per
/// assignment as it goes (the first of the narrowest: lowest parent, then
/// the choices' order) instead of sorting every candidate. Returns the
/// partials after the last kernel, with every kernel's for the trace in
/// `levels`.
template <typename Value, typename Rank>
void searchForward(const std::vector<LayerTable> &tables, const Shape &shape,
                   int64_t H, int64_t W, int64_t T, size_t beam,
                   bool columnsOnly, Value value, Rank rank,
                   std::vector<std::vector<Partial>> &levels) {
  size_t L = tables.size();
  levels.assign(L + 1, {});
  for (std::vector<int64_t> &s : shape.initialStates(H))
    levels[0].push_back(Partial{std::move(s), 0, 0, -1, Choice{}});
  // Program 1's per-parent narrowest choice per rows out, and the index of
  // each assignment's partial.
  std::vector<int64_t> narrowestOut(size_t(H + 1), -1);
  std::vector<Choice> choiceOut(size_t(H + 1));
  std::vector<int64_t> outs;
  std::unordered_map<std::vector<int64_t>, size_t, StateHash> index;
  for (size_t l = 0; l < L; ++l) {
    std::vector<Partial> front;
    const std::vector<Partial> &cur = levels[l];
    if (columnsOnly) {
      index.clear();
      std::vector<int64_t> st;
      for (size_t i = 0; i < cur.size(); ++i) {
        const Partial &p = cur[i];
        int64_t r = shape.inputRows(l, p.state);
        if (!r)
          continue;
        outs.clear();
        forEachChoice(tables[l], r, H, shape.outChannels(l),
                      [&](const Choice &ch) {
                        if (ch.cost > T || p.columns + ch.width > W)
                          return;
                        int64_t &n = narrowestOut[size_t(ch.out)];
                        if (n < 0)
                          outs.push_back(ch.out);
                        if (n < 0 || ch.width < n) {
                          n = ch.width;
                          choiceOut[size_t(ch.out)] = ch;
                        }
                      });
        // Increasing rows out, as the sort by state would meet them.
        std::sort(outs.begin(), outs.end());
        for (int64_t out : outs) {
          const Choice &ch = choiceOut[size_t(out)];
          narrowestOut[size_t(out)] = -1;
          shape.nextInto(l, p.state, out, st);
          int64_t cols = p.columns + ch.width;
          auto it = index.find(st);
          if (it == index.end()) {
            index.emplace(st, front.size());
            front.push_back(Partial{st, cols, 0, int64_t(i), ch});
          } else if (cols < front[it->second].columns) {
            front[it->second].columns = cols;
            front[it->second].parent = int64_t(i);
            front[it->second].choice = ch;
          }
        }
      }
      std::sort(front.begin(), front.end(),
                [](const Partial &a, const Partial &b) {
                  return a.state < b.state;
                });
    } else {
      std::vector<Partial> next;
      for (size_t i = 0; i < cur.size(); ++i) {
        const Partial &p = cur[i];
        int64_t r = shape.inputRows(l, p.state);
        if (!r)
          continue;
        forEachChoice(tables[l], r, H, shape.outChannels(l),
                      [&](const Choice &ch) {
                        if (ch.cost > T)
                          return;
                        int64_t cols = p.columns + ch.width;
                        if (cols > W)
                          return;
                        int64_t v = value(p.value, ch);
                        next.push_back(Partial{shape.next(l, p.state, ch.out),
                                               cols, v, int64_t(i), ch});
                      });
      }
      // Per state, the front of (columns, value): sorted by state, columns,
      // value, an entry survives when its value beats every narrower one's.
      std::sort(next.begin(), next.end(),
                [](const Partial &a, const Partial &b) {
                  return std::tie(a.state, a.columns, a.value, a.parent) <
                         std::tie(b.state, b.columns, b.value, b.parent);
                });
      for (Partial &p : next) {
        if (!front.empty() && front.back().state == p.state &&
            front.back().value <= p.value)
          continue;
        front.push_back(std::move(p));
      }
    }
    // Drop what cannot fit, then keep the best `beam`.
    std::vector<std::pair<std::array<int64_t, 2>, size_t>> order;
    for (size_t i = 0; i < front.size(); ++i) {
      std::array<int64_t, 2> k = rank(l + 1, front[i]);
      if (k[0] < kInf)
        order.push_back({k, i});
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](const auto &a, const auto &b) {
                       return std::tie(a.first, front[a.second].columns) <
                              std::tie(b.first, front[b.second].columns);
                     });
    if (order.size() > beam)
      order.resize(beam);
    std::sort(order.begin(), order.end(),
              [](const auto &a, const auto &b) { return a.second < b.second; });
    for (const auto &o : order)
      levels[l + 1].push_back(std::move(front[o.second]));
  }
}

/// The bounded search's program 1 at bottleneck T: the layouts of kernels
/// whose cycles are at most T with the fewest columns it finds (per row
/// assignment the fewest columns; the beam keeps the partials that use, with
/// what their streams' rows already fix, the fewest columns).
void fewestColumns(const std::vector<LayerTable> &tables, const Shape &shape,
                   const RelaxedBounds &bounds, int64_t H, int64_t W,
                   int64_t T, size_t beam,
                   std::vector<std::vector<Partial>> &levels) {
  searchForward(
      tables, shape, H, W, T, beam, /*columnsOnly=*/true,
      [](int64_t, const Choice &) { return 0; },
      [&](size_t l, const Partial &p) {
        int64_t extra = bounds.extraColumns(shape, l, p.state);
        if (extra >= kInf)
          return std::array<int64_t, 2>{kInf, 0};
        return std::array<int64_t, 2>{p.columns + extra, 0};
      },
      levels);
}

/// The fewest columns of a partial after the last kernel (kInf if none).
int64_t columnsFound(const std::vector<std::vector<Partial>> &levels,
                     size_t *best = nullptr) {
  int64_t c = kInf;
  for (size_t i = 0; i < levels.back().size(); ++i)
    if (levels.back()[i].columns < c) {
      c = levels.back()[i].columns;
      if (best)
        *best = i;
    }
  return c;
}

/// The bounded search's bottleneck on H x W: the smallest of the kernels'
/// costs at which fewestColumns (with a beam of `beam`) finds a layout in W
/// columns (kInf if none). It bisects over the sorted costs from the first
/// at which the relaxed count fits W (below it no layout fits: every kernel
/// is at least as wide as its narrowest choice of at most T cycles). With a
/// `hint` (a bottleneck found before, on another height or beam), it tries
/// the hint first and, if a layout fits there, walks down from it in steps
/// that double until one fails, then bisects what is left; a bottleneck
/// near the hint thus takes a few runs instead of the full bisection's
/// log2 of the costs. Without a bottleneck known to fit it tries the
/// largest cost first: if nothing fits there it gives up after one run.
/// (The beam makes "a layout fits at T" not quite
/// monotone in T, so where the search starts can move the answer a
/// little; every start is deterministic.)
int64_t boundedBottleneck(const std::vector<LayerTable> &tables,
                          const Shape &shape, const RelaxedBounds &bounds,
                          int64_t H, int64_t W, size_t beam = kBeamWidth,
                          int64_t hint = kInf) {
  const std::vector<int64_t> &costs = bounds.costs();
  std::vector<std::vector<Partial>> levels;
  auto fits = [&](size_t i) {
    fewestColumns(tables, shape, bounds, H, W, costs[i], beam, levels);
    return columnsFound(levels) <= W;
  };
  std::vector<int64_t> width, keys;
  auto relaxedFits = [&](size_t i) {
    bounds.atBottleneck(costs[i], width, keys);
    return width[0] <= W;
  };
  size_t lo = 0, hi = costs.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (relaxedFits(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  hi = costs.size();
  if (hint < kInf) {
    size_t h = size_t(std::lower_bound(costs.begin(), costs.end(), hint) -
                      costs.begin());
    if (h < lo) {
      // The hint is below what can fit: search from lo as without a hint.
    } else if (h < costs.size() && fits(h)) {
      hi = h;
      for (size_t step = 1; hi > lo; step *= 2) {
        size_t probe = hi - std::min(step, hi - lo);
        if (!fits(probe)) {
          lo = probe + 1;
          break;
        }
        hi = probe;
      }
    } else {
      lo = std::min(costs.size(), h + 1);
    }
  }
  // No bottleneck known to fit: try the loosest first, so that a network
  // that does not fit at all costs one run, not a whole bisection.
  if (hi == costs.size() && lo < hi) {
    if (!fits(costs.size() - 1))
      return kInf;
    hi = costs.size() - 1;
  }
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (fits(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo < costs.size() ? costs[lo] : kInf;
}

/// The layout a bounded search traced back from partial `best` of the
/// last kernel.
ChainMapping trace(const Shape &shape,
                   const std::vector<std::vector<Partial>> &levels,
                   size_t best) {
  size_t L = levels.size() - 1;
  std::vector<const Partial *> path(L + 1);
  path[L] = &levels[L][best];
  for (size_t l = L; l > 0; --l)
    path[l - 1] = &levels[l - 1][size_t(path[l]->parent)];
  ChainMapping m;
  m.streamRows.assign(size_t(shape.numStreams), 0);
  const std::vector<int64_t> &first = path[0]->state;
  for (size_t i = 0; i < first.size(); ++i)
    m.streamRows[size_t(shape.live[0][i])] = first[i];
  m.inputRows = first.empty() ? 1 : first.front();
  int64_t x = 0;
  for (size_t l = 0; l < L; ++l) {
    const Choice &ch = path[l + 1]->choice;
    ChainPlacement k;
    k.x0 = x;
    k.width = ch.width;
    k.rows = ch.out;
    k.footprint = ch.footprint;
    k.tiles = ch.tiles;
    k.predictedCycles = ch.cost;
    k.memoryPerPE = ch.memory;
    m.kernels.push_back(k);
    m.bottleneckCycles = std::max(m.bottleneckCycles, ch.cost);
    m.height = std::max(m.height, ch.footprint);
    m.pes += ch.width * ch.out;
    m.streamRows[size_t(shape.output[l])] = ch.out;
    x += ch.width;
  }
  m.width = x;
  m.outputRows = m.kernels.empty() ? 1 : m.kernels.back().rows;
  return m;
}

/// The bounded search's layout on H x W: program 1, then program 2 at the
/// bottleneck it found (or, should program 2's beam lose every layout that
/// fits, program 1's layout); nullopt when it finds none.
std::optional<ChainMapping>
boundedPartition(const std::vector<LayerTable> &tables, const Shape &shape,
                 const RelaxedBounds &bounds, int64_t H, int64_t W,
                 int64_t hint = kInf) {
  int64_t T = boundedBottleneck(tables, shape, bounds, H, W, kBeamWidth, hint);
  if (T >= kInf)
    return std::nullopt;
  std::vector<std::vector<Partial>> first;
  fewestColumns(tables, shape, bounds, H, W, T, kBeamWidth, first);
  size_t best = 0;
  columnsFound(first, &best);
  // The smallest key, then the fewest columns (the first of equals:
  // partials are in the order of their rows).
  auto bestOf = [](const std::vector<Partial> &last) {
    size_t best = 0;
    for (size_t i = 1; i < last.size(); ++i)
      if (std::tie(last[i].value, last[i].columns) <
          std::tie(last[best].value, last[best].columns))
        best = i;
    return best;
  };
  std::vector<int64_t> restWidth, restKey;
  bounds.atBottleneck(T, restWidth, restKey);
  std::vector<std::vector<Partial>> second;
  searchForward(tables, shape, H, W, T, kBeamWidth, /*columnsOnly=*/false,
                [](int64_t v, const Choice &ch) {
                  return v + key(ch.width * ch.out, ch.cost);
                },
                [&](size_t l, const Partial &p) {
                  int64_t extra = bounds.extraColumns(shape, l, p.state);
                  if (extra >= kInf || p.columns + extra + restWidth[l] > W ||
                      restKey[l] >= kInf)
                    return std::array<int64_t, 2>{kInf, 0};
                  return std::array<int64_t, 2>{p.value + restKey[l], p.value};
                },
                second);
  if (second.back().empty())
    return trace(shape, first, best);
  return trace(shape, second, bestOf(second.back()));
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
      std::string why = depthwiseMappingProblem(layer.conv, 1, t.memoryBytes());
      return "kernel " + std::to_string(l) + " (" + describe(layer) +
             ") fits no column of at most " + std::to_string(H) + " rows" +
             (why.empty() ? "" : " (on one PE: " + why + ")");
    }
    if (layer.kind == ChainLayer::Kind::Conv) {
      DenseMapping m;
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
      (void)chooseDenseMapping(layer.K, layer.M, p, t, why);
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

} // namespace

NetworkShape NetworkShape::chain(const std::vector<ChainLayer> &chain) {
  NetworkShape net;
  for (size_t l = 0; l < chain.size(); ++l)
    net.layers.push_back({chain[l], {int64_t(l)}, int64_t(l) + 1});
  net.numStreams = int64_t(chain.size()) + 1;
  return net;
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
  // Heights on which the exact programs would exceed the state budget
  // take the bounded search's bottlenecks, on the full width only, with a
  // beam of kGridBeamWidth, each height's bisection starting from the
  // previous bounded height's bottleneck (heights increase, so the
  // bottleneck mostly falls a little). The grid picked is searched again
  // with the full beam.
  std::vector<std::vector<Choice>> choices;
  std::set<int64_t> bounded;
  int64_t previous = kInf;
  for (int64_t h : heights) {
    std::optional<Bottleneck> g;
    std::vector<int64_t> estimates;
    if (withinStateBudget(tables, shape, h, kStateBudget)) {
      g.emplace(tables, shape, h, maxW);
    } else {
      if (choices.empty())
        choices = allChoices(tables, shape, largest.height());
      estimates.assign(size_t(maxW + 1), kInf);
      estimates[size_t(maxW)] = boundedBottleneck(
          tables, shape, RelaxedBounds(tables, choices, shape, h), h, maxW,
          kGridBeamWidth, previous);
      if (estimates[size_t(maxW)] < kInf)
        previous = estimates[size_t(maxW)];
      bounded.insert(h);
    }
    for (int64_t w : widths) {
      int64_t T = g ? bestBottleneck(*g, shape, h, w) : estimates[size_t(w)];
      if (T >= kInf)
        continue;
      // A chain without MACs (only column kernels) is judged by speed per
      // PE instead, so the same rule applies.
      double work = macs > 0 ? macs : 1.0;
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
