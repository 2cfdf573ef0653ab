//===- EmitTrainedPool.cpp - A trained max pool's PE programs ------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits the per-PE programs of docs/training.md ("A trained max pool") for
// one placed max pool whose windows tile its input (window = stride): a
// column of PEs, each with its chunk of whole channels, that per sample
//   - receives every input row and keeps it, computes each output row as
//     the maximum of its window rows (a 4-D fmax over (channels, output
//     columns, window columns) into the row, reset to -inf), keeps it and
//     sends it on microthread 3;
//   - takes the gradient rows dL/dy from the next kernel, and for each
//     input row sends dL/dx west: dY of the window at its first maximum in
//     the window's row-major order (torch's), 0 elsewhere. Per window
//     element in that order, an fceq against a running copy of the window's
//     maximum, which is set to NaN where it matched (later equal elements
//     then compare unequal), and a sel32 of dY.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/PoolKernel.h"

#include "WaveletBuilder.h"

#include "wavelet/WaveletOps.h"

#include "weft/Kernels/ConvTraining.h"
#include "weft/Machine/ISA.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <limits>

using namespace mlir;
namespace wt = weft::machine;
namespace wv = weft::wavelet;

namespace weft::conversion {
namespace {

// XDSRs: (Lc, wout, kw) over an output row repeated over the window
// columns (1, Lc, 0), and over an input row's windows (1, sw Lc, Lc);
// (Lc, wout) over one window column of an input row (1, sw Lc).
enum : int64_t { kXOut = 0, kXIn = 1, kXColumn = 2 };
enum : int64_t { kRegLc = 0, kRegSwLc = 1 };
// DSRs: the receive, the maximum, the send, the backward's scratch.
enum : int64_t { kDsrRecv = 0, kDsrMax = 1, kDsrSend = 2, kDsrA = 3 };

class Emitter : WaveletBuilder {
public:
  Emitter(OpBuilder &b, Location loc, const PoolKernel &k, int64_t gradIn,
          int64_t gradIn2, int64_t gradOut, StringRef name)
      : WaveletBuilder(b, loc), k(k), s(k.shape), gradIn(gradIn),
        gradIn2(gradIn2), gradOut(gradOut), name(name),
        mm(trainedPoolMap(s, k.rows)),
        lc(mm.lc), wo(s.wout()), hout(s.hout()) {}

  void emitGroup(int64_t r0, int64_t r1, const RouteTable &routes) {
    int64_t h = r1 - r0;
    std::string sym =
        (name + "_r" + Twine(r0) + (h > 1 ? "_" + Twine(r1 - 1) : Twine()))
            .str();
    Block *body = peOrGroup(sym, k.x, r0, 1, h, name);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body);
    routesAt(routes, k.x, r0);
    records = 0;
    emitData();
    emitRecords();
    emitProgram();
  }

private:
  void emitData() {
    float ninf = -std::numeric_limits<float>::infinity();
    wv::SegmentOp::create(
        b, loc, "ninf_data", mm.ninf, /*per_pe=*/false,
        DenseElementsAttr::get(RankedTensorType::get({1}, b.getF32Type()),
                               ninf));
    wv::SegmentOp::create(
        b, loc, "nan_data", mm.nan, /*per_pe=*/false,
        DenseElementsAttr::get(RankedTensorType::get({1}, b.getF32Type()),
                               std::numeric_limits<float>::quiet_NaN()));
  }
  void rec(StringRef sym, const DsdFields &f) {
    assert(records < mm.numRecords && "the records overflow");
    dsdAt(sym, mm.records + 4 * records++, f);
  }
  int64_t nextRecord() {
    assert(records < mm.numRecords && "the records overflow");
    return mm.records + 4 * records++;
  }
  static std::string nth(StringRef what, int64_t i) {
    return (what + Twine(i)).str();
  }
  void emitRecords();
  void emitProgram();

