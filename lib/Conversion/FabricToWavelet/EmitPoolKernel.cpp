//===- EmitPoolKernel.cpp - Poolings to per-PE wavelet programs ----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits the per-PE programs of docs/execution-model.md ("Pooling") for one
// placed pooling: a column of PEs, each pooling its chunk of whole channels
// with one main task that runs the schedule of lib/Kernels/PoolMapping per
// sample: receive an input row into its line-buffer slot (whose pad
// columns hold -inf for a max, 0 for an average, from load time); for an
// output row, reset one of two output buffers, one 4-D fmax or fadd per
// window row inside the input over (channels, output columns, window
// columns) with the buffer's stride 0 over the window columns, an
// average's scaling by its factor vector, and the row's send on microthread
// 3 (the convolution's last column, lib/Conversion/FabricToWavelet/
// EmitConvLayer.cpp).
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/PoolKernel.h"

#include "WaveletBuilder.h"

#include "wavelet/WaveletOps.h"

#include "weft/Machine/ISA.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <limits>

using namespace mlir;
namespace wt = weft::machine;
namespace wv = weft::wavelet;

namespace weft::conversion {
namespace {

// DSR numbers (each a DDSR / S0DSR / S1DSR triple; `dsr n` names the first
// two). Buffer k of the two output buffers uses n + k.
enum : int32_t {
  kDsrOp = 0,    // d = s0 = buffer k as 4-D, s1 = a window row
  kDsrRecv = 2,  // d = a line-buffer slot, s0 = the input
  kDsrClear = 3, // buffer k = -inf (s0 a stride-0 vector) or 0
  kDsrScale = 5, // buffer k *= a factor vector (s1)
  kDsrSend = 7,  // the send of buffer k (microthread 3)
};
// XDSRs and stride registers of the 4-D vectors.
enum : int64_t { kXAcc = 0, kXWin = 1, kXFactor = 2 };
enum : int64_t { kStrideLc = 0, kStrideOw = 1, kStrideJ = 2 };

class Emitter : WaveletBuilder {
public:
  /// `k` is one band's (its shape and column); `band` its index, -1 when
  /// the kernel is not cut into bands.
  Emitter(OpBuilder &b, Location loc, const PoolKernel &k, StringRef name,
          int64_t band)
      : WaveletBuilder(b, loc), k(k), s(k.shape), name(name),
        prefix(band < 0 ? name.str() : (name + "_b" + Twine(band)).str()),
        sch(poolSchedule(s)), mm(poolMemoryMap(s, k.rows)),
        lc(poolLc(s, k.rows)), rowLen(lc * sch.wo) {
    factorCounts = poolRowCounts(s, &factorOfRow);
  }

  void emitGroup(int64_t r0, int64_t r1, const RouteTable &routes) {
    int64_t h = r1 - r0;
    std::string sym = (prefix + "_r" + Twine(r0) +
                       (h > 1 ? "_" + Twine(r1 - 1) : Twine()))
                          .str();
    Block *body = peOrGroup(sym, k.x, r0, 1, h, name);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body);
    routesAt(routes, k.x, r0);
    emitData();
    emitRecords();
    emitProgram();
  }

private:
  int64_t rec(int64_t i) const { return mm.records + 4 * i; }
  void emitData();
  void emitRecords();
  void emitProgram();

