//===- FrustumTest.cpp - Frustum tiling: geometry, budget, cost -----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The back-projection of a tile through convolutions and pools (strides,
// dilations, pads and image borders), the per-PE working set against the
// machine model's budget, the largest tile (docs/frustum.md's worked
// example: 11 x 11 at the top, 15 x 15 at the input), the diagnostic when
// nothing fits, residual blocks, group formation and the cost model.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/Frustum.h"
#include "weft/Machine/Target.h"

#include <gtest/gtest.h>

using namespace weft::conversion;

namespace {

FrustumLayer conv(int64_t cin, int64_t cout, int64_t h, int64_t k = 3,
                  int64_t s = 1, int64_t d = 1, int64_t pad = 1) {
  FrustumLayer l;
  l.cin = cin;
  l.cout = cout;
  l.hin = l.win = h;
  l.kh = l.kw = k;
  l.sh = l.sw = s;
  l.dh = l.dw = d;
  l.pt = l.pl = l.pb = l.pr = pad;
  return l;
}

FrustumLayer pool(int64_t c, int64_t h, int64_t k, int64_t s) {
  FrustumLayer l = conv(c, c, h, k, s, 1, 0);
  l.pool = true;
  return l;
}

/// The worked example's group: two 3 x 3 stride-1 convolutions 16 -> 32 ->
/// 32 with pad 1 on a 33 x 33 map (large enough for interior tiles).
FrustumGroup workedExample() {
  FrustumGroup g;
  g.layers = {conv(16, 32, 33), conv(32, 32, 33)};
  return g;
}

FrustumBudget rawBudget(int64_t bytes, int64_t e) {
  FrustumBudget b;
  b.memoryBytes = bytes;
  b.elementBytes = e;
  return b;
}

/// Whether every tile of a th x tw tiling fits.
bool fits(const FrustumGroup &g, int64_t th, int64_t tw, int64_t side,
          const FrustumBudget &b) {
  for (const FrustumTile &t : groupTiles(g, th, tw))
    if (workingSet(g, t, side, b.elementBytes).total() > b.available())
      return false;
  return true;
}

TEST(FrustumTest, BackProjectionFormula) {
  // Interior spans grow to (h_out - 1) s + d (k - 1) + 1.
  for (int64_t k : {1, 3, 5, 7})
    for (int64_t s : {1, 2, 3})
      for (int64_t d : {1, 2, 3})
        for (int64_t h : {1, 2, 5}) {
          Span in = backProject({10, 10 + h}, k, s, d, 0, 1000);
          EXPECT_EQ(in.size(), (h - 1) * s + d * (k - 1) + 1)
              << "k=" << k << " s=" << s << " d=" << d << " h=" << h;
          EXPECT_EQ(in.lo, 10 * s);
        }
  // Pads shift the window and are clipped at the image's borders.
  EXPECT_EQ(backProject({0, 4}, 3, 1, 1, 1, 16), (Span{0, 5}));
  EXPECT_EQ(backProject({12, 16}, 3, 1, 1, 1, 16), (Span{11, 16}));
  EXPECT_EQ(backProject({0, 8}, 3, 2, 1, 1, 16), (Span{0, 16}));
}

TEST(FrustumTest, WorkedExample) {
  FrustumGroup g = workedExample();
  ASSERT_EQ(g.check(), "");
  // 48 KiB, fp16, nothing reserved: the document's own numbers.
  std::string why;
  auto tiling = largestTile(g, 1, rawBudget(48 * 1024, 2), &why);
  ASSERT_TRUE(tiling) << why;
  EXPECT_EQ(tiling->th, 11);
  EXPECT_EQ(tiling->tw, 11);
  EXPECT_EQ(tiling->numTiles, 9);
  // 9 * 16 * 32 * 2 + 9 * 32 * 32 * 2 bytes of weights, and the biases.
  EXPECT_EQ(tiling->worst.weightBytes, 27648 + 2 * 32 * 2);
  // The interior tile's pair (mid, output): (13^2 + 11^2) * 32 * 2.
  EXPECT_EQ(tiling->worst.bufferBytes, 18560);
  EXPECT_EQ(tiling->worst.peakLevel, 1u);
  // The middle tile of the middle row: 11 x 11 -> 13 x 13 -> 15 x 15.
  FrustumTile mid = groupTiles(g, 11, 11)[4];
  EXPECT_EQ(mid.rows[2], (Span{11, 22}));
  EXPECT_EQ(mid.rows[1].size(), 13);
  EXPECT_EQ(mid.rows[0].size(), 15);
  EXPECT_EQ(mid.cols[0].size(), 15);
  // 12 x 12 needs (14^2 + 12^2) * 32 * 2 = 21,760 bytes of buffers.
  EXPECT_FALSE(fits(g, 12, 12, 1, rawBudget(48 * 1024, 2)));
}

TEST(FrustumTest, WorkedExampleOnTheMachineModel) {
  weft::machine::Target target = *weft::machine::Target::create({});
  FrustumGroup g = workedExample();
  // The task table (1,280 bytes) and 300 instructions still leave room
  // for 11 x 11.
  FrustumBudget b = frustumBudget(target, 300, 2);
  EXPECT_EQ(b.memoryBytes, 48 * 1024);
  EXPECT_EQ(b.reservedBytes, 1280 + 1200);
  auto t = largestTile(g, 1, b);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->th, 11);
  // 2,000 instructions leave 39,872 - 27,776 = 12,096 bytes of buffers:
  // 8 x 8 needs (10^2 + 8^2) * 64 = 10,496 and (12^2 * 16 + 10^2 * 32) * 2
  // = 11,008; 9 x 9 needs (11^2 + 9^2) * 64 = 12,928.
  t = largestTile(g, 1, frustumBudget(target, 2000, 2));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->th, 8);
  EXPECT_EQ(t->worst.bufferBytes, 11008);
  EXPECT_EQ(t->worst.peakLevel, 0u);
}

