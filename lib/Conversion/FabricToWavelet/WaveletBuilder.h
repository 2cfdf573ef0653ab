//===- WaveletBuilder.h - Building wavelet ops (internal) -------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The vocabulary the per-PE program emitters (dense layers, column kernels)
// share: one wavelet op at the builder's insertion point per call.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_CONVERSION_WAVELETBUILDER_H
#define WEFT_LIB_CONVERSION_WAVELETBUILDER_H

#include "weft/Kernels/Routing.h"
#include "weft/Machine/Numerics.h"

#include "wavelet/WaveletOps.h"

#include "mlir/IR/Builders.h"

namespace weft::conversion {

/// Appends `v` to a segment's little-endian bytes as an fp32 word pair or,
/// rounded to nearest even, as one fp16 word.
inline void putF32(std::vector<char> &bytes, float v) {
  uint32_t bits = machine::f32ToBits(v);
  for (int i = 0; i < 4; ++i)
    bytes.push_back(char((bits >> (8 * i)) & 0xff));
}
inline void putF16(std::vector<char> &bytes, float v) {
  uint16_t bits = machine::f32ToF16(v);
  bytes.push_back(char(bits & 0xff));
  bytes.push_back(char(bits >> 8));
}

/// The fields of a `wavelet.dsd` (docs/architecture.md, "Data structure
/// descriptors"), typed; the fields left unset are not written. Start from
/// the kind's factory and add the optional fields:
/// `DsdFields::fabout(L, color).withUtid(1).withAc(33)`.
struct DsdFields {
  wavelet::DsdKind kind;
  std::optional<int64_t> length, base, stride, color, ac, index, utid, xdsr,
      pushAc, popAc;
  std::optional<llvm::StringRef> format;
  bool term = false, ctrl = false, wli = false, ix = false, nz = false,
       sl = false;

