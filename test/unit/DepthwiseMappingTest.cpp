//===- DepthwiseMappingTest.cpp - The grouped convolution's cost model ----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The geometry of grouped convolutions (groups, MACs), the depthwise
// kernel's schedule, its cost model against hand counts (the sends' stalls
// included), its memory and mapping checks, and the partitioner's view of
// it: a column of whole groups per row, not smeared.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/DepthwiseMapping.h"
#include "weft/Kernels/ChainPartition.h"
#include "weft/Machine/Target.h"

#include <gtest/gtest.h>

using namespace weft::conversion;

namespace {

/// A depthwise convolution of `c` channels (multiplier `mult`) on h x w
/// with a k x k window, stride `s` and pad `pad` on every side.
ConvShape depthwise(int64_t c, int64_t h, int64_t w, int64_t k, int64_t s = 1,
                    int64_t pad = 0, int64_t mult = 1) {
  ConvShape d;
  d.cin = d.groups = c;
  d.cout = c * mult;
  d.hin = h;
  d.win = w;
  d.kh = d.kw = k;
  d.sh = d.sw = s;
  d.pt = d.pl = d.pb = d.pr = pad;
  return d;
}

TEST(GroupedConvShape, GroupsDivideTheChannelsAndTheMacs) {
  ConvShape d = depthwise(8, 6, 6, 3, 1, 1, /*mult=*/2);
  EXPECT_EQ(d.check(), "");
  EXPECT_TRUE(d.grouped());
  EXPECT_TRUE(d.depthwise());
  EXPECT_EQ(d.groupIn(), 1);
  EXPECT_EQ(d.groupOut(), 2);
  // One input channel per output channel: 16 x (taps inside the input).
  // A 6x6 map with a 3x3 window and pad 1 has 4 x 4 interior pixels of 9
  // taps, 16 edge pixels of 6, 4 corners of 4.
  EXPECT_EQ(d.modelMacs(), 16 * (16 * 9 + 16 * 6 + 4 * 4));
  // Executed: whole window rows inside the input (pad columns included).
  EXPECT_EQ(d.executedMacs(), 16 * (6 * 3 - 2) * 6 * 3);
  // A general grouped convolution: 8 -> 12 in 4 groups of 2 -> 3.
  ConvShape g = d;
  g.groups = 4;
  g.cout = 12;
  EXPECT_FALSE(g.depthwise());
  EXPECT_EQ(g.groupIn(), 2);
  EXPECT_EQ(g.modelMacs(), 12 * 2 * (16 * 9 + 16 * 6 + 4 * 4));
  g.groups = 3;
  EXPECT_NE(g.check(), "");
  // Dense convolutions refuse a grouped shape; the depthwise kernel a
  // dense one.
  DenseMapping m;
  EXPECT_NE(convMappingProblem(d, m, 48 * 1024), "");
  ConvShape dense = d;
  dense.groups = 1;
  EXPECT_EQ(depthwiseMappingProblem(dense, 1, 48 * 1024),
            "not a grouped convolution");
}

TEST(DepthwiseSchedule, IsTheConvolutionsSchedule) {
  ConvShape d = depthwise(4, 9, 9, 3, 2, 1);
  ConvSchedule a = depthwiseSchedule(d), b = convSchedule(d);
  EXPECT_EQ(a.ringRows, b.ringRows);
  EXPECT_EQ(a.paddedWidth, b.paddedWidth);
  EXPECT_EQ(a.unroll, 2); // 5 output rows
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].receive, b.steps[i].receive);
    EXPECT_EQ(a.steps[i].taps, b.steps[i].taps);
    EXPECT_EQ(a.steps[i].slots, b.steps[i].slots);
  }
}