TEST(FrustumTest, SmallerBudgetsSmallerTiles) {
  FrustumGroup g = workedExample();
  int64_t previous = 1 << 30;
  for (int64_t bytes = 48 * 1024; bytes >= 29 * 1024; bytes -= 1024) {
    FrustumBudget b = rawBudget(bytes, 2);
    auto t = largestTile(g, 1, b);
    ASSERT_TRUE(t) << bytes;
    EXPECT_LE(t->th, previous);
    previous = t->th;
    EXPECT_TRUE(fits(g, t->th, t->tw, 1, b));
    EXPECT_LE(t->worst.total(), bytes);
    if (t->th < 33) {
      EXPECT_FALSE(fits(g, t->th + 1, t->tw + 1, 1, b)) << bytes;
    }
  }
  EXPECT_EQ(previous, 1);
}

TEST(FrustumTest, StridedAndDilatedLayers) {
  // 3x3 stride 2 (64 -> 32), then 3x3 dilation 2 (pad 2), then a 2x2 pool.
  FrustumGroup g;
  g.layers = {conv(8, 16, 64, 3, 2, 1, 1), conv(16, 16, 32, 3, 1, 2, 2),
              pool(16, 32, 2, 2)};
  ASSERT_EQ(g.check(), "");
  ASSERT_EQ(g.layers.back().hout(), 16);
  FrustumTile t = projectTile(g, {4, 8}, {4, 8});
  EXPECT_EQ(t.rows[2], (Span{8, 16}));        // the pool doubles
  EXPECT_EQ(t.rows[1].size(), 7 + 2 * 2 + 1); // dilation adds d (k - 1)
  EXPECT_EQ(t.rows[1], (Span{6, 18}));
  EXPECT_EQ(t.rows[0].size(), (12 - 1) * 2 + 3); // stride multiplies
  EXPECT_EQ(t.rows[0], (Span{11, 36}));
  // At the border the pads are clipped away.
  FrustumTile corner = projectTile(g, {0, 4}, {0, 4});
  EXPECT_EQ(corner.rows[1], (Span{0, 10}));
  EXPECT_EQ(corner.rows[0], (Span{0, 20}));
  // The pool has no weights; only the convolutions' are counted.
  FrustumWorkingSet ws = workingSet(g, t, 1, 4);
  EXPECT_EQ(ws.weightBytes, (8 * 16 * 9 + 16 + 16 * 16 * 9 + 16) * 4);
  auto tiling = largestTile(g, 1, rawBudget(48 * 1024, 4));
  ASSERT_TRUE(tiling);
  EXPECT_TRUE(fits(g, tiling->th, tiling->tw, 1, rawBudget(48 * 1024, 4)));
  EXPECT_FALSE(
      fits(g, tiling->th + 1, tiling->tw + 1, 1, rawBudget(48 * 1024, 4)));
}

