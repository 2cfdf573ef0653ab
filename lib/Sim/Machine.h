//===- Machine.h - Simulator state (internal) -------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The state of one PE and the per-cycle step that both simulator modes share.
// A cycle has two phases (docs/architecture.md §3):
//
//  step()    decides from start-of-cycle state. A PE changes only its own
//            registers, memory and bits; dequeues are only counted (`pops`);
//            wavelets for a queue go into that queue's single-writer latch,
//            which may belong to a neighbour.
//  commit()  applies the counted dequeues and the latched wavelets.
//
// Because a PE reads nothing of a neighbour in step() but its queue counts,
// and those change only in commit(), PEs can be stepped in any order and on
// any number of threads with the same result.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SIM_MACHINE_H
#define WEFT_LIB_SIM_MACHINE_H

#include "weft/Binary/Binary.h"
#include "weft/Sim/Simulator.h"
#include "weft/Machine/DSD.h"
#include "weft/Machine/ISA.h"
#include "weft/Machine/Target.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace weft::sim::detail {

using machine::Dir;
using machine::Dsd;
using machine::ElemType;
using machine::Instruction;
using machine::Opcode;
using machine::OpcodeInfo;
using machine::PayloadFormat;
using machine::Xdsd;

class Engine;
struct Pe;

/// A latch holds the one wavelet a link delivers in a cycle (bit 63 = full).
constexpr uint64_t kLatchFull = uint64_t(1) << 63;

/// Decoded instructions of a code image, shared by the PEs that run it.
struct DecodeCache {
  enum : uint8_t { Uncached = 0, Valid = 1, Invalid = 2 };
  std::vector<Instruction> insts;
  std::vector<uint8_t> status;
  /// cachedBefore[s]: slots before slot s whose status is not Uncached.
  std::vector<uint32_t> cachedBefore;
  /// Whether a slot in [lo, hi] (inclusive) holds image words, so that
  /// writing it makes the cache stale.
  bool anyCached(uint64_t lo, uint64_t hi) const {
    uint64_t n = status.size();
    if (lo >= n)
      return false;
    hi = hi < n ? hi + 1 : n;
    return cachedBefore[hi] != cachedBefore[lo];
  }
};

/// One resolved operand of an executing instruction. What every element
/// reads comes first (one cache line), the 4-D shape and FIFO record after.
struct Operand {
  enum Kind : uint8_t { None, Gpr, Imm, Mem, Fabin, Fabout, Fifo };
  Kind kind = None;
  /// Element width in words (1 or 2) for the type this operand is used as.
  uint8_t ew = 1;
  uint8_t reg = 0;       ///< Gpr: register; Fifo: DSR number
  uint8_t dsrFile = 0;   ///< Fifo: 0 S0, 1 S1, 2 D
  bool prng = false;     ///< Imm: reads the PRNG
  bool is4d = false;
  /// Mem (mem1d): a sliced vector (weft/Machine/Sliced.h).
  bool sliced = false;
  // Fabric vectors.
  uint8_t color = 0;
  PayloadFormat format = PayloadFormat::Dense32;
  bool term = false, ctrl = false;
  /// fabout: a sparse send (zeros are not sent); `forwarded` holds the index
  /// of the element just read from a sparse16 fabin, when `hasForwarded`.
  bool nz = false, hasForwarded = false;
  uint16_t forwarded = 0;
  bool acEn = false;
  uint8_t ac = 0;
  /// dense16x2: fabin has used the low half of the head wavelet; fabout has
  /// a low half waiting for its high half.
  bool half = false;
  bool ue = false;
  uint8_t utid = 0;
  uint16_t index = 0;
  uint16_t pendingLow = 0;
  uint32_t value = 0;    ///< Imm bits; Gpr value captured at start
  int64_t length = -1;   ///< -1: has no length
  // Mem: element i at base + sum(i_k * stride_k) (words).
  int64_t base = 0;
  int64_t stride[4] = {0, 0, 0, 0};
  uint32_t len[4] = {1, 1, 1, 1};
  uint64_t record = 0; ///< Fifo: the record, checked at each push/pop
};

