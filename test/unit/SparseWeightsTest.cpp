//===- SparseWeightsTest.cpp - The sliced-weights estimate and decision ---===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/SparseWeights.h"

#include "weft/Kernels/Chunks.h"
#include "weft/Machine/Energy.h"
#include "weft/Machine/ISA.h"
#include "weft/Machine/Numerics.h"
#include "weft/Machine/Sliced.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace weft::conversion;
namespace wt = weft::machine;

namespace {

DenseMapping mapping(int64_t smear, int64_t rows, Precision p) {
  DenseMapping m;
  m.smear = smear;
  m.rows = rows;
  m.precision = p;
  return m;
}

/// K x M weights with about `zeros` of them exactly zero.
std::vector<float> pruned(int64_t K, int64_t M, double zeros, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> w(size_t(K * M));
  for (float &v : w)
    v = (u(rng) + 1.0f) / 2.0f < zeros ? 0.0f : u(rng) + 2.0f;
  return w;
}

} // namespace

// The estimate against packing every PE's columns with the machine model's
// own functions: words, groups and energy, on uneven chunks.
TEST(SparseWeights, EstimateMatchesThePackedColumns) {
  const int64_t K = 37, M = 23;
  for (Precision p : {Precision::FP32, Precision::Mixed}) {
    DenseMapping m = mapping(3, 4, p);
    std::vector<float> w = pruned(K, M, 0.7, 5);
    SlicedWeightsEstimate e = estimateSlicedWeights(w, K, M, m);
    const bool mixed = p == Precision::Mixed;
    const unsigned ew = mixed ? 1 : 2;
    const unsigned simd =
        wt::info(mixed ? wt::Opcode::FMACHS : wt::Opcode::FMAC).simd;
    int64_t zeros = 0, groups = 0, maxSliced = 0, maxDense = 0;
    uint64_t fj = 0;
    for (int64_t c = 0; c < m.smear; ++c)
      for (int64_t r = 0; r < m.rows; ++r) {
        int64_t lk = chunkSize(K, m.smear, c), lm = chunkSize(M, m.rows, r);
        int64_t peGroups = 0;
        for (int64_t t = 0; t < lk; ++t) {
          std::vector<uint32_t> col;
          for (int64_t n = 0; n < lm; ++n) {
            float v = w[size_t((chunkBegin(K, m.smear, c) + t) * M +
                               chunkBegin(M, m.rows, r) + n)];
            col.push_back(mixed ? wt::f32ToF16(v) : wt::f32ToBits(v));
            zeros += v == 0.0f;
          }
          std::vector<uint16_t> words = wt::packSliced(col, ew);
          peGroups += int64_t(
              wt::slicedGroups(words.data(), uint32_t(lm), ew, simd));
          wt::SlicedLayout l{uint32_t(lm), ew};
          for (uint32_t k = 0; k < l.words(); ++k) {
            unsigned pc = unsigned(__builtin_popcount(
                wt::slicedMask(words.data() + l.maskOffset(), k)));
            fj += wt::slicedReadEnergyFj(l.word(), pc);
          }
        }
        groups += peGroups;
        maxSliced = std::max(maxSliced, peGroups);
        maxDense = std::max(maxDense, lk * ((lm + simd - 1) / simd));
      }
    EXPECT_EQ(e.weights, K * M);
    EXPECT_EQ(e.zeros, zeros);
    EXPECT_EQ(e.slicedGroups, groups);
    EXPECT_EQ(e.maxPeSlicedGroups, maxSliced);
    EXPECT_EQ(e.maxPeDenseGroups, maxDense);
    EXPECT_EQ(e.slicedReadFj, fj);
    EXPECT_EQ(e.denseReadFj, uint64_t(K * M) * wt::readEnergyFj(2 * ew));
    EXPECT_EQ(e.denseBytes, memoryPerPE(K, M, m, false));
    EXPECT_EQ(e.slicedBytes, memoryPerPE(K, M, m, true));
    EXPECT_GT(e.slicedBytes, e.denseBytes);
    // The busiest PE saves groups: the prediction falls by them, for the
    // input elements that arrive (a sparse input's zeros start no task).
    int64_t cpg = wt::info(mixed ? wt::Opcode::FMACHS : wt::Opcode::FMAC)
                      .cyclesPerGroup;
    int64_t saved = (maxDense - maxSliced) * cpg;
    ASSERT_GT(saved, 0);
    EXPECT_EQ(slicedCyclesSaved(e, mixed), saved);
    EXPECT_EQ(slicedCyclesSaved(e, mixed, 0.25), std::llround(saved * 0.25));
    EXPECT_EQ(slicedCyclesSaved(e, mixed, 0.0), 0);
  }
}

// auto slices pruned weights and keeps weights without zeros dense; on
// slices both; off neither; nothing is sliced that does not fit.
TEST(SparseWeights, Decision) {
  const int64_t K = 64, M = 32;
  DenseMapping m = mapping(2, 2, Precision::FP32);
  SlicedWeightsEstimate full =
      estimateSlicedWeights(pruned(K, M, 0.0, 1), K, M, m);
  SlicedWeightsEstimate half =
      estimateSlicedWeights(pruned(K, M, 0.5, 2), K, M, m);
  ASSERT_EQ(full.zeros, 0);
  // Four fp32 element reads (12 pJ) against one word of three slices
  // (11.5 pJ): 4.2 % less, below auto's 10 %.
  EXPECT_EQ(full.slicedReadFj * 24, full.denseReadFj * 23);
  const int64_t memory = 48 * 1024;
  EXPECT_FALSE(decideSlicedWeights(SparseMode::Auto, full, memory));
  EXPECT_TRUE(decideSlicedWeights(SparseMode::Auto, half, memory));
  EXPECT_TRUE(decideSlicedWeights(SparseMode::On, full, memory));
  EXPECT_FALSE(decideSlicedWeights(SparseMode::Off, half, memory));
  EXPECT_FALSE(
      decideSlicedWeights(SparseMode::On, half, half.slicedBytes - 1));
  EXPECT_TRUE(decideSlicedWeights(SparseMode::On, half, half.slicedBytes));
  // Slicing never issues more groups than dense.
  EXPECT_EQ(full.slicedGroups, full.denseGroups);
  EXPECT_LT(half.slicedGroups, half.denseGroups);
}

// A weight below fp16's smallest subnormal is zero in mixed precision (as
// in its dense run), not in fp32.
TEST(SparseWeights, ZeroInTheLayersPrecision) {
  std::vector<float> w(16, 1e-9f);
  SlicedWeightsEstimate f = estimateSlicedWeights(
      w, 4, 4, mapping(1, 1, Precision::FP32));
  SlicedWeightsEstimate h = estimateSlicedWeights(
      w, 4, 4, mapping(1, 1, Precision::Mixed));
  EXPECT_EQ(f.zeros, 0);
  EXPECT_EQ(h.zeros, 16);
  EXPECT_EQ(h.slicedGroups, 0);
}