TEST(DepthwiseCost, MixedPrecisionHalvesStorageAndQuartersTheMacs) {
  // The program of CountsTheProgram in mixed precision: a receive is an
  // ff2h of the same cycles (the fabric supplies an element a cycle), each
  // multiply-accumulate an fmachs of 8 x 3 elements four a cycle (1 + 6
  // instead of 1 + 24); the free cycles between the sends' launches (record
  // loads and startups) are the same, so is the last row's stall of 2.
  ConvShape d = depthwise(2, 4, 4, 3, 1, 1);
  EXPECT_EQ(predictDepthwiseCycles(d, 1, Precision::Mixed),
            4 * 10 + 4 * 10 + 10 * 9 + 1 + 2);
  // The weights (2 x 9) and the ring (3 rows of 6 padded pixels of 2
  // channels) take one word an element instead of two.
  DepthwiseMemoryMap fp32 = depthwiseMemoryMap(d, 1);
  DepthwiseMemoryMap mixed = depthwiseMemoryMap(d, 1, Precision::Mixed);
  EXPECT_EQ(fp32.ring - fp32.weights, 36);
  EXPECT_EQ(mixed.ring - mixed.weights, 18);
  EXPECT_EQ(fp32.bias - fp32.ring, 72);
  EXPECT_EQ(mixed.bias - mixed.ring, 36);
  EXPECT_EQ(depthwiseMemoryPerPE(d, 1) - depthwiseMemoryPerPE(d, 1, Precision::Mixed),
            2 * (18 + 36));
  // Bands cost the same way.
  EXPECT_EQ(predictDepthwiseBandsCycles(d, 1, 1, Precision::Mixed),
            predictDepthwiseCycles(d, 1, Precision::Mixed));
  EXPECT_LT(predictDepthwiseBandsCycles(d, 1, 2, Precision::Mixed),
            predictDepthwiseBandsCycles(d, 1, 2));
}

TEST(DepthwiseCost, CountsTheProgram) {
  // 2 channels of 4x4, 3x3, pad 1, one row: 4 receives of a record load
  // and a move of 4 x 2 (1 + 9); 4 output rows of a bias/zero move of
  // 4 x 2 (9) and the send's launch (1); 10 kernel rows inside the input
  // (2 + 3 + 3 + 2) of two record loads and an fmac of 8 x 3 (2 + 25);
  // the jump. The sends (9 cycles) fit in the gaps of 12 free cycles (a
  // receive's 2, the reset's startup, 3 kernel rows of 3) but for the last
  // row's: no receive and 2 kernel rows leave 7, a stall of 2.
  ConvShape d = depthwise(2, 4, 4, 3, 1, 1);
  EXPECT_EQ(predictDepthwiseCycles(d, 1), 4 * 10 + 4 * 10 + 10 * 27 + 1 + 2);
  // Two rows halve the vectors (and the sends of 5 cycles fit).
  EXPECT_EQ(predictDepthwiseCycles(d, 2), 4 * 6 + 4 * 6 + 10 * 15 + 1);
  // A ReLU is one fmax of the row (whose startup shortens the stall).
  d.relu = true;
  EXPECT_EQ(predictDepthwiseCycles(d, 1), 351 + 4 * 9 + 1);
  // ReLU6 adds an fmin of the row (and a word for its bound).
  ConvShape r6 = d;
  r6.reluMax = 6.0f;
  EXPECT_EQ(predictDepthwiseCycles(r6, 1), 351 + 4 * 9 + 4 * 9);
  DepthwiseMemoryMap mm6 = depthwiseMemoryMap(r6, 1);
  EXPECT_EQ(mm6.end - mm6.clip, 2);
  EXPECT_GT(depthwiseMemoryPerPE(r6, 1), depthwiseMemoryPerPE(d, 1) + 4);
  // A general grouped convolution: one fmac per input channel of a group.
  ConvShape g = d;
  g.relu = false;
  g.cin = 4;
  g.groups = 2;
  g.cout = 2;
  // Lc = 4: receives of 1 + 17; rows of 1 + 9 (Lo = 2); 20 fmacs of 2 x 4 x 3
  // (the last row's gap is 13 free cycles: no stall).
  EXPECT_EQ(predictDepthwiseCycles(g, 1), 4 * 18 + 4 * 10 + 20 * 27 + 1);
}

TEST(DepthwiseCost, SendsThatDoNotFitStallTheMainThread) {
  // A 1x1 window over 64 channels of 2 rows of 16 pixels: rows of 1024
  // elements, sends of 1025 cycles, but only 6 free cycles between two
  // launches (the receive's load and startup, the reset's startup, the
  // fmac's two loads and startup) and 7 across the sample (the jump).
  ConvShape d = depthwise(64, 2, 16, 1);
  int64_t row = 1 + 1025 + 1025 + 2 + 1025 + 1;
  EXPECT_EQ(predictDepthwiseCycles(d, 1),
            2 * row + 1 + (1025 - 6) + (1025 - 7));
}

