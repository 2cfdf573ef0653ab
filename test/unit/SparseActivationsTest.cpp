//===- SparseActivationsTest.cpp - The sparse-stream cost decision --------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/SparseActivations.h"

#include "weft/Machine/ISA.h"

#include <gtest/gtest.h>

using namespace weft::conversion;
namespace wt = weft::machine;

namespace {

DenseMapping mixed(int64_t smear, int64_t rows) {
  DenseMapping m;
  m.smear = smear;
  m.rows = rows;
  m.precision = Precision::Mixed;
  return m;
}

/// 1024 -> 1024 on 16 x 16 after a 784 -> 1024 on 16 x 16, as in the
/// measured MLP.
SparseLayerShape producer() { return {784, 1024, mixed(16, 16), true, {}}; }
SparseLayerShape consumer() { return {1024, 1024, mixed(16, 16), true, {}}; }

} // namespace

TEST(SparseActivations, Modes) {
  EXPECT_EQ(parseSparseMode("off"), SparseMode::Off);
  EXPECT_EQ(parseSparseMode("auto"), SparseMode::Auto);
  EXPECT_EQ(parseSparseMode("on"), SparseMode::On);
  EXPECT_FALSE(parseSparseMode("yes"));
  EXPECT_FALSE(parseSparseMode(""));
  for (SparseMode m : {SparseMode::Off, SparseMode::Auto, SparseMode::On})
    EXPECT_EQ(parseSparseMode(sparseModeName(m)), m);
}

TEST(SparseActivations, ExpectedNonZeros) {
  EXPECT_EQ(expectedNonZeros(64, 1.0), 64);
  EXPECT_EQ(expectedNonZeros(64, 0.0), 0);
  EXPECT_EQ(expectedNonZeros(64, 0.5), 32);
  EXPECT_EQ(expectedNonZeros(64, 0.51), 33); // rounded up
  EXPECT_EQ(expectedNonZeros(49, 0.1), 5);
  EXPECT_EQ(expectedNonZeros(10, 2.0), 10);
}

TEST(SparseActivations, StreamWavelets) {
  EXPECT_EQ(streamWavelets(1024, 16, false, 0.5), 1024);
  // 16 chunks of 64: 32 non-zeros and a closeout each.
  EXPECT_EQ(streamWavelets(1024, 16, true, 0.5), 16 * 33);
  // Dense data costs a closeout more per chunk when sent sparse.
  EXPECT_EQ(streamWavelets(1024, 16, true, 1.0), 1024 + 16);
}

// A dense input costs what it always did; a sparse one the non-zeros'
// tasks: pick, index to weight column (two scalar instructions), FMACHS.
TEST(SparseActivations, CyclesPerSample) {
  SparseLayerShape c = consumer();
  int64_t dense = predictCyclesPerSample(c.K, c.M, c.m, c.bias);
  EXPECT_EQ(predictCyclesPerSample(c.K, c.M, c.m, c.bias, SparseIo{}), dense);
  int64_t lm = 64, lk = 64;
  int64_t task = 3 + wt::vectorCycles(wt::Opcode::FMACHS, lm);
  SparseIo full{true, 1.0, false, {}}, half{true, 0.5, false, {}};
  // Same per-element cost at density 1: dense mixed is pick, ff2h, fmachs,
  // add16.
  EXPECT_EQ(predictCyclesPerSample(c.K, c.M, c.m, c.bias, full), dense);
  EXPECT_EQ(dense - predictCyclesPerSample(c.K, c.M, c.m, c.bias, half),
            (lk - lk / 2) * task);
  // A sparse output converts and rectifies in fp16 (cheaper than the fp32
  // ReLU), runs two small tasks around its send (+7) and counts the
  // samples in flight (+5); the send itself fits the free cycles (no
  // deficit here).
  SparseIo out{false, 1.0, true, {}};
  int64_t p = predictCyclesPerSample(c.K, c.M, c.m, c.bias, out);
  EXPECT_EQ(p - dense, wt::vectorCycles(wt::Opcode::FF2H, lm) +
                           wt::vectorCycles(wt::Opcode::FMAXH, lm) -
                           wt::vectorCycles(wt::Opcode::FMAX, lm) + 12);
}

// A host input: only the consumer's cost counts; auto sends it sparse when
// the consumer gets faster, so not at density 1.
TEST(SparseActivations, HostInputDecision) {
  SparseLayerShape c = consumer();
  for (double d : {0.1, 0.5, 0.9}) {
    SparseDecision a = decideSparseInput(SparseMode::Auto, d, c);
    EXPECT_TRUE(a.sparse) << d;
    EXPECT_LT(a.consumerSparse, a.consumerDense) << d;
    EXPECT_EQ(a.sparseCycles, a.consumerSparse);
    EXPECT_LT(a.sparseWavelets, a.denseWavelets) << d;
  }
  EXPECT_FALSE(decideSparseInput(SparseMode::Auto, 1.0, c).sparse);
  EXPECT_TRUE(decideSparseInput(SparseMode::On, 1.0, c).sparse);
  EXPECT_FALSE(decideSparseInput(SparseMode::Off, 0.1, c).sparse);
  // The host's chunks are the consumer's columns' inputs: K values and a
  // closeout per column at density 1.
  SparseDecision full = decideSparseInput(SparseMode::On, 1.0, c);
  EXPECT_EQ(full.denseWavelets, c.K);
  EXPECT_EQ(full.sparseWavelets, c.K + c.m.smear);
}

