//===- EmitConvLayer.cpp - Convolutions to per-PE wavelet programs -------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits the per-PE programs of docs/execution-model.md ("Convolution") for
// one placed convolution: the layout of a dense layer (input-channel chunks
// on columns, output-channel chunks on rows, the diagonal turning each input
// chunk into its column), and on every compute PE one main task that runs
// the schedule of lib/Kernels/ConvMapping per sample: receive an input row
// into its line-buffer slot just before the first kernel row that reads it;
// for an output row, one 4-D multiply-accumulate per kernel row over
// (output channels, output columns, window columns, input channels), then
// the row's partial sums east (the first column starts its accumulator at
// the bias), the last column adding them into an output buffer and sending
// the row on a microthread, a ReLU as part of the send (ReLU6: an fmax and
// an fmin against a stride-0 vector of its bound in the buffer; any other
// fused activation as its steps on the buffer, EmitEpilogue.h).
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/DenseLayer.h"

#include "EmitEpilogue.h"
#include "SmearedLayout.h"
#include "WaveletBuilder.h"

#include "wavelet/WaveletOps.h"

#include "weft/Machine/ISA.h"
#include "weft/Machine/Numerics.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
namespace wt = weft::machine;
namespace wv = weft::wavelet;

namespace weft::conversion {
namespace {

// DSR numbers (each a DDSR / S0DSR / S1DSR triple, `dsr n` naming the
// first two).
enum : int32_t {
  kDsrMac = 0,  // d = 4-D accumulator, s0 = a kernel row's weights, s1 = window
  kDsrRecv = 1, // d = a line-buffer slot, s0 = the column's input
  kDsrReduce = 2, // partial sums: forward, add and forward, or add
  kDsrOut0 = 4,   // the last column: output buffer 0 / 1 = acc (+ the
                  // west's partial sums)
  kDsrSend0 = 6,  // the send of output buffer 0 / 1 (microthread 3)
  kDsrClear = 8,  // acc = 0, or (the first column) acc = bias
  kDsrCopy = 9,   // the diagonal: column <- input chunk
  kDsrClip0 = 10, // ReLU6: output buffer 0 / 1 = min(it, the bound)
  kDsrEpilogue = 11, // a fused activation's steps (never with a ReLU6)
};
// XDSRs and stride registers of the 4-D vectors.
enum : int64_t { kXAcc = 0, kXW = 1, kXWin = 2, kXBias = 3 };
enum : int64_t { kStrideLm = 0, kStrideCi = 1, kStrideOw = 2, kStrideJ = 3 };

class Emitter : WaveletBuilder {
public:
  /// Band `band` of the layer (0 when it is not cut into bands): `shape`
  /// is the band's convolution and `m` its rectangle.
  Emitter(OpBuilder &b, Location loc, const DenseLayer &layer,
          const ConvShape &shape, int64_t band, const DenseMapping &m,
          const DenseColors &colors, StringRef name, const RouteTable &routes)
      : WaveletBuilder(b, loc), layer(layer), s(shape), band(band), m(m),
        colors(colors), name(name), routes(routes),
        sch(convSchedule(s, /*lateReceives=*/true)),
        mm(convMemoryMap(s, m)), lk(convLk(s, m)), lm(convLm(s, m)),
        mixed(m.precision == Precision::Mixed),
        ew(convElementWords(m.precision)) {
    if (!s.epilogue.empty())
      epi = compileEpilogue(s.epilogue);
  }

  void emitGroups() {
    forEachSmearedGroup(
        m, layer.M, routes,
        [&](int64_t c, int64_t r0, int64_t r1, const SmearedRole &role) {
          emitGroup(c, r0, r1, role);
        });
  }

private:
  void emitGroup(int64_t c, int64_t r0, int64_t r1, const SmearedRole &role);
  void emitSegments(int64_t c, int64_t r0, int64_t r1);
  void emitRecords(int64_t c, bool diagonal);
  void emitProgram(int64_t c, bool diagonal);
  /// A copy-only PE below the rectangle: turns its chunk north, forever.
  void emitTurnOnly();

  int64_t rec(int64_t i) const { return mm.records + 4 * i; }
  ElementsAttr blob(StringRef what, ArrayRef<int64_t> shape, Type elem,
                    ArrayRef<char> bytes) {
    auto type = RankedTensorType::get(shape, elem);
    std::string key =
        (name + "_" + what + "_" + Twine(band) + "_" + Twine(blobs++)).str();
    return DenseResourceElementsAttr::get(
        type, key, HeapAsmResourceBlob::allocateAndCopyInferAlign(bytes));
  }