TEST(FrustumTest, ResidualBlock) {
  FrustumGroup chain;
  chain.layers = {conv(32, 32, 33), conv(32, 32, 33)};
  FrustumGroup block = chain;
  block.residual = true;
  ASSERT_EQ(block.check(), "");
  FrustumTile t = groupTiles(block, 5, 5)[0];
  FrustumWorkingSet plain = workingSet(chain, t, 1, 2);
  FrustumWorkingSet res = workingSet(block, t, 1, 2);
  // The identity skip keeps the group's input under the output tile live.
  EXPECT_EQ(res.skipBytes, 5 * 5 * 32 * 2);
  EXPECT_EQ(res.total(), plain.total() + 5 * 5 * 32 * 2);
  FrustumBudget b = rawBudget(48 * 1024, 2);
  auto tp = largestTile(chain, 1, b), tr = largestTile(block, 1, b);
  ASSERT_TRUE(tp && tr);
  EXPECT_LT(tr->th, tp->th);
  EXPECT_TRUE(fits(block, tr->th, tr->tw, 1, b));

  // ResNet's downsampling block: 3x3 s2 then 3x3, with a 1x1 s2 projection.
  FrustumGroup down;
  down.layers = {conv(16, 32, 32, 3, 2), conv(32, 32, 16)};
  down.residual = true;
  down.projection = conv(16, 32, 32, 1, 2, 1, 0);
  ASSERT_EQ(down.check(), "");
  FrustumWorkingSet dws = workingSet(down, groupTiles(down, 4, 4)[0], 1, 4);
  EXPECT_EQ(dws.skipBytes, 4 * 4 * 32 * 4);
  EXPECT_EQ(dws.weightBytes,
            (16 * 32 * 9 + 32 + 32 * 32 * 9 + 32 + 16 * 32 + 32) * 4);

  FrustumGroup bad = down;
  bad.projection.reset();
  EXPECT_EQ(bad.check(),
            "an identity skip needs the group's input and output of one shape");
}

