//===- JoinKernel.cpp - Elementwise ops of two streams ----------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// y = a op b on one column of PEs (docs/execution-model.md, "Join kernels"):
// the per-PE program, its cost model and its memory bound.
//
// Every piece of work runs on a microthread, and each microthread's
// completion activates the local task that launches its next instruction:
//
//   task 33 (utid 0): copy     fifo <- the buffered input (one chunk)
//   task 34 (utid 1): compute  out <- unbuffered op fifo       (one step)
//   or, for the two-step ops,
//   task 34 (utid 1): step 1   buf <- f(unbuffered input)
//   task 35 (utid 2): step 2   out <- buf op fifo
//
// The main thread only picks these tasks and launches (one cycle each), so
// it never waits: the copy is relaunched as soon as it finishes a chunk,
// whatever the compute is waiting for, and takes the buffered input off the
// fabric until the FIFO is full. That independence is the point of the
// kernel: a long-running main-thread task would keep the picker from
// relaunching the copy.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/JoinKernel.h"

#include "WaveletBuilder.h"
#include "weft/Conversion/DenseLayer.h"

#include "fabric/FabricOps.h"
#include "wavelet/WaveletOps.h"

#include "weft/Target/ISA.h"
#include "weft/Target/Target.h"

#include <algorithm>
#include <vector>

using namespace mlir;
namespace wt = weft::target;
namespace fab = weft::fabric;
namespace wv = weft::wavelet;

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

namespace {

// The memory map of the column kernels (lib/Conversion/ColumnKernels.cpp,
// whose constants are file-local; copied here): task table in words
// 0..639, code from slot 320, DSD records from word 1024, data from 1152.
constexpr int64_t kDsdBase = 1024;
constexpr int64_t kDataBase = 1152;

// Local tasks.
constexpr int64_t kInitTask = 32, kCopyTask = 33, kStep1Task = 34,
                  kStep2Task = 35;

// DSD records (index i at kDsdBase + 4 i) and the DSR numbers they go to.
enum Rec : int64_t {
  kRecFifo = 0,  // fifo: DDSR 0 (push, the copy) and S1DSR 0 (pop)
  kRecIn,        // fabin: the buffered input, S0DSR 1 (utid 0, ac 33)
  kRecOut,       // fabout: the result, DDSR 2 (the last step's utid)
  kRecOther,     // fabin: the unbuffered input, S0DSR 2 or 3
  kRecBuf,       // mem1d: one chunk of scratch (two-step ops), DDSR 3 / S0DSR 2
};
constexpr int32_t kDsrFifo = 0, kDsrCopy = 1, kDsrLast = 2, kDsrFirst = 3;

/// One vector instruction of the kernel, run on microthread `utid`, which
/// its task launches; its completion activates `next`.
struct Step {
  wt::Opcode op;
  int utid = 0;
  int64_t task = 0, next = 0;
  bool push = false, pop = false; // the FIFO as destination / source
};

/// The copy and the compute steps of a kernel. The result is a op b
/// whichever input is buffered: the compute's first source is the
/// unbuffered input (or step 1's scratch), its second source the FIFO, and
/// the ops that do not commute with that order are rewritten exactly:
///   Sub, a buffered:  (-b) + a    (x - y is defined as x + (-y))
///   Div, b buffered:  the copy pushes 1/b; a * fifo
///   Div, a buffered:  step 1 1/b into scratch; (1/b) * a
struct JoinPlan {
  Step copy;
  std::vector<Step> compute;
};

bool isTwoStep(const JoinKernel &k) {
  return k.buffered == 0 && (k.op == JoinOp::Sub || k.op == JoinOp::Div);
}

JoinPlan planOf(const JoinKernel &k) {
  using O = wt::Opcode;
  JoinPlan p;
  bool rcpCopy = k.op == JoinOp::Div && k.buffered == 1;
  p.copy = {rcpCopy ? O::FRCP : O::MOV32, 0, kCopyTask, kCopyTask,
            /*push=*/true, false};
  if (isTwoStep(k)) {
    bool sub = k.op == JoinOp::Sub;
    p.compute.push_back(
        {sub ? O::FNEG : O::FRCP, 1, kStep1Task, kStep2Task, false, false});
    p.compute.push_back(
        {sub ? O::FADD : O::FMUL, 2, kStep2Task, kStep1Task, false, true});
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
  p.compute.push_back({op, 1, kStep1Task, kStep1Task, false, true});
  return p;
}

/// The longest chunk.
int64_t chunkLength(const JoinKernel &k) {
  return chunkSize(k.layout.n, k.layout.rows, 0);
}

using DirSet = uint8_t;

class Emitter : WaveletBuilder {
public:
  Emitter(OpBuilder &b, Location loc, const JoinKernel &k, StringRef name,
          StringRef layer, const RouteTable &routes)
      : WaveletBuilder(b, loc), k(k), name(name), layer(layer), routes(routes) {
  }
  /// The PEs of rows [r0, r1), all with chunks of L elements.
  void emitGroup(int64_t r0, int64_t r1, int64_t L);

private:
  void dsd(StringRef sym, Rec index, wv::DsdKind kind,
           ArrayRef<NamedAttribute> fields) {
    dsdAt(sym, kDsdBase + 4 * index, kind, fields);
  }
  /// A local task whose only instruction launches `s` and ends the task.
  void launchTask(StringRef sym, const Step &s, ArrayRef<int32_t> args,
                  bool active);

  const JoinKernel &k;
  StringRef name, layer;
  const RouteTable &routes;
};

void Emitter::launchTask(StringRef sym, const Step &s, ArrayRef<int32_t> args,
                         bool active) {
  wv::TaskOp t = task(sym, wv::TaskKind::local, s.task, active);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&t.getBody().front());
  inst(wt::info(s.op).mnemonic, args, /*term=*/true);
}

void Emitter::emitGroup(int64_t r0, int64_t r1, int64_t L) {
  MLIRContext *ctx = b.getContext();
  const int64_t h = r1 - r0, y = k.layout.y0 + r0;
  std::string sym =
      (name + "_r" + Twine(r0) + (h > 1 ? "_" + Twine(r1 - 1) : Twine())).str();
  OperationState st(loc, h > 1 ? wv::PeGroupOp::getOperationName()
                               : wv::PeOp::getOperationName());
  st.addAttribute(SymbolTable::getSymbolAttrName(), b.getStringAttr(sym));
  if (h > 1) {
    st.addAttribute("rect", fab::RectAttr::get(ctx, k.x, y, 1, h));
  } else {
    st.addAttribute("x", b.getI64IntegerAttr(k.x));
    st.addAttribute("y", b.getI64IntegerAttr(y));
  }
  st.addAttribute("layer", b.getStringAttr(layer));
  st.addRegion()->emplaceBlock();
  Operation *pe = b.create(st);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&pe->getRegion(0).front());

