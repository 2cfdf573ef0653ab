//===- DenseMappingTest.cpp - Dense-layer chunks, cost model, choice ------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/DenseMapping.h"

#include <gtest/gtest.h>

#include <random>

using namespace weft::conversion;
namespace wt = weft::machine;

namespace {

TEST(DenseMapping, ChunksCoverEverythingOnce) {
  for (int64_t n : {1, 5, 37, 784, 1000})
    for (int64_t parts = 1; parts <= std::min<int64_t>(n, 40); ++parts) {
      int64_t total = 0;
      for (int64_t i = 0; i < parts; ++i) {
        EXPECT_EQ(chunkBegin(n, parts, i), total);
        total += chunkSize(n, parts, i);
      }
      EXPECT_EQ(total, n);
      EXPECT_EQ(chunkSize(n, parts, 0), (n + parts - 1) / parts);
    }
  // 9 inputs in 4 chunks of 3: the last chunk is empty.
  EXPECT_EQ(chunkSize(9, 4, 3), 0);
}

TEST(DenseMapping, CostModelFromTheIsaTable) {
  DenseMapping m;
  m.smear = 16;
  m.rows = 16;
  // 49 inputs per column, 16 neurons per row: per element 1 + (1 + 16) + 1,
  // per sample the last column's closeout 3 + 4 * (1 + 16) + 1 (the launch
  // of the output send), and 4 cycles of the diagonal PE's closeout tasks.
  // (The simulator measures 1,007 between samples.)
  EXPECT_EQ(predictCyclesPerSample(784, 256, m), 49 * 19 + 3 + 4 * 17 + 1 + 4);
  EXPECT_EQ(predictCyclesPerSample(784, 256, m, /*bias=*/false),
            49 * 19 + 3 + 3 * 17 + 1 + 4);
  m.precision = Precision::Mixed;
  // fmachs: 1 + ceil(16 / 4) = 5 cycles, plus the ff2h. (Simulated: 467.)
  EXPECT_EQ(predictCyclesPerSample(784, 256, m), 49 * 8 + 3 + 4 * 17 + 1 + 4);
  // 37 inputs over 13 columns: chunks of 3 but the last has 1, so the
  // first columns set the pace (3 * 12 + 3 + 2 * 10 = 59); the last column
  // (1 * 12 + 3 + 4 * 10 + 1 = 56) has 2 + 3 free datapath cycles for the
  // 9-element send of its results, 4 short. (Simulated: 63.)
  DenseMapping n;
  n.smear = 13;
  n.rows = 15;
  EXPECT_EQ(predictCyclesPerSample(37, 129, n), 56 + 4 + 4);
  // 256 -> 128 over 8 columns x 1 row: 32 inputs per column leave 64 free
  // cycles for a 128-element send (simulated busiest PE: 4,788).
  n.smear = 8;
  n.rows = 1;
  EXPECT_EQ(predictCyclesPerSample(256, 128, n),
            32 * 131 + 3 + 4 * 129 + 1 + 64 + 4);
}

TEST(DenseMapping, ChoosesTheFastestFittingRectangle) {
  std::string why;
  auto t = wt::Target::parse("16x16");
  ASSERT_TRUE(t);
  auto m = chooseDenseMapping(784, 256, Precision::FP32, *t, why);
  ASSERT_TRUE(m.has_value()) << why;
  EXPECT_EQ(m->smear, 16);
  EXPECT_EQ(m->rows, 16);
  // A layer with 10 neurons cannot use more than 10 rows, but may smear its
  // fan-in over more columns (their chunks turn below the rectangle).
  m = chooseDenseMapping(1000, 10, Precision::FP32, *t, why);
  ASSERT_TRUE(m.has_value()) << why;
  EXPECT_LE(m->rows, 10);
  EXPECT_EQ(m->smear, 16);
}

TEST(DenseMapping, EveryChoiceIsValid) {
  std::mt19937 rng(3);
  for (int i = 0; i < 300; ++i) {
    int64_t K = 1 + rng() % 3000, M = 1 + rng() % 600;
    unsigned w = 1 + rng() % 24, h = 1 + rng() % 24;
    auto t = wt::Target::parse(std::to_string(w) + "x" + std::to_string(h));
    ASSERT_TRUE(t);
    Precision p = rng() % 2 ? Precision::Mixed : Precision::FP32;
    std::string why;
    auto m = chooseDenseMapping(K, M, p, *t, why);
    if (!m) {
      EXPECT_NE(why.find("bytes of weights"), std::string::npos) << why;
      continue;
    }
    EXPECT_LE(std::max(m->smear, m->rows), int64_t(h));
    EXPECT_LE(m->smear, int64_t(w));
    EXPECT_LE(m->rows, int64_t(h));
    EXPECT_GT(chunkSize(K, m->smear, m->smear - 1), 0);
    EXPECT_GT(chunkSize(M, m->rows, m->rows - 1), 0);
    EXPECT_LE(memoryPerPE(K, M, *m), int64_t(t->memoryBytes()));
  }
}

TEST(DenseMapping, TooBigSaysWhatIsNeeded) {
  std::string why;
  auto t = wt::Target::parse("4x4");
  auto m = chooseDenseMapping(4096, 4096, Precision::FP32, *t, why);
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(why.find("67108864 bytes of weights"), std::string::npos) << why;
  EXPECT_NE(why.find("PEs of 49152 bytes"), std::string::npos) << why;
}

} // namespace
