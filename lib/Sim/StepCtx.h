//===- StepCtx.h - A PE decide phase's context ---------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Sim: the state one PE's decide phase works on, shared by
// Step.cpp (picker, threads, instructions) and Router.cpp (the router).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SIM_STEPCTX_H
#define WEFT_LIB_SIM_STEPCTX_H

#include "Step.h"

#include "weft/Machine/Wavelet.h"

#include <utility>

namespace weft::sim::detail {

using namespace weft::machine;

inline constexpr unsigned kRamp = unsigned(Dir::Ramp);

inline unsigned elemWordsOf(ElemType t) {
  return (t == ElemType::F32 || t == ElemType::I32) ? 2 : 1;
}

/// Everything one PE step needs at hand.
/// The wait reason of an instruction stalled on an empty fabric input
/// queue (compared by address).
inline const char *const kWaitFabricInput = "fabric input empty";

struct Ctx {
  Pe &pe;
  const FabricConfig &cfg;
  uint64_t now;
  ThreadOut &out;
  bool failed = false;
  bool groupIssued = false;
  /// This cycle: whether a microthread had the datapath, and whether that
  /// was a send (no fabric input operand).
  bool microDatapath = false, microSend = false;

  void fail(const std::string &what) {
    if (failed)
      return;
    failed = true;
    if (pe.index < out.errorPe) {
      out.errorPe = pe.index;
      out.error = peError(pe, now, what);
    }
  }

  //===--------------------------------------------------------------===//
  // Memory
  //===--------------------------------------------------------------===//

  bool inMemory(int64_t addr, unsigned words) {
    if (addr < 0 || addr + int64_t(words) > int64_t(cfg.memWords)) {
      fail("memory access at word " + std::to_string(addr) +
           " is outside the PE's " + std::to_string(cfg.memWords) + " words");
      return false;
    }
    return true;
  }
  /// Raises the PE's memory high-water mark to `end` (one past a word it
  /// touched as data).
  void touch(int64_t end) {
    if (uint32_t(end) > pe.st.memoryHighWater)
      pe.st.memoryHighWater = uint32_t(end);
  }
  uint32_t load(int64_t addr, unsigned ew) {
    if (!inMemory(addr, ew))
      return 0;
    touch(addr + ew);
    uint32_t v = pe.mem[addr];
    if (ew == 2)
      v |= uint32_t(pe.mem[addr + 1]) << 16;
    return v;
  }
  void store(int64_t addr, unsigned ew, uint32_t v) {
    if (!inMemory(addr, ew))
      return;
    touch(addr + ew);
    const DecodeCache *c = pe.cache;
    if (c && !pe.codeDirty) {
      uint64_t slot = uint64_t(addr) / 2, last = uint64_t(addr + ew - 1) / 2;
      if ((slot < c->status.size() && c->status[slot]) ||
          (last < c->status.size() && c->status[last]))
        pe.codeDirty = true;
    }
    pe.mem[addr] = uint16_t(v);
    if (ew == 2)
      pe.mem[addr + 1] = uint16_t(v >> 16);
  }

  static bool isMemory(const Operand &o) {
    return o.kind == Operand::Mem || o.kind == Operand::Fifo;
  }
  /// Counts the data memory accesses of `k` elements of `ex` by what the
  /// instruction does per element, not by how the simulator carries it out,
  /// so both modes count the same: one access per memory or FIFO source, a
  /// read of a destination the instruction reads and a write of every
  /// non-reduction memory destination.
  void countAccesses(const Exec &ex, uint32_t k) {
    if (!ex.compare && isMemory(ex.src0))
      pe.st.memoryReads[ex.src0.ew - 1] += k;
    if (isMemory(ex.src1))
      pe.st.memoryReads[ex.src1.ew - 1] += k;
    if (!ex.reduction && isMemory(ex.dst)) {
      if (ex.readsDst)
        pe.st.memoryReads[ex.dst.ew - 1] += k;
      pe.st.memoryWrites[ex.dst.ew - 1] += k;
    }
  }

  //===--------------------------------------------------------------===//
  // Queues
  //===--------------------------------------------------------------===//

  unsigned ceAvail(unsigned c) const { return pe.cqCount[c] - pe.cqPops[c]; }
  uint64_t cePeek(unsigned c) const {
    unsigned d = cfg.cqDepth;
    return pe.cqData[pe.cqSlot[c] * d + ringAdd(pe.cqHead[c], pe.cqPops[c], d)];
  }
  void cePop(unsigned c) {
    ++pe.cqPops[c];
    pe.cePopMask |= 1u << c;
  }
  bool onRampFree(unsigned c) const {
    return !pe.onRampUsed && pe.rqCount[cfg.rqIndex(kRamp, c)] < cfg.rqDepth;
  }
  void sendOnRamp(unsigned color, bool control, uint32_t payload) {
    if (pe.onRampUsed || pe.inLatch[kRamp]) {
      fail("simulator invariant broken: two wavelets on the on-ramp in one "
           "cycle");
      return;
    }
    pe.onRampUsed = true;
    pe.inLatch[kRamp] =
        Wavelet{uint8_t(color), control, payload}.encode() | kLatchFull;
  }