TEST(SparseActivations, Decision) {
  SparseLayerShape p = producer(), c = consumer();
  SparseDecision off = decideSparseStream(SparseMode::Off, 0.1, p, c);
  EXPECT_FALSE(off.sparse);
  EXPECT_LT(off.sparseCycles, off.denseCycles); // it would have paid
  SparseDecision on = decideSparseStream(SparseMode::On, 1.0, p, c);
  EXPECT_TRUE(on.sparse);
  EXPECT_GT(on.sparseWavelets, on.denseWavelets);
  for (double d : {0.1, 0.5, 0.9}) {
    SparseDecision a = decideSparseStream(SparseMode::Auto, d, p, c);
    EXPECT_TRUE(a.sparse) << d;
    EXPECT_LE(a.sparseCycles, a.denseCycles) << d;
    EXPECT_LT(a.consumerSparse, a.consumerDense) << d;
    EXPECT_LT(a.sparseWavelets, a.denseWavelets) << d;
  }
  // All non-zero: the consumer gains nothing, so auto stays dense.
  SparseDecision full = decideSparseStream(SparseMode::Auto, 1.0, p, c);
  EXPECT_FALSE(full.sparse);
  EXPECT_EQ(full.consumerSparse, full.consumerDense);
  // Auto is never slower than dense per the model, whatever the density.
  for (int i = 0; i <= 20; ++i) {
    SparseDecision a = decideSparseStream(SparseMode::Auto, i / 20.0, p, c);
    EXPECT_LE(a.sparse ? a.sparseCycles : a.denseCycles, a.denseCycles);
  }
}

// Measured per element: each chunk's density is the mean of its elements';
// a profile of another length leaves every chunk at the mean.
TEST(SparseActivations, ChunkDensities) {
  std::vector<double> profile(10, 0.0);
  for (int i = 0; i < 4; ++i)
    profile[size_t(i)] = 1.0; // the first chunk of 4 is dense
  ExpectedDensity d(0.4, profile);
  // 10 in 3 chunks: 4, 4, 2.
  std::vector<double> c = d.chunks(10, 3);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_DOUBLE_EQ(c[0], 1.0);
  EXPECT_DOUBLE_EQ(c[1], 0.0);
  EXPECT_DOUBLE_EQ(c[2], 0.0);
  EXPECT_EQ(d.chunks(12, 3), std::vector<double>(3, 0.4));
  EXPECT_EQ(ExpectedDensity(0.25).chunks(10, 2), std::vector<double>(2, 0.25));
  // Wavelets: each chunk its own non-zeros and a closeout.
  EXPECT_EQ(streamWavelets(10, 3, true, d), 4 + 1 + 0 + 1 + 0 + 1);
}

// The busiest column sets the pace: a dense first chunk costs its dense
// data tasks although the mean density is low, and the decision costs the
// consumer so.
TEST(SparseActivations, DensestChunkSetsThePace) {
  SparseLayerShape p = producer(), c = consumer();
  std::vector<double> profile(size_t(c.K), 0.0);
  int64_t lk = chunkSize(c.K, c.m.smear, 0);
  for (int64_t i = 0; i < lk; ++i)
    profile[size_t(i)] = 1.0;
  double mean = double(lk) / double(c.K);
  SparseIo uniform{true, mean, false, {}};
  SparseDecision measured =
      decideSparseStream(SparseMode::Auto, ExpectedDensity(mean, profile), p, c);
  ASSERT_EQ(measured.consumerIo.chunkDensity.size(), size_t(c.m.smear));
  EXPECT_DOUBLE_EQ(measured.consumerIo.chunkDensity[0], 1.0);
  EXPECT_DOUBLE_EQ(measured.consumerIo.inDensity, mean);
  int64_t atMean = predictCyclesPerSample(c.K, c.M, c.m, c.bias, uniform);
  EXPECT_GT(measured.consumerSparse, atMean);
  // Column 0 runs all its lk data tasks (pick, index to column, FMACHS)
  // and its closeout (3 + forward and clear) and the copy's two tasks (4).
  int64_t lm = chunkSize(c.M, c.m.rows, 0);
  int64_t vecLm = wt::vectorCycles(wt::Opcode::FADD, lm);
  EXPECT_EQ(measured.consumerSparse,
            std::max(lk * (3 + wt::vectorCycles(wt::Opcode::FMACHS, lm)) +
                         3 + 2 * vecLm,
                     atMean - 4) +
                4);
  // The same profile on the last column instead: the last column is the
  // busiest either way, and it gets its dense cost back.
  std::vector<double> last(size_t(c.K), 0.0);
  for (int64_t i = chunkBegin(c.K, c.m.smear, c.m.smear - 1); i < c.K; ++i)
    last[size_t(i)] = 1.0;
  SparseDecision l = decideSparseInput(SparseMode::Auto,
                                       ExpectedDensity(mean, last), c);
  EXPECT_GT(l.consumerSparse,
            predictCyclesPerSample(c.K, c.M, c.m, c.bias, uniform));
}
