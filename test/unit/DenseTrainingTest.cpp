//===- DenseTrainingTest.cpp - A trained dense layer's memory map ---------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// trainedDenseMap, trainedWeightPlace/BiasPlace and trainedDenseLimits
// (weft/Kernels/DenseTraining.h): buffers that do not overlap and appear
// exactly where docs/training.md says, every weight and bias at its own
// word of the PE of its chunks, and the refusals.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/Chunks.h"
#include "weft/Kernels/DenseTraining.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

using namespace weft::conversion;

namespace {

/// The map's buffers as (start, words), in address order.
std::vector<std::pair<int64_t, int64_t>> buffers(const TrainedDenseMap &mm,
                                                 int64_t lk, int64_t lm) {
  std::vector<std::pair<int64_t, int64_t>> b;
  auto add = [&](int64_t at, int64_t words) {
    if (at >= 0)
      b.push_back({at, words});
  };
  add(mm.acc, 2 * lm);
  add(mm.bias, 2 * lm);
  add(mm.w, 2 * lk * lm);
  add(mm.y, 2 * lm);
  add(mm.x, 2 * lk);
  add(mm.delta, 2 * lm);
  add(mm.dlr, 2 * lm);
  add(mm.dx, 2 * lk);
  add(mm.mask, 2 * lm);
  add(mm.g, 2 * lk * lm);
  add(mm.gb, 2 * lm);
  std::sort(b.begin(), b.end());
  return b;
}

TEST(DenseTraining, BuffersFollowEachOtherWithoutOverlap) {
  for (bool last : {false, true})
    for (bool mbgd : {false, true})
      for (bool grad : {false, true}) {
        DenseTraining t;
        t.mbgd = mbgd;
        t.inputGradient = grad;
        TrainedDenseMap mm = trainedDenseMap(7, 5, last, true, true, t);
        auto b = buffers(mm, 7, 5);
        int64_t next = TrainedDenseMap::kData;
        for (auto [at, words] : b) {
          EXPECT_EQ(at, next);
          next = at + words;
        }
        EXPECT_EQ(mm.end, next);
        EXPECT_EQ(mm.bias >= 0, last);
        EXPECT_EQ(mm.y >= 0, last);
        EXPECT_EQ(mm.mask >= 0, last);
        EXPECT_EQ(mm.dlr >= 0, !mbgd);
        EXPECT_EQ(mm.g >= 0, mbgd);
        EXPECT_EQ(mm.gb >= 0, mbgd && last);
        EXPECT_EQ(mm.dx >= 0, grad);
      }
}

TEST(DenseTraining, EveryElementHasItsOwnWord) {
  DenseMapping m;
  m.x0 = 2;
  m.y0 = 1;
  m.smear = 3;
  m.rows = 2;
  DenseTraining t;
  const int64_t K = 10, M = 5;
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < M; ++n) {
      WordPlace p = trainedWeightPlace(K, M, true, false, m, t, k, n);
      int64_t c = k / 4, r = n / 3; // chunks of 4, 4, 2 inputs; 3, 2 neurons
      EXPECT_EQ(p.x, m.x0 + c);
      EXPECT_EQ(p.y, m.y0 + r);
      int64_t lm = chunkSize(M, 2, r);
      TrainedDenseMap mm =
          trainedDenseMap(chunkSize(K, 3, c), lm, c == 2, true, false, t);
      EXPECT_EQ(p.word, mm.w + 2 * ((k - 4 * c) * lm + (n - 3 * r)));
      EXPECT_TRUE(seen.insert({p.x, p.y, p.word}).second);
    }
  for (int64_t n = 0; n < M; ++n) {
    WordPlace p = trainedBiasPlace(K, M, false, m, t, n);
    EXPECT_EQ(p.x, m.x0 + 2);
    EXPECT_TRUE(seen.insert({p.x, p.y, p.word}).second);
  }
  // The busiest PE is the last column's with the longest chunks.
  EXPECT_EQ(trainedDenseBytes(K, M, true, false, m, t),
            2 * trainedDenseMap(4, 3, true, true, false, t).end);
}

TEST(DenseTraining, Limits) {
  DenseMapping m;
  EXPECT_EQ(trainedDenseLimits(100, 100, m), "");
  m.merge = 2;
  EXPECT_EQ(trainedDenseLimits(100, 100, m),
            "a trained dense layer neither merges lanes nor is cut into bands");
  m.merge = 1;
  m.precision = Precision::Mixed;
  EXPECT_EQ(trainedDenseLimits(100, 100, m), "weft trains in fp32 only");
  m.precision = Precision::FP32;
  EXPECT_EQ(trainedDenseLimits(5000, 1, m),
            "its 5000 x 1 weight blocks exceed the 4095 x 255 elements of one "
            "matrix instruction");
  EXPECT_EQ(trainedDenseLimits(300, 300, m),
            "its 300 x 300 weight blocks exceed the 4095 x 255 elements of "
            "one matrix instruction");
}