/// An executing Vec, Un or Cmp instruction (main thread or microthread).
/// The scalars every cycle of it touches come first, the operands after.
struct Exec {
  bool active = false;
  bool finished = false;  ///< all elements done; retires when busy ends
  bool scalar = false;    ///< GPR destination, one element
  bool reduction = false;
  bool compare = false;
  bool readsDst = false;
  bool earlyEnd = false;
  /// src0 is a sliced vector: `done` is the position of the next non-zero
  /// lane (architecture §8.3, "Sliced vectors").
  bool sliced = false;
  uint8_t startupLeft = 0;
  uint32_t busyLeft = 0;
  uint32_t n = 0, done = 0;
  uint32_t acc = 0;       ///< reductions: running value
  const OpcodeInfo *info = nullptr;
  /// Why the last attempted group could not issue (for the hang report).
  const char *waitReason = nullptr;
  uint8_t waitColor = 0;
  Instruction inst;
  Operand dst, src0, src1;
};

struct FifoState {
  bool valid = false;
  uint64_t record = 0;
  uint32_t base = 0, cap = 0, rd = 0, wr = 0, count = 0;
  bool pushEn = false, popEn = false;
  uint8_t pushAc = 0, popAc = 0;
};

/// A loaded DSR: the record as it was in memory (for stores and FIFO checks)
/// and decoded (for operand resolution).
struct DsrEntry {
  uint64_t raw = 0;
  Dsd dsd;
};

/// The state of 4-D addressing: XDSRs and stride registers. Allocated when
/// a PE first loads either, so that PEs with only 1-D and fabric vectors
/// (every dense layer) do not carry it.
struct FourDState {
  Xdsd xdsr[6];
  uint64_t xdsrRaw[6] = {};
  int16_t strideReg[6] = {};
};

struct TraceEvent {
  uint64_t ts, dur;
  uint32_t pe;     ///< dense PE index
  uint8_t kind;    ///< 0 task, 1 wavelet on a link
  uint8_t a, b;    ///< task: id, kind; wavelet: output dir, color
};

/// A color's route as the router reads it. For a positioned route
/// (docs/architecture.md §4.4) the sets are the unions over its positions,
/// which is all the arrival checks need, and `position` is 1 + the index of
/// its state in Pe::positions; 0 for a static route.
struct PeRoute {
  machine::DirSet inputs = 0, outputs = 0;
  uint8_t position = 0;
};

/// The router state of one positioned route of a PE (§4.4): the position it
/// is in and the wavelets left in it. The positions themselves belong to
/// the program's image, which the PEs of a group share; every PE has its
/// own state.
struct PositionState {
  const binary::RoutePosition *positions = nullptr;
  uint32_t left = 0; ///< wavelets left in the current position
  uint8_t numPositions = 0;
  uint8_t current = 0; ///< 0 .. numPositions - 1
  /// The current position's sets (a copy, so that the router reads one
  /// line).
  machine::DirSet inputs = 0, outputs = 0;
  void enter(unsigned k) {
    current = uint8_t(k);
    left = positions[k].count;
    inputs = positions[k].inputs;
    outputs = positions[k].outputs;
  }
};

/// What an engine collects while stepping its PEs in a cycle, besides the
/// PEs' own state (one per engine; a band of a threaded run is an engine of
/// its own).
struct alignas(64) ThreadOut {
  std::vector<uint32_t> woken;      ///< PEs whose latches were written
  std::vector<uint32_t> hostOut;    ///< edge PEs that sent to a host port
  std::vector<uint32_t> progressed; ///< PEs that made progress
  std::vector<TraceEvent> trace;
  /// First program error of this cycle, by PE index.
  uint32_t errorPe = UINT32_MAX;
  std::string error;
  /// Wavelets this thread's router steps sent, per color, over the whole
  /// run (never cleared; stats() adds the threads up). Counting them here
  /// rather than per PE keeps 256 bytes out of every PE's state.
  uint64_t hopsPerColor[32] = {};
};