  const PoolKernel &k;
  const PoolShape &s;
  StringRef name;
  const std::string prefix;
  const PoolSchedule sch;
  const PoolMemoryMap mm;
  const int64_t lc, rowLen;
  std::vector<int64_t> factorCounts, factorOfRow;
};

void Emitter::emitData() {
  Type f32 = b.getF32Type();
  if (s.max) {
    // The line buffer's pad columns (and, until written, its interior) and
    // the accumulators' reset value.
    float ninf = -std::numeric_limits<float>::infinity();
    int64_t ring = sch.ringRows * sch.paddedWidth * lc;
    wv::SegmentOp::create(
        b, loc, "ring_init", mm.ring, /*per_pe=*/false,
        DenseElementsAttr::get(RankedTensorType::get({ring}, f32), ninf));
    wv::SegmentOp::create(
        b, loc, "ninf_data", mm.ninf, /*per_pe=*/false,
        DenseElementsAttr::get(RankedTensorType::get({1}, f32), ninf));
    return;
  }
  // One factor vector (1 / divisor per output column) per distinct row
  // divisor; the pads stay 0.
  std::vector<float> f;
  for (int64_t rc : factorCounts)
    for (int64_t ow = 0; ow < sch.wo; ++ow)
      f.push_back(1.0f / float(rc * s.colCount(ow)));
  wv::SegmentOp::create(
      b, loc, "factor_data", mm.factors, /*per_pe=*/false,
      DenseElementsAttr::get(
          RankedTensorType::get({int64_t(f.size())}, f32), ArrayRef<float>(f)));
}

void Emitter::emitRecords() {
  const int64_t rowWords = 2 * sch.paddedWidth * lc;
  int64_t next = 0;
  // Line-buffer slots: where a row is received (its interior) and where the
  // windows read it.
  for (int64_t i = 0; i < sch.ringRows; ++i) {
    int64_t base = mm.ring + i * rowWords;
    dsdAt(("recv" + Twine(i)).str(), rec(next++),
          DsdFields::mem1d(s.win * lc, base + 2 * s.pl * lc));
    dsdAt(("win" + Twine(i)).str(), rec(next++),
          DsdFields::mem4d(base, kXWin));
  }
  for (int64_t i = 0; i < 2; ++i) {
    int64_t buf = mm.outBuf + 2 * rowLen * i;
    dsdAt(("acc" + Twine(i)).str(), rec(next++), DsdFields::mem4d(buf, kXAcc));
    dsdAt(("buf" + Twine(i)).str(), rec(next++),
          DsdFields::mem1d(rowLen, buf));
    dsdAt(("send" + Twine(i)).str(), rec(next++),
          DsdFields::fabout(rowLen, k.outColor).withUtid(3));
  }
  dsdAt("in", rec(next++), DsdFields::fabin(s.win * lc, k.inColor));
  if (s.max) {
    dsdAt("ninf", rec(next++), DsdFields::mem1d(rowLen, mm.ninf).withStride(0));
  } else {
    for (size_t i = 0; i < factorCounts.size(); ++i)
      dsdAt(("factor" + Twine(i)).str(), rec(next++),
            DsdFields::mem4d(mm.factors + 2 * int64_t(i) * sch.wo, kXFactor));
  }
  // The 4-D vectors' dimensions: (channels, output columns, window
  // columns); the accumulator repeats over the window columns, the factors
  // over the channels.
  SmallVector<int64_t> lens = {lc, sch.wo, sch.kw, 1};
  wv::XdsdOp::create(b, loc, "x_acc", uint64_t(rec(next++)), lens,
                     ArrayRef<int64_t>{kSelOne, kStrideLc, kSelZero, kSelZero});
  wv::XdsdOp::create(b, loc, "x_win", uint64_t(rec(next++)), lens,
                     ArrayRef<int64_t>{kSelOne, kStrideOw, kStrideJ, kSelZero});
  if (!s.max)
    wv::XdsdOp::create(b, loc, "x_factor", uint64_t(rec(next++)),
                       ArrayRef<int64_t>{lc, sch.wo, 1, 1},
                       ArrayRef<int64_t>{kSelZero, kSelOne, kSelZero, kSelZero});
  // The stride registers' values, one word each.
  const int64_t strides[3] = {lc, s.sw * lc, s.dw * lc};
  strideWords(strides, [&] { return rec(next++); });
  assert(next <= mm.numRecords && "the memory map's records overflow");
}

void Emitter::emitProgram() {
  using RF = wv::RegFile;
  wv::TaskOp t = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&t.getBody().front());
  loadStrides(3);
  dsrLoad(RF::xdsr, kXAcc, "x_acc");
  dsrLoad(RF::xdsr, kXWin, "x_win");
  if (!s.max)
    dsrLoad(RF::xdsr, kXFactor, "x_factor");
  for (int i = 0; i < 2; ++i) {
    std::string acc = ("acc" + Twine(i)).str(), buf = ("buf" + Twine(i)).str();
    dsrLoad(RF::ddsr, kDsrOp + i, acc);
    dsrLoad(RF::s0dsr, kDsrOp + i, acc);
    dsrLoad(RF::ddsr, kDsrClear + i, buf);
    if (s.max)
      dsrLoad(RF::s0dsr, kDsrClear + i, "ninf");
    else {
      dsrLoad(RF::ddsr, kDsrScale + i, buf);
      dsrLoad(RF::s0dsr, kDsrScale + i, buf);
    }
    dsrLoad(RF::ddsr, kDsrSend + i, ("send" + Twine(i)).str());
    dsrLoad(RF::s0dsr, kDsrSend + i, buf);
  }
  dsrLoad(RF::s0dsr, kDsrRecv, "in");