TEST(FrustumTest, NothingFitsDiagnostic) {
  // 256 -> 256 3x3 in fp32 is 2.25 MiB of weights: no tile fits one PE.
  FrustumGroup g;
  g.layers = {conv(256, 256, 8), conv(256, 256, 8)};
  weft::machine::Target target = *weft::machine::Target::create({});
  FrustumBudget b = frustumBudget(target, 100, 4);
  std::string why;
  EXPECT_FALSE(largestTile(g, 1, b, &why));
  int64_t weights = 2 * (256 * 256 * 9 + 256) * 4;
  // An interior 1 x 1 tile reads 3 x 3 and 5 x 5 below it: the pair
  // (input, mid) is the larger.
  int64_t buffers = (5 * 5 + 3 * 3) * 256 * 4;
  EXPECT_NE(why.find("a 1 x 1 tile needs " + std::to_string(weights + buffers) +
                     " bytes per PE on 1 x 1 PEs"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find(std::to_string(weights) + " of weights"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("only 47472 are available (49152 of memory minus 1680"),
            std::string::npos)
      << why;
  // Spread over 16 x 16 PEs it fits: a 256th of the weights, a 16th of
  // each level's tile.
  auto t = largestTile(g, 16, b);
  ASSERT_TRUE(t);
  EXPECT_LE(t->worst.total(), b.available());
  EXPECT_EQ(t->worst.weightBytes, 2 * (256 * 256 * 9 + 256) / 256 * 4);
  EXPECT_FALSE(largestTile(g, 8, b));
  // An inconsistent group is refused, not crashed on.
  FrustumGroup broken;
  broken.layers = {conv(16, 32, 8), conv(16, 32, 8)};
  EXPECT_FALSE(largestTile(broken, 1, b, &why));
  EXPECT_EQ(why, "invalid frustum group: layer 1 does not read the previous "
                 "layer's output");
}

TEST(FrustumTest, GroupFormationKeepsBlocksWhole) {
  // stem conv, then a residual block (layers 1-2), then a conv too large
  // to join anything.
  std::vector<ChainLink> chain(4);
  chain[0].layer = conv(8, 16, 32);
  chain[1].layer = conv(16, 16, 32);
  chain[2].layer = conv(16, 16, 32);
  chain[2].skipFrom = 1;
  chain[3].layer = conv(16, 512, 32);
  FrustumBudget b = rawBudget(48 * 1024, 4);
  auto groups = formGroups(chain, 1, b);
  // [0, 1] would split the block and [0, 2] has it not at its start: the
  // block is its own group; layer 3 (295 KB of weights) runs per layer.
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0], (std::pair<size_t, size_t>{1, 2}));
  FrustumGroup g = chainGroup(chain, 1, 2);
  EXPECT_TRUE(g.residual);
  // Without the skip the first three layers form one group.
  chain[2].skipFrom = -1;
  groups = formGroups(chain, 1, b);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0], (std::pair<size_t, size_t>{0, 2}));
}

