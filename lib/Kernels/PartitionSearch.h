//===- PartitionSearch.h - The partitioner's tables and searches -*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Internal to lib/Kernels: what ChainPartition.cpp (the tables, the exact
// dynamic programs, --grid auto) and BoundedPartition.cpp (the bounded
// forward search above the state budget) share: each kernel's table of
// costs, its choices, the network's live streams, and the bounded search's
// entry points (docs/execution-model.md, "Partitioning a DAG").
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_KERNELS_PARTITIONSEARCH_H
#define WEFT_LIB_KERNELS_PARTITIONSEARCH_H

#include "weft/Kernels/ChainPartition.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <vector>

namespace weft::conversion::partition {

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
    // (A fused frustum group in bands runs only in its bands.)
    if (t.layer.frustum.empty() || !t.bands.count(size_t(r * (t.maxR + 1) + R)))
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
  /// Every assignment of 1..H rows to the streams live before kernel 0
  /// (rows that divide a stream's channels when it has them), in
  /// lexicographic order.
  std::vector<std::vector<int64_t>> initialStates(int64_t H) const {
    const size_t n = live[0].size();
    // The rows each stream may take, ascending.
    std::vector<std::vector<int64_t>> options(n);
    for (size_t i = 0; i < n; ++i) {
      int64_t c = channels[size_t(live[0][i])];
      for (int64_t r = 1; r <= H; ++r)
        if (!c || c % r == 0)
          options[i].push_back(r);
      if (options[i].empty())
        return {};
    }
    std::vector<std::vector<int64_t>> all;
    std::vector<size_t> at(n, 0);
    while (true) {
      std::vector<int64_t> s(n);
      for (size_t i = 0; i < n; ++i)
        s[i] = options[i][at[i]];
      all.push_back(std::move(s));
      size_t i = n;
      while (i-- > 0) {
        if (++at[i] < options[i].size())
          break;
        at[i] = 0;
      }
      if (i == size_t(-1))
        return all;
    }
  }
};

/// PEs and summed cycles as one ordered key: PEs first.
constexpr int64_t kCycleScale = int64_t(1) << 30;
inline int64_t key(int64_t pes, int64_t cycles) {
  return pes * kCycleScale + std::min(cycles, kCycleScale - 1);
}

//===----------------------------------------------------------------------===//
// Above the state budget: a bounded forward search (BoundedPartition.cpp)
//===----------------------------------------------------------------------===//

/// The exact programs' memo budget: at W = 750 two rows of 751 values per
/// state, about 240 MB at the budget.
constexpr size_t kStateBudget = 20000;
/// The bounded search keeps at most this many partial layouts per kernel.
constexpr size_t kBeamWidth = 1024;
/// The beam of the bounded search while `--grid auto` compares heights.
constexpr size_t kGridBeamWidth = 64;

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

/// One partial layout of kernels 0 .. l - 1: the rows of the streams live
/// before l, the columns used, the value so far (the bottleneck, or the
/// summed PE-and-cycle key), and how it was reached.
struct Partial {
  std::vector<int64_t> state;
  int64_t columns = 0, value = 0;
  int64_t parent = -1; ///< index in the previous kernel's partials
  Choice choice;
};

/// Whether the states the exact programs would reach on H rows number at
/// most `budget` (over all kernels), by enumerating them forward.
bool withinStateBudget(const std::vector<LayerTable> &tables,
                       const Shape &shape, int64_t H, size_t budget);

/// Every kernel's choices on H rows, for every rows entering it.
std::vector<std::vector<Choice>> allChoices(const std::vector<LayerTable> &tables,
                                           const Shape &shape, int64_t H);

/// The bounded search's first program at bottleneck T: per kernel the
/// partial layouts of the fewest columns (at most `beam`).
void fewestColumns(const std::vector<LayerTable> &tables, const Shape &shape,
                   const RelaxedBounds &bounds, int64_t H, int64_t W,
                   int64_t T, size_t beam,
                   std::vector<std::vector<Partial>> &levels);

/// The fewest columns of a complete layout in `levels` (and which).
int64_t columnsFound(const std::vector<std::vector<Partial>> &levels,
                     size_t *best = nullptr);

/// The smallest bottleneck the bounded search fits on H x W (kInf if
/// none), trying `hint` first.
int64_t boundedBottleneck(const std::vector<LayerTable> &tables,
                          const Shape &shape, const RelaxedBounds &bounds,
                          int64_t H, int64_t W, size_t beam = kBeamWidth,
                          int64_t hint = kInf);

/// The bounded search's layout on H x W: its bottleneck, then the fewest
/// PEs it finds at it.
std::optional<ChainMapping>
boundedPartition(const std::vector<LayerTable> &tables, const Shape &shape,
                 const RelaxedBounds &bounds, int64_t H, int64_t W,
                 int64_t hint = kInf);

} // namespace weft::conversion::partition

#endif // WEFT_LIB_KERNELS_PARTITIONSEARCH_H
