//===- DenseMapping.cpp - A dense layer's cost model and layout choice ----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/DenseMapping.h"

#include "weft/Machine/Sliced.h"

#include "weft/Machine/ISA.h"

#include <algorithm>
#include <cmath>

namespace wt = weft::machine;

namespace weft::conversion {

int64_t expectedNonZeros(int64_t lk, double d) {
  if (d >= 1.0)
    return lk;
  if (d <= 0.0)
    return 0;
  return std::min<int64_t>(lk, int64_t(std::ceil(d * double(lk))));
}

int64_t predictCyclesPerSample(int64_t K, int64_t M, const DenseMapping &m,
                               bool bias, const SparseIo &io) {
  int64_t lm = chunkSize(M, m.rows, 0);
  // Per input element, a data task (docs/execution-model.md): the pick,
  // (the fp16 conversion of x,) the multiply-accumulate over the PE's
  // neurons, and the weight-index increment that ends the task. A sparse
  // input's task instead turns the wavelet's index into the weight column
  // (two scalar instructions) before the multiply-accumulate; it runs only
  // for the non-zero elements.
  wt::Opcode mac =
      m.precision == Precision::Mixed ? wt::Opcode::FMACHS : wt::Opcode::FMAC;
  int64_t perElement = io.in ? 1 + 2 + wt::vectorCycles(mac, lm)
                       : m.precision == Precision::Mixed
                           ? 1 + 1 + wt::vectorCycles(mac, lm) + 1
                           : 1 + wt::vectorCycles(mac, lm) + 1;
  // Column c's data tasks per sample: its chunk's expected non-zeros.
  auto elements = [&](int64_t c) {
    int64_t lk = chunkSize(K, m.smear, c);
    if (!io.in)
      return lk;
    return expectedNonZeros(lk, size_t(c) < io.chunkDensity.size()
                                    ? io.chunkDensity[size_t(c)]
                                    : io.inDensity);
  };
  // Per sample, the closeout's control task: pick, the entry's jump, the
  // index reset, then Lm-long vector instructions: forward (or add and
  // forward) and clear on the first and middle columns; partial-sum add,
  // bias add, activation to the output and clear on the last.
  int64_t vecLm = wt::vectorCycles(wt::Opcode::FADD, lm);
  int64_t last = m.smear - 1;
  int64_t lastOps = (m.smear > 1) + bias + 1;
  // The activation: an fp32 vector instruction; for a sparse output the
  // conversion to fp16 and the ReLU in fp16 (two or four elements a cycle).
  int64_t activation = io.out ? wt::vectorCycles(wt::Opcode::FF2H, lm) +
                                    wt::vectorCycles(wt::Opcode::FMAXH, lm)
                              : vecLm;
  // (+1: the launch of the output send on a microthread, or for a sparse
  // output the activation of its send task; that task and the one that
  // sends the closeout take 4 cycles each: pick, two blocks or unblocks,
  // the launch: +7 more; counting the samples in flight, 3 in the
  // closeout and 2 in the closeout's task: +5.)
  int64_t nLast = elements(last);
  int64_t tLast = nLast * perElement + 3 + lastOps * vecLm + activation + 1 +
                  (io.out ? 12 : 0);
  // The first and middle columns: the busiest of them.
  int64_t nMid = 0;
  for (int64_t c = 0; c < last; ++c)
    nMid = std::max(nMid, elements(c));
  int64_t tMid = m.smear > 1 ? nMid * perElement + 3 + 2 * vecLm : 0;
  // The send itself needs Lm datapath cycles, which its microthread only
  // gets while the main thread leaves the datapath free: two cycles per
  // input element (the pick and the multiply-accumulate's startup) plus the
  // last column's idle time when other columns set the pace; what is
  // missing stretches the last column's period.
  // (A sparse output also sends its closeout.)
  int64_t idle = std::max<int64_t>(0, tMid - tLast);
  int64_t deficit =
      std::max<int64_t>(0, lm + (io.out ? 1 : 0) - 2 * nLast - idle);
  // Every column's PE that turns the input chunk into the column also picks
  // the two tasks that send the closeout and restart the copy (4 cycles).
  return std::max(tMid, tLast + deficit) + 4;
}

/// Word addresses of the PE memory map (docs/execution-model.md).
constexpr int64_t kDescriptorBase = 1024; // DSD records
constexpr int64_t kDataBase = 1152;       // accumulator, bias, weights

int64_t weightColumnWords(int64_t lm, bool mixed, bool sliced) {
  unsigned ew = mixed ? 1 : 2;
  if (!sliced)
    return lm * ew;
  return int64_t(wt::SlicedLayout{uint32_t(lm), ew}.footprintWords());
}

int64_t memoryPerPE(int64_t K, int64_t M, const DenseMapping &m,
                    bool slicedWeights) {
  int64_t lk = chunkSize(K, m.smear, 0), lm = chunkSize(M, m.rows, 0);
  int64_t column = weightColumnWords(lm, m.precision == Precision::Mixed,
                                     slicedWeights);
  // Accumulator, bias, weights, and the last column's two output buffers.
  return 2 * (kDataBase + 2 * lm + 2 * lm + lk * column + 2 * 2 * lm);
}

std::optional<DenseMapping> chooseDenseMapping(int64_t K, int64_t M,
                                               Precision p,
                                               const wt::Target &target,
                                               std::string &why) {
  std::optional<DenseMapping> best;
  int64_t bestT = 0;
  // Input chunk c turns into column c at row c, so the layer's footprint is
  // max(smear, rows) rows high.
  int64_t maxS = std::min<int64_t>({K, target.width(), target.height()});
  int64_t maxR = std::min<int64_t>(M, target.height());
  for (int64_t s = 1; s <= maxS; ++s) {
    if (chunkSize(K, s, s - 1) == 0)
      continue; // the last column would get no input
    for (int64_t r = 1; r <= maxR; ++r) {
      if (chunkSize(M, r, r - 1) == 0)
        continue; // the last row would get no neuron
      DenseMapping m;
      m.smear = s;
      m.rows = r;
      m.precision = p;
      if (memoryPerPE(K, M, m) > int64_t(target.memoryBytes()))
        continue;
      int64_t t = predictCyclesPerSample(K, M, m);
      if (!best || t < bestT ||
          (t == bestT && s * r < best->smear * best->rows)) {
        best = m;
        bestT = t;
      }
    }
  }
  if (best)
    return *best;
  // Say what would be needed: the PEs the weights need at the best density.
  int64_t bytesPerWeight = p == Precision::Mixed ? 2 : 4;
  int64_t usable = int64_t(target.memoryBytes()) - 2 * kDataBase;
  int64_t perPE = std::max<int64_t>(1, usable / bytesPerWeight);
  int64_t pes = (K * M + perPE - 1) / perPE;
  why = "a dense layer of " + std::to_string(K) + " inputs and " +
        std::to_string(M) + " neurons needs " +
        std::to_string(K * M * bytesPerWeight) +
        " bytes of weights: at least " + std::to_string(pes) + " PEs of " +
        std::to_string(target.memoryBytes()) + " bytes, but the " +
        std::to_string(target.width()) + "x" + std::to_string(target.height()) +
        " fabric has no such rectangle";
  return std::nullopt;
}

} // namespace weft::conversion
