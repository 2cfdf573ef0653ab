//===- ColumnCost.cpp - The column kernels' cost model --------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Steady-state cycles per sample of a column kernel from the ISA cost table
// (docs/execution-model.md, "Column kernels"): the classic ops' loops, the
// steps of the sequences, and a replay of a column softmax's all-reduce.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ColumnKernel.h"

#include "weft/Kernels/ColumnSequences.h"
#include "weft/Machine/ISA.h"

#include <algorithm>
#include <vector>

namespace wt = weft::machine;

namespace weft::conversion {

using namespace column;

static int64_t scalar(wt::Opcode op) {
  return int64_t(wt::instructionCycles(op, 1, false));
}

int64_t predictColumnKernelCycles(const ColumnKernel &k) {
  using O = wt::Opcode;
  const RowChunks &lay = k.layout;
  const int64_t jump = scalar(O::JMP);
  if (isAxisSoftmax(k.op)) {
    // Every PE loops on its own over the groups of its chunk; the longest
    // chunk sets the pace (docs/execution-model.md, "Softmax over an
    // axis").
    int64_t L = chunkSize(lay.n, lay.rows, 0);
    AxisLoop lp = axisLoop(k, L);
    const bool log = k.op == ColumnOp::AxisLogSoftmax;
    const int64_t G = lp.group;
    int64_t group = scalar(O::MOV32) + wt::vectorCycles(O::FMAXR, G) + wt::vectorCycles(O::FSUB, G) +
                    wt::vectorCycles(O::FEXP, G) + scalar(O::MOV32) + wt::vectorCycles(O::FSUM, G) +
                    (log ? scalar(O::FLOG) + wt::vectorCycles(O::FSUB, G)
                         : scalar(O::FRCP) + wt::vectorCycles(O::FMUL, G));
    int64_t next = scalar(O::ADD16) + scalar(O::CLTU16) + scalar(O::BRT);
    int64_t t = wt::vectorCycles(O::MOV32, L) + scalar(O::MOVI) +
                lp.groups * (group + next) + wt::vectorCycles(O::MOV32, L) + jump;
    if (lp.stride > 1)
      t += scalar(O::MOV16) + lp.blocks * (2 * scalar(O::ADD16) +
                                           scalar(O::CLTU16) + scalar(O::BRT));
    return t;
  }
  if (!isClassic(k.op)) {
    // The sequence, every step over the longest chunk, and the jump.
    int64_t L = chunkSize(lay.n, lay.rows, 0), t = jump;
    std::vector<Step> steps = sequenceOf(k);
    for (const Step &s : steps)
      t += wt::vectorCycles(s.op, L);
    // DSR loads inside the loop (only when a sequence needs more than 12).
    for (const DsrPlan::Use &u : planDsrs(steps).uses)
      t += (u.loadPair ? scalar(O::LDD) + scalar(O::LDS0) : 0) +
           (u.loadS1 ? scalar(O::LDS1) : 0);
    return t;
  }
  if (!isSoftmax(k.op)) {
    // Every PE loops on its own; the longest chunk sets the pace.
    int64_t L = chunkSize(lay.n, lay.rows, 0);
    switch (k.op) {
    case ColumnOp::Relu:
      return wt::vectorCycles(O::FMAX, L) + jump;
    case ColumnOp::Sigmoid:
      return wt::vectorCycles(O::FNEG, L) + wt::vectorCycles(O::FEXP, L) + wt::vectorCycles(O::FADD, L) +
             wt::vectorCycles(O::FRCP, L) + jump;
    default:
      return wt::vectorCycles(O::FMUL, L) + wt::vectorCycles(O::FEXP, L) + wt::vectorCycles(O::FADD, L) +
             wt::vectorCycles(O::FRCP, L) + wt::vectorCycles(O::FADD, L) + wt::vectorCycles(O::FSUB, L) + jump;
    }
  }
  // Softmax: the rows wait for each other twice per sample, so the model
  // replays the column's schedule (docs/execution-model.md, "Column
  // kernels") for a few samples and returns the steady-state interval.
  // Times are the cycles at which each PE's next instruction starts; a
  // wavelet sent by an instruction starting at t is in the CE queue one
  // hop north at t + 4, and r hops south of row 0 at t + 3 + r.
  const int64_t R = lay.rows;
  const bool log = k.op == ColumnOp::LogSoftmax;
  std::vector<int64_t> t(size_t(R), 0), sent(size_t(R), 0);
  const int64_t recvScalar = 1;                // fmax/fadd/mov32 gpr, fabin
  const int64_t sendScalar = wt::vectorCycles(O::MOV32, 1); // mov32 fabout(1), gpr
  auto allReduce = [&]() {
    if (R == 1)
      return;
    // Up the column, last row first.
    for (int64_t r = R - 1; r >= 0; --r) {
      if (r < R - 1)
        t[r] = std::max(t[r], sent[r + 1] + 4) + recvScalar;
      if (r > 0) {
        sent[r] = t[r];
        t[r] += sendScalar;
      }
    }
    // Row 0 multicasts the total down.
    int64_t bcStart = t[0];
    t[0] += sendScalar;
    for (int64_t r = 1; r < R; ++r)
      t[r] = std::max(t[r], bcStart + 3 + r) + recvScalar;
  };
  const int samples = 12;
  std::vector<int64_t> ends;
  for (int s = 0; s < samples; ++s) {
    for (int64_t r = 0; r < R; ++r) {
      int64_t L = chunkSize(lay.n, R, r);
      t[r] += wt::vectorCycles(O::MOV32, L) + scalar(O::MOV32) + wt::vectorCycles(O::FMAXR, L);
    }
    allReduce();
    for (int64_t r = 0; r < R; ++r) {
      int64_t L = chunkSize(lay.n, R, r);
      t[r] += wt::vectorCycles(O::FSUB, L) + wt::vectorCycles(O::FEXP, L) + scalar(O::MOV32) +
              wt::vectorCycles(O::FSUM, L);
    }
    allReduce();
    for (int64_t r = 0; r < R; ++r) {
      int64_t L = chunkSize(lay.n, R, r);
      t[r] += (log ? scalar(O::FLOG) + wt::vectorCycles(O::FSUB, L)
                   : scalar(O::FRCP) + wt::vectorCycles(O::FMUL, L)) +
              jump;
    }
    ends.push_back(t[0]);
  }
  // The schedule becomes periodic after a few samples.
  return (ends[samples - 1] - ends[samples / 2]) / (samples - 1 - samples / 2);
}

} // namespace weft::conversion