  const DenseLayer &layer;
  const ConvShape &s;
  const int64_t band;
  const DenseMapping m;
  DenseColors colors;
  StringRef name;
  const RouteTable &routes;
  const ConvSchedule sch;
  const ConvMemoryMap mm;
  const int64_t lk, lm;
  /// Mixed precision: fp16 weights and line buffer (`ew` 16-bit words an
  /// element), `ff2h` receives and `fmachs`; fp32 accumulation.
  const bool mixed;
  const int64_t ew;
  std::optional<EpilogueCode> epi;
  unsigned blobs = 0;
};

void Emitter::emitGroup(int64_t c, int64_t r0, int64_t r1,
                        const SmearedRole &role) {
  // (Groups are named by the column across all bands.)
  Block *body =
      columnGroup(name, band * m.smear + c, m.x0 + c, m.y0, r0, r1, routes);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(body);
  if (!role.compute && !role.diagonal)
    return; // a router-only PE
  if (!role.compute) {
    emitTurnOnly();
    return;
  }
  emitSegments(c, r0, r1);
  emitRecords(c, role.diagonal);
  emitProgram(c, role.diagonal);
}

void Emitter::emitTurnOnly() {
  const int64_t len = s.win * lk;
  dsdAt("copy_in", rec(0), DsdFields::fabin(len, colors.in));
  dsdAt("copy_out", rec(1), DsdFields::fabout(len, colors.column));
  wv::TaskOp t = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&t.getBody().front());
  dsrLoad(wv::RegFile::s0dsr, kDsrCopy, "copy_in");
  dsrLoad(wv::RegFile::ddsr, kDsrCopy, "copy_out");
  label("row");
  inst(Opcode::MOV32, {ddsr(kDsrCopy), s0(kDsrCopy)});
  jump("row");
}

void Emitter::emitSegments(int64_t c, int64_t r0, int64_t r1) {
  const int64_t h = r1 - r0, kh = s.kh, kw = s.kw;
  // Weights W[ci][i][j][n] of the PE's input and output channels.
  std::vector<char> bytes;
  bytes.reserve(size_t(h * lk * kh * kw * lm * 2 * ew));
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t ci = 0; ci < lk; ++ci)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j)
          for (int64_t n = 0; n < lm; ++n) {
            int64_t o = r * lm + n, in = c * lk + ci;
            float v = layer.weights[size_t(((o * s.cin + in) * kh + i) * kw +
                                           j)];
            (mixed ? putF16 : putF32)(bytes, v);
          }
  wv::SegmentOp::create(
      b, loc, "weights", mm.weights, /*per_pe=*/true,
      blob("w", {h, 1, lk * kh * kw * lm},
           mixed ? Type(b.getF16Type()) : Type(b.getF32Type()), bytes));
  if (c == 0 && !layer.bias.empty()) {
    std::vector<char> bias;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t n = 0; n < lm; ++n)
        putF32(bias, layer.bias[size_t(r * lm + n)]);
    wv::SegmentOp::create(b, loc, "bias_data", mm.bias, /*per_pe=*/true,
                          blob("b", {h, 1, lm}, b.getF32Type(), bias));
  }
  if (c == m.smear - 1 && epi)
    EpilogueEmitter(b, loc, *epi, lm * s.wout(), mm.epilogue).emitData();
  if (c == m.smear - 1 && s.reluMax)
    wv::SegmentOp::create(
        b, loc, "clip_data", mm.clip, /*per_pe=*/false,
        DenseElementsAttr::get(RankedTensorType::get({1}, b.getF32Type()),
                               *s.reluMax));
}

