//===- ChainPartition.cpp - A balanced pipeline for a chain of kernels ----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Two dynamic programs over (kernel, rows of the vector entering it, columns
// still free), for a fabric of H rows and W columns:
//
//  1. the fewest cycles of the slowest kernel (min over choices of the max),
//  2. at that bottleneck, the fewest PEs, then the fewest cycles summed over
//     the kernels (the pipeline's fill time).
//
// The rows entering kernel l fix its smear (dense) or its rows (column), so
// the only choice per kernel is a dense kernel's output rows R: the
// programs are L x H x W states of at most H choices each. The per-kernel
// costs do not depend on the grid and are tabulated once.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ChainPartition.h"

#include "weft/Target/ISA.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace weft::conversion {

namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;

/// Word addresses of the PE memory map both kernel kinds share
/// (docs/execution-model.md): data from word 1152.
constexpr int64_t kDataBase = 1152;
/// The longest vector a DSD describes.
constexpr int64_t kMaxVector = 32767;

/// The costs of one kernel for every (S, R) up to the largest fabric: -1
/// where the mapping is not allowed (an empty chunk, too much memory).
struct LayerTable {
  ChainLayer layer;
  int64_t maxS = 0, maxR = 0;
  std::vector<int64_t> cost, memory;

  int64_t at(int64_t s, int64_t r) const {
    if (s < 1 || r < 1 || s > maxS || r > maxR)
      return -1;
    return cost[size_t(s * (maxR + 1) + r)];
  }
  int64_t mem(int64_t s, int64_t r) const {
    return memory[size_t(s * (maxR + 1) + r)];
  }
};

/// Bytes of PE memory a column kernel's PE needs for a chunk of L elements
/// (the buffers emitColumnKernel allocates: none for Relu, which works in
/// place, two chunks for Tanh and LogSoftmax, one otherwise).
int64_t columnMemory(ColumnOp op, int64_t L) {
  return 2 * (kDataBase + 2 * L * columnBuffers(op));
}

