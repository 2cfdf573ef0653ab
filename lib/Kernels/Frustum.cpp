//===- Frustum.cpp - Frustum tiling of a group of layers ------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The geometry, working set, tile search, cost model and group formation of
// docs/frustum.md.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/Frustum.h"

#include <algorithm>

namespace weft::conversion {

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string FrustumLayer::check() const {
  if (cin < 1 || cout < 1 || hin < 1 || win < 1 || kh < 1 || kw < 1 || sh < 1 ||
      sw < 1 || dh < 1 || dw < 1 || groups < 1)
    return "sizes, strides, dilations and groups must be positive";
  if (pt < 0 || pl < 0 || pb < 0 || pr < 0)
    return "pads must not be negative";
  if (cin % groups || cout % groups)
    return "groups must divide the input and output channels";
  if (pool && cin != cout)
    return "a pool keeps its channels";
  if (hin + pt + pb < dh * (kh - 1) + 1 || win + pl + pr < dw * (kw - 1) + 1)
    return "the window is larger than the padded input";
  return "";
}

std::string FrustumGroup::check() const {
  if (layers.empty())
    return "a group has at least one layer";
  for (size_t i = 0; i < layers.size(); ++i) {
    std::string p = layers[i].check();
    if (!p.empty())
      return "layer " + std::to_string(i) + ": " + p;
    if (i && (layers[i].cin != layers[i - 1].cout ||
              layers[i].hin != layers[i - 1].hout() ||
              layers[i].win != layers[i - 1].wout()))
      return "layer " + std::to_string(i) +
             " does not read the previous layer's output";
  }
  const FrustumLayer &in = layers.front(), &top = layers.back();
  if (projection && !residual)
    return "a projection needs a residual skip";
  if (!residual)
    return "";
  if (!projection) {
    if (in.cin != top.cout || in.hin != top.hout() || in.win != top.wout())
      return "an identity skip needs the group's input and output of one shape";
    return "";
  }
  const FrustumLayer &p = *projection;
  std::string pp = p.check();
  if (!pp.empty())
    return "projection: " + pp;
  if (p.cin != in.cin || p.hin != in.hin || p.win != in.win ||
      p.cout != top.cout || p.hout() != top.hout() || p.wout() != top.wout())
    return "the projection must map the group's input to its output's shape";
  return "";
}

int64_t FrustumGroup::channels(size_t level) const {
  return level == 0 ? layers.front().cin : layers[level - 1].cout;
}

Span backProject(Span out, int64_t k, int64_t s, int64_t d, int64_t pad,
                 int64_t n) {
  int64_t lo = out.lo * s - pad;
  int64_t hi = (out.hi - 1) * s - pad + d * (k - 1) + 1;
  return {std::clamp<int64_t>(lo, 0, n), std::clamp<int64_t>(hi, 0, n)};
}

FrustumTile projectTile(const FrustumGroup &g, Span rows, Span cols) {
  size_t levels = g.layers.size();
  FrustumTile t;
  t.rows.assign(levels + 1, {});
  t.cols.assign(levels + 1, {});
  t.rows[levels] = rows;
  t.cols[levels] = cols;
  for (size_t l = levels; l-- > 0;) {
    const FrustumLayer &L = g.layers[l];
    t.rows[l] = backProject(t.rows[l + 1], L.kh, L.sh, L.dh, L.pt, L.hin);
    t.cols[l] = backProject(t.cols[l + 1], L.kw, L.sw, L.dw, L.pl, L.win);
  }
  return t;
}

std::vector<FrustumTile> groupTiles(const FrustumGroup &g, int64_t th,
                                    int64_t tw) {
  const FrustumLayer &top = g.layers.back();
  std::vector<FrustumTile> tiles;
  for (int64_t r = 0; r < top.hout(); r += th)
    for (int64_t c = 0; c < top.wout(); c += tw)
      tiles.push_back(projectTile(g, {r, std::min(r + th, top.hout())},
                                  {c, std::min(c + tw, top.wout())}));
  return tiles;
}

FrustumBudget frustumBudget(const machine::Target &target,
                            int64_t codeInstructions, int64_t elementBytes) {
  using machine::Arch;
  FrustumBudget b;
  b.memoryBytes = target.memoryBytes();
  // One 32-bit slot (two 16-bit words) per task-table entry and instruction.
  b.reservedBytes = int64_t(Arch::kTaskTableSlots + codeInstructions) *
                    Arch::kWordsPerSlot * 2;
  b.elementBytes = elementBytes;
  return b;
}

FrustumWorkingSet workingSet(const FrustumGroup &g, const FrustumTile &t,
                             int64_t side, int64_t e) {
  FrustumWorkingSet ws;
  int64_t pes = side * side;
  for (const FrustumLayer &L : g.layers)
    ws.weightBytes += ceilDiv(L.weightElements(), pes) * e;
  size_t levels = g.layers.size();
  for (size_t l = 0; l < levels; ++l) {
    int64_t pair = ceilDiv(t.elements(l, g.channels(l)), side) * e +
                   ceilDiv(t.elements(l + 1, g.channels(l + 1)), side) * e;
    if (pair > ws.bufferBytes) {
      ws.bufferBytes = pair;
      ws.peakLevel = l;
    }
  }
  if (g.residual) {
    // The skip's tile at the top (identity: the group's input there;
    // projection: its output, computed at the first step) stays live.
    int64_t top = t.rows[levels].size() * t.cols[levels].size();
    ws.skipBytes =
        ceilDiv(top * g.channels(g.projection ? levels : 0), side) * e;
    if (g.projection)
      ws.weightBytes += ceilDiv(g.projection->weightElements(), pes) * e;
  }
  return ws;
}

/// The largest working set over the tiles of a th x tw tiling.
static FrustumWorkingSet worstWorkingSet(const FrustumGroup &g, int64_t th,
                                         int64_t tw, int64_t side, int64_t e,
                                         int64_t *numTiles) {
  FrustumWorkingSet worst;
  std::vector<FrustumTile> tiles = groupTiles(g, th, tw);
  for (const FrustumTile &t : tiles) {
    FrustumWorkingSet ws = workingSet(g, t, side, e);
    if (ws.total() > worst.total())
      worst = ws;
  }
  if (numTiles)
    *numTiles = int64_t(tiles.size());
  return worst;
}

FrustumTiling tilingOf(const FrustumGroup &g, int64_t th, int64_t tw,
                       int64_t side, int64_t elementBytes) {
  FrustumTiling tiling;
  tiling.th = th;
  tiling.tw = tw;
  tiling.side = side;
  tiling.worst =
      worstWorkingSet(g, th, tw, side, elementBytes, &tiling.numTiles);
  return tiling;
}

std::optional<FrustumTiling> largestTile(const FrustumGroup &g, int64_t side,
                                         const FrustumBudget &budget,
                                         std::string *diagnostic) {
  auto fail = [&](const std::string &msg) -> std::optional<FrustumTiling> {
    if (diagnostic)
      *diagnostic = msg;
    return std::nullopt;
  };
  std::string problem = g.check();
  if (!problem.empty())
    return fail("invalid frustum group: " + problem);
  if (side < 1 || budget.elementBytes < 1)
    return fail("a tile runs on at least one PE, with elements of at least "
                "one byte");
  const FrustumLayer &top = g.layers.back();
  int64_t H = top.hout(), W = top.wout();
  for (int64_t t = std::max(H, W); t >= 1; --t) {
    FrustumTiling tiling;
    tiling.th = std::min(t, H);
    tiling.tw = std::min(t, W);
    tiling.side = side;
    // Clipped to the output, t + 1 may have given the same tiling.
    if (t < std::max(H, W) && tiling.th == std::min(t + 1, H) &&
        tiling.tw == std::min(t + 1, W))
      continue;
    tiling.worst = worstWorkingSet(g, tiling.th, tiling.tw, side,
                                   budget.elementBytes, &tiling.numTiles);
    if (tiling.worst.total() <= budget.available())
      return tiling;
  }
  FrustumWorkingSet one =
      worstWorkingSet(g, 1, 1, side, budget.elementBytes, nullptr);
  return fail("no tile of the group fits: a 1 x 1 tile needs " +
              std::to_string(one.total()) + " bytes per PE on " +
              std::to_string(side) + " x " + std::to_string(side) + " PEs (" +
              std::to_string(one.weightBytes) + " of weights, " +
              std::to_string(one.bufferBytes) + " of tile buffers, " +
              std::to_string(one.skipBytes) + " of the skip), but only " +
              std::to_string(std::max<int64_t>(budget.available(), 0)) +
              " are available (" + std::to_string(budget.memoryBytes) +
              " of memory minus " + std::to_string(budget.reservedBytes) +
              " of task table and code)");
}

const char *haloPolicyName(HaloPolicy p) {
  return p == HaloPolicy::Overlap ? "overlap" : "exchange";
}

FrustumCost perLayerCost(const FrustumGroup &g, const PerLayerCost &base) {
  FrustumCost c;
  size_t levels = g.layers.size();
  for (size_t l = 0; l < levels; ++l) {
    const FrustumLayer &L = g.layers[l];
    // Level l's whole map moves into layer l's rectangle.
    c.hops += L.cin * L.hin * L.win * base.hopsBetweenLayers;
  }
  if (g.residual) {
    // The skip travels past every layer's rectangle to the add.
    const FrustumLayer &in = g.layers.front();
    c.hops +=
        in.cin * in.hin * in.win * base.hopsBetweenLayers * int64_t(levels);
  }
  for (int64_t x : base.cycles)
    c.cycles = std::max(c.cycles, x);
  for (int64_t x : base.memoryPerPE)
    c.memoryPerPE = std::max(c.memoryPerPE, x);
  for (int64_t x : base.pes)
    c.pes += x;
  for (int64_t x : base.internalHops)
    c.hops += x;
  c.colors = base.colorsPerLayer * int64_t(levels);
  return c;
}

FrustumCost frustumCost(const FrustumGroup &g, const FrustumTiling &tiling,
                        HaloPolicy policy, int64_t hopsToTiles) {
  FrustumCost c;
  size_t levels = g.layers.size();
  const FrustumLayer &top = g.layers.back();
  int64_t q = tiling.side, p = q * q;
  int64_t tileRows = ceilDiv(top.hout(), tiling.th);
  int64_t tileCols = ceilDiv(top.wout(), tiling.tw);
  std::vector<FrustumTile> tiles = groupTiles(g, tiling.th, tiling.tw);
  for (int64_t i = 0; i < tileRows; ++i) {
    for (int64_t j = 0; j < tileCols; ++j) {
      const FrustumTile &t = tiles[i * tileCols + j];
      // Own rows and columns at each level: those under the tile's outputs
      // (output row o stands over input row o·s; the first and last tiles
      // take the image's edges), within what the tile reads. They partition
      // every level among the tiles.
      std::vector<Span> ownR = t.rows, ownC = t.cols;
      for (size_t l = levels; l-- > 0;) {
        const FrustumLayer &L = g.layers[l];
        ownR[l] = {i == 0 ? 0 : ownR[l + 1].lo * L.sh,
                   i == tileRows - 1 ? L.hin : ownR[l + 1].hi * L.sh};
        ownC[l] = {j == 0 ? 0 : ownC[l + 1].lo * L.sw,
                   j == tileCols - 1 ? L.win : ownC[l + 1].hi * L.sw};
      }
      for (size_t l = 0; l < levels; ++l) {
        ownR[l] = {std::max(ownR[l].lo, t.rows[l].lo),
                   std::min(ownR[l].hi, t.rows[l].hi)};
        ownC[l] = {std::max(ownC[l].lo, t.cols[l].lo),
                   std::min(ownC[l].hi, t.cols[l].hi)};
      }
      auto own = [&](size_t l) {
        return std::max<int64_t>(ownR[l].size(), 0) *
               std::max<int64_t>(ownC[l].size(), 0) * g.channels(l);
      };
      int64_t cycles = 0, hops = 0;
      if (policy == HaloPolicy::Overlap) {
        // The whole input tile (halo included) comes from the producer; every
        // level is computed whole, halo included.
        hops += t.elements(0, g.channels(0)) * hopsToTiles;
        cycles += ceilDiv(t.elements(0, g.channels(0)), q);
        for (size_t l = 1; l <= levels; ++l)
          cycles += ceilDiv(t.rows[l].size() * t.cols[l].size() *
                                g.layers[l - 1].macsPerPixel(),
                            p);
      } else {
        // Only the tile's own input comes from the producer; the halo of
        // every level below the top comes from the neighbours, one hop away,
        // after they computed it (its receive is on the tile's critical
        // path); each level computes only its own part.
        hops += own(0) * hopsToTiles;
        for (size_t l = 0; l < levels; ++l) {
          int64_t halo = t.elements(l, g.channels(l)) - own(l);
          hops += halo;
          // Level 0 is received whole (own part and halo); above it only
          // the halo is received, the own part is computed here.
          cycles += ceilDiv(l == 0 ? t.elements(0, g.channels(0)) : halo, q);
        }
        for (size_t l = 1; l <= levels; ++l)
          cycles += ceilDiv(std::max<int64_t>(ownR[l].size(), 0) *
                                std::max<int64_t>(ownC[l].size(), 0) *
                                g.layers[l - 1].macsPerPixel(),
                            p);
      }
      if (q > 1)
        // Within the tile's q x q PEs every level above the input runs as a
        // smeared layer (docs/frustum.md): its partial sums cross q - 1
        // links east, its results about q links back to the diagonal, and
        // then q - 1 links down or up the column.
        for (size_t l = 1; l < levels; ++l)
          hops += t.elements(l, g.channels(l)) * (3 * q - 2);
      if (g.residual && g.projection)
        cycles += ceilDiv(t.rows[levels].size() * t.cols[levels].size() *
                              g.projection->macsPerPixel(),
                          p);
      c.hops += hops;
      c.cycles = std::max(c.cycles, cycles);
    }
  }
  c.memoryPerPE = tiling.worst.total();
  c.pes = tiling.numTiles * p;
  // The input and output lanes; a tile of several PEs turns its levels
  // into columns on one color and sums partial results on two parity
  // colors; exchange adds one color per direction a halo moves.
  c.colors =
      2 + (q > 1 ? 3 : 0) +
      (policy == HaloPolicy::Exchange ? 2 * ((tileRows > 1) + (tileCols > 1))
                                      : 0);
  return c;
}

FrustumDecision decideFrustum(const FrustumGroup &g, const PerLayerCost &base,
                              int64_t side, const FrustumBudget &budget,
                              int64_t hopsToTiles) {
  std::string why;
  std::optional<FrustumTiling> tiling = largestTile(g, side, budget, &why);
  if (!tiling) {
    FrustumDecision d;
    d.perLayer = perLayerCost(g, base);
    d.reason = why;
    return d;
  }
  return decideFrustum(g, base, *tiling, hopsToTiles);
}

FrustumDecision decideFrustum(const FrustumGroup &g, const PerLayerCost &base,
                              const FrustumTiling &tiling, int64_t hopsToTiles,
                              int64_t maxPes) {
  FrustumDecision d;
  d.perLayer = perLayerCost(g, base);
  d.tiling = tiling;
  FrustumCost overlap =
      frustumCost(g, tiling, HaloPolicy::Overlap, hopsToTiles);
  FrustumCost exchange =
      frustumCost(g, tiling, HaloPolicy::Exchange, hopsToTiles);
  d.overlap = overlap;
  d.exchange = exchange;
  bool useExchange =
      exchange.cycles < overlap.cycles ||
      (exchange.cycles == overlap.cycles && exchange.hops < overlap.hops);
  d.policy = useExchange ? HaloPolicy::Exchange : HaloPolicy::Overlap;
  d.frustum = useExchange ? exchange : overlap;
  if (d.frustum.cycles > d.perLayer.cycles) {
    d.reason = "the frustum mapping is predicted slower than per layer (" +
               std::to_string(d.frustum.cycles) + " against " +
               std::to_string(d.perLayer.cycles) + " cycles per image)";
    return d;
  }
  if (maxPes > 0 && d.frustum.pes > maxPes) {
    d.reason = "its tiles need " + std::to_string(d.frustum.pes) +
               " PEs, more than the fabric's " + std::to_string(maxPes);
    return d;
  }
  d.chosen = true;
  return d;
}

std::vector<FrustumTiling> tilingsUpTo(const FrustumGroup &g,
                                       const FrustumTiling &largest,
                                       int64_t elementBytes) {
  std::vector<FrustumTiling> out{largest};
  const FrustumLayer &top = g.layers.back();
  const int64_t H = top.hout(), W = top.wout();
  for (int64_t t = std::max(largest.th, largest.tw) - 1; t >= 1; --t) {
    int64_t th = std::min({t, H, largest.th}),
            tw = std::min({t, W, largest.tw});
    if (th == out.back().th && tw == out.back().tw)
      continue;
    out.push_back(tilingOf(g, th, tw, largest.side, elementBytes));
  }
  return out;
}

/// Whether cost x is the faster: fewer cycles, then fewer hops, then
/// fewer PEs.
static bool fasterFrustum(const FrustumCost &x, const FrustumCost &y) {
  if (x.cycles != y.cycles)
    return x.cycles < y.cycles;
  if (x.hops != y.hops)
    return x.hops < y.hops;
  return x.pes < y.pes;
}

FrustumDecision decideFastestFrustum(const FrustumGroup &g,
                                     const PerLayerCost &base,
                                     const FrustumTiling &largest,
                                     int64_t elementBytes, int64_t maxPes) {
  std::vector<FrustumTiling> tilings = tilingsUpTo(g, largest, elementBytes);
  FrustumDecision best =
      decideFrustum(g, base, largest, hopsToTiles(largest), maxPes);
  for (size_t i = 1; i < tilings.size(); ++i) {
    const FrustumTiling &tiling = tilings[i];
    FrustumDecision d =
        decideFrustum(g, base, tiling, hopsToTiles(tiling), maxPes);
    // (An unchosen smaller tile never replaces the largest's decision.)
    if (d.chosen && (!best.chosen || fasterFrustum(d.frustum, best.frustum)))
      best = d;
  }
  return best;
}

int64_t hopsToTiles(const FrustumTiling &tiling) {
  int64_t across = 1;
  while (across * across < tiling.numTiles)
    ++across;
  return 1 + tiling.side * across / 2;
}

FrustumGroup chainGroup(const std::vector<ChainLink> &chain, size_t first,
                        size_t last) {
  FrustumGroup g;
  for (size_t i = first; i <= last; ++i)
    g.layers.push_back(chain[i].layer);
  if (chain[last].skipFrom == int64_t(first)) {
    g.residual = true;
    g.projection = chain[last].projection;
  }
  return g;
}

/// Whether [first, last] holds every residual block it touches whole, and
/// only one spanning exactly the group.
static bool respectsBlocks(const std::vector<ChainLink> &chain, size_t first,
                           size_t last) {
  for (size_t k = 0; k < chain.size(); ++k) {
    if (chain[k].skipFrom < 0)
      continue;
    size_t a = size_t(chain[k].skipFrom), b = k;
    bool disjoint = b < first || a > last;
    if (!disjoint && !(a == first && b == last))
      return false;
  }
  return true;
}

std::vector<std::pair<size_t, size_t>>
formGroups(const std::vector<ChainLink> &chain, int64_t side,
           const FrustumBudget &budget) {
  std::vector<std::pair<size_t, size_t>> groups;
  size_t i = 0;
  while (i < chain.size()) {
    // The longest group of at least two layers from i that keeps residual
    // blocks whole and fits. A longer group may fit when a shorter one
    // does not only through a block, so every end is tried.
    std::optional<size_t> best;
    for (size_t j = i + 1; j < chain.size(); ++j) {
      if (!respectsBlocks(chain, i, j))
        continue;
      FrustumGroup g = chainGroup(chain, i, j);
      if (!g.check().empty())
        break;
      if (largestTile(g, side, budget))
        best = j;
    }
    if (best) {
      groups.push_back({i, *best});
      i = *best + 1;
    } else {
      ++i;
    }
  }
  return groups;
}

} // namespace weft::conversion