/// One PE. Allocated only for PEs a group covers. Fields are ordered by
/// how often a step touches them: the scheduler's flags, latches and task
/// state first, then the queue bookkeeping and the main thread's
/// instruction, then statistics, and last what only instruction starts,
/// microthreads and reports read.
struct Pe {
  // What the scheduler and every step read.
  uint32_t index = 0; ///< dense index in Engine::pes
  /// Ports (bit per Dir) whose link is a host port.
  uint8_t hostPorts = 0;
  /// Microthreads with an executing instruction (bit per utid); mirrors
  /// micro[u].active so the hot path does not walk the cold Execs.
  uint8_t microActive = 0;
  uint8_t numPopped = 0;
  bool progress = false;
  bool routerMoved = false;
  bool onRampUsed = false;
  /// The CE dequeued from a CE queue in the last step.
  bool cePopped = false;
  bool running = false;
  bool codeDirty = false;
  bool cflag = false;
  // Fast mode: a PE whose CE is busy with a batched instruction and whose
  // router cannot move is not stepped from `sleepFrom` until it is woken.
  bool sleeping = false;
  uint8_t taskId = 0, taskKind = 0;
  uint32_t rrPointer = 0; ///< last granted (color * 5 + port)
  uint32_t pc = 0;
  uint32_t cePopMask = 0; ///< colors with cqPops != 0
  /// Non-empty router queues, bit (color * 5 + port).
  uint64_t nonEmpty[3] = {0, 0, 0};
  /// Router queues granted this cycle (at most one per output port), as
  /// popCode(port, color).
  uint16_t popped[5] = {0, 0, 0, 0, 0};
  uint64_t inLatch[5] = {0, 0, 0, 0, 0}; ///< per input port
  uint64_t ceLatch = 0;           ///< from the router's ramp output
  uint64_t hostLatch[2] = {0, 0}; ///< to the west / east host port
  uint64_t active = 0, blocked = 0;
  uint64_t activeSet = 0, activeClear = 0, blockSet = 0, blockClear = 0;
  Pe *neighbour[4] = {nullptr, nullptr, nullptr, nullptr};
  const DecodeCache *cache = nullptr;
  uint16_t gpr[16] = {};
  uint32_t pickLast = 63;
  uint32_t prng = 1;
  uint64_t taskStart = 0;
  uint64_t sleepFrom = 0;
  uint64_t sleepToken = 0;

  // Statistics (every busy cycle, every hop).
  PeStats st;

  // Queues: compute element queues, one per routable color, and router
  // queues, indexed port * colors + color.
  uint8_t cqHead[32] = {}, cqCount[32] = {}, cqPops[32] = {};
  PeRoute route[32];
  uint8_t rqHead[5 * 32] = {}, rqCount[5 * 32] = {};
  /// Storage of the queues a wavelet can enter: router queues of the
  /// (port, color) pairs routes list as inputs, CE queues of the colors
  /// routed to the ramp. Slot k holds a queue's `depth` entries at
  /// rqData + k * rqDepth (cqData + k * cqDepth); kNoSlot for the others.
  static constexpr uint8_t kNoSlot = 0xff;
  uint8_t rqSlot[5 * 32], cqSlot[32];
  uint64_t *rqData = nullptr, *cqData = nullptr;
  /// The PE's memory: Target::memoryWords() words in the engine's lazily
  /// committed reservation (pages the program never writes take no RAM).
  uint16_t *mem = nullptr;

  // The main thread's executing instruction.
  Exec main;

  // Cold: touched when instructions start or microthreads run.
  uint32_t x = 0, y = 0;
  int32_t layer = -1;
  uint8_t microLast = 7;
  uint8_t dpBusy = 0; ///< cycles a multi-cycle group still holds the datapath
  /// Microthreads' instructions, allocated when the first one launches.
  std::unique_ptr<Exec[]> micro;
  /// The state of the PE's positioned routes (PeRoute::position), allocated
  /// at load when its image has any.
  std::unique_ptr<PositionState[]> positions;
  /// DSRs (S0, S1, D): bit r of dsrValid[file] says register r was
  /// loaded, and its record is dsrs[dsrSlot[file][r]]. A PE uses a few of
  /// its 36 DSRs, so their records live in a small array that grows with
  /// each register loaded for the first time (loadDsr()), not inline.
  uint16_t dsrValid[3] = {0, 0, 0};
  uint8_t dsrSlot[3][12];
  uint8_t numDsrs = 0, dsrCapacity = 0;
  uint8_t xdsrValid = 0; ///< XDSRs loaded (bit per register)
  std::unique_ptr<DsrEntry[]> dsrs;
  /// XDSRs and stride registers, allocated by the first LDX or LDSR.
  std::unique_ptr<FourDState> fourD;
  /// FIFO state by DSR number, allocated by the first FIFO DSD load.
  std::unique_ptr<FifoState[]> fifo;

