//===- DenseTraining.cpp - A trained dense layer's PEs --------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/DenseTraining.h"

#include "weft/Kernels/Chunks.h"
#include "weft/Machine/ISA.h"

#include <algorithm>

namespace weft::conversion {

TrainedDenseMap trainedDenseMap(int64_t lk, int64_t lm, bool last,
                                bool hasBias, bool relu,
                                const DenseTraining &t) {
  TrainedDenseMap mm;
  int64_t next = TrainedDenseMap::kData;
  auto take = [&](int64_t words) {
    int64_t at = next;
    next += words;
    return at;
  };
  // fp32 throughout: two words an element.
  mm.acc = take(2 * lm);
  if (last && hasBias)
    mm.bias = take(2 * lm);
  mm.w = take(2 * lk * lm);
  if (t.lag > 0) {
    // CPGD's ring: the x, y (last column), dL/dz and dL/dx of the lag + 1
    // samples in flight, a slot each, addressed through GPR4
    // (EmitTrainedDense.cpp). dL/dz and dL/dx are in it because they are
    // sent on microthreads (dL/dz along the row, dL/dx to the kernel
    // before) that may still be running when the next round computes the
    // next ones.
    mm.slots = t.lag + 1;
    mm.slotWords = 2 * lk + (last ? 2 * lm : 0) + 2 * lm +
                   (t.inputGradient ? 2 * lk : 0);
    mm.x = take(mm.slots * mm.slotWords);
    int64_t at = mm.x + 2 * lk;
    if (last) {
      mm.y = at;
      at += 2 * lm;
    }
    mm.delta = at;
    at += 2 * lm;
    if (t.inputGradient)
      mm.dx = at;
  } else {
    if (last)
      mm.y = take(2 * lm);
    if (t.storesInput)
      mm.x = take(2 * lk);
  }
  if (mm.delta < 0)
    mm.delta = take(2 * lm);
  if (!t.mbgd)
    mm.dlr = take(2 * lm);
  if (t.inputGradient && mm.dx < 0)
    mm.dx = take(2 * lk);
  // A layer that recomputes its input takes it again into dx's memory,
  // after dx has gone west (docs/training.md, "Reverse checkpoints").
  if (!t.storesInput)
    mm.x = mm.dx;
  if (last && relu)
    mm.mask = take(2 * lm);
  if (t.mbgd) {
    mm.g = take(2 * lk * lm);
    if (last && hasBias)
      mm.gb = take(2 * lm);
  }
  mm.end = next;
  return mm;
}

int64_t trainedDenseBytes(int64_t K, int64_t M, bool hasBias, bool relu,
                          const DenseMapping &m, const DenseTraining &t) {
  // The longest chunks are the first ones; the last column has the most.
  int64_t lk = chunkSize(K, m.smear, 0), lm = chunkSize(M, m.rows, 0);
  return 2 * trainedDenseMap(lk, lm, /*last=*/true, hasBias, relu, t).end;
}

int64_t trainedDenseInputBytes(int64_t K, int64_t M, bool hasBias, bool relu,
                               const DenseMapping &m, const DenseTraining &t) {
  if (!t.inputGradient)
    return 0;
  DenseTraining stores = t, drops = t;
  stores.storesInput = true;
  drops.storesInput = false;
  return trainedDenseBytes(K, M, hasBias, relu, m, stores) -
         trainedDenseBytes(K, M, hasBias, relu, m, drops);
}


namespace {
using machine::Opcode;
int64_t cyc(Opcode op, int64_t n) { return machine::vectorCycles(op, n); }
} // namespace

/// CE cycles of PE (c, r)'s forward in EmitTrainedDense.cpp without the
/// receive: every step loads its records (a cycle each) and issues one
/// instruction. The last column's send of y runs on microthread 3 in the
/// sample's forward (its launch; its elements take the datapath in the
/// cycles the main thread's record loads and startups leave free) and on
/// the main thread when recomputed for the layer after (`sendOnMain`).
static int64_t forwardPeCycles(int64_t lk, int64_t lm, bool first, bool last,
                               bool hasBias, bool relu, bool sendOnMain) {
  int64_t pe = 3 + cyc(Opcode::FMAC, lk * lm);
  if (!last) {
    pe += first ? 2 + cyc(Opcode::MOV32, lm) : 3 + cyc(Opcode::FADD, lm);
  } else {
    if (!first)
      pe += 3 + cyc(Opcode::FADD, lm);
    if (hasBias)
      pe += 3 + cyc(Opcode::FADD, lm);
    pe += relu ? 2 + cyc(Opcode::FMAX, lm) : 2 + cyc(Opcode::MOV32, lm);
    pe += sendOnMain ? 2 + cyc(Opcode::MOV32, lm) : 3;
  }
  return pe + 1 + cyc(Opcode::MOV32, lm); // acc cleared
}

int64_t trainedDenseForwardCycles(int64_t K, int64_t M, bool hasBias,
                                  bool relu, const DenseMapping &m) {
  const int64_t S = m.smear;
  int64_t total = 0;
  for (int64_t c = 0; c < S; ++c)
    for (int64_t r = 0; r < m.rows; ++r)
      total += forwardPeCycles(chunkSize(K, S, c), chunkSize(M, m.rows, r),
                               c == 0, c == S - 1, hasBias, relu,
                               /*sendOnMain=*/true);
  return total;
}

int64_t trainedDenseReceiveCycles(int64_t K, const DenseMapping &m) {
  const int64_t S = m.smear;
  int64_t total = 0;
  for (int64_t c = 0; c < S; ++c) {
    const int64_t lk = chunkSize(K, S, c);
    // The diagonal's copy: a launch and the microthread's copy.
    total += 1 + cyc(Opcode::MOV32, lk);
    // Every PE of the column takes x: two records and the receive.
    total += m.rows * (2 + cyc(Opcode::MOV32, lk));
  }
  return total;
}

int64_t trainedDensePeCycles(int64_t K, int64_t M, bool hasBias, bool relu,
                             const DenseMapping &m, const DenseTraining &t,
                             int64_t c, int64_t r) {
  const int64_t S = m.smear;
  const bool pipelined = t.lag > 0;
  const int64_t lk = chunkSize(K, S, c), lm = chunkSize(M, m.rows, r);
  const bool first = c == 0, last = c == S - 1;
  const int64_t d = m.turnRow(c);
  // The loop's control a sample: a jump; a round's tests, the ring's
  // advance and the round count (WaveletBuilder's cpgd*).
  int64_t pe = pipelined ? 12 : 1;
  // MBGD's step end (W and b updated, g and gb cleared), spread over the
  // step's samples, and the one-sample-at-a-time schedule's counter.
  if (t.mbgd) {
    int64_t end =
        3 + cyc(Opcode::FMAC, lk * lm) + 1 + cyc(Opcode::MOV32, lk * lm);
    if (last && hasBias)
      end += 2 + cyc(Opcode::FMAC, lm) + 1 + cyc(Opcode::MOV32, lm);
    pe += (end + t.batch - 1) / t.batch + (pipelined ? 0 : 4);
  }
  // The diagonal's copy of x into the column shares its datapath.
  auto receive = [&] {
    return (r == d ? 1 + cyc(Opcode::MOV32, lk) : 0) + 2 +
           cyc(Opcode::MOV32, lk);
  };
  auto forward = [&](bool again) {
    return forwardPeCycles(lk, lm, first, last, hasBias, relu, again);
  };
  pe += receive() + forward(false);
  // Delta: the last column takes dL/dy, masks it and sends dL/dz west.
  if (last) {
    pe += 2 + cyc(Opcode::MOV32, lm);
    if (relu)
      pe += 3 + cyc(Opcode::FCEQ, lm) + 3 + cyc(Opcode::SEL32, lm) + 2 +
            cyc(Opcode::MOV32, lm);
    // dL/dz west along the row: on the main thread under CPGD, else
    // launched on microthread 5 (like y's send, above).
    if (S > 1)
      pe += pipelined ? 2 + cyc(Opcode::MOV32, lm) : 3;
  } else {
    pe += 2 + cyc(Opcode::MOV32, lm);
  }
  if (t.recomputesOutput)
    pe += forward(true);
  if (last && hasBias)
    pe += t.mbgd ? 3 + cyc(Opcode::FADD, lm) : 2 + cyc(Opcode::FMAC, lm);
  if (t.inputGradient) {
    pe += 1 + cyc(Opcode::MOV32, lk) + 3 + cyc(Opcode::FMAC, lk * lm);
    // The reduction down the column: a sum (or a copy) into the outgoing
    // one; the diagonal adds both neighbours' and sends.
    const bool north = r > 0, south = r + 1 < m.rows;
    if (r != d)
      pe += (r < d ? north : south) ? 3 + cyc(Opcode::FADD, lk)
                                    : 2 + cyc(Opcode::MOV32, lk);
    else
      pe += (north ? 3 + cyc(Opcode::FADD, lk) : 0) +
            (south ? 3 + cyc(Opcode::FADD, lk) : 0) +
            (pipelined || !south ? 2 + cyc(Opcode::MOV32, lk) : 0);
  }
  if (!t.storesInput)
    pe += receive();
  pe += t.mbgd ? 3 + cyc(Opcode::FMAC, lk * lm)
               : 3 + cyc(Opcode::FMUL, lm) + 3 + cyc(Opcode::FMAC, lk * lm);
  return pe;
}

int64_t predictTrainedDenseCycles(int64_t K, int64_t M, bool hasBias,
                                  bool relu, const DenseMapping &m,
                                  const DenseTraining &t) {
  // The busiest PE is one of few: chunks only shrink with c and r (the
  // first ones are the longest), so within a column position (first,
  // middle, last) and a row position (above, on or below the diagonal,
  // with or without a neighbour in the reduction) the first PE is the
  // busiest. Columns 0, 1, 2 and S - 1, rows 0, 1, 2 and around the
  // diagonal and the bottom cover every class, in O(1) per layout (the
  // partitioner costs every S x R of the fabric).
  const int64_t S = m.smear, R = m.rows;
  int64_t busiest = 0;
  for (int64_t c : {int64_t(0), int64_t(1), int64_t(2), S - 1}) {
    if (c < 0 || c >= S)
      continue;
    const int64_t d = m.turnRow(c);
    for (int64_t r : {int64_t(0), int64_t(1), int64_t(2), d - 1, d, d + 1,
                      R - 2, R - 1})
      if (r >= 0 && r < R)
        busiest = std::max(
            busiest, trainedDensePeCycles(K, M, hasBias, relu, m, t, c, r));
  }
  return busiest;
}

int64_t trainedColumnBytes(int64_t L, bool loss, int64_t lag) {
  // Four chunk buffers (seven for the loss), fp32, after the records; CPGD
  // keeps lag more y and gradients (the loss: a second gradient).
  if (loss)
    return 2 * (kTrainedColumnData + 2 * L * (lag > 0 ? 8 : 7));
  return 2 * (kTrainedColumnData + 2 * L * (4 + 2 * lag));
}

WordPlace trainedWeightPlace(int64_t K, int64_t M, bool hasBias, bool relu,
                             const DenseMapping &m, const DenseTraining &t,
                             int64_t k, int64_t n) {
  int64_t ck = (K + m.smear - 1) / m.smear, cm = (M + m.rows - 1) / m.rows;
  int64_t c = k / ck, r = n / cm;
  int64_t lk = chunkSize(K, m.smear, c), lm = chunkSize(M, m.rows, r);
  TrainedDenseMap mm =
      trainedDenseMap(lk, lm, c + 1 == m.smear, hasBias, relu, t);
  // Column t of the block at W + t Lm 2 (docs/execution-model.md).
  int64_t tt = k - c * ck, nn = n - r * cm;
  return {m.x0 + c, m.y0 + r, mm.w + 2 * (tt * lm + nn)};
}

WordPlace trainedBiasPlace(int64_t K, int64_t M, bool relu,
                           const DenseMapping &m, const DenseTraining &t,
                           int64_t n) {
  int64_t cm = (M + m.rows - 1) / m.rows, r = n / cm;
  int64_t lk = chunkSize(K, m.smear, m.smear - 1), lm = chunkSize(M, m.rows, r);
  TrainedDenseMap mm = trainedDenseMap(lk, lm, true, true, relu, t);
  return {m.x0 + m.smear - 1, m.y0 + r, mm.bias + 2 * (n - r * cm)};
}

std::string trainedDenseLimits(int64_t K, int64_t M, const DenseMapping &m) {
  if (m.merge != 1 || m.tiles != 1)
    return "a trained dense layer neither merges lanes nor is cut into bands";
  if (m.precision != Precision::FP32)
    return "weft trains in fp32 only";
  int64_t lk = chunkSize(K, m.smear, 0), lm = chunkSize(M, m.rows, 0);
  int64_t lo = std::min(lk, lm), hi = std::max(lk, lm);
  if (hi > 4095 || lo > 255)
    return "its " + std::to_string(lk) + " x " + std::to_string(lm) +
           " weight blocks exceed the 4095 x 255 elements of one matrix "
           "instruction";
  return "";
}

} // namespace weft::conversion