  const PoolKernel &k;
  const PoolShape &s;
  const int64_t gradIn, gradIn2, gradOut;
  StringRef name;
  const TrainedPoolMap mm;
  const int64_t lc, wo, hout;
  int64_t records = 0;
};

void Emitter::emitRecords() {
  const int64_t inRow = s.win * lc, outRow = wo * lc;
  for (int64_t h = 0; h < s.hin; ++h) {
    int64_t at = mm.x + 2 * h * inRow;
    rec(nth("recv", h), DsdFields::mem1d(inRow, at));
    rec(nth("x", h), DsdFields::mem4d(at, kXIn));
  }
  for (int64_t oh = 0; oh < hout; ++oh) {
    int64_t y = mm.y + 2 * oh * outRow, dy = mm.dy + 2 * oh * outRow;
    rec(nth("y", oh), DsdFields::mem1d(outRow, y));
    rec(nth("y4_", oh), DsdFields::mem4d(y, kXOut));
    rec(nth("dy", oh), DsdFields::mem1d(outRow, dy));
  }
  rec("mask", DsdFields::mem1d(inRow, mm.mask));
  for (int64_t j = 0; j < s.kw; ++j) {
    rec(nth("mask_col", j), DsdFields::mem4d(mm.mask + 2 * j * lc, kXColumn));
    for (int64_t h = 0; h < s.hin; ++h)
      rec((nth("x", h) + "_col" + Twine(j)).str(),
          DsdFields::mem4d(mm.x + 2 * h * inRow + 2 * j * lc, kXColumn));
  }
  rec("ytmp", DsdFields::mem1d(outRow, mm.ytmp));
  rec("scratch", DsdFields::mem1d(outRow, mm.scratch));
  rec("nan", DsdFields::mem1d(outRow, mm.nan).withStride(0));
  rec("ninf", DsdFields::mem1d(outRow, mm.ninf).withStride(0));
  rec("in", DsdFields::fabin(inRow, k.inColor));
  rec("send", DsdFields::fabout(outRow, k.outColor).withUtid(3));
  rec("grad_in", DsdFields::fabin(outRow, gradIn));
  if (gradIn2 >= 0)
    rec("grad_in2", DsdFields::fabin(outRow, gradIn2));
  rec("grad_out", DsdFields::fabout(inRow, gradOut));
  SmallVector<int64_t> lens = {lc, wo, s.kw, 1};
  wv::XdsdOp::create(b, loc, "x_out", uint64_t(nextRecord()), lens,
                     ArrayRef<int64_t>{kSelOne, kRegLc, kSelZero, kSelZero});
  wv::XdsdOp::create(b, loc, "x_in", uint64_t(nextRecord()), lens,
                     ArrayRef<int64_t>{kSelOne, kRegSwLc, kRegLc, kSelZero});
  wv::XdsdOp::create(b, loc, "x_column", uint64_t(nextRecord()),
                     ArrayRef<int64_t>{lc, wo, 1, 1},
                     ArrayRef<int64_t>{kSelOne, kRegSwLc, kSelZero, kSelZero});
  const int64_t strides[2] = {lc, s.sw * lc};
  strideWords(strides, [&] { return nextRecord(); });
}

void Emitter::emitProgram() {
  using RF = wv::RegFile;
  wv::TaskOp t = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&t.getBody().front());
  loadStrides(2);
  dsrLoad(RF::xdsr, kXOut, "x_out");
  dsrLoad(RF::xdsr, kXIn, "x_in");
  dsrLoad(RF::xdsr, kXColumn, "x_column");
  dsrLoad(RF::s0dsr, kDsrRecv, "in");
  dsrLoad(RF::ddsr, kDsrSend, "send");