void Emitter::emitRecords(int64_t c, bool diagonal) {
  const bool first = c == 0, last = c == m.smear - 1;
  const int64_t wo = s.wout(), row = wo * lm,
                rowWords = ew * sch.paddedWidth * lk;
  const int64_t pin = colors.psum[c % 2],
                pout = last ? colors.out : colors.psum[(c + 1) % 2];
  int64_t next = 0;
  // Line-buffer slots: where a row is received (its interior; the pad
  // columns stay zero) and where the window reads it.
  for (int64_t k = 0; k < sch.ringRows; ++k) {
    int64_t base = mm.ring + k * rowWords;
    dsdAt(("recv" + Twine(k)).str(), rec(next++),
          DsdFields::mem1d(s.win * lk, base + ew * s.pl * lk));
    dsdAt(("win" + Twine(k)).str(), rec(next++),
          DsdFields::mem4d(base, kXWin));
  }
  for (int64_t i = 0; i < s.kh; ++i)
    dsdAt(("w" + Twine(i)).str(), rec(next++),
          DsdFields::mem4d(mm.weights + ew * i * s.kw * lm, kXW));
  dsdAt("acc4", rec(next++), DsdFields::mem4d(mm.acc, kXAcc));
  dsdAt("acc", rec(next++), DsdFields::mem1d(row, mm.acc));
  dsdAt("in", rec(next++), DsdFields::fabin(s.win * lk, colors.column));
  if (!first)
    dsdAt("psum_in", rec(next++), DsdFields::fabin(row, pin));
  if (!last)
    dsdAt("psum_out", rec(next++), DsdFields::fabout(row, pout));
  if (first && !layer.bias.empty())
    dsdAt("bias", rec(next++), DsdFields::mem4d(mm.bias, kXBias));
  if (last) {
    for (int k = 0; k < 2; ++k) {
      dsdAt(("out_buf" + Twine(k)).str(), rec(next++),
            DsdFields::mem1d(row, mm.outBuf + 2 * row * k));
      dsdAt(("send" + Twine(k)).str(), rec(next++),
            DsdFields::fabout(row, pout).withUtid(3));
    }
    if (s.reluMax)
      dsdAt("clip", rec(next++), DsdFields::mem1d(row, mm.clip).withStride(0));
    if (epi)
      EpilogueEmitter(b, loc, *epi, row, mm.epilogue).emitRecords([&] {
        return rec(next++);
      });
  }
  if (diagonal) {
    dsdAt("copy_in", rec(next++), DsdFields::fabin(s.win * lk, colors.in));
    dsdAt("copy_out", rec(next++),
          DsdFields::fabout(s.win * lk, colors.column).withUtid(0));
  }
  // The 4-D vectors' dimensions: (output channels, output columns, window
  // columns, input channels), the same lengths for all three operands of
  // the multiply-accumulate.
  SmallVector<int64_t> lens = {lm, wo, s.kw, lk};
  wv::XdsdOp::create(b, loc, "x_acc", uint64_t(rec(next++)), lens,
                     ArrayRef<int64_t>{kSelOne, kStrideLm, kSelZero, kSelZero});
  wv::XdsdOp::create(b, loc, "x_w", uint64_t(rec(next++)), lens,
                     ArrayRef<int64_t>{kSelOne, kSelZero, kStrideLm, kStrideCi});
  wv::XdsdOp::create(b, loc, "x_win", uint64_t(rec(next++)), lens,
                     ArrayRef<int64_t>{kSelZero, kStrideOw, kStrideJ, kSelOne});
  wv::XdsdOp::create(b, loc, "x_bias", uint64_t(rec(next++)),
                     ArrayRef<int64_t>{lm, wo, 1, 1},
                     ArrayRef<int64_t>{kSelOne, kSelZero, kSelZero, kSelZero});
  // The stride registers' values, one word each.
  const int64_t strides[4] = {lm, s.kh * s.kw * lm, s.sw * lk, s.dw * lk};
  strideWords(strides, [&] { return rec(next++); });
  assert(next <= mm.numRecords && "the memory map's records overflow");
}

