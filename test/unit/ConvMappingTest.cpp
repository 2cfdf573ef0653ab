//===- ConvMappingTest.cpp - The convolution's schedule and model ---------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The kernel library's convolution (lib/Kernels/ConvMapping.cpp): the
// output size and MAC counts against brute force, the line-buffer schedule
// against a model of the ring (every tap reads the input row it needs,
// nothing is overwritten while still needed, every row is received once,
// no output row runs ahead of its sample), and the mapping checks.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ChainPartition.h"
#include "weft/Kernels/ConvMapping.h"

#include <gtest/gtest.h>

#include <map>

using namespace weft::conversion;

namespace {

ConvShape shape(int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t kh,
                int64_t kw, int64_t s, int64_t d, int64_t pt, int64_t pl,
                int64_t pb, int64_t pr) {
  ConvShape c;
  c.cin = cin, c.hin = h, c.win = w, c.cout = cout, c.kh = kh, c.kw = kw;
  c.sh = c.sw = s;
  c.dh = c.dw = d;
  c.pt = pt, c.pl = pl, c.pb = pb, c.pr = pr;
  return c;
}

std::vector<ConvShape> shapes() {
  return {shape(3, 8, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1),
          shape(4, 9, 11, 8, 3, 3, 2, 2, 2, 2, 2, 2),
          shape(3, 7, 9, 4, 2, 3, 1, 1, 2, 1, 1, 0),
          shape(8, 5, 5, 16, 1, 1, 1, 1, 0, 0, 0, 0),
          shape(2, 12, 12, 2, 1, 1, 3, 1, 0, 0, 0, 0),
          shape(3, 16, 16, 8, 7, 7, 2, 1, 3, 3, 3, 3),
          shape(1, 1, 16, 2, 1, 5, 2, 1, 0, 0, 0, 0)};
}

TEST(ConvMapping, SizesAndMacsMatchBruteForce) {
  for (const ConvShape &s : shapes()) {
    ASSERT_EQ(s.check(), "");
    int64_t hout = 0, wout = 0, macs = 0;
    for (int64_t oh = 0; oh * s.sh + (s.kh - 1) * s.dh < s.hin + s.pt + s.pb;
         ++oh)
      ++hout;
    for (int64_t ow = 0; ow * s.sw + (s.kw - 1) * s.dw < s.win + s.pl + s.pr;
         ++ow)
      ++wout;
    EXPECT_EQ(s.hout(), hout);
    EXPECT_EQ(s.wout(), wout);
    for (int64_t oh = 0; oh < hout; ++oh)
      for (int64_t ow = 0; ow < wout; ++ow)
        for (int64_t i = 0; i < s.kh; ++i)
          for (int64_t j = 0; j < s.kw; ++j) {
            int64_t h = oh * s.sh + i * s.dh - s.pt,
                    w = ow * s.sw + j * s.dw - s.pl;
            macs += h >= 0 && h < s.hin && w >= 0 && w < s.win;
          }
    EXPECT_EQ(s.modelMacs(), macs * s.cin * s.cout);
    EXPECT_GE(s.executedMacs(), s.modelMacs());
  }
}

TEST(ConvMapping, ScheduleReadsTheRowsItNeeds) {
  for (const ConvShape &s : shapes())
    for (bool late : {false, true}) {
      SCOPED_TRACE(late ? "late receives" : "receives first");
      ConvSchedule sch = convSchedule(s, late);
      std::map<int64_t, int64_t> slotHolds; // slot -> input row
      int64_t received = 0, computed = 0;
      std::vector<int64_t> taps; // of the output row being computed
      bool afterReceive = false;
      for (const ConvStep &st : sch.steps) {
        if (st.receive) {
          EXPECT_EQ(st.row, received++);
          EXPECT_EQ(st.slot, st.row % sch.ringRows);
          slotHolds[st.slot] = st.row;
          afterReceive = true;
          continue;
        }
        EXPECT_EQ(st.row, computed);
        EXPECT_GE(received, 1) << "an output row ran ahead of the sample";
        for (size_t k = 0; k < st.taps.size(); ++k) {
          int64_t h = s.inputRow(st.row, st.taps[k]);
          ASSERT_TRUE(slotHolds.count(st.slots[k]));
          EXPECT_EQ(slotHolds[st.slots[k]], h)
              << "output row " << st.row << " reads a slot overwritten";
        }
        // Late: the rows just received are taken for the step's first
        // kernel row, not earlier (a row of pads alone excepted).
        if (late && afterReceive && !st.taps.empty() && received > 1) {
          EXPECT_EQ(s.inputRow(st.row, st.taps[0]), received - 1)
              << "output row " << st.row << " received a row early";
        }
        afterReceive = false;
        EXPECT_TRUE(late || st.closeout);
        taps.insert(taps.end(), st.taps.begin(), st.taps.end());
        if (!st.closeout)
          continue;
        std::vector<int64_t> want;
        for (int64_t i = 0; i < s.kh; ++i) {
          int64_t h = s.inputRow(st.row, i);
          if (h >= 0 && h < s.hin)
            want.push_back(i);
        }
        EXPECT_EQ(taps, want);
        taps.clear();
        ++computed;
      }
      EXPECT_EQ(received, s.hin);
      EXPECT_EQ(computed, s.hout());
      EXPECT_EQ(sch.unroll, s.hout() % 2 ? 2 : 1);
      EXPECT_GE(sch.paddedWidth, s.pl + s.win);
    }
}

TEST(ConvMapping, MappingChecks) {
  ConvShape s = shape(8, 8, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1);
  DenseMapping m;
  m.smear = 3; // does not divide 8 channels
  m.rows = 4;
  EXPECT_NE(convMappingProblem(s, m, 48 * 1024), "");
  m.smear = 4;
  EXPECT_EQ(convMappingProblem(s, m, 48 * 1024), "");
  m.precision = Precision::Mixed;
  EXPECT_EQ(convMappingProblem(s, m, 48 * 1024), "");
  m.precision = Precision::FP32;
  // Memory: far too small a PE (the program alone leaves the descriptors
  // out of reach), and one just too small for the data.
  EXPECT_NE(convMappingProblem(s, m, 1024), "");
  int64_t need = convMemoryPerPE(s, m);
  EXPECT_NE(convMappingProblem(s, m, need - 8).find("bytes of PE memory"),
            std::string::npos);
  EXPECT_EQ(convMappingProblem(s, m, need), "");
  // More PEs never predict more cycles per sample here.
  DenseMapping one;
  EXPECT_LT(predictConvCycles(s, m), predictConvCycles(s, one));
}

TEST(ConvMapping, ClippedReluCostsAMaxAndAMinARowAndOneWord) {
  ConvShape s = shape(8, 8, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1);
  s.relu = true;
  DenseMapping m;
  m.smear = 2;
  m.rows = 4;
  int64_t relu = predictConvCycles(s, m), mem = convMemoryPerPE(s, m);
  s.reluMax = 6.0f;
  EXPECT_EQ(s.check(), "");
  // The last column's closeout: a ReLU rides on the send, a ReLU6 is an
  // fmax and an fmin of the row (Lm x wout = 4 x 8) in the output buffer.
  EXPECT_EQ(predictConvCycles(s, m), relu + 8 * 2 * (1 + 4 * 8));
  // On one column the fmax writes the buffer the mov32 would have: only
  // the fmin is added.
  {
    DenseMapping one = m;
    one.smear = 1;
    ConvShape r = s;
    r.reluMax.reset();
    EXPECT_EQ(predictConvCycles(s, one),
              predictConvCycles(r, one) + 8 * (1 + 4 * 8));
  }
  // The bound's word after the output buffers (and the longer code).
  ConvMemoryMap mm = convMemoryMap(s, m);
  EXPECT_EQ(mm.end - mm.clip, 2);
  EXPECT_GT(convMemoryPerPE(s, m), mem + 4);
  // A bound needs the ReLU and must be positive.
  s.reluMax = 0.0f;
  EXPECT_NE(s.check(), "");
  s.reluMax = 6.0f;
  s.relu = false;
  EXPECT_NE(s.check(), "");
}

TEST(ConvMapping, MixedPrecisionHalvesStorageAndQuartersTheMacs) {
  // 8 -> 16 channels, 3 x 3, pad 1, on 8 x 8; 2 x 4 PEs: Lk = 4, Lm = 4.
  ConvShape s = shape(8, 8, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1);
  DenseMapping f;
  f.smear = 2;
  f.rows = 4;
  DenseMapping h = f;
  h.precision = Precision::Mixed;
  const int64_t lk = 4, lm = 4, ring = 3, padded = 10;
  // Weights and line buffer: one 16-bit word an element instead of two;
  // the accumulator, bias and output buffers stay fp32.
  ConvMemoryMap mf = convMemoryMap(s, f), mh = convMemoryMap(s, h);
  EXPECT_EQ(mf.ring - mf.weights, 2 * lk * lm * 9);
  EXPECT_EQ(mh.ring - mh.weights, lk * lm * 9);
  EXPECT_EQ(mf.acc - mf.ring, 2 * ring * padded * lk);
  EXPECT_EQ(mh.acc - mh.ring, ring * padded * lk);
  EXPECT_EQ(mh.acc % 2, 0);
  EXPECT_EQ(mh.bias - mh.acc, mf.bias - mf.acc);
  EXPECT_EQ(mf.end - mh.end, lk * lm * 9 + ring * padded * lk);
  // Per kernel row of an output row, the multiply-accumulate over
  // Lm x wout x kw x Lk = 384 elements: fmac one a cycle, fmachs four.
  // A receive takes one element a cycle either way (mov32, or ff2h).
  int64_t taps = 3 * 8 - 2; // the top and bottom rows' taps on the pads
  EXPECT_EQ(predictConvCycles(s, f) - predictConvCycles(s, h),
            taps * (384 - 384 / 4));
  EXPECT_EQ(convReceiveCycles(Precision::Mixed, 40),
            convReceiveCycles(Precision::FP32, 40));
  EXPECT_EQ(convReceiveCycles(Precision::FP32, 40), 1 + 40);
}

TEST(ConvMapping, BandsWaitForTheWholeRowOnTheirLane) {
  // ResNet's stem, 3 -> 64 7x7 stride 2 pad 3 on 64x64, in mixed precision:
  // in 16 bands of 1 x 16 PEs (one lane of 3 channels) and in 8 bands of
  // 3 x 16 (three lanes of one channel each).
  ConvShape s = shape(3, 64, 64, 64, 7, 7, 2, 1, 3, 3, 3, 3);
  for (auto [S, T] : {std::pair<int64_t, int64_t>{1, 16}, {3, 8}}) {
    DenseMapping m;
    m.smear = S;
    m.rows = 16;
    m.tiles = T;
    m.precision = Precision::Mixed;
    DenseMapping one = m;
    one.tiles = 1;
    int64_t want = 0, work = 0;
    for (const ConvTile &t : convTiles(s, T)) {
      // A band's work is its own convolution's; it waits for the rest of
      // every received row (64 rows a sample) on its lane of 3 / S channels.
      int64_t w = predictConvCycles(t.shape, one);
      work = std::max(work, w);
      want = std::max(want, w + 64 * (64 - t.shape.win) * (3 / S));
      EXPECT_EQ(bandLaneWait(64, 64, t.shape.win, 3 / S),
                64 * (64 - t.shape.win) * (3 / S));
    }
    EXPECT_EQ(predictConvCycles(s, m), want) << S << " x " << T;
    EXPECT_EQ(convBandsLaneWait(s, m), want - work);
    EXPECT_GT(convBandsLaneWait(s, m), 0);
  }
  // Unbanded, nothing waits.
  DenseMapping m;
  m.smear = 3;
  m.rows = 16;
  EXPECT_EQ(convBandsLaneWait(s, m), 0);
}

TEST(ConvMapping, PartitionerKeepsFeatureMapChannelsWhole) {
  // conv 6 -> 12 then conv 12 -> 4: the stream between them carries 12
  // channels, so its rows must divide 12; the host input's rows divide 6.
  ConvShape a = shape(6, 6, 6, 12, 3, 3, 1, 1, 1, 1, 1, 1);
  ConvShape b = shape(12, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1);
  NetworkShape net = NetworkShape::chain(
      {ChainLayer::convolution(a), ChainLayer::convolution(b)});
  net.streamChannels = {6, 12, 4};
  std::string why;
  auto t = weft::machine::Target::parse("16x16");
  ASSERT_TRUE(t);
  std::optional<ChainMapping> m =
      partitionNetwork(net, Precision::FP32, *t, why);
  ASSERT_TRUE(m) << why;
  EXPECT_EQ(6 % m->streamRows[0], 0);
  EXPECT_EQ(12 % m->streamRows[1], 0);
  EXPECT_EQ(4 % m->streamRows[2], 0);
  EXPECT_EQ(networkMacsPerSample(net), a.modelMacs() + b.modelMacs());
}

} // namespace

