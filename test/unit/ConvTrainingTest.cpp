//===- ConvTrainingTest.cpp - A trained convolution's PEs -----------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// weft/Kernels/ConvTraining.h: the taps that skip the pads (forward and
// input gradient), the memory map (buffers in order, not overlapping, the
// gradient rows padded by the input gradient's reach), every weight and
// bias at its own word of the PE of its channels, the refusals, and a cost
// that grows with the work.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ConvTraining.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

using namespace weft::conversion;

namespace {

ConvShape shape(int64_t cin, int64_t cout, int64_t h, int64_t w, int64_t k,
                int64_t pad, int64_t stride = 1, int64_t dilation = 1) {
  ConvShape s;
  s.cin = cin, s.cout = cout, s.hin = h, s.win = w, s.kh = s.kw = k;
  s.sh = s.sw = stride;
  s.dh = s.dw = dilation;
  s.pt = s.pl = s.pb = s.pr = pad;
  s.bias = true;
  s.relu = true;
  return s;
}

DenseMapping mapping(int64_t smear, int64_t rows) {
  DenseMapping m;
  m.smear = smear;
  m.rows = rows;
  return m;
}

TEST(ConvTraining, TapsSkipThePadRows) {
  ConvShape s = shape(1, 1, 5, 5, 3, 1);
  // Output row 0 reads input rows -1, 0, 1: kernel rows 1 and 2.
  EXPECT_EQ(trainedConvTaps(s, 0), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(trainedConvTaps(s, 2), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(trainedConvTaps(s, 4), (std::vector<int64_t>{0, 1}));
  // Input row 0 is read by output rows 1 (i = 0) and 0 (i = 1).
  EXPECT_EQ(trainedConvInputTaps(s, 0), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(trainedConvInputTaps(s, 4), (std::vector<int64_t>{1, 2}));
  // Every (output row, tap) pair is one (input row, tap) pair.
  int64_t forward = 0, backward = 0;
  for (int64_t oh = 0; oh < s.hout(); ++oh)
    forward += int64_t(trainedConvTaps(s, oh).size());
  for (int64_t h = 0; h < s.hin; ++h)
    backward += int64_t(trainedConvInputTaps(s, h).size());
  EXPECT_EQ(forward, backward);
}

TEST(ConvTraining, MapBuffersDoNotOverlap) {
  ConvShape s = shape(4, 8, 6, 6, 3, 1, 1, 2);
  DenseTraining t;
  t.mbgd = true;
  t.inputGradient = true;
  TrainedConvMap mm = trainedConvMap(s, mapping(2, 4), t);
  EXPECT_EQ(mm.lk, 2);
  EXPECT_EQ(mm.lm, 2);
  // The input gradient's window reaches (kw - 1) dw - pl = 3 pixels left
  // and win + pl - wout = 3 pixels right of a gradient row.
  EXPECT_EQ(s.wout(), 4);
  EXPECT_EQ(s.hout(), 4);
  EXPECT_EQ(mm.dyLeft, 3);
  EXPECT_EQ(mm.dyRight, 3);
  EXPECT_EQ(mm.dyPitch, (3 + 4 + 3) * 2);
  EXPECT_GE(mm.records, 640 + mm.code);
  std::vector<std::pair<int64_t, int64_t>> b = {
      {mm.w, 2 * 2 * 9 * 2},       {mm.g, 2 * 2 * 9 * 2},
      {mm.x, 2 * 6 * mm.paddedWidth * 2}, {mm.acc, 2 * 4 * 2},
      {mm.bias, 4},                {mm.gb, 4},
      {mm.y, 2 * 4 * 4 * 2},       {mm.dy, 2 * 4 * mm.dyPitch},
      {mm.mask, 2 * 4 * 2},        {mm.zero, 2},
      {mm.dx, 2 * 6 * 6 * 2}};
  int64_t at = mm.records + 4 * mm.numRecords;
  for (auto [start, words] : b) {
    EXPECT_EQ(start, at);
    at = start + words;
  }
  EXPECT_EQ(mm.end, at);
  EXPECT_EQ(trainedConvBytes(s, mapping(2, 4), t), 2 * mm.end);
  // SGD keeps no mini-batch gradient; no input gradient, no dX nor pads.
  DenseTraining sgd;
  TrainedConvMap plain = trainedConvMap(s, mapping(2, 4), sgd);
  EXPECT_EQ(plain.g, -1);
  EXPECT_EQ(plain.gb, -1);
  EXPECT_EQ(plain.dx, -1);
  EXPECT_EQ(plain.dyLeft + plain.dyRight, 0);
}

TEST(ConvTraining, StridedInputGradientUpsamplesTheGradientRows) {
  // 8 x 8, 3 x 3, stride 2, pad 1: 4 x 4 out; the upsampled row holds
  // dY[ow] at pixel 2 + 2 ow of (kw - 1) - pl = 1 + 7 + (8 + 1 - 7 = 2).
  ConvShape s = shape(2, 4, 8, 8, 3, 1, 2);
  DenseTraining t;
  t.inputGradient = true;
  TrainedConvMap mm = trainedConvMap(s, mapping(1, 2), t);
  EXPECT_EQ(s.wout(), 4);
  EXPECT_EQ(mm.dyLeft + mm.dyRight, 0);
  EXPECT_EQ(mm.dyPitch, 4 * 2);
  EXPECT_GE(mm.dyu, 0);
  EXPECT_EQ(mm.upLeft, 1);
  EXPECT_EQ(mm.upPitch, (1 + 7 + 2) * 2);
  // (Then the ReLU's mask row and zero word.)
  EXPECT_EQ(mm.dx, mm.dyu + 2 * 4 * mm.upPitch + 2 * 4 * 2 + 2);
  // Input row h is read by output row oh through kernel row i when
  // h + 1 - i = 2 oh < 8: rows 0 (i = 1), 1 (i = 0, 2), 7 (i = 2).
  EXPECT_EQ(trainedConvInputTaps(s, 0), (std::vector<int64_t>{1}));
  EXPECT_EQ(trainedConvInputTaps(s, 1), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(trainedConvInputTaps(s, 7), (std::vector<int64_t>{2}));
  // Without the input gradient nothing is upsampled.
  EXPECT_EQ(trainedConvMap(s, mapping(1, 2), DenseTraining()).dyu, -1);
}

TEST(ConvTraining, EveryWeightHasItsOwnWord) {
  ConvShape s = shape(4, 6, 5, 5, 3, 1);
  DenseMapping m = mapping(2, 3);
  m.x0 = 3;
  m.y0 = 1;
  DenseTraining t;
  t.inputGradient = true;
  TrainedConvMap mm = trainedConvMap(s, m, t);
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  for (int64_t o = 0; o < s.cout; ++o)
    for (int64_t ci = 0; ci < s.cin; ++ci)
      for (int64_t i = 0; i < s.kh; ++i)
        for (int64_t j = 0; j < s.kw; ++j) {
          WordPlace p = trainedConvWeightPlace(s, m, t, o, ci, i, j);
          EXPECT_EQ(p.x, 3 + ci / 2);
          EXPECT_EQ(p.y, 1 + o / 2);
          EXPECT_GE(p.word, mm.w);
          EXPECT_LT(p.word, mm.w + 2 * 2 * 9 * 2);
          EXPECT_TRUE(seen.insert({p.x, p.y, p.word}).second);
        }
  for (int64_t o = 0; o < s.cout; ++o) {
    WordPlace p = trainedConvBiasPlace(s, m, t, o);
    EXPECT_EQ(p.x, 3);
    EXPECT_EQ(p.y, 1 + o / 2);
    EXPECT_EQ(p.word, mm.bias + 2 * (o % 2));
  }
}

TEST(ConvTraining, Refusals) {
  DenseTraining t;
  t.inputGradient = true;
  // Strides train, with or without the input gradient.
  ConvShape strided = shape(2, 2, 8, 8, 3, 1, 2);
  EXPECT_EQ(trainedConvLimits(strided, mapping(1, 1), t), "");
  EXPECT_EQ(trainedConvLimits(strided, mapping(1, 1), DenseTraining()), "");
  ConvShape grouped = shape(4, 4, 6, 6, 3, 1);
  grouped.groups = 4;
  EXPECT_NE(trainedConvLimits(grouped, mapping(1, 1), t).find("grouped"),
            std::string::npos);
  ConvShape clipped = shape(2, 2, 6, 6, 3, 1);
  clipped.reluMax = 6.0f;
  EXPECT_NE(trainedConvLimits(clipped, mapping(1, 1), t).find("only a ReLU"),
            std::string::npos);
  DenseTraining cpgd = t;
  cpgd.lag = 1;
  EXPECT_NE(trainedConvLimits(shape(2, 2, 6, 6, 3, 1), mapping(1, 1), cpgd)
                .find("one sample at a time"),
            std::string::npos);
  DenseMapping merged = mapping(1, 1);
  merged.merge = 2;
  EXPECT_NE(trainedConvLimits(shape(2, 2, 6, 6, 3, 1), merged, t)
                .find("no merged lanes"),
            std::string::npos);
  // A row wider than a 4-D dimension's 255.
  EXPECT_NE(trainedConvLimits(shape(1, 1, 4, 300, 1, 0), mapping(1, 1), t)
                .find("4-D descriptor"),
            std::string::npos);
}

TEST(ConvTraining, PoolMapAndLimits) {
  PoolShape p;
  p.max = true;
  p.c = 6, p.hin = 28, p.win = 28, p.kh = p.kw = 2, p.sh = p.sw = 2;
  EXPECT_EQ(trainedPoolLimits(p, 6), "");
  EXPECT_EQ(trainedPoolLimits(p, 3), "");
  EXPECT_NE(trainedPoolLimits(p, 4).find("divide"), std::string::npos);
  TrainedPoolMap mm = trainedPoolMap(p, 3);
  EXPECT_EQ(mm.lc, 2);
  EXPECT_GE(mm.records, 640 + mm.code);
  // Input rows, output and gradient rows, the mask row, -inf, the
  // running maximum, the scratch row and NaN, in that order.
  std::vector<std::pair<int64_t, int64_t>> b = {
      {mm.x, 2 * 28 * 28 * 2}, {mm.y, 2 * 14 * 14 * 2},
      {mm.dy, 2 * 14 * 14 * 2}, {mm.mask, 2 * 28 * 2}, {mm.ninf, 2},
      {mm.ytmp, 2 * 14 * 2},    {mm.scratch, 2 * 14 * 2}, {mm.nan, 2}};
  int64_t at = mm.records + 4 * mm.numRecords;
  for (auto [start, words] : b) {
    EXPECT_EQ(start, at);
    at = start + words;
  }
  EXPECT_EQ(trainedPoolBytes(p, 3), 2 * at);
  // Windows that overlap, leave gaps, reach into pads; averages.
  PoolShape overlap = p;
  overlap.kh = overlap.kw = 3;
  EXPECT_NE(trainedPoolLimits(overlap, 6).find("tile"), std::string::npos);
  PoolShape padded = p;
  padded.pt = 1;
  EXPECT_NE(trainedPoolLimits(padded, 6).find("tile"), std::string::npos);
  PoolShape avg = p;
  avg.max = false;
  EXPECT_NE(trainedPoolLimits(avg, 6).find("average"), std::string::npos);
  // The Add's map: its code grows with the rows it takes one by one.
  EXPECT_LT(trainedJoinBytes(144, 1), trainedJoinBytes(144, 12));
  TrainedJoinMap jm = trainedJoinMap(144, 12);
  EXPECT_GE(jm.records, 640 + jm.code);
  EXPECT_EQ(jm.b, jm.a + 2 * 144);
  EXPECT_EQ(jm.end, jm.zero + 2);
}

TEST(ConvTraining, CostGrowsWithTheWork) {
  ConvShape s = shape(8, 8, 8, 8, 3, 1);
  DenseTraining t;
  int64_t first = predictTrainedConvCycles(s, mapping(2, 2), t);
  t.inputGradient = true;
  int64_t inner = predictTrainedConvCycles(s, mapping(2, 2), t);
  EXPECT_GT(inner, first);
  // More PEs, smaller blocks: faster.
  EXPECT_LT(predictTrainedConvCycles(s, mapping(4, 4), t), inner);
}

} // namespace