  // Both inputs from the west to the ramp, the result from the ramp east.
  routesAt(routes, k.x, y);

  const JoinPlan plan = planOf(k);
  const bool two = plan.compute.size() == 2;
  const Step &last = plan.compute.back();
  const int64_t inColor = k.buffered ? k.colorB : k.colorA;
  const int64_t otherColor = k.buffered ? k.colorA : k.colorB;

  // The FIFO of fifoSamples chunks, then (two-step ops) the scratch chunk.
  const int64_t fifoWords = 2 * k.fifoSamples * L;
  dsd("fifo", kRecFifo, wv::DsdKind::fifo,
      {i64("length", k.fifoSamples * L), i64("base", kDataBase)});
  dsd("in", kRecIn, wv::DsdKind::fabin,
      {i64("length", L), i64("color", inColor), i64("utid", plan.copy.utid),
       i64("ac", plan.copy.next)});
  dsd("out", kRecOut, wv::DsdKind::fabout,
      {i64("length", L), i64("color", k.outColor), i64("utid", last.utid),
       i64("ac", last.next)});
  if (two) {
    const Step &first = plan.compute.front();
    dsd("other", kRecOther, wv::DsdKind::fabin,
        {i64("length", L), i64("color", otherColor), i64("utid", first.utid),
         i64("ac", first.next)});
    dsd("buf", kRecBuf, wv::DsdKind::mem1d,
        {i64("length", L), i64("base", kDataBase + fifoWords)});
  } else {
    // Read by the compute, whose fabout launches and activates.
    dsd("other", kRecOther, wv::DsdKind::fabin,
        {i64("length", L), i64("color", otherColor)});
  }

  using K = wt::OperandKind;
  using RF = wv::RegFile;
  const int32_t dsrK = int32_t(K::Dsr), ddsr = int32_t(K::Ddsr),
                s0 = int32_t(K::S0dsr), s1 = int32_t(K::S1dsr);