// Bands of output columns (docs/execution-model.md, "Bands of output
// columns"): every band, run as its own convolution on the input columns it
// receives, reads exactly the input columns (or pads) the whole
// convolution's window reads for the band's output columns; the bands
// partition the output columns, and their received columns cover the row
// in order, each band's starting no later than where the previous one's
// ends.
TEST(ConvMapping, BandsReadWhatTheWholeConvolutionReads) {
  std::vector<ConvShape> all = shapes();
  all.push_back(shape(1, 4, 64, 4, 7, 7, 2, 1, 3, 3, 3, 3));
  all.push_back(shape(2, 3, 15, 2, 1, 1, 2, 1, 0, 0, 0, 0)); // unread columns
  all.push_back(shape(2, 3, 10, 2, 3, 3, 1, 3, 3, 3, 3, 3)); // dilated, wide pads
  for (const ConvShape &s : all)
    for (int64_t tiles = 1; tiles <= s.wout(); ++tiles) {
      std::vector<ConvTile> bands = convTiles(s, tiles);
      if (bands.empty())
        continue;
      ASSERT_EQ(int64_t(bands.size()), tiles);
      EXPECT_EQ(bands.front().out0, 0);
      EXPECT_EQ(bands.back().out1, s.wout());
      EXPECT_EQ(bands.front().in0, 0);
      EXPECT_EQ(bands.back().in1, s.win);
      for (size_t t = 0; t < bands.size(); ++t) {
        const ConvTile &b = bands[t];
        ASSERT_EQ(b.shape.check(), "");
        EXPECT_EQ(b.shape.win, b.in1 - b.in0);
        EXPECT_EQ(b.shape.wout(), b.out1 - b.out0);
        if (t + 1 < bands.size()) {
          EXPECT_EQ(b.out1, bands[t + 1].out0);
          EXPECT_LE(b.in0, bands[t + 1].in0);
          EXPECT_GE(b.in1, bands[t + 1].in0) << "a column nobody receives";
        }
        for (int64_t ow = b.out0; ow < b.out1; ++ow)
          for (int64_t j = 0; j < s.kw; ++j) {
            int64_t global = ow * s.sw + j * s.dw - s.pl;
            int64_t local =
                (ow - b.out0) * b.shape.sw + j * b.shape.dw - b.shape.pl;
            bool inGlobal = global >= 0 && global < s.win;
            bool inLocal = local >= 0 && local < b.shape.win;
            ASSERT_EQ(inGlobal, inLocal)
                << "band " << t << " of " << tiles << ", output column " << ow;
            if (inGlobal) {
              EXPECT_EQ(local + b.in0, global);
            }
          }
      }
    }
}

