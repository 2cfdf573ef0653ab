//===- PoolMappingTest.cpp - The pooling schedule and cost model ----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The pooling geometry (ONNX's output sizes and ceil_mode pads, the average
// divisors the importer computes), the line-buffer schedule, the cost model
// against a hand count, and the partitioner's view of a pool.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ChainPartition.h"
#include "weft/Kernels/PoolMapping.h"
#include "weft/Machine/Target.h"

#include <gtest/gtest.h>

using namespace weft::conversion;

namespace {

PoolShape pool(int64_t c, int64_t h, int64_t w, int64_t k, int64_t s,
               int64_t pad = 0, bool max = true) {
  PoolShape p;
  p.max = max;
  p.c = c;
  p.hin = h;
  p.win = w;
  p.kh = p.kw = k;
  p.sh = p.sw = s;
  p.pt = p.pl = p.pb = p.pr = pad;
  return p;
}

TEST(PoolShape, OutputSizesFollowOnnx) {
  PoolShape p = pool(4, 9, 9, 3, 2, 1);
  EXPECT_EQ(p.hout(), 5);
  EXPECT_EQ(p.padBottom(), 1);
  EXPECT_EQ(p.check(), "");
  // torch's MaxPool2d(2) on 7x7 floors to 3; ceil_mode gives 4 and reads
  // one column of pads past the input.
  PoolShape q = pool(1, 7, 7, 2, 2);
  EXPECT_EQ(q.hout(), 3);
  q.ceil = true;
  EXPECT_EQ(q.hout(), 4);
  EXPECT_EQ(q.padBottom(), 1);
  EXPECT_EQ(q.padRight(), 1);
  // A window may not start in the end pads alone: 8 with k 3, s 2, pad 1
  // in ceil mode is 5 windows, the last reading 2 rows past the input.
  PoolShape r = pool(2, 8, 8, 3, 2, 1);
  r.ceil = true;
  EXPECT_EQ(r.hout(), 5);
  EXPECT_EQ(r.padBottom(), 2);
}

TEST(PoolShape, AverageDivisorsMatchTheImporter) {
  PoolShape p = pool(2, 8, 8, 3, 2, 1, /*max=*/false);
  p.ceil = true;
  // count_include_pad = 0: positions inside the input only.
  EXPECT_EQ(p.rowCount(0), 2);
  EXPECT_EQ(p.rowCount(1), 3);
  EXPECT_EQ(p.rowCount(4), 1);
  // count_include_pad = 1: the explicit pad counts, ceil's never does.
  p.includePad = true;
  EXPECT_EQ(p.rowCount(0), 3);
  EXPECT_EQ(p.rowCount(4), 2);
  std::vector<int64_t> index;
  std::vector<int64_t> counts = poolRowCounts(p, &index);
  EXPECT_EQ(counts, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(index, (std::vector<int64_t>{0, 0, 0, 0, 1}));
}

TEST(PoolSchedule, ReceivesEveryRowOnceAndSkipsPadRows) {
  PoolShape p = pool(4, 9, 9, 3, 2, 1);
  PoolSchedule sch = poolSchedule(p);
  EXPECT_EQ(sch.ringRows, 3);
  EXPECT_EQ(sch.paddedWidth, 11);
  EXPECT_EQ(sch.wo, 5);
  int64_t received = 0, computed = 0;
  for (const PoolStep &st : sch.steps) {
    if (st.receive) {
      EXPECT_EQ(st.row, received++);
      continue;
    }
    // Output row 0 reads input rows 0 and 1 (row -1 is pad), row 4 reads
    // rows 7 and 8 (row 9 is pad).
    EXPECT_EQ(st.row, computed);
    EXPECT_EQ(st.slots.size(), computed == 0 || computed == 4 ? 2u : 3u);
    EXPECT_TRUE(st.begin && st.end);
    ++computed;
  }
  EXPECT_EQ(received, 9);
  EXPECT_EQ(computed, 5);
  EXPECT_EQ(sch.unroll, 2);
}

TEST(PoolSchedule, GlobalPoolAddsEveryRowAsItArrives) {
  PoolShape p = pool(8, 4, 6, 1, 1);
  p.kh = 4;
  p.kw = 6;
  ASSERT_TRUE(p.global());
  EXPECT_EQ(p.hout(), 1);
  EXPECT_EQ(p.wout(), 1);
  PoolSchedule sch = poolSchedule(p);
  EXPECT_EQ(sch.ringRows, 1);
  EXPECT_EQ(sch.wo, 1);
  EXPECT_EQ(sch.kw, 6);
  ASSERT_EQ(sch.steps.size(), 8u);
  EXPECT_TRUE(sch.steps[1].begin);
  EXPECT_FALSE(sch.steps[1].end);
  EXPECT_FALSE(sch.steps[7].begin);
  EXPECT_TRUE(sch.steps[7].end);
  EXPECT_EQ(sch.unroll, 2);
}

TEST(PoolCost, CountsTheProgram) {
  // MaxPool 2 on 2 channels of 4x4, one row: per input row a record load
  // and a move of 4 x 2 elements (1 + 1 + 8); per output row a reset of
  // 2 x 2 (1 + 4), two window rows of a record load and an fmax of 8
  // (1 + 1 + 8), the send's launch (1); the jump.
  PoolShape p = pool(2, 4, 4, 2, 2);
  int64_t expect = 4 * 10 + 2 * (5 + 2 * 10 + 1) + 1;
  EXPECT_EQ(predictPoolCycles(p, 1), expect);
  // Two rows halve the vectors.
  EXPECT_EQ(predictPoolCycles(p, 2), 4 * 6 + 2 * (3 + 2 * 6 + 1) + 1);
  // An average scales each output row (a record load, an fmul of 4).
  p.max = false;
  EXPECT_EQ(predictPoolCycles(p, 1), expect + 2 * (1 + 5));
}

TEST(PoolCost, SendsLongerThanTheFreeCyclesStallTheProgram) {
  // ResNet-18's max pool at 64x64: 64 channels of 32x32, 3x3 stride 2 pad
  // 1, on 16 rows (Lc = 4, 16 output columns). The program alone: per input
  // row 1 + 1 + 128; per output row a reset of 64 (1 + 64), three window
  // rows of 1 + 1 + 192 (two for the first) and the launch (1); the jump.
  PoolShape p = pool(64, 32, 32, 3, 2, 1);
  int64_t program = 32 * 130 + 16 * 66 + 47 * 194 + 1;
  // Each row's send is 64 wavelets, and between two launches the program
  // leaves 11 cycles free for it (two receives' record loads and startups,
  // the reset's startup, three window rows' loads and startups; 10 before
  // the first row's launch, the jump included, as it has two window rows):
  // the rest stalls the next launch. The simulated interval of this pool
  // alone is 15,184 cycles.
  EXPECT_EQ(program, 14335);
  EXPECT_EQ(predictPoolCycles(p, 16), program + 15 * (64 - 11) + (64 - 10));
  EXPECT_EQ(predictPoolCycles(p, 16), 15184);
  // GlobalAveragePool of 512 channels of 2x2 on 16 rows (Lc = 32): 333
  // cycles of program, a send of 32 wavelets with 12 free cycles (two
  // receives' and two fadds' loads and startups, the reset's and the
  // fmul's startups, the fmul's record load, the jump); 353 simulated.
  PoolShape g = pool(512, 2, 2, 2, 1, 0, /*max=*/false);
  ASSERT_TRUE(g.global());
  EXPECT_EQ(predictPoolCycles(g, 16), 333 + (32 - 12));
}

TEST(PoolCost, MappingProblems) {
  PoolShape p = pool(6, 28, 28, 2, 2);
  EXPECT_EQ(poolMappingProblem(p, 4, 48 * 1024),
            "the rows must divide the channels");
  EXPECT_EQ(poolMappingProblem(p, 3, 48 * 1024), "");
  EXPECT_GT(poolMemoryPerPE(p, 1), poolMemoryPerPE(p, 6));
  // A row wider than a 4-D dimension.
  PoolShape wide = pool(1, 1, 600, 1, 1);
  wide.kw = 600;
  EXPECT_NE(poolMappingProblem(wide, 1, 48 * 1024), "");
}

TEST(PoolBands, BandsCoverTheRowAndCostLess) {
  // ResNet's max pool, 3x3 stride 2 pad 1, on an odd width.
  PoolShape p = pool(16, 32, 35, 3, 2, 1);
  ASSERT_EQ(p.wout(), 18);
  for (int64_t tiles : {2, 3, 4}) {
    std::vector<PoolShape> bands = poolBands(p, tiles);
    ASSERT_EQ(int64_t(bands.size()), tiles);
    int64_t wout = 0, cols = 0;
    for (const PoolShape &b : bands) {
      EXPECT_EQ(b.hout(), p.hout());
      EXPECT_FALSE(b.ceil);
      wout += b.wout();
      cols += b.win;
    }
    // Every output column once; the input columns with their halos.
    EXPECT_EQ(wout, p.wout());
    EXPECT_GT(cols, p.win);
    EXPECT_EQ(bands.front().pl, 1);
    EXPECT_EQ(bands.back().pl, 0);
    EXPECT_EQ(poolBandsProblem(p, 4, tiles, 48 * 1024), "");
    EXPECT_LT(predictPoolBandsCycles(p, 4, tiles), predictPoolCycles(p, 4));
    // Each band's lanes: every input column passes one lane a row.
    EXPECT_GE(predictPoolBandsCycles(p, 4, tiles), 32 * 35 * 4);
    EXPECT_LT(poolBandsMemoryPerPE(p, 4, tiles), poolMemoryPerPE(p, 4));
  }
  EXPECT_EQ(poolBands(p, 1).size(), 1u);
  EXPECT_EQ(predictPoolBandsCycles(p, 4, 1), predictPoolCycles(p, 4));
  // Averages (their divisors need the whole row's pads) and global pools
  // are not cut; nor are more bands than output columns.
  PoolShape avg = pool(16, 32, 35, 3, 2, 1, /*max=*/false);
  EXPECT_TRUE(poolBands(avg, 2).empty());
  EXPECT_NE(poolBandsProblem(avg, 4, 2, 48 * 1024), "");
  EXPECT_TRUE(poolBands(pool(4, 8, 8, 8, 1), 2).empty());
  EXPECT_TRUE(poolBands(p, 19).empty());
}

TEST(PoolPartition, LaidOutAsAColumnOfWholeChannels) {
  PoolShape p = pool(6, 28, 28, 2, 2);
  NetworkShape net =
      NetworkShape::chain({ChainLayer::column(ColumnOp::Relu, 6 * 28 * 28),
                           ChainLayer::pooling(p)});
  net.streamChannels = {6, 6, 6};
  std::optional<weft::machine::Target> t = weft::machine::Target::parse("8x8");
  ASSERT_TRUE(t);
  std::string why;
  std::optional<ChainMapping> m =
      partitionNetwork(net, Precision::FP32, *t, why);
  ASSERT_TRUE(m) << why;
  // The pool sets the pace, so its output columns are cut into bands, a
  // column each.
  const ChainPlacement &k = m->kernels[1];
  EXPECT_GT(k.width, 1);
  EXPECT_EQ(k.tiles, k.width);
  EXPECT_EQ(6 % k.rows, 0);
  EXPECT_EQ(k.predictedCycles, predictPoolBandsCycles(p, k.rows, k.tiles));
  EXPECT_LT(k.predictedCycles, predictPoolCycles(p, k.rows));
  EXPECT_EQ(m->streamRows[2], k.rows);
}

} // namespace