  // init: every DSR once (loading the fifo record resets the FIFO, so it is
  // never loaded again), then start the copy and the compute.
  {
    wv::TaskOp t = task("init", wv::TaskKind::local, kInitTask, true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&t.getBody().front());
    dsrLoad(RF::ddsr, kDsrFifo, "fifo");
    dsrLoad(RF::s1dsr, kDsrFifo, "fifo");
    dsrLoad(RF::s0dsr, kDsrCopy, "in");
    dsrLoad(RF::ddsr, kDsrLast, "out");
    if (two) {
      dsrLoad(RF::s0dsr, kDsrLast, "buf");
      dsrLoad(RF::ddsr, kDsrFirst, "buf");
      dsrLoad(RF::s0dsr, kDsrFirst, "other");
    } else {
      dsrLoad(RF::s0dsr, kDsrLast, "other");
    }
    inst("activate", {0, int32_t(kCopyTask)});
    inst("activate", {0, int32_t(kStep1Task)});
    inst("nop", {}, /*term=*/true);
  }
  // copy: fifo <- in (1 / in for Div with b buffered).
  launchTask("copy", plan.copy, {ddsr, kDsrFifo, s0, kDsrCopy}, false);
  if (two) {
    // step 1: buf <- -other (Sub) or 1 / other (Div); step 2: out <- buf
    // op fifo.
    launchTask("step1", plan.compute[0], {ddsr, kDsrFirst, s0, kDsrFirst},
               false);
    launchTask("step2", plan.compute[1], {dsrK, kDsrLast, s1, kDsrFifo},
               false);
  } else {
    // out <- other op fifo.
    launchTask("compute", plan.compute[0], {dsrK, kDsrLast, s1, kDsrFifo},
               false);
  }
}

} // namespace

int64_t joinMemoryPerPE(const JoinKernel &k) {
  const int64_t L = chunkLength(k);
  int64_t words = kDataBase + 2 * L * std::max<int64_t>(k.fifoSamples, 0) +
                  (isTwoStep(k) ? 2 * L : 0);
  return 2 * words;
}