TEST(ConvMapping, BandsCostLessAndAreChecked) {
  ConvShape s = shape(3, 64, 64, 64, 7, 7, 2, 1, 3, 3, 3, 3);
  s.relu = s.bias = true;
  DenseMapping m;
  m.smear = 3;
  m.rows = 16;
  int64_t one = predictConvCycles(s, m);
  m.tiles = 4;
  EXPECT_EQ(convMappingProblem(s, m, 48 * 1024), "");
  int64_t four = predictConvCycles(s, m);
  // Four bands of 8 output columns: about a quarter of the cycles (the
  // halos and fixed costs a little more).
  EXPECT_LT(four, one / 3);
  EXPECT_GT(four, one / 5);
  EXPECT_LE(convMemoryPerPE(s, m), convMemoryPerPE(s, DenseMapping{0, 0, 3, 16}));
  m.tiles = 33; // more bands than output columns
  EXPECT_NE(convMappingProblem(s, m, 48 * 1024).find("bands"),
            std::string::npos);
  EXPECT_TRUE(convTiles(s, 33).empty());
  // A band that reads only padding is refused.
  ConvShape pads = shape(1, 4, 2, 1, 3, 3, 1, 1, 4, 4, 4, 4);
  EXPECT_TRUE(convTiles(pads, pads.wout()).empty());
}