  static DsdFields fabin(int64_t length, int64_t color) {
    return fabric(wavelet::DsdKind::fabin, length, color);
  }
  static DsdFields fabout(int64_t length, int64_t color) {
    return fabric(wavelet::DsdKind::fabout, length, color);
  }
  static DsdFields mem1d(int64_t length, int64_t base) {
    return memory(wavelet::DsdKind::mem1d, length, base);
  }
  /// A 4-D memory vector at `base` whose dimensions are in XDSR `xdsr`.
  static DsdFields mem4d(int64_t base, int64_t xdsr) {
    DsdFields f = make(wavelet::DsdKind::mem4d);
    f.base = base;
    f.xdsr = xdsr;
    return f;
  }
  static DsdFields fifo(int64_t length, int64_t base) {
    return memory(wavelet::DsdKind::fifo, length, base);
  }
  DsdFields &withStride(int64_t v) { return stride = v, *this; }
  DsdFields &withAc(int64_t v) { return ac = v, *this; }
  DsdFields &withIndex(int64_t v) { return index = v, *this; }
  DsdFields &withUtid(int64_t v) { return utid = v, *this; }
  DsdFields &withFormat(llvm::StringRef v) { return format = v, *this; }
  DsdFields &withCtrl() { return ctrl = true, *this; }
  DsdFields &withIx() { return ix = true, *this; }
  /// A sparse send: zero elements are not sent (sparse16 only).
  DsdFields &withSkipZeros() { return nz = true, *this; }
  /// A sliced mem1d: lane masks and packed non-zero lanes.
  DsdFields &withSliced() { return sl = true, *this; }

private:
  static DsdFields fabric(wavelet::DsdKind kind, int64_t length,
                          int64_t color) {
    DsdFields f = make(kind);
    f.length = length;
    f.color = color;
    return f;
  }
  /// Fields of `kind` with nothing else set.
  static DsdFields make(wavelet::DsdKind kind) {
    DsdFields f;
    f.kind = kind;
    return f;
  }
  static DsdFields memory(wavelet::DsdKind kind, int64_t length, int64_t base) {
    DsdFields f = make(kind);
    f.length = length;
    f.base = base;
    return f;
  }
};

/// Calls f(r0, r1) for every run [r0, r1) of the rows 0 .. rows - 1 of a
/// column kernel at column x (row r at y0 + r) whose PEs run one program:
/// the same router switches, and `alike(r, r0)` (the kernel's own test,
/// e.g. equal chunks). Each run becomes one wavelet.pe_group.
template <typename Alike, typename F>
void forEachRowGroup(const RouteTable &routes, int64_t x, int64_t y0,
                     int64_t rows, Alike alike, F f) {
  int64_t r0 = 0;
  for (int64_t r = 1; r <= rows; ++r) {
    if (r < rows && alike(r, r0) && sameSwitches(routes, x, y0 + r, y0 + r0))
      continue;
    f(r0, r);
    r0 = r;
  }
}

/// The runs of forEachRowGroup on the column at x of a window column kernel
/// (a pooling or a depthwise convolution, rows from row 0), whose rows all
/// run the same program but for their router switches.
template <typename F>
void forEachColumnGroup(const RouteTable &routes, int64_t x, int64_t rows,
                        F f) {
  forEachRowGroup(
      routes, x, 0, rows, [](int64_t, int64_t) { return true; }, f);
}

/// The task id of the window kernels' (convolution, depthwise, pooling) one
/// main task, and the XDSD stride selects for the constants 1 and 0 (the
/// others name a stride register).
constexpr int64_t kMainTask = 32;
constexpr int64_t kSelOne = 6, kSelZero = 7;

class WaveletBuilder {
public:
  WaveletBuilder(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  /// `wavelet.route color C from [in] to [out]` (DirSet masks).
  void route(int64_t color, uint8_t in, uint8_t out) {
    wavelet::RouteOp::create(b, loc, color, in, out, /*positions=*/nullptr);
  }
  /// The same for a switch, positions included.
  void route(int64_t color, const Switch &sw) {
    mlir::DenseI64ArrayAttr positions;
    if (!sw.positions.empty()) {
      llvm::SmallVector<int64_t> flat;
      for (const SwitchPosition &p : sw.positions)
        flat.append({int64_t(p.in), int64_t(p.out), p.count});
      positions = b.getDenseI64ArrayAttr(flat);
    }
    wavelet::RouteOp::create(b, loc, color, sw.in, sw.out, positions);
  }
  /// One `wavelet.route` per color `table` gives PE (x, y), by color.
  void routesAt(const RouteTable &table, int64_t x, int64_t y) {
    auto it = table.find({x, y});
    if (it == table.end())
      return;
    for (const auto &[color, sw] : it->second)
      route(color, sw);
  }
  /// `wavelet.dsd @name at ADDRESS kind {fields}`.
  void dsdAt(llvm::StringRef name, int64_t address, const DsdFields &f) {
    auto i64 = [&](std::optional<int64_t> v) -> mlir::IntegerAttr {
      return v ? b.getI64IntegerAttr(*v) : nullptr;
    };
    wavelet::DsdOp::create(b, loc, name, address, f.kind, i64(f.length),
                           i64(f.base), i64(f.stride), i64(f.color),
                           f.format ? b.getStringAttr(*f.format) : nullptr,
                           i64(f.ac), f.term, f.ctrl, i64(f.index), f.wli, f.ix,
                           i64(f.utid), i64(f.xdsr), i64(f.pushAc),
                           i64(f.popAc), f.nz, f.sl);
  }
  /// The stride registers' values, one 16-bit word each, as segments
  /// `stride0`, `stride1`, ... at the word addresses `address()` returns in
  /// turn; loadStrides loads registers 0.. from them.
  void strideWords(llvm::ArrayRef<int64_t> values,
                   llvm::function_ref<int64_t()> address) {
    auto type = mlir::RankedTensorType::get({1}, b.getIntegerType(16));
    for (auto [k, v] : llvm::enumerate(values))
      wavelet::SegmentOp::create(
          b, loc, ("stride" + llvm::Twine(k)).str(), address(),
          /*per_pe=*/false,
          mlir::DenseElementsAttr::get(type,
                                       llvm::ArrayRef<int16_t>{int16_t(v)}));
  }
  void loadStrides(size_t n) {
    for (size_t k = 0; k < n; ++k)
      dsrLoad(wavelet::RegFile::stride, int64_t(k),
              ("stride" + llvm::Twine(k)).str());
  }
  /// `wavelet.dsr load FILE REG, @record`.
  void dsrLoad(wavelet::RegFile f, int64_t reg, llvm::StringRef record) {
    wavelet::DsrOp::create(b, loc, /*store=*/false, f, reg, record);
  }
  using Opcode = wavelet::Opcode;
  /// `op d <- s0, s1` through DSR triple n, loading the three records (the
  /// training emitters' step on memory vectors).
  void vecVia(int64_t n, Opcode op, llvm::StringRef d, llvm::StringRef s0Rec,
              llvm::StringRef s1Rec) {
    dsrLoad(wavelet::RegFile::ddsr, n, d);
    dsrLoad(wavelet::RegFile::s0dsr, n, s0Rec);
    dsrLoad(wavelet::RegFile::s1dsr, n, s1Rec);
    inst(op, {dsr(n), s1(n)});
  }
  /// The same with a register or immediate second source.
  void vecVia(int64_t n, Opcode op, llvm::StringRef d, llvm::StringRef s0Rec,
              wavelet::OperandAttr s1v) {
    dsrLoad(wavelet::RegFile::ddsr, n, d);
    dsrLoad(wavelet::RegFile::s0dsr, n, s0Rec);
    inst(op, {dsr(n), s1v});
  }
  /// `op d <- s` through DSR n (a microthread launch when d or s is a
  /// fabric DSD with a microthread).
  void unVia(int64_t n, Opcode op, llvm::StringRef d, llvm::StringRef src) {
    dsrLoad(wavelet::RegFile::ddsr, n, d);
    dsrLoad(wavelet::RegFile::s0dsr, n, src);
    inst(op, {ddsr(n), s0(n)});
  }
  /// `wavelet.inst OPCODE args [term]`.
  void inst(Opcode opcode, llvm::ArrayRef<wavelet::OperandAttr> args,
            bool term = false) {
    wavelet::InstOp::create(b, loc, opcode, args, term);
  }
  /// The operands of `inst`: `dsr n`, `ddsr n`, `s0dsr n`, `s1dsr n`,
  /// `gpr n`, `imm zero`... and a literal (movi's immediate, a task id).
  wavelet::OperandAttr dsr(int64_t n) {
    return operand(wavelet::OperandKind::dsr, n);
  }
  wavelet::OperandAttr ddsr(int64_t n) {
    return operand(wavelet::OperandKind::ddsr, n);
  }
  wavelet::OperandAttr s0(int64_t n) {
    return operand(wavelet::OperandKind::s0dsr, n);
  }
  wavelet::OperandAttr s1(int64_t n) {
    return operand(wavelet::OperandKind::s1dsr, n);
  }
  wavelet::OperandAttr gpr(int64_t n) {
    return operand(wavelet::OperandKind::gpr, n);
  }
  wavelet::OperandAttr imm(machine::SmallImm v) {
    return operand(wavelet::OperandKind::imm, int64_t(v));
  }
  wavelet::OperandAttr lit(int64_t v) {
    return operand(wavelet::OperandKind::lit, v);
  }
  wavelet::OperandAttr operand(wavelet::OperandKind kind, int64_t value) {
    return wavelet::OperandAttr::get(b.getContext(), kind, value);
  }
  void label(llvm::StringRef name) { wavelet::LabelOp::create(b, loc, name); }
  void jump(llvm::StringRef name) { wavelet::JumpOp::create(b, loc, name); }
  /// An empty `wavelet.task`; fill it through its body block.
  wavelet::TaskOp task(llvm::StringRef name, wavelet::TaskKind kind, int64_t id,
                       bool active) {
    auto t = wavelet::TaskOp::create(b, loc, name, kind, id, active,
                                     /*blocked=*/false);
    t.getBody().emplaceBlock();
    return t;
  }
  /// A `wavelet.pe_group` on the rectangle (x, y, w, h), or a `wavelet.pe`
  /// if it is one PE, tagged with the model layer it runs; returns its body.
  mlir::Block *peOrGroup(llvm::StringRef sym, int64_t x, int64_t y, int64_t w,
                         int64_t h, llvm::StringRef layer) {
    mlir::Operation *pe;
    if (w * h > 1)
      pe = wavelet::PeGroupOp::create(
          b, loc, sym, common::RectAttr::get(b.getContext(), x, y, w, h));
    else
      pe = wavelet::PeOp::create(b, loc, sym, x, y);
    pe->setAttr("layer", b.getStringAttr(layer));
    return &pe->getRegion(0).emplaceBlock();
  }
  /// `wavelet.param gpr G = (x, y) -> (value)`: a constant per-PE register.
  void constParam(int64_t gpr, int64_t value) {
    wavelet::ParamOp::create(
        b, loc, gpr,
        mlir::AffineMap::get(2, 0, b.getAffineConstantExpr(value)));
  }
  /// The group of rows [r0, r1) of one column of a smeared layer (a dense
  /// layer or a convolution) whose column c is at fabric (x, y0 + r), named
  /// `<layer>_c<c>_r<r0>[_<r1 - 1>]`, with the router settings `routes`
  /// gives its first PE already in it; returns its body.
  mlir::Block *columnGroup(llvm::StringRef layer, int64_t c, int64_t x,
                           int64_t y0, int64_t r0, int64_t r1,
                           const RouteTable &routes) {
    int64_t h = r1 - r0;
    std::string sym = (layer + "_c" + llvm::Twine(c) + "_r" +
                       llvm::Twine(r0) +
                       (h > 1 ? "_" + llvm::Twine(r1 - 1) : llvm::Twine()))
                          .str();
    mlir::Block *body = peOrGroup(sym, x, y0 + r0, 1, h, layer);
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body);
    routesAt(routes, x, y0 + r0);
    return body;
  }