  label("sample");
  // Forward: each output row the maximum of its window rows, kept and
  // sent (its buffer is written once a sample, so a pending send is never
  // overwritten).
  for (int64_t oh = 0; oh < hout; ++oh) {
    for (int64_t i = 0; i < s.kh; ++i) {
      dsrLoad(RF::ddsr, kDsrRecv, nth("recv", oh * s.sh + i));
      inst(Opcode::MOV32, {ddsr(kDsrRecv), s0(kDsrRecv)});
    }
    dsrLoad(RF::ddsr, kDsrMax, nth("y", oh));
    dsrLoad(RF::s0dsr, kDsrMax, "ninf");
    inst(Opcode::MOV32, {ddsr(kDsrMax), s0(kDsrMax)});
    dsrLoad(RF::ddsr, kDsrMax, nth("y4_", oh));
    dsrLoad(RF::s0dsr, kDsrMax, nth("y4_", oh));
    for (int64_t i = 0; i < s.kh; ++i) {
      dsrLoad(RF::s1dsr, kDsrMax, nth("x", oh * s.sh + i));
      inst(Opcode::FMAX, {dsr(kDsrMax), s1(kDsrMax)});
    }
    dsrLoad(RF::s0dsr, kDsrSend, nth("y", oh));
    inst(Opcode::MOV32, {ddsr(kDsrSend), s0(kDsrSend)});
  }
  // Backward: the gradient rows, then per input row its gradient west.
  // (Feeding a residual block: the two paths' gradients added, row by
  // row.)
  for (int64_t oh = 0; oh < hout; ++oh) {
    dsrLoad(RF::ddsr, kDsrA, nth("dy", oh));
    dsrLoad(RF::s0dsr, kDsrA, "grad_in");
    inst(Opcode::MOV32, {ddsr(kDsrA), s0(kDsrA)});
    if (gradIn2 >= 0) {
      dsrLoad(RF::s0dsr, kDsrA, nth("dy", oh));
      dsrLoad(RF::s1dsr, kDsrA, "grad_in2");
      inst(Opcode::FADD, {dsr(kDsrA), s1(kDsrA)});
    }
  }
  auto un = [&](Opcode op, StringRef d, StringRef src) {
    unVia(kDsrA, op, d, src);
  };
  for (int64_t h = 0; h < s.hin; ++h) {
    int64_t oh = h / s.sh;
    // The window's running maximum, reset at its first row.
    if (h % s.sh == 0)
      un(Opcode::MOV32, "ytmp", nth("y", oh));
    for (int64_t j = 0; j < s.kw; ++j) {
      // m = (x == the running maximum) at window column j; where it holds,
      // the maximum becomes NaN (this is the first maximum), and dX = dY.
      std::string m = nth("mask_col", j);
      dsrLoad(RF::ddsr, kDsrA, m);
      dsrLoad(RF::s0dsr, kDsrA, (nth("x", h) + "_col" + Twine(j)).str());
      dsrLoad(RF::s1dsr, kDsrA, "ytmp");
      inst(Opcode::FCEQ, {dsr(kDsrA), s1(kDsrA)});
      un(Opcode::MOV32, "scratch", m);
      dsrLoad(RF::ddsr, kDsrA, "scratch");
      dsrLoad(RF::s0dsr, kDsrA, "nan");
      dsrLoad(RF::s1dsr, kDsrA, "ytmp");
      inst(Opcode::SEL32, {dsr(kDsrA), s1(kDsrA)});
      un(Opcode::MOV32, "ytmp", "scratch");
      dsrLoad(RF::ddsr, kDsrA, m);
      dsrLoad(RF::s0dsr, kDsrA, nth("dy", oh));
      inst(Opcode::SEL32, {dsr(kDsrA), imm(wt::SmallImm::Zero)});
    }
    un(Opcode::MOV32, "grad_out", "mask");
  }
  jump("sample");
}

} // namespace

LogicalResult emitTrainedPoolKernel(OpBuilder &b, Location loc,
                                    const PoolKernel &k, int64_t gradIn,
                                    int64_t gradIn2, int64_t gradOut,
                                    StringRef name,
                                    const RouteTable &routes) {
  if (std::string why = trainedPoolLimits(k.shape, k.rows); !why.empty())
    return emitError(loc) << "pooling kernel " << name << " on " << k.rows
                          << " rows cannot be trained: " << why;
  if (k.tiles != 1)
    return emitError(loc) << "pooling kernel " << name
                          << " is cut into bands, which training does not do";
  Emitter e(b, loc, k, gradIn, gradIn2, gradOut, name);
  // (The PEs are appended at the insertion point, the block's end.)
  Block *block = b.getInsertionBlock();
  Operation *last = block->empty() ? nullptr : &block->back();
  forEachColumnGroup(routes, k.x, k.rows,
                     [&](int64_t r0, int64_t r1) { e.emitGroup(r0, r1, routes); });
  // The code must end before the records (trainedPoolMap counted it).
  const int64_t bound = trainedPoolInstructions(k.shape);
  Block::iterator first =
      last ? std::next(Block::iterator(last)) : block->begin();
  for (Operation &op : llvm::make_range(first, block->end())) {
    int64_t n = 0;
    op.walk([&](wv::TaskOp task) {
      n += int64_t(task.getBody().front().getOperations().size());
    });
    if (n > bound)
      return emitError(loc) << "pooling kernel " << name << " has " << n
                            << " instructions a PE, more than the " << bound
                            << " its memory map leaves room for";
  }
  return success();
}

} // namespace weft::conversion