  const Opcode op = s.max ? Opcode::FMAX : Opcode::FADD;
  label("sample");
  int64_t outRows = 0;
  for (int64_t u = 0; u < sch.unroll; ++u)
    for (const PoolStep &st : sch.steps) {
      if (st.receive) {
        dsrLoad(RF::ddsr, kDsrRecv, ("recv" + Twine(st.slot)).str());
        inst(Opcode::MOV32, {ddsr(kDsrRecv), s0(kDsrRecv)});
        continue;
      }
      int32_t i = int32_t(outRows % 2);
      if (st.begin) {
        if (s.max)
          inst(Opcode::MOV32, {ddsr(kDsrClear + i), s0(kDsrClear + i)});
        else
          inst(Opcode::MOV32, {ddsr(kDsrClear + i), imm(wt::SmallImm::Zero)});
      }
      for (int64_t slot : st.slots) {
        dsrLoad(RF::s1dsr, kDsrOp + i, ("win" + Twine(slot)).str());
        inst(op, {dsr(kDsrOp + i), s1(kDsrOp + i)});
      }
      if (!st.end)
        continue;
      if (!s.max) {
        int64_t f = factorOfRow[size_t(st.row)];
        dsrLoad(RF::s1dsr, kDsrScale + i, ("factor" + Twine(f)).str());
        inst(Opcode::FMUL, {dsr(kDsrScale + i), s1(kDsrScale + i)});
      }
      // Launches the send on microthread 3 (it waits for the previous one,
      // so the buffer reset next has been sent).
      inst(Opcode::MOV32, {ddsr(kDsrSend + i), s0(kDsrSend + i)});
      ++outRows;
    }
  jump("sample");
}

} // namespace

LogicalResult emitPoolKernel(OpBuilder &b, Location loc, const PoolKernel &k,
                             StringRef name, const RouteTable &routes) {
  FailureOr<machine::Target> target = columnTarget(
      b, loc, "pooling kernel " + name, k.x + k.tiles - 1, 0, k.rows);
  if (failed(target))
    return failure();
  std::string why = poolBandsProblem(k.shape, k.rows, k.tiles,
                                     int64_t(target->memoryBytes()));
  if (!why.empty())
    return emitError(loc) << "pooling kernel " << name << " on " << k.rows
                          << " rows: " << why;
  if (k.inColor == k.outColor)
    return emitError(loc) << "pooling kernel " << name
                          << " receives and sends on the same color "
                          << k.inColor;
  // Unbanded (the pool itself), or bands of output columns: each band's
  // column runs the program of its own pool; the routers split the input
  // rows and merge the output rows (lib/Kernels/Routing, windowBandInputs
  // and windowBandResults).
  for (auto [t, band] : llvm::enumerate(poolBands(k.shape, k.tiles))) {
    PoolKernel bk = k;
    bk.shape = band;
    bk.x = k.x + int64_t(t);
    bk.tiles = 1;
    Emitter e(b, loc, bk, name, k.tiles == 1 ? -1 : int64_t(t));
    forEachColumnGroup(routes, bk.x, bk.rows, [&](int64_t r0, int64_t r1) {
      e.emitGroup(r0, r1, routes);
    });
  }
  return success();
}

} // namespace weft::conversion
