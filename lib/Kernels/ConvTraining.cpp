//===- ConvTraining.cpp - A trained convolution's PEs ---------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ConvTraining.h"

#include "weft/Machine/ISA.h"

#include <algorithm>

namespace weft::conversion {

namespace {
using machine::Opcode;
int64_t cyc(Opcode op, int64_t n) { return machine::vectorCycles(op, n); }

int64_t sumTaps(const ConvShape &s) {
  int64_t n = 0;
  for (int64_t oh = 0; oh < s.hout(); ++oh)
    n += int64_t(trainedConvTaps(s, oh).size());
  return n;
}
int64_t sumInputTaps(const ConvShape &s) {
  int64_t n = 0;
  for (int64_t h = 0; h < s.hin; ++h)
    n += int64_t(trainedConvInputTaps(s, h).size());
  return n;
}
} // namespace

std::vector<int64_t> trainedConvTaps(const ConvShape &s, int64_t oh) {
  std::vector<int64_t> taps;
  for (int64_t i = 0; i < s.kh; ++i) {
    int64_t h = s.inputRow(oh, i);
    if (h >= 0 && h < s.hin)
      taps.push_back(i);
  }
  return taps;
}

std::vector<int64_t> trainedConvInputTaps(const ConvShape &s, int64_t h) {
  std::vector<int64_t> taps;
  for (int64_t i = 0; i < s.kh; ++i) {
    int64_t at = h + s.pt - i * s.dh;
    if (at >= 0 && at % s.sh == 0 && at / s.sh < s.hout())
      taps.push_back(i);
  }
  return taps;
}

int64_t trainedConvInstructions(const ConvShape &s, const DenseMapping &m,
                                const DenseTraining &t) {
  (void)m;
  const int64_t hin = s.hin, hout = s.hout(), taps = sumTaps(s);
  // The setup; per sample: a receive (with the diagonal's copy) a row, a
  // tap's two record loads and multiply-accumulate, a row's close-out and
  // send; the gradient rows (receive, ReLU mask, multicast); the chain
  // pass's three loads and multiply-accumulate a tap; the input gradient's
  // as many, a load a row and its reduction; the bias and the updates.
  // A gradient row on the last column: its receive, a fork's second
  // gradient, the ReLU's mask (fceq, sel32, mov) and the multicast, each
  // with its record loads (20).
  int64_t n = 80 + 4 * hin + 3 * taps + 10 * hout;
  n += 20 * hout + 4 * taps + 40;
  if (t.mbgd)
    n += 16; // the step's end and the counter
  if (t.inputGradient)
    n += hin + 3 * sumInputTaps(s) + 16;
  if (t.inputGradient && s.sw > 1)
    n += 3 * hout + 12; // the upsampling copies and register reloads
  return n;
}

TrainedConvMap trainedConvMap(const ConvShape &s, const DenseMapping &m,
                              const DenseTraining &t) {
  TrainedConvMap mm;
  mm.lk = convLk(s, m);
  mm.lm = convLm(s, m);
  const int64_t lk = mm.lk, lm = mm.lm, wo = s.wout(), hout = s.hout();
  mm.paddedWidth = convSchedule(s).paddedWidth;
  // The input gradient's window reaches (kw - 1) dw - pl pixels left of a
  // gradient row (upsampled by sw) and win + pl - ((wout - 1) sw + 1) right.
  const int64_t up = (wo - 1) * s.sw + 1;
  const int64_t left = std::max<int64_t>(0, (s.kw - 1) * s.dw - s.pl),
                right = std::max<int64_t>(0, s.win + s.pl - up);
  const bool upsample = t.inputGradient && s.sw > 1;
  if (t.inputGradient && !upsample) {
    mm.dyLeft = left;
    mm.dyRight = right;
  }
  mm.dyPitch = (mm.dyLeft + wo + mm.dyRight) * lm;
  if (upsample) {
    mm.upLeft = left;
    mm.upPitch = (left + up + right) * lm;
  }
  // The task table (640 words) and the code (two words a slot), then the
  // records: a stored input row's receive and window, a kernel row's
  // weights (and under MBGD its gradient), a gradient row's receive,
  // chain-pass row and (input gradient) padded window, an output row, an
  // input row's gradient, and some fixed ones (the XDSDs and stride words
  // among them).
  mm.code = 2 * (trainedConvInstructions(s, m, t) + 64);
  mm.records = (640 + mm.code + 3) / 4 * 4;
  mm.numRecords = 2 * s.hin + s.kh + (t.mbgd ? s.kh + 2 : 0) + 3 * hout +
                  (t.inputGradient ? hout + s.hin + s.kh + 6 : 0) +
                  (upsample ? 2 * hout + 6 : 0) + 48;
  int64_t next = mm.records + 4 * mm.numRecords;
  auto take = [&](int64_t words) {
    int64_t at = next;
    next += words;
    return at;
  };
  mm.w = take(2 * lk * s.kh * s.kw * lm);
  if (t.mbgd)
    mm.g = take(2 * lk * s.kh * s.kw * lm);
  mm.x = take(2 * s.hin * mm.paddedWidth * lk);
  mm.acc = take(2 * wo * lm);
  if (s.bias) {
    mm.bias = take(2 * lm);
    if (t.mbgd)
      mm.gb = take(2 * lm);
  }
  mm.y = take(2 * hout * wo * lm);
  mm.dy = take(2 * hout * mm.dyPitch);
  if (upsample)
    mm.dyu = take(2 * hout * mm.upPitch);
  if (s.relu) {
    mm.mask = take(2 * wo * lm);
    mm.zero = take(2);
  }
  if (t.inputGradient)
    mm.dx = take(2 * s.hin * s.win * lk);
  mm.end = next;
  return mm;
}

std::string trainedConvLimits(const ConvShape &s, const DenseMapping &m,
                              const DenseTraining &t) {
  auto n = [](int64_t v) { return std::to_string(v); };
  if (s.grouped())
    return "a grouped or depthwise convolution is not trained yet";
  if (m.merge > 1 || m.tiles > 1)
    return "a trained convolution takes one input lane a column and one "
           "band (no merged lanes, no bands of output columns)";
  if (!s.epilogue.empty() || s.reluMax)
    return "only a ReLU is fused into a trained convolution";
  if (s.cin % m.smear || s.cout % m.rows)
    return "the chunks must divide the channels";
  if (t.lag > 0)
    return "a convolution trains one sample at a time (sgd, or mbgd "
           "without a pipeline), not under cpgd";
  const TrainedConvMap mm = trainedConvMap(s, m, t);
  const int64_t lk = mm.lk, lm = mm.lm, wo = s.wout();
  // 4-D descriptors: dimension 0 up to 4095, the others up to 255.
  if (lm > 4095 || wo > 255 || s.kw > 255 || lk > 255 || s.hout() > 255 ||
      (t.inputGradient && s.win > 255))
    return "a 4-D descriptor's dimension would exceed its range (Lm " +
           n(lm) + " of 4095; output width " + n(wo) + ", window width " +
           n(s.kw) + ", Lk " + n(lk) + ", output height " + n(s.hout()) +
           (t.inputGradient ? ", input width " + n(s.win) : "") +
           " of 255)";
  const int64_t strides[] = {s.kh * s.kw * lm, s.sw * lk, s.dw * lk,
                             mm.dyPitch, s.dw * lm, s.sw * lm};
  for (int64_t v : strides)
    if (v > 16383)
      return "a 4-D stride of " + n(v) + " elements exceeds the 16383 of a "
             "stride register";
  const int64_t lengths[] = {lk * s.kh * s.kw * lm, s.hout() * mm.dyPitch,
                             s.hin * s.win * lk, s.hout() * wo * lm,
                             s.hout() * mm.upPitch};
  for (int64_t v : lengths)
    if (v > 32767)
      return "a vector of " + n(v) + " elements exceeds the 32767 of a DSD";
  if (mm.records + 4 * mm.numRecords > 8192)
    return "its records end at word " + n(mm.records + 4 * mm.numRecords) +
           ", past the 8192 a DSR load reaches";
  return "";
}

int64_t trainedConvBytes(const ConvShape &s, const DenseMapping &m,
                         const DenseTraining &t) {
  return 2 * trainedConvMap(s, m, t).end;
}

WordPlace trainedConvWeightPlace(const ConvShape &s, const DenseMapping &m,
                                 const DenseTraining &t, int64_t o, int64_t ci,
                                 int64_t i, int64_t j) {
  const TrainedConvMap mm = trainedConvMap(s, m, t);
  WordPlace p;
  p.x = m.x0 + ci / mm.lk;
  p.y = m.y0 + o / mm.lm;
  p.word = mm.w +
           2 * ((((ci % mm.lk) * s.kh + i) * s.kw + j) * mm.lm + o % mm.lm);
  return p;
}

WordPlace trainedConvBiasPlace(const ConvShape &s, const DenseMapping &m,
                               const DenseTraining &t, int64_t o) {
  const TrainedConvMap mm = trainedConvMap(s, m, t);
  WordPlace p;
  p.x = m.x0;
  p.y = m.y0 + o / mm.lm;
  p.word = mm.bias + 2 * (o % mm.lm);
  return p;
}

int64_t predictTrainedConvCycles(const ConvShape &s, const DenseMapping &m,
                                 const DenseTraining &t) {
  const TrainedConvMap mm = trainedConvMap(s, m, t);
  const int64_t lk = mm.lk, lm = mm.lm, wo = s.wout(), hout = s.hout();
  const int64_t row = wo * lm, taps = sumTaps(s);
  const int64_t mac = cyc(Opcode::FMAC, lm * wo * s.kw * lk);
  // Forward: the receives, the taps, a row's close-out on the last column
  // (the west's partial sums, the ReLU, the send's launch, the clear).
  int64_t pe = s.hin * (2 + cyc(Opcode::MOV32, s.win * lk));
  pe += taps * (2 + mac);
  pe += hout * (6 + cyc(Opcode::FADD, row) + cyc(Opcode::FMAX, row) +
                cyc(Opcode::MOV32, row));
  // The gradient rows: received, masked, multicast west.
  pe += hout * (2 + cyc(Opcode::MOV32, row));
  if (s.relu)
    pe += hout * (4 + cyc(Opcode::FCEQ, row) + cyc(Opcode::SEL32, row) +
                  cyc(Opcode::MOV32, row));
  if (m.smear > 1)
    pe += hout * (2 + cyc(Opcode::MOV32, row));
  if (t.inputGradient) {
    const int64_t dx = s.hin * s.win * lk;
    pe += 2 + cyc(Opcode::MOV32, dx);
    if (mm.dyu >= 0)
      pe += hout * (3 + cyc(Opcode::MOV32, wo * lm)) + 8;
    pe += s.hin +
          sumInputTaps(s) * (3 + cyc(Opcode::FMAC, lm * s.kw * s.win * lk));
    pe += 4 + cyc(Opcode::FADD, dx);
  }
  // The chain pass (SGD: on the gradient scaled by -lr).
  if (!t.mbgd)
    pe += 3 + cyc(Opcode::FMUL, hout * mm.dyPitch);
  pe += taps * (3 + mac);
  if (t.mbgd) {
    const int64_t w = lk * s.kh * s.kw * lm;
    pe += 4 + (4 + cyc(Opcode::FMAC, w) + cyc(Opcode::MOV32, w)) /
                  std::max<int64_t>(t.batch, 1);
  }
  return pe + 2;
}

int64_t trainedPoolInstructions(const PoolShape &s) {
  // The setup; per sample a receive a row, a reset, a maximum a window
  // row and a send an output row; a receive a gradient row; a mask, a
  // select and a send an input row (each with its record loads).
  // The backward: per output row the window's running maximum reset
  // (3); per input row and window column a compare, a copy, a select, a
  // copy back and a select with their loads (17), and the row's send (3).
  // (A gradient row: 3, and 3 more for a residual block's second.)
  return 40 + 2 * s.hin + s.hout() * (2 * s.kh + 7) + 6 * s.hout() +
         3 * s.hout() + s.hin * (17 * s.kw + 3) + 8;
}

TrainedPoolMap trainedPoolMap(const PoolShape &s, int64_t rows) {
  TrainedPoolMap mm;
  mm.lc = s.c / std::max<int64_t>(rows, 1);
  const int64_t lc = mm.lc, wo = s.wout(), hout = s.hout();
  mm.code = 2 * (trainedPoolInstructions(s) + 64);
  mm.records = (640 + mm.code + 3) / 4 * 4;
  // An input row's receive and window, an output row's 1-D and 4-D, a
  // gradient row's 1-D and 4-D, an input row's window column and the
  // mask's, and some fixed ones.
  mm.numRecords = 2 * s.hin + 4 * hout + s.hin * s.kw + s.kw + 21;
  int64_t next = mm.records + 4 * mm.numRecords;
  auto take = [&](int64_t words) {
    int64_t at = next;
    next += words;
    return at;
  };
  mm.x = take(2 * s.hin * s.win * lc);
  mm.y = take(2 * hout * wo * lc);
  mm.dy = take(2 * hout * wo * lc);
  mm.mask = take(2 * s.win * lc);
  mm.ninf = take(2);
  mm.ytmp = take(2 * wo * lc);
  mm.scratch = take(2 * wo * lc);
  mm.nan = take(2);
  mm.end = next;
  return mm;
}

std::string trainedPoolLimits(const PoolShape &s, int64_t rows) {
  auto n = [](int64_t v) { return std::to_string(v); };
  if (!s.max)
    return "an average pool is not trained yet (max pools are)";
  if (s.kh != s.sh || s.kw != s.sw || s.dh != 1 || s.dw != 1 || s.pt ||
      s.pl || s.pb || s.pr || s.ceil || s.hin % s.sh || s.win % s.sw)
    return "a trained max pool's windows must tile its " + n(s.hin) + " x " +
           n(s.win) + " input exactly (window = stride, no pads nor "
           "dilations), not " + n(s.kh) + " x " + n(s.kw) + " windows of "
           "stride " + n(s.sh) + " x " + n(s.sw);
  if (rows < 1 || s.c % rows)
    return "its " + n(rows) + " rows must divide its " + n(s.c) +
           " channels";
  const TrainedPoolMap mm = trainedPoolMap(s, rows);
  if (mm.lc > 4095 || s.wout() > 255 || s.kw > 255)
    return "a 4-D descriptor's dimension would exceed its range";
  if (s.sw * mm.lc > 16383 || s.win * mm.lc > 32767)
    return "an input row of " + n(s.win * mm.lc) +
           " elements exceeds a descriptor's range";
  if (mm.records + 4 * mm.numRecords > 8192)
    return "its records end at word " + n(mm.records + 4 * mm.numRecords) +
           ", past the 8192 a DSR load reaches";
  return "";
}

TrainedJoinMap trainedJoinMap(int64_t L, int64_t rows) {
  TrainedJoinMap mm;
  rows = std::max<int64_t>(rows, 1);
  // A row of either input: two record loads and a receive; the rest is a
  // few dozen instructions.
  mm.code = 2 * (3 * 2 * rows + 40 + 64);
  mm.records = (640 + mm.code + 3) / 4 * 4;
  mm.numRecords = 2 * rows + 16;
  int64_t next = mm.records + 4 * mm.numRecords;
  auto take = [&](int64_t words) {
    int64_t at = next;
    next += words;
    return at;
  };
  mm.a = take(2 * L);
  mm.b = take(2 * L);
  mm.y = take(2 * L);
  mm.dy = take(2 * L);
  mm.zero = take(2);
  mm.end = next;
  return mm;
}

int64_t trainedJoinBytes(int64_t L, int64_t rows) {
  return 2 * trainedJoinMap(L, rows).end;
}

int64_t trainedPoolBytes(const PoolShape &s, int64_t rows) {
  return 2 * trainedPoolMap(s, rows).end;
}

int64_t predictTrainedPoolCycles(const PoolShape &s, int64_t rows) {
  const int64_t lc = s.c / std::max<int64_t>(rows, 1), wo = s.wout(),
                hout = s.hout(), row = wo * lc, win = s.win * lc;
  const int64_t window = lc * wo * s.kw;
  int64_t pe = s.hin * (2 + cyc(Opcode::MOV32, win));
  pe += hout * (2 + cyc(Opcode::MOV32, row) +
                s.kh * (2 + cyc(Opcode::FMAX, window)) + 2);
  pe += hout * (2 + cyc(Opcode::MOV32, row));
  pe += hout * (2 + cyc(Opcode::MOV32, row));
  pe += s.hin * s.kw *
        (12 + cyc(Opcode::FCEQ, row) + 2 * cyc(Opcode::MOV32, row) +
         2 * cyc(Opcode::SEL32, row));
  pe += s.hin * (2 + cyc(Opcode::MOV32, win));
  return pe + 1;
}

} // namespace weft::conversion