TEST(DepthwiseCost, MappingProblems) {
  ConvShape d = depthwise(6, 28, 28, 3, 1, 1);
  EXPECT_EQ(depthwiseMappingProblem(d, 4, 48 * 1024),
            "the rows must divide the groups (6)");
  EXPECT_EQ(depthwiseMappingProblem(d, 3, 48 * 1024), "");
  EXPECT_GT(depthwiseMemoryPerPE(d, 1), depthwiseMemoryPerPE(d, 6));
  // A window wider than a 4-D dimension.
  ConvShape wide = depthwise(2, 1, 600, 1);
  wide.kw = 300;
  EXPECT_EQ(depthwiseMappingProblem(wide, 1, 48 * 1024),
            "a 4-D descriptor dimension exceeds its field");
  // A multiplier beyond 255.
  ConvShape mult = depthwise(2, 4, 4, 1, 1, 0, 300);
  EXPECT_EQ(depthwiseMappingProblem(mult, 1, 48 * 1024),
            "a 4-D descriptor dimension exceeds its field");
  // A line buffer beyond the PE's memory.
  ConvShape big = depthwise(128, 8, 250, 3, 1, 1);
  std::string why = depthwiseMappingProblem(big, 1, 48 * 1024);
  EXPECT_NE(why.find("bytes of PE memory"), std::string::npos) << why;
  // The memory map: records after the code, data after the records.
  DepthwiseMemoryMap mm = depthwiseMemoryMap(d, 3);
  EXPECT_GE(mm.records, 640 + mm.code);
  EXPECT_EQ(mm.weights, mm.records + 4 * mm.numRecords);
  EXPECT_EQ(mm.ring - mm.weights, 2 * 2 * 9);
  EXPECT_EQ(mm.end - mm.outBuf, 4 * 2 * 28);
}

TEST(DepthwisePartition, LaidOutAsAColumnOfWholeGroups) {
  ConvShape d = depthwise(6, 28, 28, 3, 1, 1);
  ChainLayer dw = ChainLayer::convolution(d);
  EXPECT_FALSE(dw.smeared());
  NetworkShape net = NetworkShape::chain(
      {ChainLayer::column(ColumnOp::Relu, 6 * 28 * 28), dw});
  net.streamChannels = {6, 6, 6};
  std::optional<weft::machine::Target> t = weft::machine::Target::parse("8x8");
  ASSERT_TRUE(t);
  std::string why;
  std::optional<ChainMapping> m =
      partitionNetwork(net, Precision::FP32, *t, why);
  ASSERT_TRUE(m) << why;
  // The fastest: one channel per PE, and the 7 columns left cut into
  // bands of output columns, a column a band.
  const ChainPlacement &k = m->kernels[1];
  EXPECT_EQ(k.rows, 6);
  EXPECT_EQ(k.width, k.tiles);
  EXPECT_GT(k.tiles, 1);
  EXPECT_EQ(k.predictedCycles, predictDepthwiseBandsCycles(d, 6, k.tiles));
  EXPECT_LT(k.predictedCycles, predictDepthwiseCycles(d, 6));
  EXPECT_EQ(m->streamRows[2], k.rows);
  // With one column left it is one column of whole groups.
  std::optional<ChainMapping> narrow = partitionNetwork(
      net, Precision::FP32, *weft::machine::Target::parse("2x8"), why);
  ASSERT_TRUE(narrow) << why;
  EXPECT_EQ(narrow->kernels[1].width, 1);
  EXPECT_EQ(narrow->kernels[1].tiles, 1);
  EXPECT_EQ(narrow->kernels[1].predictedCycles,
            predictDepthwiseCycles(d, narrow->kernels[1].rows));
  // The network's MACs are the depthwise convolution's.
  EXPECT_EQ(networkMacsPerSample(net), d.modelMacs());
  // On one row of memory too small for the weights and line buffer, the
  // partitioner says which kernel fits nowhere.
  ConvShape big = depthwise(64, 200, 200, 5, 1, 2);
  std::optional<ChainMapping> none = partitionNetwork(
      NetworkShape::chain({ChainLayer::convolution(big)}), Precision::FP32,
      *weft::machine::Target::parse("4x1"), why);
  EXPECT_FALSE(none);
  EXPECT_NE(why.find("depthwise conv 64x200x200"), std::string::npos) << why;
}

} // namespace
