//===- FrustumChainTest.cpp - A fused chain of convolutions per band ------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The envelope of a chain (its bands read what the chain's bands read), the
// per-level band shapes, and the depth-first schedule: every level computes
// every output row exactly once, a row only after the rows it reads exist,
// and writes it into a slot no later row of the next level still needs.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/FrustumChain.h"

#include <gtest/gtest.h>

#include <map>

using namespace weft::conversion;

namespace {

ConvShape conv(int64_t cin, int64_t cout, int64_t h, int64_t w, int64_t k,
               int64_t s = 1, int64_t pad = 1, int64_t d = 1) {
  ConvShape c;
  c.cin = cin, c.cout = cout, c.hin = h, c.win = w, c.kh = c.kw = k;
  c.sh = c.sw = s, c.dh = c.dw = d;
  c.pt = c.pl = c.pb = c.pr = pad;
  c.relu = true;
  return c;
}

std::vector<ConvShape> chainOf(std::vector<ConvShape> layers) {
  for (size_t l = 1; l < layers.size(); ++l) {
    layers[l].cin = layers[l - 1].cout;
    layers[l].hin = layers[l - 1].hout();
    layers[l].win = layers[l - 1].wout();
  }
  return layers;
}

TEST(FrustumChainTest, Envelope) {
  // Three 3 x 3 stride-1 pad-1: a 7 x 7 window, pad 3.
  auto vgg = chainOf({conv(3, 8, 16, 16, 3), conv(8, 8, 0, 0, 3),
                      conv(8, 16, 0, 0, 3)});
  EXPECT_EQ(frustumChainProblem(vgg), "");
  ConvShape e = frustumEnvelope(vgg);
  EXPECT_EQ(e.kw, 7);
  EXPECT_EQ(e.pl, 3);
  EXPECT_EQ(e.sw, 1);
  EXPECT_EQ(e.wout(), 16);
  EXPECT_EQ(e.cout, 16);
  // 3 x 3 pad 1, then 3 x 3 stride 2 pad 1: window 3 + 2 = 5, stride 2.
  auto strided = chainOf({conv(4, 8, 13, 14, 3), conv(8, 8, 0, 0, 3, 2),
                          conv(8, 8, 0, 0, 1, 1, 0)});
  EXPECT_EQ(frustumChainProblem(strided), "");
  e = frustumEnvelope(strided);
  EXPECT_EQ(e.kw, 5);
  EXPECT_EQ(e.sw, 2);
  EXPECT_EQ(e.pl, 2);
  EXPECT_EQ(e.hout(), 7);
  EXPECT_EQ(e.wout(), 7);
  // Not a chain.
  auto broken = vgg;
  broken[1].cin = 4;
  EXPECT_NE(frustumChainProblem(broken), "");
  EXPECT_NE(frustumChainProblem({vgg[0]}), "");
}

TEST(FrustumChainTest, BandsCoverTheOutput) {
  auto vgg = chainOf({conv(3, 8, 16, 16, 3), conv(8, 8, 0, 0, 3),
                      conv(8, 16, 0, 0, 3)});
  EXPECT_EQ(frustumBandsForTile(vgg, 4), 4);
  EXPECT_EQ(frustumBandsForTile(vgg, 5), 4);
  EXPECT_EQ(frustumBandsForTile(vgg, 16), 1);
  for (int64_t tiles : {1, 2, 3, 4, 8, 16}) {
    std::vector<FrustumBand> bands = frustumBands(vgg, tiles);
    ASSERT_EQ(int64_t(bands.size()), tiles);
    int64_t o = 0;
    for (const FrustumBand &b : bands) {
      EXPECT_EQ(b.out0, o);
      o = b.out1;
      // Every level's band gives exactly the columns the next one reads.
      for (size_t l = 0; l + 1 < b.levels.size(); ++l)
        EXPECT_EQ(b.levels[l].wout(), b.levels[l + 1].win);
      EXPECT_EQ(b.levels.back().wout(), b.out1 - b.out0);
      // The band reads what it receives, and receives its halo: 3 columns
      // each side inside the image.
      EXPECT_LE(b.levels[0].win, b.received());
      EXPECT_EQ(b.in0, std::max<int64_t>(0, b.out0 - 3));
    }
    EXPECT_EQ(o, 16);
  }
  // 4 bands of 4: the second band reads input columns 1 .. 10.
  std::vector<FrustumBand> four = frustumBands(vgg, 4);
  EXPECT_EQ(four[1].in0, 1);
  EXPECT_EQ(four[1].in1, 11);
  EXPECT_EQ(four[1].levels[1].win, 8); // level 1 reads columns 2 .. 9
  EXPECT_EQ(four[1].levels[2].win, 6); // level 2 reads columns 3 .. 8
}

TEST(FrustumChainTest, ScheduleIsDepthFirstAndComplete) {
  auto strided = chainOf({conv(4, 8, 13, 14, 3), conv(8, 8, 0, 0, 3, 2),
                          conv(8, 8, 0, 0, 1, 1, 0)});
  for (int64_t tiles : {1, 3}) {
    for (const FrustumBand &b : frustumBands(strided, tiles)) {
      const size_t n = b.levels.size();
      // Rows available at each level (level 0: received).
      std::vector<int64_t> have(n + 1, 0);
      std::vector<std::map<int64_t, int64_t>> slotRow(n);
      for (const FrustumStep &st : frustumSchedule(b)) {
        size_t l = size_t(st.level);
        switch (st.kind) {
        case FrustumStep::Kind::Receive:
          EXPECT_EQ(st.row, have[0]);
          slotRow[0][st.slot] = st.row;
          ++have[0];
          break;
        case FrustumStep::Kind::Mac: {
          // The tap reads a row that exists and sits in its slot.
          int64_t row = b.levels[l].inputRow(st.row, st.tap);
          EXPECT_LT(row, have[l]);
          EXPECT_EQ(slotRow[l][st.slot], row);
          break;
        }
        case FrustumStep::Kind::Closeout:
          EXPECT_EQ(st.row, have[l + 1]);
          if (l + 1 < n)
            slotRow[l + 1][st.slot] = st.row;
          ++have[l + 1];
          break;
        }
      }
      EXPECT_EQ(have[0], 13);
      for (size_t l = 0; l < n; ++l)
        EXPECT_EQ(have[l + 1], b.levels[l].hout());
    }
  }
}

TEST(FrustumChainTest, MaxPoolLevels) {
  ConvShape pool = conv(8, 8, 0, 0, 2, 2, 0);
  pool.relu = false;
  pool.maxPool = true;
  auto chain = chainOf({conv(3, 8, 16, 16, 3), pool, conv(8, 8, 0, 0, 3)});
  EXPECT_EQ(frustumChainProblem(chain), "");
  EXPECT_EQ(frustumEnvelope(chain).wout(), 8);
  std::vector<FrustumBand> bands = frustumBands(chain, 4);
  ASSERT_EQ(bands.size(), 4u);
  // A pool has no weights: only the two convolutions' are stored.
  FrustumMemoryMap mm = frustumMemoryMap(bands[1]);
  EXPECT_EQ(mm.ring[1], mm.weights[1]);
  // A pool with pads on its columns is fused: its line buffer's pad
  // columns are -inf, two records a slot (and their two sources) and three
  // prologue instructions each side; a pool with a bias is not.
  auto padded = chainOf(
      {conv(3, 8, 16, 16, 3), conv(8, 8, 0, 0, 3, 2, 1), conv(8, 8, 0, 0, 3)});
  padded[1].relu = false;
  padded[1].maxPool = true;
  padded = chainOf(padded);
  EXPECT_EQ(frustumChainProblem(padded), "");
  std::vector<FrustumBand> pb = frustumBands(padded, 2);
  ASSERT_EQ(pb.size(), 2u);
  FrustumBand noPads = pb[0];
  noPads.levels[1].maxPool = false;
  const int64_t ring = frustumLevelSchedules(pb[0])[1].ringRows;
  EXPECT_EQ(frustumMemoryMap(pb[0]).numRecords,
            frustumMemoryMap(noPads).numRecords + 2 * ring + 2);
  auto biased = padded;
  biased[1].bias = true;
  EXPECT_NE(frustumChainProblem(biased).find("max pool"), std::string::npos);
}

TEST(FrustumChainTest, CostAndMemory) {
  auto vgg = chainOf({conv(3, 8, 16, 16, 3), conv(8, 8, 0, 0, 3),
                      conv(8, 16, 0, 0, 3)});
  // More bands: fewer cycles and less memory per PE.
  int64_t c1 = predictFrustumCycles(vgg, 1), c4 = predictFrustumCycles(vgg, 4);
  EXPECT_LT(c4, c1);
  EXPECT_GT(c4 * 4, c1); // the halo is computed again
  EXPECT_LE(frustumMemoryPerPE(vgg, 4), frustumMemoryPerPE(vgg, 1));
  EXPECT_EQ(frustumMappingProblem(vgg, 4, 49152), "");
  EXPECT_NE(frustumMappingProblem(vgg, 4, 4096).find("bytes of PE memory"),
            std::string::npos);
  EXPECT_NE(frustumMappingProblem(vgg, 17, 49152), "");
}

/// The per-layer figure a frustum group is weighed against: the member's
/// fastest rectangle, banded where that is faster, never faster than the
/// band of the best single rectangle it could take, and no faster on a
/// fabric too narrow for bands.
TEST(FrustumChainTest, FastestPerLayer) {
  ConvShape c = conv(4, 8, 8, 8, 3);
  DenseMapping m;
  m.precision = Precision::FP32;
  int64_t unbanded = INT64_MAX;
  for (int64_t S : {1, 2, 4})
    for (int64_t R : {1, 2, 4, 8}) {
      m.smear = S, m.rows = R, m.tiles = 1;
      if (convMappingProblem(c, m, 49152).empty())
        unbanded = std::min(unbanded, predictConvCycles(c, m));
    }
  // One column: no bands; the fastest unbanded rectangle of one column.
  m.smear = 1, m.rows = 8, m.tiles = 1;
  EXPECT_EQ(fastestConvCycles(c, 1, 8, 49152), predictConvCycles(c, m));
  // Wide: every rectangle unbanded, and bands of output columns.
  int64_t wide = fastestConvCycles(c, 64, 8, 49152);
  EXPECT_LE(wide, unbanded);
  m.smear = 1, m.rows = 8, m.tiles = 8;
  EXPECT_LE(wide, predictConvCycles(c, m));
  EXPECT_LT(wide, fastestConvCycles(c, 1, 8, 49152));
  // Nothing fits: no per-layer mapping at all.
  EXPECT_EQ(fastestConvCycles(c, 64, 8, 64), INT64_MAX);
  PoolShape p;
  p.c = 8, p.hin = p.win = 8, p.kh = p.kw = 2, p.sh = p.sw = 2, p.max = true;
  EXPECT_EQ(fastestPoolCycles(p, 8, 49152), [&] {
    int64_t best = INT64_MAX;
    for (int64_t r : {1, 2, 4, 8})
      if (poolMappingProblem(p, r, 49152).empty())
        best = std::min(best, predictPoolCycles(p, r));
    return best;
  }());
}

TEST(FrustumChainTest, IdentityResidualBlock) {
  // A basic block 8 -> 8 -> 8 on 12 x 12: the top level adds the block's
  // input, then the add's ReLU.
  auto block = chainOf({conv(8, 8, 12, 12, 3), conv(8, 8, 0, 0, 3)});
  ConvShape &top = block.back();
  // The last convolution's own ReLU would come before the add.
  EXPECT_NE(frustumSkipLevel(top, true), "");
  top.relu = false;
  EXPECT_EQ(frustumSkipLevel(top, true), "");
  EXPECT_TRUE(top.skipAdd && top.relu);
  EXPECT_EQ(frustumChainProblem(block), "");
  // A skip on another level, or onto another shape, is refused.
  auto early = block;
  early[0].skipAdd = true;
  EXPECT_NE(frustumChainProblem(early), "");
  auto wider = chainOf({conv(8, 8, 12, 12, 3), conv(8, 16, 0, 0, 3)});
  wider.back().skipAdd = true;
  EXPECT_NE(frustumChainProblem(wider), "");

  for (int64_t tiles : {1, 3, 4}) {
    std::vector<FrustumBand> bands = frustumBands(block, tiles);
    ASSERT_EQ(bands.size(), size_t(tiles));
    for (const FrustumBand &band : bands) {
      // The band receives the columns its skip adds.
      EXPECT_LE(band.in0, band.out0);
      EXPECT_GE(band.in1, band.out1);
      std::vector<ConvSchedule> sch = frustumLevelSchedules(band);
      // When top row h completes, input row h + 2 has arrived: level 0's
      // 3 x 3 window keeps rows h .. h + 2 already.
      EXPECT_EQ(sch[0].ringRows, 3);
      // Every top row adds the input row of its own index: the slot it
      // reads was last written with that row.
      std::map<int64_t, int64_t> rowIn;
      int64_t tops = 0;
      for (const FrustumStep &st : frustumSchedule(band)) {
        if (st.kind == FrustumStep::Kind::Receive)
          rowIn[st.slot] = st.row;
        if (st.kind == FrustumStep::Kind::Closeout && st.level == 1) {
          ASSERT_GE(st.skipSlot, 0);
          EXPECT_EQ(rowIn[st.skipSlot], st.row);
          ++tops;
        } else if (st.kind == FrustumStep::Kind::Closeout) {
          EXPECT_EQ(st.skipSlot, -1);
        }
      }
      EXPECT_EQ(tops, 12);
      // The deeper line buffer and the skip's records cost memory; the
      // add costs cycles.
      FrustumBand plain = band;
      plain.levels.back().skipAdd = false;
      EXPECT_GT(frustumMemoryMap(band).end, frustumMemoryMap(plain).end);
    }
  }
  auto plainChain = block;
  plainChain.back().skipAdd = false;
  EXPECT_GT(predictFrustumCycles(block, 3),
            predictFrustumCycles(plainChain, 3));

  // A 1 x 1 convolution first: its window keeps one row, but top row h
  // completes only after input row h + 1: level 0 keeps two.
  auto bottleneck = chainOf({conv(8, 8, 12, 12, 1, 1, 0), conv(8, 8, 0, 0, 3)});
  bottleneck.back().relu = false;
  ASSERT_EQ(frustumSkipLevel(bottleneck.back(), true), "");
  std::vector<FrustumBand> bands = frustumBands(bottleneck, 2);
  ASSERT_EQ(bands.size(), 2u);
  EXPECT_EQ(frustumLevelSchedules(bands[0])[0].ringRows, 2);
  std::map<int64_t, int64_t> rowIn;
  for (const FrustumStep &st : frustumSchedule(bands[0])) {
    if (st.kind == FrustumStep::Kind::Receive)
      rowIn[st.slot] = st.row;
    if (st.kind == FrustumStep::Kind::Closeout && st.level == 1) {
      EXPECT_EQ(rowIn[st.skipSlot], st.row);
    }
  }
}

} // namespace
