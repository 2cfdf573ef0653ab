//===- JoinKernel.cpp - Elementwise ops of two streams, the plan ----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The join kernel's plan (its copy and compute steps), cost model and
// memory bound; lib/Conversion/FabricToWavelet/EmitJoinKernel.cpp emits it.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/JoinKernel.h"

#include "weft/Kernels/ColumnSequences.h"

#include "weft/Machine/ISA.h"
#include "weft/Machine/Target.h"

#include <algorithm>
#include <vector>

namespace wt = weft::machine;

namespace weft::conversion {

const char *joinOpName(JoinOp op) {
  switch (op) {
  case JoinOp::Add:
    return "add";
  case JoinOp::Sub:
    return "sub";
  case JoinOp::Mul:
    return "mul";
  case JoinOp::Div:
    return "div";
  case JoinOp::Max:
    return "max";
  case JoinOp::Min:
    return "min";
  }
  return "?";
}

namespace join {

bool isBroadcast(const JoinKernel &k) { return k.broadcast >= 0; }

bool isTwoStep(const JoinKernel &k) {
  return isBroadcast(k) ||
         (k.buffered == 0 && (k.op == JoinOp::Sub || k.op == JoinOp::Div));
}

JoinPlan planOf(const JoinKernel &k) {
  using O = wt::Opcode;
  JoinPlan p;
  bool rcpCopy = k.op == JoinOp::Div && k.buffered == 1;
  p.copy = {
      rcpCopy ? O::FRCP : O::MOV32, 0, kCopyTask, kCopyTask, kFifoIn, kNoFifo};
  p.start = {kCopyTask, kStep1Task};
  if (isBroadcast(k)) {
    // Step 1 receives the chunk's Lc channel values into the scratch; step
    // 2 multiplies them, repeated per pixel, by the FIFO. Neither reads
    // the scratch while the other writes it: they hand over.
    p.compute.push_back({O::MOV32, 1, kStep1Task, kStep2Task, kNoFifo,
                         kNoFifo, joinBroadcastLength(k)});
    p.compute.push_back(
        {O::FMUL, 2, kStep2Task, kStep1Task, kNoFifo, kFifoIn});
    return p;
  }
  if (isTwoStep(k)) {
    // (No ReLU can follow: #fabric.join and emitJoinKernel refuse one.)
    bool sub = k.op == JoinOp::Sub;
    p.compute.push_back(
        {sub ? O::FNEG : O::FRCP, 1, kStep1Task, kStep2Task, kNoFifo, kNoFifo});
    p.compute.push_back(
        {sub ? O::FADD : O::FMUL, 2, kStep2Task, kStep1Task, kNoFifo, kFifoIn});
    return p;
  }
  O op = O::FADD;
  switch (k.op) {
  case JoinOp::Add:
    op = O::FADD;
    break;
  case JoinOp::Sub:
    op = O::FSUB;
    break;
  case JoinOp::Mul:
  case JoinOp::Div:
    op = O::FMUL;
    break;
  case JoinOp::Max:
    op = O::FMAX;
    break;
  case JoinOp::Min:
    op = O::FMIN;
    break;
  }
  if (k.relu) {
    // relu fifo <- other op fifo; out <- max(+0, relu fifo).
    p.compute.push_back({op, 1, kStep1Task, kStep1Task, kFifoRelu, kFifoIn});
    p.compute.push_back(
        {O::FMAX, 2, kStep2Task, kStep2Task, kNoFifo, kFifoRelu});
    p.start.push_back(kStep2Task);
    return p;
  }
  p.compute.push_back({op, 1, kStep1Task, kStep1Task, kNoFifo, kFifoIn});
  return p;
}

/// The longest chunk.
int64_t chunkLength(const JoinKernel &k) {
  return chunkSize(k.layout.n, k.layout.rows, 0);
}

} // namespace join

using namespace join;

int64_t joinBroadcastLength(const JoinKernel &k) {
  if (!isBroadcast(k) || k.pixels < 1)
    return 0;
  return chunkLength(k) / k.pixels;
}

std::vector<int64_t> joinBroadcastDims(const JoinKernel &k) {
  const int64_t lc = joinBroadcastLength(k);
  if (lc < 1 || lc > 4095)
    return {};
  // The pixels as p1 p2 p3, each at most 255: the largest divisor first.
  for (int64_t p1 = std::min<int64_t>(k.pixels, 255); p1 >= 1; --p1) {
    if (k.pixels % p1)
      continue;
    int64_t rest = k.pixels / p1;
    for (int64_t p2 = std::min<int64_t>(rest, 255); p2 >= 1; --p2)
      if (rest % p2 == 0 && rest / p2 <= 255)
        return {lc, p1, p2, rest / p2};
  }
  return {};
}
using column::kDataBase;
using column::kDsdBase;

int64_t joinFifoCapacity(const JoinKernel &k) {
  const int64_t L = chunkLength(k);
  if (k.fifoPixels > 0 && k.pixels > 0)
    return k.fifoPixels * std::max<int64_t>(1, L / k.pixels);
  return std::max<int64_t>(k.fifoSamples, 0) * L;
}

/// Rows a feature-map FIFO holds beyond those the fast input runs ahead:
/// the row in flight, and two more so that the fork keeps feeding the fast
/// branch while the slow one computes a row and sends the one before (its
/// last kernel's two output buffers). With one, the deadlock argument
/// holds but ResNet-18's pipeline runs 27 % below its slowest kernel; with
/// three, within 1 % (docs/execution-model.md).
constexpr int64_t kJoinSlackRows = 3;

/// The most rows of `fast` ready (`strict`: strictly earlier) while `slow`
/// waits for one of its rows, beyond that row.
static int64_t rowsAhead(const std::vector<int64_t> &slow,
                         const std::vector<int64_t> &fast, bool strict) {
  int64_t rows = 0;
  size_t produced = 0;
  for (size_t h = 0; h < slow.size(); ++h) {
    while (produced < fast.size() &&
           (strict ? fast[produced] < slow[h] : fast[produced] <= slow[h]))
      ++produced;
    rows = std::max(rows, int64_t(produced) - int64_t(h));
  }
  return rows;
}

int64_t joinFifoRows(const std::vector<int64_t> &slow,
                     const std::vector<int64_t> &fast) {
  // Rows ready together with slow's are counted as ahead: a window's
  // output row takes its compute time after its last input row.
  if (rowsAhead(slow, fast, /*strict=*/true) == 0)
    return 0;
  return rowsAhead(slow, fast, /*strict=*/false) + kJoinSlackRows;
}

/// Words after the FIFO: the two-step ops' scratch chunk, or the ReLU's
/// FIFO and its zero.
static int64_t extraWords(const JoinKernel &k) {
  if (isBroadcast(k))
    return 2 * joinBroadcastLength(k);
  return (isTwoStep(k) ? 2 * chunkLength(k) : 0) +
         (k.relu ? 2 * kReluFifo + 2 : 0);
}

int64_t joinMemoryPerPE(const JoinKernel &k) {
  int64_t words = kDataBase + 2 * joinFifoCapacity(k) + extraWords(k);
  return 2 * words;
}

int64_t maxJoinFifoSamples(const JoinKernel &k, int64_t memoryBytes) {
  const int64_t L = chunkLength(k);
  if (L < 1)
    return 0;
  int64_t freeWords = memoryBytes / 2 - kDataBase - extraWords(k);
  int64_t byMemory = freeWords > 0 ? freeWords / (2 * L) : 0;
  // The fifo record's 15-bit capacity counts elements.
  int64_t byField = wt::Arch::kMaxVectorLength / L;
  return std::max<int64_t>(0, std::min(byMemory, byField));
}

int64_t joinFifoSamplesFor(const JoinKernel &k, int64_t latencyDifference,
                           int64_t interval, int64_t memoryBytes) {
  interval = std::max<int64_t>(interval, 1);
  int64_t want =
      (std::max<int64_t>(latencyDifference, 0) + interval - 1) / interval + 1;
  return std::min(want, maxJoinFifoSamples(k, memoryBytes));
}

//===----------------------------------------------------------------------===//
// Cost model
//===----------------------------------------------------------------------===//

int64_t predictJoinKernelCycles(const JoinKernel &k) {
  // A replay of one PE with the longest chunk, cycle by cycle, under the
  // rules of docs/architecture.md §6 and §10.2 as the simulator applies
  // them: a pick (1 cycle) when no task runs, round robin over the ids after
  // the last pick; the task's launch (1 cycle) ends it; a launched
  // microthread spends its startup cycles without the datapath from the
  // next cycle on, then issues one element per group when its FIFO operand
  // allows; one group per cycle in total, round robin by utid, a group of c
  // cycles holding the datapath for c; activations by a completion are
  // visible to the picker in the next cycle. The inputs are always at hand
  // and the output always drained, so the replay is the kernel's own pace.
  const int64_t L = chunkLength(k);
  if (L < 1)
    return 0;
  const JoinPlan plan = planOf(k);
  std::vector<Step> steps = plan.compute;
  steps.insert(steps.begin(), plan.copy);
  const int64_t cap = std::max<int64_t>(joinFifoCapacity(k), 1);
  // Capacities and counts by Fifo.
  const int64_t caps[2] = {cap, kReluFifo};
  int64_t fifo[2] = {0, 0};

  struct Micro {
    bool active = false, finished = false;
    int64_t startup = 0, busy = 0, done = 0;
    const Step *step = nullptr;
  };
  // The steps by task id, and their timings.
  const Step *byTask[64] = {};
  std::vector<int64_t> startupOf, groupOf, lengthOf;
  for (const Step &s : steps) {
    if (!byTask[s.task & 63])
      byTask[s.task & 63] = &s;
    startupOf.push_back(wt::info(s.op).startup);
    groupOf.push_back(wt::info(s.op).cyclesPerGroup);
    lengthOf.push_back(s.length > 0 ? s.length : L);
  }
  Micro micro[8];
  uint64_t active = 0;
  for (int64_t task : plan.start)
    active |= uint64_t(1) << task;
  int64_t pickLast = kInitTask, microLast = 7;
  const Step *running = nullptr; // the task picked last cycle
  std::vector<int64_t> ends;
  // Enough samples for the FIFO to settle, then a window to average over.
  const int64_t samples =
      8 + 2 * std::min<int64_t>((cap + L - 1) / L, 64);
  for (int64_t t = 0; int64_t(ends.size()) < samples && t < 100'000'000;
       ++t) {
    uint64_t set = 0, clear = 0;
    bool holds = false;
    for (const Micro &m : micro)
      holds |= m.active && m.busy > 0;
    int launched = -1;
    if (!running) {
      for (int64_t i = 1; i <= 64; ++i) {
        int64_t id = (pickLast + i) & 63;
        if (!(active & (uint64_t(1) << id)))
          continue;
        clear |= uint64_t(1) << id;
        pickLast = id;
        running = byTask[id];
        break;
      }
    } else {
      // The launch (its utid is free: it was activated by its completion).
      Micro &m = micro[running->utid];
      m = Micro();
      m.active = true;
      m.step = running;
      m.startup = startupOf[size_t(running - steps.data())];
      launched = running->utid;
      running = nullptr;
    }
    auto retire = [&](Micro &m) {
      m.active = false;
      set |= uint64_t(1) << m.step->next;
      if (m.step == &steps.back())
        ends.push_back(t);
    };
    for (int u = 0; u < 8; ++u) {
      Micro &m = micro[u];
      if (!m.active || u == launched)
        continue;
      if (m.busy > 0) {
        if (--m.busy == 0 && m.finished)
          retire(m);
      } else if (m.startup > 0) {
        --m.startup;
      }
    }
    if (!holds) {
      for (int i = 1; i <= 8; ++i) {
        int u = int((microLast + i) & 7);
        Micro &m = micro[u];
        if (!m.active || u == launched || m.busy > 0 || m.startup > 0)
          continue;
        const Step &s = *m.step;
        if ((s.pop != kNoFifo && fifo[s.pop] == 0) ||
            (s.push != kNoFifo && fifo[s.push] >= caps[s.push]))
          continue;
        if (s.push != kNoFifo)
          ++fifo[s.push];
        if (s.pop != kNoFifo)
          --fifo[s.pop];
        m.finished = ++m.done >= lengthOf[size_t(m.step - steps.data())];
        m.busy = groupOf[size_t(m.step - steps.data())] - 1;
        if (m.finished && m.busy == 0)
          retire(m);
        microLast = u;
        break;
      }
    }
    active = (active & ~clear) | set;
  }
  // The steady state: the mean interval over the second half.
  size_t s = ends.size(), h = s / 2;
  if (s < 4)
    return 0;
  double mean = double(ends[s - 1] - ends[h]) / double(s - 1 - h);
  return int64_t(mean + 0.5);
}

} // namespace weft::conversion