TEST(FrustumTest, CostModelAndDecision) {
  FrustumGroup g = workedExample();
  FrustumBudget b = rawBudget(48 * 1024, 2);
  auto tiling = largestTile(g, 1, b);
  ASSERT_TRUE(tiling);
  FrustumCost over = frustumCost(g, *tiling, HaloPolicy::Overlap, 4);
  FrustumCost exch = frustumCost(g, *tiling, HaloPolicy::Exchange, 4);
  // Overlap: each tile receives its whole input tile (halo included).
  int64_t overlapIn = 0;
  for (const FrustumTile &t : groupTiles(g, 11, 11))
    overlapIn += t.elements(0, 16);
  EXPECT_EQ(over.hops, overlapIn * 4);
  // Exchange delivers every input element once (4 hops) and each halo
  // element over one hop: fewer hops than overlap, more colors.
  EXPECT_LT(exch.hops, over.hops);
  // The tiles' own parts partition the input: every element comes once
  // from the producer.
  EXPECT_EQ(frustumCost(g, *tiling, HaloPolicy::Exchange, 5).hops - exch.hops,
            33 * 33 * 16);
  EXPECT_GT(exch.colors, over.colors);
  EXPECT_EQ(over.pes, 9);
  // Overlap: the interior tile is the slowest: it receives 15 x 15 x 16
  // elements and computes 13 x 13 mid pixels (the halo recomputed) and
  // 11 x 11 outputs, one multiply-accumulate a cycle.
  EXPECT_EQ(over.cycles,
            15 * 15 * 16 + 13 * 13 * (32 * 16 * 9) + 11 * 11 * (32 * 32 * 9));
  // Exchange computes fewer mid pixels but waits for the halo.
  EXPECT_LT(exch.cycles, over.cycles);

  PerLayerCost base;
  base.cycles = {3000000, 3000000};
  base.pes = {8, 8};
  base.memoryPerPE = {20000, 20000};
  base.hopsBetweenLayers = 4;
  FrustumCost pl = perLayerCost(g, base);
  EXPECT_EQ(pl.hops, (16 + 32) * 33 * 33 * 4);
  EXPECT_EQ(pl.cycles, 3000000);
  EXPECT_EQ(pl.pes, 16);
  FrustumDecision d = decideFrustum(g, base, 1, b, 4);
  EXPECT_TRUE(d.chosen) << d.reason;
  EXPECT_LE(d.frustum.cycles, d.perLayer.cycles);
  // A per-layer mapping much faster than any tile: not chosen, and why.
  base.cycles = {1000, 1000};
  d = decideFrustum(g, base, 1, b, 4);
  EXPECT_FALSE(d.chosen);
  EXPECT_NE(d.reason.find("predicted slower than per layer"),
            std::string::npos);
  // Nothing fits: not chosen, with the diagnostic.
  d = decideFrustum(g, base, 1, rawBudget(20000, 2), 4);
  EXPECT_FALSE(d.chosen);
  EXPECT_NE(d.reason.find("no tile of the group fits"), std::string::npos);

  // The decision for a given tiling (what --weft-frustum-tile records,
  // after its max-tile cap) is the budget's when given the largest tile;
  // both policies' costs are kept, the chosen one's in `frustum`.
  base.cycles = {3000000, 3000000};
  FrustumDecision byBudget = decideFrustum(g, base, 1, b, 4);
  FrustumTiling same = tilingOf(g, tiling->th, tiling->tw, 1, 2);
  EXPECT_EQ(same.numTiles, tiling->numTiles);
  EXPECT_EQ(same.worst.total(), tiling->worst.total());
  FrustumDecision byTiling = decideFrustum(g, base, same, 4);
  EXPECT_EQ(byTiling.chosen, byBudget.chosen);
  EXPECT_EQ(byTiling.frustum.cycles, byBudget.frustum.cycles);
  EXPECT_EQ(byTiling.overlap.cycles, over.cycles);
  EXPECT_EQ(byTiling.exchange.cycles, exch.cycles);
  EXPECT_EQ(byTiling.frustum.cycles,
            std::min(byTiling.overlap.cycles, byTiling.exchange.cycles));
  // Faster, but its 9 tiles do not fit a fabric of 8 PEs.
  d = decideFrustum(g, base, same, 4, /*maxPes=*/8);
  EXPECT_FALSE(d.chosen);
  EXPECT_NE(d.reason.find("need 9 PEs, more than the fabric's 8"),
            std::string::npos);
  EXPECT_TRUE(decideFrustum(g, base, same, 4, /*maxPes=*/9).chosen);
  // A smaller tile than the largest: more tiles, a smaller working set.
  FrustumTiling smaller = tilingOf(g, 4, 4, 1, 2);
  EXPECT_EQ(smaller.numTiles, 9 * 9);
  EXPECT_LT(smaller.worst.total(), tiling->worst.total());
  // The producer's mean distance to the tiles: 1 + side * ceil(sqrt(n)) / 2.
  EXPECT_EQ(hopsToTiles(same), 1 + 3 / 2);
  EXPECT_EQ(hopsToTiles(smaller), 1 + 9 / 2);
}

} // namespace

