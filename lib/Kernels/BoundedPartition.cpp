//===- BoundedPartition.cpp - The partitioner above its state budget ------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The exact dynamic programs of ChainPartition.cpp keep a row of W + 1
// values per reachable state, and the states are the row assignments of the
// live streams: exponential in the streams live at once (GoogLeNet's split
// concatenations keep up to 12). Above a budget the partitioner takes this
// bounded forward search instead (docs/execution-model.md, "Partitioning a
// DAG").
//
//===----------------------------------------------------------------------===//

#include "PartitionSearch.h"

#include <set>
#include <tuple>
#include <unordered_map>

namespace weft::conversion::partition {

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
                     size_t *best) {
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
                          int64_t H, int64_t W, size_t beam, int64_t hint) {
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
                 int64_t hint) {
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

} // namespace weft::conversion::partition
