//===- Step.cpp - One PE's cycle: router, picker, threads -----------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The per-cycle behaviour of one PE, shared by the reference and fast modes.
// Section numbers refer to docs/architecture.md.
//
// Order inside a PE's decide phase: router, then picker or main thread, then
// microthreads. The router reads its queues before the CE dequeues (dequeues
// only count until commit) and the CE reads the on-ramp queue count before
// the router's dequeue commits, so both see start-of-cycle occupancy. A
// microthread group runs after the main thread's step and sees its writes
// (docs/simulator.md, "Order inside a PE").
//
//===----------------------------------------------------------------------===//

#include "StepCtx.h"

#include "Arith.h"
#include "DenseLoops.h"

#include "weft/Machine/Numerics.h"
#include "weft/Machine/Sliced.h"
#include "weft/Machine/Wavelet.h"

#include <cstring>
#include <sstream>
#include <tuple>

using namespace weft::machine;

namespace weft::sim::detail {

//===----------------------------------------------------------------------===//
// Picker (§6.3)
//===----------------------------------------------------------------------===//

bool Ctx::pick() {
  uint32_t microColors = 0;
  for (unsigned bits = pe.microActive; bits; bits &= bits - 1) {
    const Exec &m = pe.micro[__builtin_ctz(bits)];
    for (const Operand *o : {&m.src0, &m.src1})
      if (o->kind == Operand::Fabin)
        microColors |= 1u << o->color;
  }
  // Ready ids: active, not blocked, and for a data task a wavelet in its
  // CE queue that no microthread reads. The first after pickLast wins.
  uint32_t avail = 0;
  for (unsigned c = 0; c < cfg.colors; ++c)
    avail |= uint32_t(ceAvail(c) != 0) << c;
  uint64_t ready = pe.active & ~pe.blocked &
                   (uint64_t(avail & ~microColors) | (~uint64_t(0) << 32));
  if (ready) {
    unsigned first = (pe.pickLast + 1) & 63;
    uint64_t rotated = first ? (ready >> first) | (ready << (64 - first))
                             : ready;
    unsigned id = (first + unsigned(__builtin_ctzll(rotated))) & 63;
    uint64_t bit = uint64_t(1) << id;
    if (id < 32) {
      Wavelet w = *Wavelet::decode(cePeek(id));
      cePop(id);
      pe.gpr[0] = w.low();
      pe.gpr[1] = w.high();
      pe.pc = w.control ? Arch::kControlTableOffset + w.controlEntry()
                        : Arch::kSlotsPerTaskEntry * id;
      pe.taskKind = w.control ? 2 : 0;
    } else {
      pe.activeClear |= bit;
      pe.pc = Arch::kSlotsPerTaskEntry * id;
      pe.taskKind = 1;
    }
    pe.pickLast = id;
    pe.taskId = uint8_t(id);
    pe.running = true;
    pe.taskStart = now;
    ++pe.st.picks;
    pe.progress = true;
    return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Main thread
//===----------------------------------------------------------------------===//

bool Ctx::fetch(uint32_t slot, Instruction &inst) {
  if (uint64_t(slot) * 2 + 2 > cfg.memWords) {
    fail("fetch from slot " + std::to_string(slot) +
         " runs past the end of memory");
    return false;
  }
  const DecodeCache *c = pe.cache;
  if (c && !pe.codeDirty && slot < c->status.size() &&
      c->status[slot] == DecodeCache::Valid) {
    inst = c->insts[slot];
    return true;
  }
  uint32_t lo = pe.mem[2 * slot], hi = pe.mem[2 * slot + 1];
  std::string err;
  if (hi & 0xfff0u) {
    fail("slot " + std::to_string(slot) +
         " holds no instruction: bits above bit 19 are set");
    return false;
  }
  std::optional<Instruction> d = Instruction::decode(lo | (hi << 16), &err);
  if (!d) {
    fail("slot " + std::to_string(slot) + " does not decode: " + err);
    return false;
  }
  inst = *d;
  return true;
}

void Ctx::endTask() {
  traceTaskEnd();
  pe.running = false;
}

void Ctx::execImm(const Instruction &inst) {
  Opcode op = inst.opcode;
  uint32_t next = pe.pc + 1;
  auto recordAddr = [&](int64_t &addr) {
    addr = int64_t(inst.imm) * Arch::kWordsPerDescriptor;
    if (addr + Arch::kWordsPerDescriptor > cfg.descWords) {
      fail(std::string(info(op).mnemonic) + " addresses word " +
           std::to_string(addr) + ", beyond the descriptor reach of " +
           std::to_string(cfg.descWords) + " words");
      return false;
    }
    return true;
  };
  auto loadRecord = [&](int64_t addr) {
    uint64_t v = 0;
    for (unsigned i = 0; i < 4; ++i)
      v |= uint64_t(pe.mem[addr + i]) << (16 * i);
    return v;
  };
  auto storeRecord = [&](int64_t addr, uint64_t v) {
    for (unsigned i = 0; i < 4; ++i)
      store(addr + i, 1, uint16_t(v >> (16 * i)));
  };
  // Every DSR, XDSR and stride load or store addresses a record first.
  int64_t addr = 0;
  bool record = unsigned(op) <= unsigned(Opcode::STSR);
  if (record && !recordAddr(addr))
    return;
  switch (op) {
  case Opcode::LDS0:
  case Opcode::LDS1:
  case Opcode::LDD: {
    unsigned file = op == Opcode::LDS0 ? 0 : op == Opcode::LDS1 ? 1 : 2;
    uint64_t v = loadRecord(addr);
    std::string err;
    std::optional<Dsd> d = Dsd::decode(v, &err);
    if (!d) {
      fail("DSD record at word " + std::to_string(addr) +
           " does not decode: " + err);
      return;
    }
    err = d->validate(*cfg.target);
    if (!err.empty()) {
      fail("DSD record at word " + std::to_string(addr) + " is invalid: " +
           err);
      return;
    }
    DsrEntry &e = pe.loadDsr(file, inst.reg);
    e.raw = v;
    e.dsd = *d;
    if (d->kind == DsdKind::Fifo) {
      if (!pe.fifo)
        pe.fifo.reset(new FifoState[12]);
      FifoState &f = pe.fifo[inst.reg];
      f = FifoState();
      f.valid = true;
      f.record = v;
      f.base = d->base;
      f.cap = d->length;
      f.pushEn = d->onPush.enabled;
      f.pushAc = d->onPush.color;
      f.popEn = d->onPop.enabled;
      f.popAc = d->onPop.color;
    }
    break;
  }
  case Opcode::LDX: {
    uint64_t v = loadRecord(addr);
    std::string err;
    if (v >> 51) {
      fail("XDSD record at word " + std::to_string(addr) +
           " has bits set above bit 50");
      return;
    }
    std::optional<Xdsd> x = Xdsd::decode(v, &err);
    if (x)
      err = x->validate();
    if (!x || !err.empty()) {
      fail("XDSD record at word " + std::to_string(addr) + " is invalid: " +
           err);
      return;
    }
    FourDState &fd = pe.fourDState();
    fd.xdsr[inst.reg] = *x;
    fd.xdsrRaw[inst.reg] = v;
    pe.xdsrValid |= uint8_t(1u << inst.reg);
    break;
  }
  case Opcode::STS0:
  case Opcode::STS1:
  case Opcode::STD: {
    unsigned file = op == Opcode::STS0 ? 0 : op == Opcode::STS1 ? 1 : 2;
    if (!(pe.dsrValid[file] & (1u << inst.reg))) {
      fail(std::string(info(op).mnemonic) + " stores DSR " +
           std::to_string(inst.reg) + ", which was never loaded");
      return;
    }
    storeRecord(addr, pe.dsr(file, inst.reg).raw);
    break;
  }
  case Opcode::STX: {
    if (!(pe.xdsrValid & (1u << inst.reg))) {
      fail("stx stores XDSR " + std::to_string(inst.reg) +
           ", which was never loaded");
      return;
    }
    storeRecord(addr, pe.fourD->xdsrRaw[inst.reg]);
    break;
  }
  case Opcode::LDSR: {
    uint16_t w = pe.mem[addr];
    pe.fourDState().strideReg[inst.reg] = int16_t(uint16_t(w << 1)) >> 1;
    break;
  }
  case Opcode::STSR: {
    // A stride register never loaded holds 0.
    store(addr, 1, uint16_t(pe.fourD ? pe.fourD->strideReg[inst.reg] : 0));
    break;
  }
  case Opcode::MOVI:
    pe.gpr[inst.reg] = uint16_t(int16_t(uint16_t(inst.imm << 5)) >> 5);
    break;
  case Opcode::MOVH:
    pe.gpr[inst.reg] =
        uint16_t((pe.gpr[inst.reg] & 0xffu) | ((inst.imm & 0xffu) << 8));
    break;
  case Opcode::JMP:
  case Opcode::BRT:
  case Opcode::BRF: {
    bool taken = op == Opcode::JMP || (op == Opcode::BRT) == pe.cflag;
    if (taken) {
      if (uint64_t(inst.target) * 2 + 2 > cfg.memWords) {
        fail("jump to slot " + std::to_string(inst.target) +
             " past the end of memory");
        return;
      }
      next = inst.target;
    }
    break;
  }
  default:
    break;
  }
  pe.pc = next;
}

void Ctx::execCtl(const Instruction &inst) {
  Opcode op = inst.opcode;
  if (op != Opcode::NOP) {
    uint64_t mask;
    if (inst.ctlMode == CtlMode::AllColors) {
      mask = ~uint64_t(0);
    } else {
      unsigned id = inst.ctlMode == CtlMode::GprColor ? pe.gpr[inst.imm & 15]
                                                      : inst.imm;
      if (id > 63) {
        fail(std::string(info(op).mnemonic) + " names task id " +
             std::to_string(id) + " from gpr " +
             std::to_string(inst.imm & 15) + "; ids end at 63");
        return;
      }
      mask = uint64_t(1) << id;
    }
    switch (op) {
    case Opcode::BLOCK:
      pe.blockSet |= mask;
      break;
    case Opcode::UNBLOCK:
      pe.blockClear |= mask;
      break;
    case Opcode::ACTIVATE:
      pe.activeSet |= mask;
      break;
    case Opcode::DEACTIVATE:
      pe.activeClear |= mask;
      break;
    default:
      break;
    }
  }
  ++pe.st.instructions;
  if (inst.terminate)
    endTask();
  else
    ++pe.pc;
}

void Ctx::resolveGpr(Operand &o, unsigned n, ElemType t) {
  o.kind = Operand::Gpr;
  o.reg = uint8_t(n);
  o.ew = uint8_t(elemWordsOf(t));
  o.value = gprValue(n, o.ew);
}

bool Ctx::resolveImm(Operand &o, unsigned k, ElemType t) {
  o.kind = Operand::Imm;
  o.ew = uint8_t(elemWordsOf(t));
  if (k == unsigned(SmallImm::Prng)) {
    o.prng = true;
    return true;
  }
  if (!smallImmBits(k, t, o.value)) {
    fail(std::string("imm ") + smallImmName(k) + " has no value in type " +
         elemTypeName(t));
    return false;
  }
  return true;
}

bool Ctx::resolveDsr(Operand &o, unsigned file, unsigned n, ElemType t) {
  static const char *files[] = {"S0DSR", "S1DSR", "DDSR"};
  if (!(pe.dsrValid[file] & (1u << n))) {
    fail(std::string(files[file]) + " " + std::to_string(n) +
         " is used but was never loaded");
    return false;
  }
  const DsrEntry &entry = pe.dsr(file, n);
  const Dsd &d = entry.dsd;
  o.ew = uint8_t(elemWordsOf(t));
  switch (d.kind) {
  case DsdKind::Mem1D:
    o.kind = Operand::Mem;
    o.base = int64_t(d.base) + (d.indexed ? pe.gpr[4] : 0);
    o.stride[0] = int64_t(d.stride) * o.ew;
    o.length = d.length;
    o.sliced = d.sliced;
    break;
  case DsdKind::Mem4D: {
    if (!(pe.xdsrValid & (1u << d.xdsr))) {
      fail("mem4d DSD in " + std::string(files[file]) + " " +
           std::to_string(n) + " uses XDSR " + std::to_string(d.xdsr) +
           ", which was never loaded");
      return false;
    }
    // A loaded XDSR means the 4-D state exists.
    const FourDState &fd = *pe.fourD;
    const Xdsd &x = fd.xdsr[d.xdsr];
    o.kind = Operand::Mem;
    o.is4d = true;
    o.base = int64_t(d.base) + (d.indexed ? pe.gpr[4] : 0);
    int64_t len = 1;
    for (unsigned k = 0; k < 4; ++k) {
      o.len[k] = x.len[k];
      unsigned sel = x.strideSel[k];
      int64_t s = sel < 6 ? fd.strideReg[sel] : sel == 6 ? 1 : 0;
      o.stride[k] = s * o.ew;
      len *= x.len[k];
    }
    o.length = len;
    break;
  }
  case DsdKind::FabricIn:
  case DsdKind::FabricOut:
    o.kind = d.kind == DsdKind::FabricIn ? Operand::Fabin : Operand::Fabout;
    o.length = d.length;
    o.color = d.color;
    o.format = d.format;
    o.term = d.terminateOnControl;
    o.ctrl = d.control;
    o.acEn = d.onDone.enabled;
    o.ac = d.onDone.color;
    o.index = d.indexFromGpr4 ? pe.gpr[4] : d.index6;
    o.nz = d.skipZeros;
    o.ue = d.microthread;
    o.utid = d.utid;
    if ((o.ew == 2) != (o.format == PayloadFormat::Dense32)) {
      fail(std::string(dsdKindName(d.kind)) + " on color " +
           std::to_string(o.color) + " carries " +
           payloadFormatName(o.format) + " wavelets but the instruction "
           "reads " + std::to_string(16 * o.ew) + "-bit elements");
      return false;
    }
    if (o.ctrl && (o.format != PayloadFormat::Sparse16 || o.ew != 1)) {
      fail("fabout with ctrl needs sparse16 and a 16-bit element type");
      return false;
    }
    break;
  case DsdKind::Fifo:
    o.kind = Operand::Fifo;
    o.reg = uint8_t(n);
    o.dsrFile = uint8_t(file);
    o.record = entry.raw;
    break;
  }
  return true;
}

bool Ctx::startExec(Exec &ex, const Instruction &inst) {
  ex = Exec();
  ex.inst = inst;
  ex.info = &info(inst.opcode);
  const OpcodeInfo &oi = *ex.info;
  Opcode op = inst.opcode;
  ex.reduction =
      op == Opcode::FSUM || op == Opcode::FMAXR || op == Opcode::FSUMHS;
  ex.readsDst = ex.reduction || op == Opcode::FMAC || op == Opcode::FMACH ||
                op == Opcode::FMACHS || op == Opcode::SEL32 ||
                op == Opcode::SEL16;
  auto source = [&](Operand &o, const machine::Operand &f) {
    switch (f.kind) {
    case OperandKind::S0dsr:
      return resolveDsr(o, 0, f.value, oi.srcType);
    case OperandKind::S1dsr:
      return resolveDsr(o, 1, f.value, oi.srcType);
    case OperandKind::Gpr:
      resolveGpr(o, f.value, oi.srcType);
      return true;
    case OperandKind::Imm:
      return resolveImm(o, f.value, oi.srcType);
    default:
      return true;
    }
  };
  switch (oi.family) {
  case Family::Vec:
    if (inst.op0.kind == OperandKind::Dsr) {
      if (!resolveDsr(ex.dst, 2, inst.op0.value, oi.dstType) ||
          !resolveDsr(ex.src0, 0, inst.op0.value, oi.srcType))
        return false;
    } else {
      resolveGpr(ex.dst, inst.op0.value, oi.dstType);
      resolveGpr(ex.src0, inst.op0.value, oi.srcType);
      ex.scalar = true;
    }
    if (!source(ex.src1, inst.op1))
      return false;
    break;
  case Family::Un:
    if (inst.op0.kind == OperandKind::Ddsr) {
      if (!resolveDsr(ex.dst, 2, inst.op0.value, oi.dstType))
        return false;
    } else {
      resolveGpr(ex.dst, inst.op0.value, oi.dstType);
      ex.scalar = !ex.reduction;
    }
    if (!source(ex.src0, inst.op1))
      return false;
    break;
  case Family::Cmp:
    resolveGpr(ex.src0, inst.op0.value, oi.srcType);
    if (!source(ex.src1, inst.op1))
      return false;
    ex.compare = true;
    ex.scalar = true;
    break;
  default:
    return false;
  }
  // Roles (§8.6).
  if (ex.dst.kind == Operand::Fabin) {
    fail(std::string(oi.mnemonic) + " writes to a fabin DSD");
    return false;
  }
  for (const Operand *s : {&ex.src0, &ex.src1})
    if (s->kind == Operand::Fabout) {
      fail(std::string(oi.mnemonic) + " reads from a fabout DSD");
      return false;
    }
  if (ex.readsDst &&
      (ex.dst.kind == Operand::Fabout || ex.dst.kind == Operand::Fifo)) {
    fail(std::string(oi.mnemonic) +
         " reads its destination, which must be memory or a GPR");
    return false;
  }
  // Element count (§9.6).
  if (ex.reduction) {
    if (ex.src0.length < 0) {
      fail(std::string(oi.mnemonic) + " reduces a source with no length");
      return false;
    }
    if (ex.dst.length >= 0 && ex.dst.length != 1) {
      fail(std::string(oi.mnemonic) + " reduces into a destination of " +
           "length " + std::to_string(ex.dst.length) + "; it must be 1");
      return false;
    }
    ex.n = uint32_t(ex.src0.length);
  } else if (ex.scalar) {
    ex.n = 1;
  } else {
    int64_t n = -1;
    for (const Operand *o : {&ex.dst, &ex.src0, &ex.src1}) {
      if (o->length < 0)
        continue;
      if (n < 0)
        n = o->length;
      else if (o->length != n) {
        fail(std::string(oi.mnemonic) + " has operands of lengths " +
             std::to_string(n) + " and " + std::to_string(o->length));
        return false;
      }
    }
    if (n < 0) {
      fail(std::string(oi.mnemonic) + " has no operand with a length");
      return false;
    }
    ex.n = uint32_t(n);
  }
  if (ex.dst.sliced || ex.src1.sliced) {
    fail(std::string(oi.mnemonic) + " uses a sliced vector (sl) as its " +
         (ex.dst.sliced ? "destination" : "second source") +
         "; only the first source of fmac, fmach or fmachs may be sliced");
    return false;
  }
  if (ex.src0.sliced && !startSliced(ex))
    return false;
  bool vector = !ex.scalar;
  ex.startupLeft = vector ? oi.startup : 0;
  if (ex.reduction)
    ex.acc = ex.dst.kind == Operand::Gpr
                 ? ex.dst.value
                 : load(elemAddr(ex.dst, 0), ex.dst.ew);
  ex.active = true;
  return !failed;
}

uint32_t Ctx::readSrc(Exec &ex, Operand &o, uint32_t i, ElemType t) {
  switch (o.kind) {
  case Operand::Gpr:
    return o.value;
  case Operand::Imm:
    return o.prng ? prngBits(xorshift32(pe.prng), t) : o.value;
  case Operand::Mem:
    if (o.sliced)
      return load(slicedAddr(o, i), o.ew);
    return load(elemAddr(o, ex.scalar ? 0 : i), o.ew);
  case Operand::Fabin: {
    Wavelet w = *Wavelet::decode(cePeek(o.color));
    switch (o.format) {
    case PayloadFormat::Dense32:
      cePop(o.color);
      return w.payload;
    case PayloadFormat::Sparse16:
      cePop(o.color);
      // A sparse send of the same instruction forwards the index instead.
      if (ex.dst.kind == Operand::Fabout && ex.dst.nz) {
        ex.dst.forwarded = w.high();
        ex.dst.hasForwarded = true;
      } else {
        pe.gpr[1] = w.high();
      }
      return w.low();
    case PayloadFormat::Dense16x2:
      if (!o.half) {
        bool last = i + 1 >= ex.n;
        if (last)
          cePop(o.color);
        else
          o.half = true;
        return w.low();
      }
      o.half = false;
      cePop(o.color);
      return w.high();
    }
    return 0;
  }
  case Operand::Fifo: {
    FifoState &f = pe.fifo[o.reg];
    if (!f.valid || f.record != o.record) {
      fail("fifo " + std::to_string(o.reg) +
           " is popped through a register whose record differs from the "
           "FIFO's");
      return 0;
    }
    uint32_t v = load(int64_t(f.base) + int64_t(f.rd) * o.ew, o.ew);
    f.rd = (f.rd + 1) % f.cap;
    --f.count;
    if (f.popEn)
      activate(f.popAc);
    return v;
  }
  default:
    return 0;
  }
}

void Ctx::writeDst(Exec &ex, Operand &o, uint32_t i, uint32_t v,
                   bool isMain) {
  switch (o.kind) {
  case Operand::Gpr:
    if (isMain)
      setGpr(o.reg, o.ew, v);
    else
      ex.acc = v; // a microthread writes GPRs when it finishes (§6.6)
    return;
  case Operand::Mem:
    store(elemAddr(o, ex.reduction ? 0 : i), o.ew, v);
    return;
  case Operand::Fabout:
    switch (o.format) {
    case PayloadFormat::Dense32:
      sendOnRamp(o.color, false, v);
      return;
    case PayloadFormat::Sparse16:
      if (o.ctrl) {
        sendOnRamp(o.color, true, (v & 0xffff) | (uint32_t(o.index) << 16));
      } else if (o.nz && !(v & 0xffff)) {
        // A sparse send drops a zero element (§8.6).
      } else {
        uint16_t index = o.hasForwarded ? o.forwarded : uint16_t(o.index + i);
        sendOnRamp(o.color, false, (v & 0xffff) | (uint32_t(index) << 16));
      }
      o.hasForwarded = false;
      return;
    case PayloadFormat::Dense16x2:
      if (!o.half) {
        if (i + 1 >= ex.n) {
          sendOnRamp(o.color, false, v & 0xffff);
        } else {
          o.half = true;
          o.pendingLow = uint16_t(v);
        }
      } else {
        o.half = false;
        sendOnRamp(o.color, false, o.pendingLow | ((v & 0xffff) << 16));
      }
      return;
    }
    return;
  case Operand::Fifo: {
    FifoState &f = pe.fifo[o.reg];
    if (!f.valid || f.record != o.record) {
      fail("fifo " + std::to_string(o.reg) +
           " is pushed through a register whose record differs from the "
           "FIFO's");
      return;
    }
    store(int64_t(f.base) + int64_t(f.wr) * o.ew, o.ew, v);
    f.wr = (f.wr + 1) % f.cap;
    ++f.count;
    if (f.pushEn)
      activate(f.pushAc);
    return;
  }
  default:
    return;
  }
}

Ctx::Issue Ctx::issueGroup(Exec &ex, bool isMain) {
  const OpcodeInfo &oi = *ex.info;
  uint32_t remaining = ex.n - ex.done;
  uint32_t k = ex.scalar ? 1 : std::min<uint32_t>(oi.simd, remaining);
  ex.waitReason = nullptr;
  // Per-operand limits (§9.6, §10.2).
  for (Operand *s : {&ex.src0, &ex.src1}) {
    if (s->kind == Operand::Fabin) {
      if (!ceAvail(s->color)) {
        ex.waitReason = kWaitFabricInput;
        ex.waitColor = s->color;
        return Issue::Stall;
      }
      if (s->term && !s->half && !ex.scalar) {
        Wavelet w = *Wavelet::decode(cePeek(s->color));
        if (w.control) {
          cePop(s->color);
          ex.earlyEnd = true;
          return Issue::EarlyEnd;
        }
      }
      uint32_t per = s->format == PayloadFormat::Dense16x2 ? (s->half ? 1 : 2)
                                                           : 1;
      k = std::min(k, per);
    } else if (s->kind == Operand::Fifo) {
      const FifoState &f = pe.fifo[s->reg];
      if (!f.count) {
        ex.waitReason = "fifo empty";
        ex.waitColor = s->reg;
        return Issue::Stall;
      }
      k = std::min(k, f.count);
    }
  }
  Operand &d = ex.dst;
  if (d.kind == Operand::Fifo) {
    const FifoState &f = pe.fifo[d.reg];
    if (f.count >= f.cap) {
      ex.waitReason = "fifo full";
      ex.waitColor = d.reg;
      return Issue::Stall;
    }
    k = std::min(k, f.cap - f.count);
  } else if (d.kind == Operand::Fabout) {
    bool needSlot;
    if (d.format == PayloadFormat::Dense16x2) {
      k = std::min<uint32_t>(k, d.half ? 1 : 2);
      needSlot = d.half || k == 2 || ex.done + k >= ex.n;
    } else {
      k = 1;
      needSlot = true;
    }
    if (needSlot && !onRampFree(d.color)) {
      ex.waitReason = "on-ramp queue full";
      ex.waitColor = d.color;
      return Issue::Stall;
    }
  }
  if (groupIssued || k > oi.simd) {
    fail("simulator invariant broken: more than one group or more than " +
         std::to_string(oi.simd) + " elements in a cycle");
    return Issue::Stall;
  }
  groupIssued = true;
  if (ex.sliced)
    return issueSlicedGroup(ex, isMain);
  // Execute k elements.
  Opcode op = ex.inst.opcode;
  for (uint32_t j = 0; j < k && !failed; ++j) {
    uint32_t i = ex.done + j;
    if (ex.compare) {
      uint32_t s = readSrc(ex, ex.src1, i, oi.srcType);
      pe.cflag = compare(op, ex.src0.value, s);
      continue;
    }
    uint32_t a = readSrc(ex, ex.src0, i, oi.srcType);
    uint32_t b = ex.src1.kind != Operand::None
                     ? readSrc(ex, ex.src1, i, oi.srcType)
                     : 0;
    if (ex.reduction) {
      ex.acc = compute(op, ex.acc, a, 0);
      continue;
    }
    uint32_t old = 0;
    if (ex.readsDst)
      old = d.kind == Operand::Gpr ? gprValue(d.reg, d.ew)
                                   : load(elemAddr(d, ex.scalar ? 0 : i), d.ew);
    writeDst(ex, d, i, compute(op, old, a, b), isMain);
  }
  if (ex.reduction)
    writeDst(ex, d, 0, ex.acc, isMain);
  ex.done += k;
  countAccesses(ex, k);
  pe.st.elements += k;
  pe.st.flops += uint64_t(k) * oi.flopsPerElem;
  pe.st.macs += uint64_t(k) * oi.macsPerElem;
  return Issue::Issued;
}

/// The hot fp32 loops of the batch path, over mem1d vectors whose whole
/// address range was checked up front, and GPR or immediate broadcasts.
/// Same values as compute() (one rounding per operation, canonical NaN).
/// Returns false when the instruction is not one of them.
bool Ctx::fastLoop(Exec &ex, uint32_t from, uint32_t to) {
  Opcode op = ex.inst.opcode;
  if (op != Opcode::FMAC && op != Opcode::FADD && op != Opcode::FMUL &&
      op != Opcode::FSUB && op != Opcode::MOV32)
    return false;
  const Operand &d = ex.dst, &a = ex.src0, &b = ex.src1;
  if (d.kind != Operand::Mem || d.is4d || d.ew != 2)
    return false;
  auto inRange = [&](const Operand &o) {
    if (o.kind != Operand::Mem)
      return o.kind == Operand::Gpr || (o.kind == Operand::Imm && !o.prng) ||
             o.kind == Operand::None;
    if (o.is4d || o.ew != 2)
      return false;
    int64_t first = o.base + int64_t(from) * o.stride[0];
    int64_t last = o.base + int64_t(to - 1) * o.stride[0];
    int64_t lo = std::min(first, last), hi = std::max(first, last) + 2;
    return lo >= 0 && hi <= int64_t(cfg.memWords);
  };
  if (!inRange(d) || !inRange(a) || !inRange(b))
    return false;
  // Writing over decoded code switches the PE to decoding from memory.
  {
    int64_t first = d.base + int64_t(from) * d.stride[0];
    int64_t last = d.base + int64_t(to - 1) * d.stride[0];
    int64_t lo = std::min(first, last), hi = std::max(first, last) + 2;
    const DecodeCache *c = pe.cache;
    if (c && !pe.codeDirty &&
        c->anyCached(uint64_t(lo) / 2, uint64_t(hi - 1) / 2))
      pe.codeDirty = true;
  }
  uint16_t *m = pe.mem;
  // The vectors are short and each PE's are far from the last PE's: ask
  // for all their lines at once instead of missing on them one by one.
  for (const Operand *o : {&d, &a, &b}) {
    if (o->kind != Operand::Mem)
      continue;
    int64_t first = o->base + int64_t(from) * o->stride[0];
    int64_t last = o->base + int64_t(to - 1) * o->stride[0];
    int64_t lo = std::min(first, last), hi = std::max(first, last) + 2;
    touch(hi);
    if (hi - lo > 8192)
      hi = lo + 8192;
    for (int64_t w = lo & ~int64_t(31); w < hi; w += 32)
      __builtin_prefetch(m + w);
  }
  auto scalar = [](const Operand &o) {
    float f;
    std::memcpy(&f, &o.value, 4);
    return f;
  };
  const int64_t sd = d.stride[0], sa = a.stride[0], sb = b.stride[0];
  const bool ma = a.kind == Operand::Mem, mb = b.kind == Operand::Mem;
  const float ca = ma ? 0.0f : scalar(a), cb = mb ? 0.0f : scalar(b);
  int64_t ad = d.base + int64_t(from) * sd;
  int64_t aa = a.base + int64_t(from) * sa, ab = b.base + int64_t(from) * sb;
  // Dense vectors that do not overlap the destination: a loop the compiler
  // vectorizes (same operations, same rounding, same NaN).
  if (op != Opcode::MOV32 && contiguousLoop(op, m, ad, sd, ma, aa, sa, ca, mb,
                                            ab, sb, cb, to - from))
    return true;
  // Else element by element (strided, or overlapping the destination).
  auto vec = [](bool mem, int64_t addr, int64_t stride, float value) {
    StridedVec v;
    v.mem = mem;
    v.addr = addr;
    v.stride[0] = stride;
    v.value = value;
    return v;
  };
  return stridedLoop(op, m, vec(true, ad, sd, 0.0f), vec(ma, aa, sa, ca),
                     vec(mb, ab, sb, cb), to - from);
}

//===----------------------------------------------------------------------===//
// Sliced sources (architecture §8.3, "Sliced vectors")
//===----------------------------------------------------------------------===//

unsigned Ctx::slicedMaskOf(const Operand &o, uint32_t w) {
  SlicedLayout l{uint32_t(o.length), o.ew};
  uint32_t v = load(o.base + int64_t(l.maskOffset()) + w / 4, 1);
  return (v >> (4 * (w % 4))) & 0xF;
}

int64_t Ctx::slicedAddr(const Operand &o, uint32_t i) {
  uint32_t w = i / kSlicedLanes, lane = i % kSlicedLanes;
  unsigned below = slicedMaskOf(o, w) & ((1u << lane) - 1);
  return o.base +
         int64_t(w * kSlicedLanes + unsigned(__builtin_popcount(below))) * o.ew;
}

bool Ctx::startSliced(Exec &ex) {
  const OpcodeInfo &oi = *ex.info;
  Opcode op = ex.inst.opcode;
  if ((op != Opcode::FMAC && op != Opcode::FMACH && op != Opcode::FMACHS) ||
      ex.scalar) {
    fail(std::string(oi.mnemonic) + " reads a sliced vector (sl); only the "
         "vector forms of fmac, fmach and fmachs may");
    return false;
  }
  if (ex.src1.kind != Operand::Gpr && ex.src1.kind != Operand::Imm) {
    fail(std::string(oi.mnemonic) + " reads a sliced vector (sl) with a "
         "second source that is not a GPR or an immediate");
    return false;
  }
  if (ex.dst.kind != Operand::Mem) {
    fail(std::string(oi.mnemonic) + " reads a sliced vector (sl) into a "
         "destination that is not memory");
    return false;
  }
  ex.sliced = true;
  skipSliced(ex);
  return !failed;
}

void Ctx::skipSliced(Exec &ex) {
  const Operand &s = ex.src0;
  while (ex.done < ex.n && !failed) {
    uint32_t w = ex.done / kSlicedLanes, lane = ex.done % kSlicedLanes;
    unsigned mask = slicedMaskOf(s, w);
    if (unsigned rest = mask >> lane) {
      ex.done = std::min(ex.n, ex.done + unsigned(__builtin_ctz(rest)));
      return;
    }
    if (!mask)
      ++pe.st.slicedReads[s.ew - 1][0]; // the mask, and no data slice
    ex.done = (w + 1) * kSlicedLanes;
  }
  ex.done = std::min(ex.done, ex.n);
}

Ctx::Issue Ctx::issueSlicedGroup(Exec &ex, bool isMain) {
  const OpcodeInfo &oi = *ex.info;
  Operand &s = ex.src0, &d = ex.dst;
  uint32_t w = ex.done / kSlicedLanes, lane = ex.done % kSlicedLanes;
  unsigned mask = slicedMaskOf(s, w);
  // The word's first non-zero lane: its read enables the slices it needs.
  if (!(mask & ((1u << lane) - 1))) {
    unsigned pc = unsigned(__builtin_popcount(mask));
    ++pe.st.slicedReads[s.ew - 1][pc > kSlice1Lanes ? 2 : 1];
  }
  uint32_t k = 0;
  for (unsigned l = lane; l < kSlicedLanes && k < oi.simd && !failed; ++l) {
    uint32_t i = w * kSlicedLanes + l;
    if (i >= ex.n)
      break;
    if (!(mask & (1u << l)))
      continue;
    uint32_t a = readSrc(ex, s, i, oi.srcType);
    uint32_t b = readSrc(ex, ex.src1, i, oi.srcType);
    uint32_t old = load(elemAddr(d, i), d.ew);
    writeDst(ex, d, i, compute(ex.inst.opcode, old, a, b), isMain);
    ex.done = i + 1;
    ++k;
  }
  if (!k) // the mask changed under the instruction: go past the word
    ex.done = std::min(ex.n, (w + 1) * kSlicedLanes);
  skipSliced(ex);
  // The destination is read and written for each lane executed.
  pe.st.memoryReads[d.ew - 1] += k;
  pe.st.memoryWrites[d.ew - 1] += k;
  if (isMemory(ex.src1))
    pe.st.memoryReads[ex.src1.ew - 1] += k;
  pe.st.elements += k;
  pe.st.flops += uint64_t(k) * oi.flopsPerElem;
  pe.st.macs += uint64_t(k) * oi.macsPerElem;
  return Issue::Issued;
}

/// The batch path's loop over mem4d walks (a convolution's window, a
/// feature map's rows): a whole instruction of FMAC, FADD, FSUB, FMUL or
/// MOV32 on fp32 memory operands (at least one of them mem4d), GPRs and
/// immediates, whose boxes lie in memory. Element by element in issue order
/// like the element path, without its per-element address arithmetic and
/// checks. Returns false when the instruction is not one of them.
bool Ctx::stridedBatch(Exec &ex, uint32_t from, uint32_t to) {
  Opcode op = ex.inst.opcode;
  if (op != Opcode::FMAC && op != Opcode::FADD && op != Opcode::FMUL &&
      op != Opcode::FSUB && op != Opcode::MOV32 && op != Opcode::FMACHS)
    return false;
  // FMACHS: fp16 sources (one word an element) into fp32.
  const bool half = op == Opcode::FMACHS;
  // The whole instruction, so the words it touches are the boxes'.
  if (from != 0 || to != ex.n || ex.reduction || ex.scalar)
    return false;
  const Operand &d = ex.dst, &a = ex.src0, &b = ex.src1;
  if (d.kind != Operand::Mem || d.ew != 2 ||
      !(d.is4d || a.is4d || b.is4d))
    return false;
  StridedVec vec[3];
  int64_t lo[3], hi[3];
  const Operand *ops[3] = {&d, &a, &b};
  for (unsigned k = 0; k < 3; ++k) {
    const Operand &o = *ops[k];
    StridedVec &v = vec[k];
    const unsigned ew = half && k > 0 ? 1 : 2;
    if (o.kind != Operand::Mem) {
      if (!(o.kind == Operand::Gpr || (o.kind == Operand::Imm && !o.prng) ||
            o.kind == Operand::None))
        return false;
      if (ew == 1)
        v.value = f16ToF32(uint16_t(o.value));
      else
        std::memcpy(&v.value, &o.value, 4);
      continue;
    }
    if (o.ew != ew || o.sliced)
      return false;
    v.mem = true;
    v.addr = o.base;
    if (o.is4d) {
      for (unsigned j = 0; j < 4; ++j) {
        v.stride[j] = o.stride[j];
        v.len[j] = o.len[j];
      }
      std::tie(lo[k], hi[k]) = box(o);
    } else {
      v.stride[0] = o.stride[0];
      int64_t first = o.base, last = o.base + int64_t(to - 1) * o.stride[0];
      lo[k] = std::min(first, last);
      hi[k] = std::max(first, last) + ew;
    }
    if (lo[k] < 0 || hi[k] > int64_t(cfg.memWords))
      return false;
  }
  // Writing over decoded code switches the PE to decoding from memory.
  const DecodeCache *c = pe.cache;
  if (c && !pe.codeDirty &&
      c->anyCached(uint64_t(lo[0]) / 2, uint64_t(hi[0] - 1) / 2))
    pe.codeDirty = true;
  for (unsigned k = 0; k < 3; ++k)
    if (vec[k].mem)
      touch(hi[k]);
  return stridedLoop(op, pe.mem, vec[0], vec[1], vec[2], to - from);
}

/// Fast mode: issues every remaining group of a main-thread instruction
/// whose operands cannot stall (memory, GPRs, immediates) at once and keeps
/// the datapath busy for the cycles those groups take. Nothing else reads
/// this CE's memory or registers: a busy microthread that is past its
/// startup only waits for the datapath, which the main thread holds until
/// the instruction retires. So the results and the cycle of retirement are
/// those of group-by-group issue.
///
/// With `startup` > 0 the instruction is in the first of that many startup
/// cycles and no microthread is busy: nothing can touch the CE's state
/// before its groups issue, so the startup cycles join the batch.
bool Ctx::runBatch(Exec &ex, unsigned startup) {
  if (ex.sliced)
    return false;
  for (const Operand *o : {&ex.dst, &ex.src0, &ex.src1})
    if (o->kind != Operand::Mem && o->kind != Operand::Gpr &&
        o->kind != Operand::Imm && o->kind != Operand::None)
      return false;
  if (ex.compare || ex.scalar)
    return false;
  if (!microsInert(pe))
    return false;
  const OpcodeInfo &oi = *ex.info;
  uint64_t groups = (uint64_t(ex.n - ex.done) + oi.simd - 1) / oi.simd;
  uint64_t room =
      cfg.batchLimit > now + startup ? (cfg.batchLimit - now - startup) : 0;
  groups = std::min<uint64_t>(groups, room / oi.cyclesPerGroup);
  if (groups < 4)
    return false;
  Opcode op = ex.inst.opcode;
  Operand &d = ex.dst;
  uint32_t end = std::min<uint64_t>(ex.n, ex.done + groups * oi.simd);
  uint32_t k = end - ex.done;
  // An access out of range must fail in the cycle its group would issue:
  // leave such instructions to group-by-group issue.
  for (const Operand *o : {&ex.dst, &ex.src0, &ex.src1}) {
    if (o->kind != Operand::Mem)
      continue;
    uint32_t lo = (o == &ex.dst && ex.reduction) ? 0 : ex.done;
    uint32_t hi = (o == &ex.dst && ex.reduction) ? 1 : end;
    if (!o->is4d) {
      int64_t a = elemAddr(*o, lo), b = elemAddr(*o, hi - 1);
      if (std::min(a, b) < 0 || std::max(a, b) + o->ew > int64_t(cfg.memWords))
        return false;
      continue;
    }
    // Every element lies in the operand's box: element by element only
    // when the box leaves memory.
    auto [boxLo, boxHi] = box(*o);
    if (boxLo >= 0 && boxHi <= int64_t(cfg.memWords))
      continue;
    for (uint32_t i = lo; i < hi; ++i) {
      int64_t a = elemAddr(*o, i);
      if (a < 0 || a + o->ew > int64_t(cfg.memWords))
        return false;
    }
  }
  if (!fastLoop(ex, ex.done, end) && !stridedBatch(ex, ex.done, end))
  for (uint32_t i = ex.done; i < end && !failed; ++i) {
    uint32_t a = readSrc(ex, ex.src0, i, oi.srcType);
    uint32_t b =
        ex.src1.kind != Operand::None ? readSrc(ex, ex.src1, i, oi.srcType) : 0;
    if (ex.reduction) {
      ex.acc = compute(op, ex.acc, a, 0);
      continue;
    }
    uint32_t old = 0;
    if (ex.readsDst)
      old = d.kind == Operand::Gpr ? gprValue(d.reg, d.ew)
                                   : load(elemAddr(d, i), d.ew);
    writeDst(ex, d, i, compute(op, old, a, b), true);
  }
  if (ex.reduction)
    writeDst(ex, d, 0, ex.acc, true);
  ex.done = end;
  countAccesses(ex, k);
  pe.st.elements += k;
  pe.st.flops += uint64_t(k) * oi.flopsPerElem;
  pe.st.macs += uint64_t(k) * oi.macsPerElem;
  ex.finished = ex.done >= ex.n;
  uint64_t busy = startup + groups * oi.cyclesPerGroup - 1;
  ex.startupLeft = 0;
  ex.busyLeft = uint32_t(busy);
  if (ex.finished && !ex.busyLeft)
    retire(ex, true);
  return true;
}

void Ctx::retire(Exec &ex, bool isMain) {
  ex.active = false;
  if (!isMain)
    pe.microActive &= uint8_t(~(1u << (&ex - pe.micro.get())));
  ++pe.st.instructions;
  // A reduction writes its memory destination once, when it completes.
  if (ex.reduction && isMemory(ex.dst))
    ++pe.st.memoryWrites[ex.dst.ew - 1];
  for (const Operand *o : {&ex.dst, &ex.src0, &ex.src1})
    if ((o->kind == Operand::Fabin || o->kind == Operand::Fabout) && o->acEn)
      activate(o->ac);
  if (!isMain) {
    if (ex.dst.kind == Operand::Gpr)
      setGpr(ex.dst.reg, ex.dst.ew, ex.acc);
    return;
  }
  if (ex.inst.terminate)
    endTask();
  else
    ++pe.pc;
}

Ctx::Cycle Ctx::runExec(Exec &ex, bool isMain, bool datapathFree) {
  if (ex.busyLeft) {
    if (--ex.busyLeft == 0 && ex.finished)
      retire(ex, isMain);
    return Cycle::Datapath;
  }
  if (ex.startupLeft) {
    if (isMain && cfg.batch && !pe.microActive &&
        runBatch(ex, ex.startupLeft))
      return Cycle::Progress;
    if (--ex.startupLeft == 0 && ex.done >= ex.n)
      retire(ex, isMain); // no element, or a sliced source of zeros
    return Cycle::Progress;
  }
  if (!datapathFree) {
    ex.waitReason = "datapath busy";
    return Cycle::Idle;
  }
  // A dense16x2 fabout half left over by an early end still has to go out.
  if (ex.earlyEnd) {
    Operand &d = ex.dst;
    if (!onRampFree(d.color)) {
      ex.waitReason = "on-ramp queue full";
      ex.waitColor = d.color;
      return Cycle::Idle;
    }
    sendOnRamp(d.color, false, d.pendingLow);
    d.half = false;
    retire(ex, isMain);
    return Cycle::Progress;
  }
  if (isMain && cfg.batch && runBatch(ex))
    return Cycle::Datapath;
  Issue r = issueGroup(ex, isMain);
  if (r == Issue::Stall)
    return Cycle::Idle;
  if (r == Issue::EarlyEnd) {
    if (ex.dst.kind == Operand::Fabout && ex.dst.half)
      return Cycle::Datapath; // flush the half wavelet next
    retire(ex, isMain);
    return Cycle::Datapath;
  }
  ex.finished = ex.done >= ex.n;
  ex.busyLeft = uint32_t(ex.info->cyclesPerGroup - 1);
  if (ex.finished && !ex.busyLeft)
    retire(ex, isMain);
  return Cycle::Datapath;
}

void Ctx::stepMain() {
  // Does a microthread's multi-cycle group hold the datapath?
  bool microHolds = false;
  for (unsigned bits = pe.microActive; bits; bits &= bits - 1)
    microHolds |= pe.micro[__builtin_ctz(bits)].busyLeft != 0;
  uint8_t launched = 0xff;
  bool mainDatapath = false;
  if (!pe.running) {
    pick();
  } else if (!pe.main.active) {
    Instruction inst;
    if (!fetch(pe.pc, inst))
      return;
    switch (info(inst.opcode).family) {
    case Family::Imm:
      execImm(inst);
      ++pe.st.instructions;
      pe.progress = true;
      break;
    case Family::Ctl:
      execCtl(inst);
      pe.progress = true;
      break;
    default: {
      // Started in place: the main thread is idle, and a microthread
      // launch copies it out and leaves the main thread idle again.
      Exec &ex = pe.main;
      if (!startExec(ex, inst))
        return;
      // Microthread launch (§6.6): first fabric operand with ue.
      const Operand *u = nullptr;
      for (const Operand *o : {&ex.dst, &ex.src0, &ex.src1})
        if ((o->kind == Operand::Fabin || o->kind == Operand::Fabout) &&
            o->ue) {
          u = o;
          break;
        }
      if (u) {
        if (!pe.micro)
          pe.micro.reset(new Exec[8]);
        Exec &m = pe.micro[u->utid];
        ex.active = false;
        if (m.active) {
          pe.main.waitReason = "microthread busy";
          pe.main.waitColor = u->utid;
          break; // stall: the launch waits; nothing changed
        }
        m = ex;
        m.active = true;
        pe.microActive |= uint8_t(1u << u->utid);
        launched = u->utid;
        pe.progress = true;
        if (inst.terminate)
          endTask();
        else
          ++pe.pc;
        break;
      }
      Cycle c = runExec(pe.main, true, !microHolds);
      if (c != Cycle::Idle)
        pe.progress = true;
      mainDatapath = c == Cycle::Datapath;
    }
    }
  } else {
    Cycle c = runExec(pe.main, true, !microHolds);
    if (c != Cycle::Idle)
      pe.progress = true;
    mainDatapath = c == Cycle::Datapath;
  }
  if (failed)
    return;
  bool mainProgress = pe.progress;
  bool mainWaitsInput =
      !mainProgress && (!pe.running || (pe.main.active &&
                                        pe.main.waitReason == kWaitFabricInput));
  stepMicros(mainDatapath || pe.main.busyLeft || microHolds, launched);
  if (mainWaitsInput && microSend)
    ++pe.st.sendWaitCycles;
  // (A launch's cycle is not free: the launched microthread's previous
  // instruction, typically the previous send, has ended.)
  if (mainProgress && !mainDatapath && !microDatapath && launched == 0xff)
    ++pe.st.freeCycles;
}

void Ctx::noteMicroDatapath(const Exec &m) {
  microDatapath = true;
  microSend |= m.src0.kind != Operand::Fabin && m.src1.kind != Operand::Fabin;
}

void Ctx::stepMicros(bool datapathTaken, uint8_t launched) {
  // Startup and continuing multi-cycle groups proceed on their own.
  if (!pe.microActive)
    return;
  bool any = false;
  for (unsigned bits = pe.microActive; bits; bits &= bits - 1) {
    unsigned u = unsigned(__builtin_ctz(bits));
    Exec &m = pe.micro[u];
    if (u == launched)
      continue;
    any = true;
    if (m.busyLeft || m.startupLeft) {
      if (runExec(m, false, false) == Cycle::Datapath)
        noteMicroDatapath(m);
      pe.progress = true;
    }
  }
  if (!any || datapathTaken || failed)
    return;
  // Grant the datapath round robin by utid.
  for (unsigned k = 1; k <= 8; ++k) {
    unsigned u = (pe.microLast + k) & 7;
    if (!(pe.microActive & (1u << u)))
      continue;
    Exec &m = pe.micro[u];
    if (u == launched || m.busyLeft || m.startupLeft)
      continue;
    if (Cycle c = runExec(m, false, true); c != Cycle::Idle) {
      if (c == Cycle::Datapath)
        noteMicroDatapath(m);
      pe.microLast = uint8_t(u);
      pe.progress = true;
      return;
    }
  }
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

void stepPe(Pe &pe, const FabricConfig &cfg, uint64_t now, ThreadOut &out) {
  Ctx ctx{pe, cfg, now, out};
  pe.progress = false;
  pe.routerMoved = false;
  pe.onRampUsed = false;
  ctx.stepRouter();
  if (ctx.failed)
    return;
  bool ceBefore = pe.progress;
  pe.progress = false;
  // A CE with no task running, none active and no microthread does
  // nothing this cycle (the picker finds no task: every ready task must be
  // active), so a relay PE costs its router alone.
  if (pe.running || pe.active || pe.microActive)
    ctx.stepMain();
  if (pe.progress)
    ++pe.st.ceBusyCycles;
  pe.progress |= ceBefore;
  if (pe.progress)
    ++pe.st.busyCycles;
  pe.cePopped = pe.cePopMask != 0;
}

void stepRouterOnly(Pe &pe, const FabricConfig &cfg, uint64_t now,
                    ThreadOut &out) {
  Ctx ctx{pe, cfg, now, out};
  pe.progress = false;
  pe.routerMoved = false;
  pe.onRampUsed = false;
  pe.cePopped = false;
  ctx.stepRouter();
}

void retireBatch(Pe &pe, const FabricConfig &cfg, uint64_t now,
                 ThreadOut &out) {
  Exec &ex = pe.main;
  if (!ex.active || ex.busyLeft || !ex.finished)
    return; // capped by the cycle budget: the next step issues the rest
  Ctx ctx{pe, cfg, now, out};
  ctx.retire(ex, true);
}

} // namespace weft::sim::detail
