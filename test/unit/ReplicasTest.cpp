//===- ReplicasTest.cpp - Copies of a pipeline on one fabric --------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// chooseReplicas (how many copies of a network share a fabric and how one
// copy is laid out), stackReplicas (their rows) and the round-robin deal
// of samples to the copies.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/Replicas.h"

#include <gtest/gtest.h>

using namespace weft;
using namespace weft::conversion;

namespace {

machine::Target grid(unsigned w, unsigned h) {
  machine::TargetConfig c;
  c.width = w;
  c.height = h;
  return *machine::Target::create(c);
}

/// The 37-129-61 MLP of the issue: two dense layers.
NetworkShape mlp() {
  return NetworkShape::chain(
      {ChainLayer::dense(37, 129, true), ChainLayer::dense(129, 61, true)});
}

TEST(Replicas, GivenCountsPartitionEachBand) {
  std::string why;
  machine::Target t = grid(32, 32);
  for (int64_t n : {1, 2, 3, 5, 32}) {
    auto c = chooseReplicas(mlp(), Precision::FP32, t, n, why);
    ASSERT_TRUE(c) << n << ": " << why;
    EXPECT_EQ(c->copies, n);
    EXPECT_EQ(c->bandRows, 32 / n);
    EXPECT_LE(c->copyRows, c->bandRows);
    EXPECT_GE(c->copyRows, c->mapping.height);
    // The copy is the network's best layout on its band.
    machine::TargetConfig band = t.config();
    band.height = unsigned(32 / n);
    auto alone = partitionNetwork(mlp(), Precision::FP32,
                                  *machine::Target::create(band), why);
    ASSERT_TRUE(alone) << why;
    EXPECT_EQ(c->mapping.bottleneckCycles, alone->bottleneckCycles);
  }
}

TEST(Replicas, AutoMaximisesSamplesPerCycle) {
  std::string why;
  for (auto [w, h] :
       {std::pair<unsigned, unsigned>{16, 16}, {32, 32}, {64, 64}, {8, 40}}) {
    machine::Target t = grid(w, h);
    auto c = chooseReplicas(mlp(), Precision::FP32, t, std::nullopt, why);
    ASSERT_TRUE(c) << why;
    EXPECT_EQ(c->copies, c->columns * (int64_t(h) / c->copyRows));
    EXPECT_EQ(c->columns, std::max<int64_t>(1, w / c->copyColumns));
    EXPECT_EQ(c->copyColumns, c->mapping.width);
    EXPECT_GE(c->bandsFitting, 1);
    // No count of copies on its band does better.
    double rate = double(c->copies) / double(c->mapping.bottleneckCycles);
    for (int64_t n = 1; n <= int64_t(h); ++n) {
      auto o = chooseReplicas(mlp(), Precision::FP32, t, n, why);
      if (!o)
        continue;
      int64_t fit = int64_t(h) / o->copyRows;
      EXPECT_LE(double(fit) / double(o->mapping.bottleneckCycles), rate)
          << w << "x" << h << ": " << fit << " copies on bands of "
          << o->bandRows << " rows beat " << c->copies << " on " << c->bandRows;
    }
    auto one = chooseReplicas(mlp(), Precision::FP32, t, 1, why);
    ASSERT_TRUE(one) << why;
    EXPECT_EQ(c->singleBottleneck, one->mapping.bottleneckCycles);
  }
}

TEST(Replicas, AutoNoMoreCopiesThanAsked) {
  // A run of 3 samples: more copies would only idle; the three get the
  // tallest bands that still hold three of them.
  std::string why;
  machine::Target t = grid(750, 994);
  auto c = chooseReplicas(mlp(), Precision::FP32, t, std::nullopt, why, 3);
  ASSERT_TRUE(c) << why;
  EXPECT_LE(c->copies, 3);
  auto free = chooseReplicas(mlp(), Precision::FP32, t, std::nullopt, why);
  ASSERT_TRUE(free) << why;
  EXPECT_GT(free->copies, 3);
  // Three copies of one copy's best layout fit: the single copy's pace.
  auto one = chooseReplicas(mlp(), Precision::FP32, t, 1, why);
  ASSERT_TRUE(one) << why;
  if (3 * one->copyRows <= 994) {
    EXPECT_EQ(c->copies, 3);
    EXPECT_EQ(c->mapping.bottleneckCycles, one->mapping.bottleneckCycles);
  }
  EXPECT_EQ(c->bandsTried, 3);
}

TEST(Replicas, AutoOnTheWafer) {
  // The whole machine: more copies than rows are never chosen, and the
  // count is what fits.
  std::string why;
  machine::Target t = grid(750, 994);
  auto c = chooseReplicas(mlp(), Precision::FP32, t, std::nullopt, why);
  ASSERT_TRUE(c) << why;
  EXPECT_GT(c->copies, 1);
  EXPECT_LE(c->copies / c->columns * c->copyRows, 994);
  EXPECT_LE(c->columns * c->copyColumns, 750);
  EXPECT_EQ(c->copies, c->columns * (994 / c->copyRows));
}

TEST(Replicas, SideBySideWithinTheColorsLimit) {
  // maxColumns (the colors) bounds the copies side by side in a band; 1
  // stacks bands only.
  std::string why;
  machine::Target t = grid(64, 64);
  auto wide = chooseReplicas(mlp(), Precision::FP32, t, std::nullopt, why);
  ASSERT_TRUE(wide) << why;
  EXPECT_GT(wide->columns, 1);
  for (int64_t cap : {1, 2}) {
    auto c =
        chooseReplicas(mlp(), Precision::FP32, t, std::nullopt, why, 0, cap);
    ASSERT_TRUE(c) << why;
    EXPECT_LE(c->columns, cap);
    EXPECT_EQ(c->copies, c->columns * (64 / c->copyRows));
    // Fewer side by side never predicts more samples per cycle.
    EXPECT_LE(double(c->copies) / double(c->mapping.bottleneckCycles),
              double(wide->copies) / double(wide->mapping.bottleneckCycles));
  }
  // A count given is stacked in bands only.
  auto three = chooseReplicas(mlp(), Precision::FP32, t, 3, why);
  ASSERT_TRUE(three) << why;
  EXPECT_EQ(three->columns, 1);
}

TEST(Replicas, Errors) {
  std::string why;
  machine::Target t = grid(16, 16);
  EXPECT_FALSE(chooseReplicas(mlp(), Precision::FP32, t, 0, why));
  EXPECT_EQ(why, "the number of copies must be at least 1, not 0");
  EXPECT_FALSE(chooseReplicas(mlp(), Precision::FP32, t, 17, why));
  EXPECT_EQ(why, "17 copies need at least one row each, but the fabric has "
                 "16 rows");
  // A layer too large for one PE's memory on a band of one row.
  NetworkShape big =
      NetworkShape::chain({ChainLayer::dense(2048, 2048, false)});
  EXPECT_FALSE(chooseReplicas(big, Precision::FP32, t, 16, why));
  EXPECT_EQ(why.rfind("16 copies get 1 of the fabric's 16 rows each, and one "
                      "copy does not fit 16x1: ",
                      0),
            0u)
      << why;
  EXPECT_FALSE(
      chooseReplicas(big, Precision::FP32, grid(2, 2), std::nullopt, why));
  EXPECT_EQ(why.rfind("the network fits no band of the 2x2 fabric: ", 0), 0u)
      << why;
}

TEST(Replicas, Stack) {
  std::string why;
  auto rows = stackReplicas(6, 16, 2, why);
  ASSERT_TRUE(rows) << why;
  EXPECT_EQ(*rows, (std::vector<int64_t>{0, 6}));
  rows = stackReplicas(1, 994, 994, why);
  ASSERT_TRUE(rows) << why;
  EXPECT_EQ(rows->back(), 993);
  EXPECT_FALSE(stackReplicas(6, 16, 3, why));
  EXPECT_EQ(why, "3 copies of 6 rows need 18 rows, but the fabric has 16");
  EXPECT_FALSE(stackReplicas(1, 16, 0, why));
  EXPECT_EQ(why, "the number of copies must be at least 1, not 0");
  EXPECT_FALSE(stackReplicas(2, 16, INT64_MAX, why));
  EXPECT_EQ(why, "9223372036854775807 copies of 2 rows need more rows, but "
                 "the fabric has 16");
}

TEST(Replicas, DealRoundRobin) {
  // Every sample goes to one copy, in order, and the counts add up.
  for (int64_t copies = 1; copies <= 7; ++copies)
    for (int64_t samples = 0; samples <= 20; ++samples) {
      std::vector<int64_t> count(size_t(copies), 0);
      for (int64_t i = 0; i < samples; ++i) {
        int64_t k = replicaOfSample(i, copies);
        ASSERT_GE(k, 0);
        ASSERT_LT(k, copies);
        // Sample i is copy k's sample i / copies.
        EXPECT_EQ(count[size_t(k)], i / copies);
        ++count[size_t(k)];
      }
      for (int64_t k = 0; k < copies; ++k)
        EXPECT_EQ(samplesOfReplica(k, samples, copies), count[size_t(k)])
            << "copy " << k << " of " << copies << ", " << samples
            << " samples";
    }
  EXPECT_EQ(samplesOfReplica(0, 10, 3), 4);
  EXPECT_EQ(samplesOfReplica(1, 10, 3), 3);
  EXPECT_EQ(samplesOfReplica(2, 10, 3), 3);
  EXPECT_EQ(samplesOfReplica(4, 3, 5), 0);
}

} // namespace