int64_t maxJoinFifoSamples(const JoinKernel &k, int64_t memoryBytes) {
  const int64_t L = chunkLength(k);
  if (L < 1)
    return 0;
  int64_t freeWords = memoryBytes / 2 - kDataBase - (isTwoStep(k) ? 2 * L : 0);
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

LogicalResult emitJoinKernel(OpBuilder &b, Location loc, const JoinKernel &k,
                             StringRef name, StringRef layer,
                             const RouteTable *routes) {
  const RowChunks &lay = k.layout;
  const char *op = joinOpName(k.op);
  if (lay.n < 1 || lay.rows < 1 || lay.y0 < 0 || k.x < 0)
    return emitError(loc) << "join kernel " << name << " (" << op << ") has "
                          << lay.n << " elements on " << lay.rows
                          << " rows at (" << k.x << ", " << lay.y0
                          << "); it needs at least one of each";
  const int64_t L = chunkLength(k);
  if (chunkSize(lay.n, lay.rows, lay.rows - 1) < 1)
    return emitError(loc) << "join kernel " << name << ": " << lay.rows
                          << " rows leave the last chunk of " << lay.n
                          << " elements (chunks of " << L << ") empty";
  if (L > wt::Arch::kMaxVectorLength)
    return emitError(loc) << "join kernel " << name << ": a chunk of " << L
                          << " elements exceeds the "
                          << wt::Arch::kMaxVectorLength
                          << "-element vector length of a DSD";
  if (k.buffered != 0 && k.buffered != 1)
    return emitError(loc) << "join kernel " << name << ": buffered input "
                          << k.buffered << " is neither 0 (a) nor 1 (b)";
  if (k.fifoSamples < 1)
    return emitError(loc)
           << "join kernel " << name << ": a FIFO of " << k.fifoSamples
           << " chunks cannot hold the buffered input ("
           << (k.buffered ? "b" : "a")
           << "); without one whole chunk the fork feeding both inputs "
              "can deadlock";
  auto program = dyn_cast_or_null<wv::ProgramOp>(
      b.getInsertionBlock() ? b.getInsertionBlock()->getParentOp() : nullptr);
  if (!program)
    return emitError(loc) << "join kernel " << name
                          << " must be emitted inside a wavelet.program";
  wt::Target target = program.getTargetAttr().getModel();
  if (k.x >= int64_t(target.width()) ||
      lay.y0 + lay.rows > int64_t(target.height()))
    return emitError(loc) << "join kernel " << name << " at column " << k.x
                          << ", rows " << lay.y0 << ".." << lay.y0 + lay.rows
                          << " does not fit the " << target.width() << "x"
                          << target.height() << " fabric";
  if (k.fifoSamples * L > wt::Arch::kMaxVectorLength)
    return emitError(loc) << "join kernel " << name << ": a FIFO of "
                          << k.fifoSamples << " chunks of " << L
                          << " elements exceeds the "
                          << wt::Arch::kMaxVectorLength
                          << "-element capacity of a fifo DSD (at most "
                          << maxJoinFifoSamples(k, INT64_MAX / 4) << ")";
  const int64_t bytes = joinMemoryPerPE(k), have = 2 * target.memoryWords();
  if (bytes > have)
    return emitError(loc) << "join kernel " << name << ": a FIFO of "
                          << k.fifoSamples << " chunks of " << L
                          << " elements needs " << bytes
                          << " bytes of PE memory, more than the " << have
                          << " available (at most "
                          << maxJoinFifoSamples(k, have) << " chunks fit)";
  const int64_t colors[] = {k.colorA, k.colorB, k.outColor};
  const char *what[] = {"a", "b", "the result"};
  for (int i = 0; i < 3; ++i) {
    if (!target.isRoutableColor(colors[i]))
      return emitError(loc) << "join kernel " << name << ": color "
                            << colors[i] << " of " << what[i]
                            << " is not routable on a target with "
                            << target.routableColors() << " colors";
    for (int j = 0; j < i; ++j)
      if (colors[i] == colors[j])
        return emitError(loc) << "join kernel " << name << " uses color "
                              << colors[i] << " for both " << what[j]
                              << " and " << what[i]
                              << " (the three colors must differ)";
  }

  // Without the fabric.route ops of a routed program (unit tests build
  // kernels directly), the column's own routes.
  RouteTable own;
  if (!routes) {
    auto add = [&](const RoutePlan &plan, int64_t color) {
      for (const auto &[pe, sw] : plan.get())
        own[pe][color] = sw;
    };
    add(columnInputs(k.x, lay.y0, lay.rows), k.colorA);
    add(columnInputs(k.x, lay.y0, lay.rows), k.colorB);
    add(columnResults(k.x, lay.y0, lay.rows), k.outColor);
    routes = &own;
  }
  Emitter e(b, loc, k, name, layer, *routes);
  int64_t r0 = 0;
  for (int64_t r = 1; r <= lay.rows; ++r) {
    if (r < lay.rows &&
        chunkSize(lay.n, lay.rows, r) == chunkSize(lay.n, lay.rows, r0))
      continue;
    e.emitGroup(r0, r, chunkSize(lay.n, lay.rows, r0));
    r0 = r;
  }
  return success();
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
  const int64_t cap = std::max<int64_t>(k.fifoSamples, 1) * L;

  struct Micro {
    bool active = false, finished = false;
    int64_t startup = 0, busy = 0, done = 0;
    const Step *step = nullptr;
  };
  Micro micro[8];
  uint64_t active = (uint64_t(1) << kCopyTask) | (uint64_t(1) << kStep1Task);
  int64_t pickLast = kInitTask, fifo = 0, microLast = 7;
  const Step *running = nullptr; // the task picked last cycle
  std::vector<int64_t> ends;
  // Enough samples for the FIFO to settle, then a window to average over.
  const int64_t samples = 24 + 2 * std::min<int64_t>(k.fifoSamples, 64);
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
        for (const Step &s : steps)
          if (s.task == id)
            running = &s;
        break;
      }
    } else {
      // The launch (its utid is free: it was activated by its completion).
      Micro &m = micro[running->utid];
      m = Micro();
      m.active = true;
      m.step = running;
      m.startup = wt::info(running->op).startup;
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
        if ((m.step->pop && fifo == 0) || (m.step->push && fifo >= cap))
          continue;
        fifo += (m.step->push ? 1 : 0) - (m.step->pop ? 1 : 0);
        m.finished = ++m.done >= L;
        m.busy = wt::info(m.step->op).cyclesPerGroup - 1;
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