TEST(DenseTraining, RecomputedInputSharesTheInputGradientsMemory) {
  DenseTraining t;
  t.inputGradient = true;
  TrainedDenseMap stores = trainedDenseMap(5, 3, true, true, true, t);
  t.storesInput = false;
  TrainedDenseMap drops = trainedDenseMap(5, 3, true, true, true, t);
  EXPECT_NE(stores.x, stores.dx);
  EXPECT_EQ(drops.x, drops.dx);
  EXPECT_EQ(stores.end - drops.end, 2 * 5);
  // The weights stay where the host reads them back.
  EXPECT_EQ(stores.w, drops.w);
  EXPECT_EQ(stores.bias, drops.bias);
  DenseMapping m;
  m.smear = 2;
  m.rows = 2;
  t.storesInput = true;
  EXPECT_EQ(trainedDenseInputBytes(10, 6, true, true, m, t), 4 * 5);
  t.inputGradient = false; // the first layer cannot drop its input
  EXPECT_EQ(trainedDenseInputBytes(10, 6, true, true, m, t), 0);
}

TEST(DenseTraining, RecomputeCycles) {
  // One PE, 4 inputs, 3 neurons, bias and ReLU: the FMAC (3 records, 1 +
  // 12), the bias (3 + 4), ReLU (2 + 4), the send (2 + 4), acc cleared
  // (1 + 4).
  DenseMapping m;
  EXPECT_EQ(trainedDenseForwardCycles(4, 3, true, true, m),
            (3 + 13) + (3 + 4) + (2 + 4) + (2 + 4) + (1 + 4));
  // Two columns, two rows, K = 4: per column the diagonal's copy (a
  // launch, 1 + 2) and two PEs taking x (2 records, 1 + 2).
  m.smear = 2;
  m.rows = 2;
  EXPECT_EQ(trainedDenseReceiveCycles(4, m), 2 * ((1 + 3) + 2 * (2 + 3)));
}

} // namespace

TEST(DenseTraining, CpgdRingHoldsEverySampleInFlight) {
  for (bool last : {false, true})
    for (int64_t lag : {1, 2, 5}) {
      DenseTraining sgd;
      sgd.inputGradient = true;
      DenseTraining cpgd = sgd;
      cpgd.lag = lag;
      cpgd.samples = 8;
      const int64_t lk = 7, lm = 5;
      TrainedDenseMap one = trainedDenseMap(lk, lm, last, true, true, sgd);
      TrainedDenseMap ring = trainedDenseMap(lk, lm, last, true, true, cpgd);
      // A slot per sample in flight: x, then (last column) y, dL/dz and
      // dL/dx.
      EXPECT_EQ(ring.slots, lag + 1);
      EXPECT_EQ(ring.slotWords, 2 * lk + (last ? 2 * lm : 0) + 2 * lm + 2 * lk);
      EXPECT_EQ(ring.y >= 0, last);
      if (last) {
        EXPECT_EQ(ring.y, ring.x + 2 * lk);
      }
      EXPECT_EQ(ring.delta, ring.x + 2 * lk + (last ? 2 * lm : 0));
      EXPECT_EQ(ring.dx, ring.delta + 2 * lm);
      // The ring is lag more slots than SGD's x, y, dL/dz and dL/dx, and
      // nothing else moves the weights or bias the host reads back.
      EXPECT_EQ(ring.end - one.end, lag * ring.slotWords);
      EXPECT_EQ(ring.w, one.w);
      EXPECT_EQ(ring.bias, one.bias);
      // The other buffers start after the ring and do not overlap it.
      for (int64_t at : {ring.dlr, ring.mask}) {
        if (at >= 0) {
          EXPECT_GE(at, ring.x + ring.slots * ring.slotWords);
        }
      }
    }
  EXPECT_EQ(trainedColumnBytes(6, false, 3) - trainedColumnBytes(6, false),
            2 * 2 * 2 * 6 * 3);
  EXPECT_EQ(trainedColumnBytes(6, true, 1) - trainedColumnBytes(6, true),
            2 * 2 * 6);
}

// predictTrainedDenseCycles looks at a few PEs only (the partitioner costs
// every S x R of the fabric); the busiest of all PEs must be among them.
TEST(DenseTraining, PredictedCyclesAreTheBusiestPes) {
  uint32_t seed = 12345;
  auto next = [&](int64_t n) {
    seed = seed * 1103515245u + 12345u;
    return int64_t((seed >> 16) % uint32_t(n));
  };
  for (int i = 0; i < 3000; ++i) {
    int64_t K = 1 + next(300), M = 1 + next(300);
    DenseMapping m;
    m.smear = 1 + next(std::min<int64_t>(K, 24));
    m.rows = 1 + next(std::min<int64_t>(M, 24));
    if (chunkSize(K, m.smear, m.smear - 1) == 0 ||
        chunkSize(M, m.rows, m.rows - 1) == 0)
      continue;
    DenseTraining t;
    t.mbgd = next(2);
    t.batch = 1 + next(5);
    t.inputGradient = next(2);
    t.storesInput = !t.inputGradient || next(2);
    t.recomputesOutput = next(2);
    t.lag = next(3);
    t.samples = 8;
    bool bias = next(2), relu = next(2);
    int64_t all = 0;
    for (int64_t c = 0; c < m.smear; ++c)
      for (int64_t r = 0; r < m.rows; ++r)
        all = std::max(all, trainedDensePeCycles(K, M, bias, relu, m, t, c, r));
    ASSERT_EQ(predictTrainedDenseCycles(K, M, bias, relu, m, t), all)
        << K << " -> " << M << " on " << m.smear << " x " << m.rows;
  }
}