LayerTable tabulate(const ChainLayer &l, Precision p, int64_t maxH,
                    int64_t memoryBytes) {
  LayerTable t;
  t.layer = l;
  if (l.kind == ChainLayer::Kind::Dense) {
    t.maxS = std::min(l.K, maxH);
    t.maxR = std::min(l.M, maxH);
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
    for (int64_t r = 1; r <= t.maxR; ++r) {
      size_t i = size_t(s * (t.maxR + 1) + r);
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

/// The choices of kernel l when `r` rows enter it: (width, rows leaving,
/// footprint, cost) for every allowed R, in increasing R.
template <typename F>
void forEachChoice(const LayerTable &t, int64_t r, int64_t H, F f) {
  if (t.layer.kind == ChainLayer::Kind::Column) {
    int64_t c = t.at(r, r);
    if (c >= 0 && r <= H)
      f(/*width=*/int64_t(1), /*out=*/r, /*footprint=*/r, c);
    return;
  }
  if (r > H)
    return;
  for (int64_t R = 1; R <= std::min(t.maxR, H); ++R) {
    int64_t c = t.at(r, R);
    if (c >= 0)
      f(/*width=*/r, /*out=*/R, /*footprint=*/std::max(r, R), c);
  }
}

/// Program 1: g[l][r][w] = the fewest cycles of the slowest of kernels
/// l.. when r rows enter kernel l and w columns are free. Returns the
/// table of kernel 0, indexed [r * (W + 1) + w].
std::vector<int64_t> bottleneckTable(const std::vector<LayerTable> &tables,
                                     int64_t H, int64_t W) {
  size_t stride = size_t(W + 1);
  std::vector<int64_t> next(size_t(H + 1) * stride, 0), cur;
  for (size_t l = tables.size(); l-- > 0;) {
    cur.assign(size_t(H + 1) * stride, kInf);
    for (int64_t r = 1; r <= H; ++r)
      forEachChoice(tables[l], r, H,
                    [&](int64_t width, int64_t out, int64_t, int64_t c) {
                      int64_t *row = &cur[size_t(r) * stride];
                      const int64_t *nrow = &next[size_t(out) * stride];
                      for (int64_t w = width; w <= W; ++w)
                        row[w] = std::min(row[w], std::max(c, nrow[w - width]));
                    });
    next.swap(cur);
  }
  return next;
}

/// The smallest total width any layout of the chain needs on H rows
/// (kInf if none).
int64_t minimumWidth(const std::vector<LayerTable> &tables, int64_t H) {
  std::vector<int64_t> next(size_t(H + 1), 0), cur;
  for (size_t l = tables.size(); l-- > 0;) {
    cur.assign(size_t(H + 1), kInf);
    for (int64_t r = 1; r <= H; ++r)
      forEachChoice(tables[l], r, H,
                    [&](int64_t width, int64_t out, int64_t, int64_t) {
                      if (next[size_t(out)] < kInf)
                        cur[size_t(r)] =
                            std::min(cur[size_t(r)], width + next[size_t(out)]);
                    });
    next.swap(cur);
  }
  return *std::min_element(next.begin() + 1, next.end());
}

/// PEs and summed cycles as one ordered key: PEs first.
constexpr int64_t kCycleScale = int64_t(1) << 30;
int64_t key(int64_t pes, int64_t cycles) {
  return pes * kCycleScale + std::min(cycles, kCycleScale - 1);
}

/// Program 2 at bottleneck `T` on H x W, then the mapping it picks.
ChainMapping layout(const std::vector<LayerTable> &tables, int64_t H, int64_t W,
                    int64_t T) {
  size_t stride = size_t(W + 1), L = tables.size();
  // p[l] for l = 0..L, each (H + 1) x (W + 1).
  std::vector<std::vector<int64_t>> p(L + 1);
  p[L].assign(size_t(H + 1) * stride, 0);
  for (size_t l = L; l-- > 0;) {
    p[l].assign(size_t(H + 1) * stride, kInf);
    for (int64_t r = 1; r <= H; ++r)
      forEachChoice(
          tables[l], r, H, [&](int64_t width, int64_t out, int64_t, int64_t c) {
            if (c > T)
              return;
            int64_t area = width * out;
            for (int64_t w = width; w <= W; ++w) {
              int64_t rest = p[l + 1][size_t(out) * stride + size_t(w - width)];
              if (rest < kInf)
                p[l][size_t(r) * stride + size_t(w)] = std::min(
                    p[l][size_t(r) * stride + size_t(w)], rest + key(area, c));
            }
          });
  }
  // Follow the choices, smallest r and R first on ties.
  ChainMapping m;
  int64_t r = 0, best = kInf;
  for (int64_t s = 1; s <= H; ++s)
    if (p[0][size_t(s) * stride + size_t(W)] < best) {
      best = p[0][size_t(s) * stride + size_t(W)];
      r = s;
    }
  m.inputRows = r;
  int64_t w = W, x = 0;
  for (size_t l = 0; l < L; ++l) {
    int64_t want = p[l][size_t(r) * stride + size_t(w)];
    bool found = false;
    forEachChoice(
        tables[l], r, H,
        [&](int64_t width, int64_t out, int64_t footprint, int64_t c) {
          if (found || c > T || width > w)
            return;
          int64_t rest = p[l + 1][size_t(out) * stride + size_t(w - width)];
          if (rest >= kInf || rest + key(width * out, c) != want)
            return;
          found = true;
          ChainPlacement k;
          k.x0 = x;
          k.width = width;
          k.rows = out;
          k.footprint = footprint;
          k.predictedCycles = c;
          k.memoryPerPE = tables[l].mem(r, out);
          m.kernels.push_back(k);
          m.bottleneckCycles = std::max(m.bottleneckCycles, c);
          m.height = std::max(m.height, footprint);
          m.pes += width * out;
          x += width;
          w -= width;
          r = out;
        });
    (void)found;
  }
  m.width = x;
  m.outputRows = r;
  return m;
}

std::vector<LayerTable> tabulateChain(const std::vector<ChainLayer> &chain,
                                      Precision p, const target::Target &t) {
  std::vector<LayerTable> tables;
  for (const ChainLayer &l : chain)
    tables.push_back(
        tabulate(l, p, int64_t(t.height()), int64_t(t.memoryBytes())));
  return tables;
}

std::string describe(const ChainLayer &l) {
  if (l.kind == ChainLayer::Kind::Column)
    return std::string(columnOpName(l.op)) + " of " + std::to_string(l.K) +
           " elements";
  return "dense " + std::to_string(l.K) + " -> " + std::to_string(l.M);
}

/// Why nothing fits `t`: the first kernel that fits no rectangle on its
/// own, or the columns the chain needs side by side.
std::string whyNothingFits(const std::vector<ChainLayer> &chain,
                           const std::vector<LayerTable> &tables, Precision p,
                           const target::Target &t) {
  int64_t H = t.height(), W = t.width();
  for (size_t l = 0; l < chain.size(); ++l) {
    bool any = false;
    for (int64_t r = 1; r <= H && !any; ++r)
      forEachChoice(tables[l], r, H,
                    [&](int64_t, int64_t, int64_t, int64_t) { any = true; });
    if (any)
      continue;
    if (chain[l].kind == ChainLayer::Kind::Dense) {
      std::string why;
      (void)chooseDenseMapping(chain[l].K, chain[l].M, p, t, why);
      return "kernel " + std::to_string(l) + " (" + describe(chain[l]) +
             "): " + why;
    }
    return "kernel " + std::to_string(l) + " (" + describe(chain[l]) +
           ") fits no column of at most " + std::to_string(H) + " rows of " +
           std::to_string(t.memoryBytes()) + "-byte PEs";
  }
  int64_t bytesPerWeight = p == Precision::Mixed ? 2 : 4;
  int64_t weightBytes = 0;
  for (const ChainLayer &l : chain)
    if (l.kind == ChainLayer::Kind::Dense)
      weightBytes += l.K * l.M * bytesPerWeight;
  int64_t usable = int64_t(t.memoryBytes()) - 2 * kDataBase;
  int64_t pes = (weightBytes + usable - 1) / std::max<int64_t>(1, usable);
  return "the chain of " + std::to_string(chain.size()) +
         " kernels needs at least " + std::to_string(minimumWidth(tables, H)) +
         " columns of at most " + std::to_string(H) +
         " rows (each kernel's narrowest rectangle that fits the per-PE "
         "memory, side by side) and " +
         std::to_string(weightBytes) + " bytes of weights (at least " +
         std::to_string(pes) + " PEs of " + std::to_string(t.memoryBytes()) +
         " bytes), but the " + std::to_string(W) + "x" + std::to_string(H) +
         " fabric has " + std::to_string(W) + " columns";
}

} // namespace

std::optional<ChainMapping> partitionChain(const std::vector<ChainLayer> &chain,
                                           Precision precision,
                                           const target::Target &target,
                                           std::string &why) {
  if (chain.empty()) {
    why = "the chain has no kernels";
    return std::nullopt;
  }
  std::vector<LayerTable> tables = tabulateChain(chain, precision, target);
  int64_t H = target.height(), W = target.width();
  std::vector<int64_t> g = bottleneckTable(tables, H, W);
  int64_t T = kInf;
  for (int64_t r = 1; r <= H; ++r)
    T = std::min(T, g[size_t(r * (W + 1) + W)]);
  if (T >= kInf) {
    why = whyNothingFits(chain, tables, precision, target);
    return std::nullopt;
  }
  return layout(tables, H, W, T);
}

int64_t chainMacsPerSample(const std::vector<ChainLayer> &chain) {
  int64_t macs = 0;
  for (const ChainLayer &l : chain)
    if (l.kind == ChainLayer::Kind::Dense)
      macs += l.K * l.M;
  return macs;
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
                                     const target::Target &largest,
                                     double tolerance, std::string &why) {
  if (chain.empty()) {
    why = "the chain has no kernels";
    return std::nullopt;
  }
  std::vector<LayerTable> tables = tabulateChain(chain, precision, largest);
  double macs = double(chainMacsPerSample(chain));
  double peak = target::peakMacsPerCycle(precision == Precision::Mixed);
  std::vector<int64_t> widths = candidateGridSizes(largest.width());
  std::vector<int64_t> heights = candidateGridSizes(largest.height());
  int64_t maxW = largest.width();

  struct Candidate {
    int64_t w, h, T;
    double u;
  };
  std::vector<Candidate> fits;
  for (int64_t h : heights) {
    std::vector<int64_t> g = bottleneckTable(tables, h, maxW);
    for (int64_t w : widths) {
      int64_t T = kInf;
      for (int64_t r = 1; r <= h; ++r)
        T = std::min(T, g[size_t(r * (maxW + 1) + w)]);
      if (T >= kInf)
        continue;
      // A chain without MACs (only column kernels) is judged by speed per
      // PE instead, so the same rule applies.
      double work = macs > 0 ? macs : 1.0;
      fits.push_back({w, h, T, work / (double(w * h) * peak * double(T))});
    }
  }
  if (fits.empty()) {
    why = whyNothingFits(chain, tables, precision, largest);
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
  choice.mapping = layout(tables, pick->h, pick->w, pick->T);
  return choice;
}

} // namespace weft::conversion