  /// CPGD's rounds (docs/training.md, "CPGD"): a trained kernel whose
  /// backward pass trails its forward by `lag` samples runs rounds i = 0 ..
  /// samples + lag - 1; round i runs the forward of sample i (i < samples),
  /// then the backward of sample i - lag (i >= lag). GPR 10 counts the
  /// rounds; 11, 12, 13 hold samples, lag and samples + lag; GPR4 is the
  /// offset of the ring slot the forward writes, and after `cpgdAdvance`
  /// of the one the backward reads (the next round's). `slotWords` 0: no
  /// ring. A pipelined MBGD runs these rounds once per mini-batch (`steps`
  /// of them, `samples` the batch; GPR 8 counts the steps, 9 holds them).
  static constexpr int64_t kGprRound = 10, kGprSamples = 11, kGprLag = 12,
                           kGprRounds = 13, kGprSlot = 14, kGprRing = 15,
                           kGprStep = 8, kGprSteps = 9;
  /// Before the task: the constants.
  void cpgdConstants(int64_t samples, int64_t lag, int64_t slotWords,
                     int64_t steps = 1) {
    constParam(kGprSamples, samples);
    constParam(kGprLag, lag);
    constParam(kGprRounds, samples + lag);
    if (slotWords > 0) {
      constParam(kGprSlot, slotWords);
      constParam(kGprRing, slotWords * (lag + 1));
    }
    cpgdSteps = steps;
    if (steps > 1)
      constParam(kGprSteps, steps);
  }
  /// In the task, before the loop: (step 0, the step's label,) round 0,
  /// slot 0.
  void cpgdStart() {
    if (cpgdSteps > 1) {
      inst(Opcode::MOVI, {gpr(kGprStep), lit(0)});
      label("step");
    }
    inst(Opcode::MOVI, {gpr(kGprRound), lit(0)});
    inst(Opcode::MOVI, {gpr(4), lit(0)});
  }
  /// Jumps to `label` when this round has no forward (i >= samples).
  void cpgdSkipForward(llvm::StringRef label) {
    inst(Opcode::CLTU16, {gpr(kGprRound), gpr(kGprSamples)});
    wavelet::JumpOp::create(b, loc, label, wavelet::JumpCond::if_false);
  }
  /// GPR4 to the next slot of the ring (`label` names the join point).
  void cpgdAdvance(llvm::StringRef label) {
    inst(Opcode::ADD16, {gpr(4), gpr(kGprSlot)});
    inst(Opcode::CEQ16, {gpr(4), gpr(kGprRing)});
    wavelet::JumpOp::create(b, loc, label, wavelet::JumpCond::if_false);
    inst(Opcode::MOVI, {gpr(4), lit(0)});
    this->label(label);
  }
  /// Jumps to `label` when this round has no backward (i < lag).
  void cpgdSkipBackward(llvm::StringRef label) {
    inst(Opcode::CLTU16, {gpr(kGprRound), gpr(kGprLag)});
    wavelet::JumpOp::create(b, loc, label, wavelet::JumpCond::if_true);
  }
  /// The round's end: the next round from `loop`, or on (the step's end).
  void cpgdNext(llvm::StringRef loop) {
    inst(Opcode::ADD16, {gpr(kGprRound), imm(machine::SmallImm::One)});
    inst(Opcode::CLTU16, {gpr(kGprRound), gpr(kGprRounds)});
    wavelet::JumpOp::create(b, loc, loop, wavelet::JumpCond::if_true);
  }
  /// After the rounds (and a step's update): the next step, or the task
  /// ends.
  void cpgdEnd() {
    if (cpgdSteps > 1) {
      inst(Opcode::ADD16, {gpr(kGprStep), imm(machine::SmallImm::One)});
      inst(Opcode::CLTU16, {gpr(kGprStep), gpr(kGprSteps)});
      wavelet::JumpOp::create(b, loc, "step", wavelet::JumpCond::if_true);
    }
    inst(Opcode::NOP, {}, /*term=*/true);
  }

protected:
  mlir::OpBuilder &b;
  mlir::Location loc;
  /// The mini-batches a pipelined MBGD runs its rounds for (1: CPGD).
  int64_t cpgdSteps = 1;
};

/// The machine of the wavelet.program at `b`'s insertion point, checked to
/// hold a kernel on column x, rows [y0, y0 + rows); otherwise an error at
/// `loc` naming `what` (`column kernel @k`, `join kernel @j`).
inline mlir::FailureOr<machine::Target>
columnTarget(mlir::OpBuilder &b, mlir::Location loc, const llvm::Twine &what,
             int64_t x, int64_t y0, int64_t rows) {
  mlir::Block *block = b.getInsertionBlock();
  auto program = llvm::dyn_cast_or_null<wavelet::ProgramOp>(
      block ? block->getParentOp() : nullptr);
  if (!program)
    return mlir::emitError(loc) << what
                                << " must be emitted inside a wavelet.program";
  machine::Target target = program.getTargetAttr().getModel();
  if (x >= int64_t(target.width()) || y0 + rows > int64_t(target.height()))
    return mlir::emitError(loc)
           << what << " at column " << x << ", rows " << y0 << ".."
           << y0 + rows << " does not fit the " << target.width() << "x"
           << target.height() << " fabric";
  return target;
}

/// Router-only PEs: every PE `table` routes that no wavelet.pe or
/// wavelet.pe_group of `wprog` covers gets its router settings alone, as
/// rectangles of equal settings (LowerToWavelet.cpp).
void emitRelays(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *wprog,
                const RouteTable &table);

} // namespace weft::conversion

#endif // WEFT_LIB_CONVERSION_WAVELETBUILDER_H