// Merged lanes (docs/execution-model.md, "Merged lanes"): the columns'
// programs do not change, only which turn PEs hold weights (row ck < R), so
// merging never costs more than S = R_in columns fed one lane each; the
// checks refuse lanes that split channels and merging with bands; and on a
// fabric too narrow for a 16-column layer the partitioner merges lanes.
TEST(ConvMapping, MergedLanesCostAndChoice) {
  ConvShape s = shape(16, 6, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1);
  for (int64_t S : {1, 2, 4, 8})
    for (int64_t k : {1, 2, 4, 8, 16})
      for (int64_t R : {1, 2, 4, 8, 16}) {
        if (S * k > 16)
          continue;
        DenseMapping m, one;
        m.smear = one.smear = S;
        m.rows = one.rows = R;
        m.merge = k;
        ASSERT_EQ(convMappingProblem(s, m, 48 * 1024), "");
        EXPECT_LE(predictConvCycles(s, m), predictConvCycles(s, one))
            << S << " columns of " << k << " lanes, " << R << " rows";
        EXPECT_EQ(m.footprint(), std::max(S * k, R));
      }
  DenseMapping bad;
  bad.smear = 4;
  bad.merge = 8; // 32 lanes for 16 channels
  EXPECT_NE(convMappingProblem(s, bad, 48 * 1024), "");
  bad.merge = 2;
  bad.tiles = 2;
  EXPECT_NE(convMappingProblem(s, bad, 48 * 1024), "");

  ConvShape a = shape(4, 6, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1);
  auto t = weft::machine::Target::parse("8x16");
  ASSERT_TRUE(t);
  for (bool merge : {false, true}) {
    NetworkShape net = NetworkShape::chain(
        {ChainLayer::convolution(a), ChainLayer::convolution(s)});
    net.streamChannels = {4, 16, 16};
    net.mergeLanes = merge;
    std::string why;
    std::optional<ChainMapping> m =
        partitionNetwork(net, Precision::FP32, *t, why);
    ASSERT_TRUE(m) << why;
    // Merging lets the first layer be taller than the second is wide.
    if (merge)
      EXPECT_GT(m->streamRows[1], m->kernels[1].width);
    else
      EXPECT_EQ(m->streamRows[1], m->kernels[1].width);
  }
}
