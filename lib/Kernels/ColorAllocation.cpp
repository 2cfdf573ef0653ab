//===- ColorAllocation.cpp - Colors for streams ---------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// DSATUR graph coloring of the stream conflict graph (two streams conflict
// when one PE's router carries both). Ties break by degree, then by stream
// order, so the result is deterministic.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ColorAllocation.h"

#include <algorithm>
#include <map>
#include <set>

namespace weft::conversion {

namespace {

struct Graph {
  std::vector<std::set<size_t>> adj;
  /// For each conflicting pair (i < j), a PE where they meet.
  std::map<std::pair<size_t, size_t>, std::pair<int64_t, int64_t>> where;
  /// The largest number of streams one PE carries, and that PE.
  size_t maxAtPe = 0;
  std::pair<int64_t, int64_t> busiest{0, 0};
};

Graph build(const std::vector<StreamRequest> &streams) {
  Graph g;
  g.adj.resize(streams.size());
  std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> byPe;
  for (size_t i = 0; i < streams.size(); ++i) {
    std::set<std::pair<int64_t, int64_t>> seen(streams[i].pes.begin(),
                                               streams[i].pes.end());
    for (auto pe : seen)
      byPe[pe].push_back(i);
  }
  for (auto &[pe, list] : byPe) {
    if (list.size() > g.maxAtPe) {
      g.maxAtPe = list.size();
      g.busiest = pe;
    }
    for (size_t a = 0; a < list.size(); ++a)
      for (size_t b = a + 1; b < list.size(); ++b) {
        g.adj[list[a]].insert(list[b]);
        g.adj[list[b]].insert(list[a]);
        g.where.emplace(std::make_pair(list[a], list[b]), pe);
      }
  }
  return g;
}

/// DSATUR with colors from `palette` (in order); returns the coloring and,
/// when a stream finds no free color, its index in `stuck`.
std::vector<int64_t> color(const std::vector<StreamRequest> &streams,
                           const Graph &g, const std::vector<int64_t> &palette,
                           std::optional<size_t> &stuck) {
  size_t n = streams.size();
  std::vector<int64_t> c(n, -1);
  std::vector<std::set<int64_t>> sat(n);
  auto assign = [&](size_t i, int64_t col) {
    c[i] = col;
    for (size_t j : g.adj[i])
      sat[j].insert(col);
  };
  for (size_t i = 0; i < n; ++i)
    if (streams[i].fixed >= 0)
      assign(i, streams[i].fixed);
  for (size_t done = 0; done < n; ++done) {
    size_t best = n;
    for (size_t i = 0; i < n; ++i) {
      if (c[i] >= 0)
        continue;
      if (best == n || sat[i].size() > sat[best].size() ||
          (sat[i].size() == sat[best].size() &&
           g.adj[i].size() > g.adj[best].size()))
        best = i;
    }
    if (best == n)
      break;
    int64_t pick = -1;
    for (int64_t col : palette)
      if (!sat[best].count(col)) {
        pick = col;
        break;
      }
    if (pick < 0) {
      stuck = best;
      return c;
    }
    assign(best, pick);
  }
  return c;
}

} // namespace

std::optional<std::vector<int64_t>>
allocateColors(const std::vector<StreamRequest> &streams, unsigned routable,
               const std::vector<int64_t> &reserved, std::string &why) {
  Graph g = build(streams);
  // Fixed colors must not clash with each other.
  for (size_t i = 0; i < streams.size(); ++i)
    for (size_t j : g.adj[i])
      if (i < j && streams[i].fixed >= 0 &&
          streams[i].fixed == streams[j].fixed) {
        auto pe = g.where.at({i, j});
        why = "streams '" + streams[i].name + "' and '" + streams[j].name +
              "' both must have color " + std::to_string(streams[i].fixed) +
              " but meet at PE (" + std::to_string(pe.first) + ", " +
              std::to_string(pe.second) + ")";
        return std::nullopt;
      }
  std::vector<int64_t> palette;
  for (int64_t col = 0; col < int64_t(routable); ++col)
    if (std::find(reserved.begin(), reserved.end(), col) == reserved.end())
      palette.push_back(col);
  std::optional<size_t> stuck;
  std::vector<int64_t> c = color(streams, g, palette, stuck);
  if (!stuck)
    return c;
  // Say who meets whom, and how many colors would do.
  size_t s = *stuck;
  std::string other;
  std::pair<int64_t, int64_t> pe{0, 0};
  for (size_t j : g.adj[s])
    if (c[j] >= 0) {
      other = streams[j].name;
      pe = g.where.at({std::min(s, j), std::max(s, j)});
      break;
    }
  std::vector<int64_t> unlimited;
  for (int64_t col = 0; col < int64_t(streams.size() + 32); ++col)
    unlimited.push_back(col);
  std::optional<size_t> never;
  std::vector<int64_t> all = color(streams, g, unlimited, never);
  int64_t needed = 0;
  for (int64_t col : all)
    needed = std::max(needed, col + 1);
  why = "no color is left for stream '" + streams[s].name + "': it meets '" +
        other + "' at PE (" + std::to_string(pe.first) + ", " +
        std::to_string(pe.second) + "), and the streams need " +
        std::to_string(needed) + " colors (PE (" +
        std::to_string(g.busiest.first) + ", " +
        std::to_string(g.busiest.second) + ") alone carries " +
        std::to_string(g.maxAtPe) + " streams) but only " +
        std::to_string(palette.size()) + " of the " +
        std::to_string(routable) + " routable colors are free";
  return std::nullopt;
}

} // namespace weft::conversion