  void activate(uint8_t id) { pe.activeSet |= uint64_t(1) << (id & 63); }

  //===--------------------------------------------------------------===//
  // Router (§4.3)
  //===--------------------------------------------------------------===//

  void stepRouter();
  bool tryForward(unsigned pair, DirSet &granted);
  bool tryForwardPositioned(unsigned color, unsigned port, unsigned slot,
                            DirSet &granted);
  /// Forwards the head of (port, color) through `outs` if it can (§4.3).
  bool forward(unsigned color, unsigned port, DirSet outs, DirSet &granted);
  /// Positioned colors granted in this cycle's scan (bit per color).
  uint32_t positionedGranted = 0;

  //===--------------------------------------------------------------===//
  // Compute element (§6, §9, §10)
  //===--------------------------------------------------------------===//

  bool pick();
  void stepMain();
  void stepMicros(bool datapathTaken, uint8_t launched);
  void noteMicroDatapath(const Exec &m);
  bool fetch(uint32_t slot, Instruction &inst);
  void execImm(const Instruction &inst);
  void execCtl(const Instruction &inst);
  void endTask();
  bool startExec(Exec &ex, const Instruction &inst);
  bool resolveDsr(Operand &o, unsigned file, unsigned n, ElemType t);
  void resolveGpr(Operand &o, unsigned n, ElemType t);
  bool resolveImm(Operand &o, unsigned k, ElemType t);
  /// One cycle of an executing instruction. Returns whether it used the
  /// datapath (issued or continued a group).
  enum class Cycle { Idle, Progress, Datapath };
  Cycle runExec(Exec &ex, bool isMain, bool datapathFree);
  enum class Issue { Stall, Issued, EarlyEnd };
  Issue issueGroup(Exec &ex, bool isMain);
  bool runBatch(Exec &ex, unsigned startup = 0);
  /// Sliced sources (architecture §8.3): checks the instruction's operands
  /// and moves to the first non-zero lane; the lane mask of word `w`; the
  /// packed address of element `i`; one group of the non-zero lanes of one
  /// word; past zero lanes and all-zero words (counting their mask reads).
  bool startSliced(Exec &ex);
  unsigned slicedMaskOf(const Operand &o, uint32_t w);
  int64_t slicedAddr(const Operand &o, uint32_t i);
  Issue issueSlicedGroup(Exec &ex, bool isMain);
  void skipSliced(Exec &ex);
  bool fastLoop(Exec &ex, uint32_t from, uint32_t to);
  bool stridedBatch(Exec &ex, uint32_t from, uint32_t to);
  /// The lowest and one past the highest word any element of a mem4d
  /// operand touches (every index combination is an element).
  static std::pair<int64_t, int64_t> box(const Operand &o) {
    int64_t lo = o.base, hi = o.base;
    for (unsigned k = 0; k < 4; ++k) {
      int64_t span = int64_t(o.len[k] ? o.len[k] - 1 : 0) * o.stride[k];
      (span < 0 ? lo : hi) += span;
    }
    return {lo, hi + o.ew};
  }
  uint32_t readSrc(Exec &ex, Operand &o, uint32_t i, ElemType t);
  void writeDst(Exec &ex, Operand &o, uint32_t i, uint32_t v, bool isMain);
  void retire(Exec &ex, bool isMain);
  uint32_t gprValue(unsigned n, unsigned ew) const {
    return ew == 2 ? uint32_t(pe.gpr[n]) | (uint32_t(pe.gpr[n + 1]) << 16)
                   : pe.gpr[n];
  }
  void setGpr(unsigned n, unsigned ew, uint32_t v) {
    pe.gpr[n] = uint16_t(v);
    if (ew == 2)
      pe.gpr[n + 1] = uint16_t(v >> 16);
  }
  int64_t elemAddr(const Operand &o, uint32_t i) const {
    if (!o.is4d)
      return o.base + int64_t(i) * o.stride[0];
    uint32_t i0 = i % o.len[0];
    uint32_t r = i / o.len[0];
    uint32_t i1 = r % o.len[1];
    r /= o.len[1];
    uint32_t i2 = r % o.len[2];
    uint32_t i3 = r / o.len[2];
    return o.base + int64_t(i0) * o.stride[0] + int64_t(i1) * o.stride[1] +
           int64_t(i2) * o.stride[2] + int64_t(i3) * o.stride[3];
  }
  void traceTaskEnd() {
    if (cfg.trace)
      out.trace.push_back(TraceEvent{pe.taskStart, now + 1 - pe.taskStart,
                                     pe.index, 0, pe.taskId, pe.taskKind});
  }
};

} // namespace weft::sim::detail

#endif // WEFT_LIB_SIM_STEPCTX_H