  /// The record of a loaded DSR (dsrValid says which are).
  const DsrEntry &dsr(unsigned file, unsigned reg) const {
    return dsrs[dsrSlot[file][reg]];
  }
  /// The entry a DSR load writes: the register's own once it was loaded,
  /// else a new one (the array grows to 4, 12, then all 36 registers).
  DsrEntry &loadDsr(unsigned file, unsigned reg) {
    if (dsrValid[file] & (1u << reg))
      return dsrs[dsrSlot[file][reg]];
    if (numDsrs == dsrCapacity) {
      uint8_t cap = dsrCapacity ? (dsrCapacity < 12 ? 12 : 36) : 4;
      std::unique_ptr<DsrEntry[]> grown(new DsrEntry[cap]);
      std::copy(dsrs.get(), dsrs.get() + numDsrs, grown.get());
      dsrs = std::move(grown);
      dsrCapacity = cap;
    }
    dsrValid[file] |= uint16_t(1u << reg);
    dsrSlot[file][reg] = numDsrs;
    return dsrs[numDsrs++];
  }
  FourDState &fourDState() {
    if (!fourD)
      fourD = std::make_unique<FourDState>();
    return *fourD;
  }
  /// Host bytes of the state allocated on demand (microthreads, DSR
  /// records, 4-D and FIFO state), for Stats::stateBytes.
  size_t lazyStateBytes() const {
    return (micro ? 8 * sizeof(Exec) : 0) +
           size_t(dsrCapacity) * sizeof(DsrEntry) +
           (fourD ? sizeof(FourDState) : 0) +
           (fifo ? 12 * sizeof(FifoState) : 0);
  }
};

/// Whether every busy microthread of `p` is waiting for the datapath: none
/// is in its startup cycles or holds the datapath for a multi-cycle group.
/// While the main thread holds the datapath such microthreads change
/// nothing, so the main thread's instruction can be batched and the PE can
/// sleep through it.
inline bool microsInert(const Pe &p) {
  for (unsigned bits = p.microActive; bits; bits &= bits - 1) {
    const Exec &m = p.micro[__builtin_ctz(bits)];
    if (m.startupLeft || m.busyLeft)
      return false;
  }
  return true;
}

/// Asks for the cache lines a step or a commit of `p` reads first, so that
/// the sweep over the active set overlaps their misses.
inline void prefetchPe(const Pe *p) {
  const char *b = reinterpret_cast<const char *>(p);
  for (unsigned off = 0; off < 384; off += 64)
    __builtin_prefetch(b + off);
  const char *m = reinterpret_cast<const char *>(&p->main);
  __builtin_prefetch(m);
  __builtin_prefetch(reinterpret_cast<const char *>(&p->rqCount[0]));
  __builtin_prefetch(reinterpret_cast<const char *>(&p->rqCount[64]));
  __builtin_prefetch(reinterpret_cast<const char *>(&p->dsrs));
}

/// The second stage of the sweep's prefetch, a few PEs later, when `p`'s
/// own lines have arrived: its queue entries and the memory words its main
/// thread's instruction reads next. `colors`: the fabric's routable colors.
inline void prefetchPeData(const Pe *p, unsigned colors) {
  __builtin_prefetch(p->rqData);
  __builtin_prefetch(p->cqData);
  __builtin_prefetch(p->cqData + 8);
  // The neighbours' queue counts the router's credit check reads: those of
  // their input port facing this PE (north's south port, and so on).
  if (p->nonEmpty[0] | p->nonEmpty[1] | p->nonEmpty[2])
    for (unsigned d = 0; d < 4; ++d)
      if (const Pe *nb = p->neighbour[d])
        __builtin_prefetch(&nb->rqCount[((d + 2) % 4) * colors]);
  const Exec &m = p->main;
  // An instruction starts: the DSR records its operands come from.
  if (!m.active) {
    __builtin_prefetch(p->dsrs.get());
    return;
  }
  if (m.busyLeft)
    return;
  for (const Operand *o : {&m.dst, &m.src0, &m.src1})
    if (o->kind == Operand::Mem && !o->is4d) {
      int64_t a = o->base + int64_t(m.done) * o->stride[0];
      if (a >= 0)
        __builtin_prefetch(p->mem + a);
    }
}

} // namespace weft::sim::detail

#endif // WEFT_LIB_SIM_MACHINE_H