void Emitter::emitProgram(int64_t c, bool diagonal) {
  using RF = wv::RegFile;
  const bool first = c == 0, last = c == m.smear - 1;
  // The first column starts every row's accumulator at the bias instead
  // of 0, so the last column, which also sends, does no bias add.
  const bool bias = first && !layer.bias.empty();
  wv::TaskOp t = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&t.getBody().front());
  loadStrides(4);
  dsrLoad(RF::xdsr, kXAcc, "x_acc");
  dsrLoad(RF::xdsr, kXW, "x_w");
  dsrLoad(RF::xdsr, kXWin, "x_win");
  if (bias)
    dsrLoad(RF::xdsr, kXBias, "x_bias");
  dsrLoad(RF::ddsr, kDsrMac, "acc4");
  dsrLoad(RF::s0dsr, kDsrRecv, "in");
  if (!last) {
    dsrLoad(RF::ddsr, kDsrReduce, "psum_out");
    dsrLoad(RF::s0dsr, kDsrReduce, "acc");
    if (!first)
      dsrLoad(RF::s1dsr, kDsrReduce, "psum_in");
  } else {
    for (int k = 0; k < 2; ++k) {
      std::string buf = ("out_buf" + Twine(k)).str();
      dsrLoad(RF::ddsr, kDsrOut0 + k, buf);
      dsrLoad(RF::s0dsr, kDsrOut0 + k, "acc");
      if (!first)
        dsrLoad(RF::s1dsr, kDsrOut0 + k, "psum_in");
      dsrLoad(RF::ddsr, kDsrSend0 + k, ("send" + Twine(k)).str());
      dsrLoad(RF::s0dsr, kDsrSend0 + k, buf);
      if (s.reluMax) {
        dsrLoad(RF::ddsr, kDsrClip0 + k, buf);
        dsrLoad(RF::s0dsr, kDsrClip0 + k, buf);
        dsrLoad(RF::s1dsr, kDsrClip0 + k, "clip");
      }
    }
  }
  dsrLoad(RF::ddsr, kDsrClear, "acc");
  if (bias) {
    // The first row's accumulator (memory is zero at load).
    dsrLoad(RF::s0dsr, kDsrClear, "bias");
    inst(Opcode::MOV32, {ddsr(kDsrClear), s0(kDsrClear)});
  }
  if (diagonal) {
    dsrLoad(RF::ddsr, kDsrCopy, "copy_out");
    dsrLoad(RF::s0dsr, kDsrCopy, "copy_in");
  }

  label("sample");
  int64_t outRows = 0;
  for (int64_t u = 0; u < sch.unroll; ++u)
    for (const ConvStep &st : sch.steps) {
      if (st.receive) {
        // (The diagonal first launches the copy of the row into its
        // column, on microthread 0.)
        if (diagonal)
          inst(Opcode::MOV32, {ddsr(kDsrCopy), s0(kDsrCopy)});
        dsrLoad(RF::ddsr, kDsrRecv, ("recv" + Twine(st.slot)).str());
        inst(mixed ? Opcode::FF2H : Opcode::MOV32,
             {ddsr(kDsrRecv), s0(kDsrRecv)});
        continue;
      }
      for (size_t k = 0; k < st.taps.size(); ++k) {
        dsrLoad(RF::s0dsr, kDsrMac, ("w" + Twine(st.taps[k])).str());
        dsrLoad(RF::s1dsr, kDsrMac, ("win" + Twine(st.slots[k])).str());
        inst(mixed ? Opcode::FMACHS : Opcode::FMAC,
             {dsr(kDsrMac), s1(kDsrMac)});
      }
      if (!st.closeout)
        continue;
      if (!last) {
        if (first)
          inst(Opcode::MOV32, {ddsr(kDsrReduce), s0(kDsrReduce)});
        else
          inst(Opcode::FADD, {dsr(kDsrReduce), s1(kDsrReduce)});
      } else {
        // Output buffer k = acc (+ the west's partial sums); a ReLU
        // rides on the send when it can, a ReLU6 is applied in the
        // buffer (max, then min against the bound).
        int32_t k = int32_t(outRows % 2);
        if (!first)
          inst(Opcode::FADD, {dsr(kDsrOut0 + k), s1(kDsrOut0 + k)});
        else if (s.reluMax)
          inst(Opcode::FMAX, {dsr(kDsrOut0 + k), imm(wt::SmallImm::Zero)});
        else
          inst(Opcode::MOV32, {ddsr(kDsrOut0 + k), s0(kDsrOut0 + k)});
        if (s.reluMax) {
          if (!first)
            inst(Opcode::FMAX, {dsr(kDsrClip0 + k), imm(wt::SmallImm::Zero)});
          inst(Opcode::FMIN, {dsr(kDsrClip0 + k), s1(kDsrClip0 + k)});
        }
        // A fused activation, in place.
        if (epi)
          EpilogueEmitter(b, loc, *epi, lm * s.wout(), mm.epilogue)
              .emitRow(("out_buf" + Twine(k)).str(), kDsrEpilogue);
        // Launches the send on microthread 3 (it waits for the previous
        // one, so the buffer written next has been sent).
        if (s.relu && !s.reluMax)
          inst(Opcode::FMAX, {dsr(kDsrSend0 + k), imm(wt::SmallImm::Zero)});
        else
          inst(Opcode::MOV32, {ddsr(kDsrSend0 + k), s0(kDsrSend0 + k)});
      }
      if (bias)
        inst(Opcode::MOV32, {ddsr(kDsrClear), s0(kDsrClear)});
      else
        inst(Opcode::MOV32, {ddsr(kDsrClear), imm(wt::SmallImm::Zero)});
      ++outRows;
    }
  jump("sample");
}

} // namespace

void emitConvLayer(OpBuilder &b, Location loc, const DenseLayer &layer,
                   const DenseMapping &m, const DenseColors &colors,
                   StringRef name, const RouteTable &routes) {
  if (m.tiles <= 1) {
    Emitter(b, loc, layer, *layer.conv, 0, m, colors, name, routes)
        .emitGroups();
    return;
  }
  // Bands of output columns (docs/execution-model.md, "Bands of output
  // columns"): each band's rectangle runs the program of its own
  // convolution; the routers merge the bands' rows (lib/Kernels/Routing).
  std::vector<ConvTile> bands = convTiles(*layer.conv, m.tiles);
  for (auto [t, band] : llvm::enumerate(bands)) {
    DenseMapping bm = m;
    bm.tiles = 1;
    bm.x0 = m.x0 + int64_t(t) * m.smear;
    Emitter(b, loc, layer, band.shape, int64_t(t), bm, colors, name, routes)
        .emitGroups();
  }
}

} // namespace weft::conversion