namespace {

/// The tile is searched for speed under the memory bound: ResNet-18's
/// stem at 64 x 64 (conv 3 -> 64 7 x 7 stride 2, max pool 3 x 3 stride 2)
/// on blocks of 8 x 8 PEs in fp16 has a largest tile of 16 x 16 (the whole
/// output, one block), predicted 10x slower than per layer; 2 x 2 tiles on
/// 64 blocks exchange their halos faster than per layer
/// (docs/performance.md, "What the cost model predicts for ResNet-18").
TEST(FrustumTest, FastestTileUnderTheMemoryBound) {
  FrustumGroup g;
  g.layers = {conv(3, 64, 64, 7, 2, 1, 3), pool(64, 32, 3, 2)};
  g.layers[1].pt = g.layers[1].pl = g.layers[1].pb = g.layers[1].pr = 1;
  FrustumBudget b = rawBudget(48 * 1024, 2);
  auto largest = largestTile(g, 8, b);
  ASSERT_TRUE(largest);
  EXPECT_EQ(largest->th, 16);
  PerLayerCost base;
  base.cycles = {15184, 4000};
  FrustumDecision one =
      decideFrustum(g, base, *largest, hopsToTiles(*largest), 6400);
  EXPECT_FALSE(one.chosen);
  FrustumDecision d = decideFastestFrustum(g, base, *largest, 2, 6400);
  ASSERT_TRUE(d.chosen);
  ASSERT_TRUE(d.tiling);
  EXPECT_EQ(d.tiling->th, 2);
  EXPECT_EQ(d.tiling->tw, 2);
  EXPECT_EQ(d.policy, HaloPolicy::Exchange);
  EXPECT_EQ(d.frustum.pes, 64 * 64);
  EXPECT_LT(d.frustum.cycles, 15184);
  // Every smaller tile that fits the fabric is no faster.
  for (int64_t t = 1; t <= 16; ++t) {
    FrustumTiling tl = tilingOf(g, t, t, 8, 2);
    FrustumDecision e = decideFrustum(g, base, tl, hopsToTiles(tl), 6400);
    if (e.chosen) {
      EXPECT_GE(e.frustum.cycles, d.frustum.cycles) << t;
    }
  }
  // On a fabric of 1,024 PEs the fastest is 4 x 4 on 16 blocks.
  FrustumDecision small = decideFastestFrustum(g, base, *largest, 2, 1024);
  ASSERT_TRUE(small.chosen);
  EXPECT_EQ(small.tiling->th, 4);
  EXPECT_EQ(small.frustum.pes, 1024);
  // Nothing under per layer: the largest tile's decision and reason.
  PerLayerCost fast;
  fast.cycles = {100, 100};
  FrustumDecision none = decideFastestFrustum(g, fast, *largest, 2, 6400);
  EXPECT_FALSE(none.chosen);
  EXPECT_EQ(none.tiling->th, 16);
  EXPECT_NE(none.reason.find("slower than per layer"), std::string::npos);
}

TEST(FrustumTest, BlocksOfSeveralPEs) {
  // ResNet-18's first basic block at 64 x 64 (64 -> 64 -> 64 3x3 on 16 x 16,
  // identity skip) in fp32: 295 KB of weights fit no single PE.
  FrustumGroup g;
  g.layers = {conv(64, 64, 16), conv(64, 64, 16)};
  g.residual = true;
  weft::machine::Target target = *weft::machine::Target::create({});
  FrustumBudget b = frustumBudget(target, 500, 4);
  std::string why;
  EXPECT_FALSE(largestTile(g, 2, b, &why));
  EXPECT_NE(why.find("on 2 x 2 PEs"), std::string::npos) << why;
  auto t = largestTile(g, 4, b);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->worst.weightBytes, 2 * ((64 * 64 * 9 + 64) / 16) * 4);
  EXPECT_LE(t->worst.total(), b.available());
  EXPECT_FALSE(fits(g, t->th + 1, t->tw + 1, 4, b));
  FrustumCost over = frustumCost(g, *t, HaloPolicy::Overlap, 1);
  EXPECT_EQ(over.pes, t->numTiles * 16);
  // Inside a block the middle level crosses (3q - 2) links an element.
  int64_t inputs = 0, mids = 0;
  for (const FrustumTile &tile : groupTiles(g, t->th, t->tw)) {
    inputs += tile.elements(0, 64);
    mids += tile.elements(1, 64);
  }
  EXPECT_EQ(over.hops, inputs + mids * (3 * 4 - 2));
  EXPECT_EQ(over.colors, 2 + 3);
}

} // namespace
