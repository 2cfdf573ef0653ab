//===- EmitFrustum.cpp - Fused frustum groups to per-PE programs ----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits the programs of a fused frustum group of convolutions
// (docs/frustum.md, "The lowering"): one PE a band of output columns, at
// (x0 + t, y0). It holds every layer's weights and runs the band's
// depth-first schedule (lib/Kernels/FrustumChain.cpp): input rows arrive
// as into a convolution of S = R = 1 (the PE turns its lane into its column
// color and receives from it), every level keeps a line buffer of its
// input rows, and a level's completed output row is written straight into
// the next level's line buffer (a ReLU as an fmax on the way), never sent.
// Only the top level's rows leave, exactly as from a banded convolution's
// last column, so the routers merge the bands' rows into one stream.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/DenseLayer.h"

#include "WaveletBuilder.h"

#include "wavelet/WaveletOps.h"

#include "weft/Kernels/FrustumChain.h"
#include "weft/Machine/ISA.h"
#include "weft/Machine/Numerics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <limits>

using namespace mlir;
namespace wt = weft::machine;
namespace wv = weft::wavelet;

namespace weft::conversion {
namespace {

// DSR numbers (each a DDSR / S0DSR / S1DSR triple).
enum : int32_t {
  kDsrMac = 0,   // d = the level's 4-D accumulator, s0 = weights, s1 = window
  kDsrRecv = 1,  // d = a level-0 slot, s0 = the column's input
  kDsrStore = 2, // d = the next level's slot, s0 = the level's accumulator
  kDsrOut0 = 4,  // top: output buffer 0 / 1 = its accumulator
  kDsrSend0 = 6, // top: the send of output buffer 0 / 1 (microthread 3)
  kDsrClear = 8, // the level's accumulator = its bias (or 0)
  kDsrCopy = 9,  // the lane into the column color
};
// XDSRs and stride registers of the current level's 4-D vectors.
enum : int64_t { kXAcc = 0, kXW = 1, kXWin = 2, kXBias = 3 };
enum : int64_t { kStrideLm = 0, kStrideCi = 1, kStrideOw = 2, kStrideJ = 3 };

class Emitter : WaveletBuilder {
public:
  Emitter(OpBuilder &b, Location loc, const DenseLayer &layer,
          const FrustumBand &band, int64_t t, const DenseMapping &m,
          const DenseColors &colors, StringRef name, const RouteTable &routes)
      : WaveletBuilder(b, loc), layer(layer), band(band), t(t), m(m),
        colors(colors), name(name), routes(routes),
        mm(frustumMemoryMap(band)) {}

  void emit() {
    Block *body = columnGroup(name, t, m.x0 + t, m.y0, 0, 1, routes);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(body);
    emitSegments();
    emitRecords();
    emitProgram();
  }

private:
  int64_t rec(int64_t i) const { return mm.records + 4 * i; }
  std::string lv(size_t l, const Twine &what) const {
    return ("l" + Twine(l) + "_" + what).str();
  }
  const ConvShape &shape(size_t l) const { return band.levels[l]; }
  size_t top() const { return band.levels.size() - 1; }
  bool hasBias(size_t l) const { return !layer.frustumBias[l].empty(); }
  ElementsAttr blob(StringRef what, int64_t n, ArrayRef<char> bytes) {
    auto type = RankedTensorType::get({n}, b.getF32Type());
    std::string key = (name + "_" + what + "_" + Twine(t)).str();
    return DenseResourceElementsAttr::get(
        type, key, HeapAsmResourceBlob::allocateAndCopyInferAlign(bytes));
  }

  void emitSegments();
  void emitRecords();
  void emitProgram();
  /// Loads level l's 4-D vectors, strides and accumulator destination.
  void useLevel(size_t l);
  void closeout(const FrustumStep &st, int64_t &outRows);

  const DenseLayer &layer;
  const FrustumBand &band;
  const int64_t t;
  const DenseMapping m;
  DenseColors colors;
  StringRef name;
  const RouteTable &routes;
  const FrustumMemoryMap mm;
  int64_t current = -1;
};

void Emitter::emitSegments() {
  if (llvm::any_of(band.levels, [](const ConvShape &s) { return s.maxPool; }))
    wv::SegmentOp::create(
        b, loc, "ninf_data", mm.negInf, /*per_pe=*/false,
        DenseElementsAttr::get(RankedTensorType::get({1}, b.getF32Type()),
                               -std::numeric_limits<float>::infinity()));
  for (size_t l = 0; l < band.levels.size(); ++l) {
    const ConvShape &s = shape(l);
    if (s.maxPool)
      continue; // no weights

    const std::vector<float> &w = layer.frustumWeights[l];
    // W[ci][i][j][n], all channels (one PE).
    std::vector<char> bytes;
    bytes.reserve(size_t(s.cin * s.kh * s.kw * s.cout * 4));
    for (int64_t ci = 0; ci < s.cin; ++ci)
      for (int64_t i = 0; i < s.kh; ++i)
        for (int64_t j = 0; j < s.kw; ++j)
          for (int64_t n = 0; n < s.cout; ++n)
            putF32(bytes,
                   w[size_t(((n * s.cin + ci) * s.kh + i) * s.kw + j)]);
    wv::SegmentOp::create(b, loc, lv(l, "weights"), mm.weights[l],
                          /*per_pe=*/false,
                          blob(lv(l, "w"), s.cin * s.kh * s.kw * s.cout,
                               bytes));
    if (hasBias(l)) {
      std::vector<char> bias;
      for (float v : layer.frustumBias[l])
        putF32(bias, v);
      wv::SegmentOp::create(b, loc, lv(l, "bias_data"), mm.bias[l],
                            /*per_pe=*/false,
                            blob(lv(l, "b"), s.cout, bias));
    }
  }
}

void Emitter::emitRecords() {
  int64_t next = 0;
  for (size_t l = 0; l < band.levels.size(); ++l) {
    const ConvShape &s = shape(l);
    const int64_t lk = s.cin, lm = s.cout, wo = s.wout();
    const int64_t rowWords = 2 * mm.ringWidth[l] * lk;
    // The slots: where a row is written (its interior; the pad columns
    // stay zero) and where the window reads it.
    const int64_t written = l == 0 ? band.received() : s.win;
    for (int64_t k = 0; k < mm.ringRows[l]; ++k) {
      int64_t base = mm.ring[l] + k * rowWords;
      dsdAt(lv(l, "slot" + Twine(k)), rec(next++),
            DsdFields::mem1d(written * lk, base + 2 * s.pl * lk));
      dsdAt(lv(l, "win" + Twine(k)), rec(next++),
            DsdFields::mem4d(base, kXWin));
    }
    for (int64_t i = 0; i < s.kh; ++i)
      dsdAt(lv(l, "w" + Twine(i)), rec(next++),
            DsdFields::mem4d(mm.weights[l] + 2 * i * s.kw * lm, kXW));
    dsdAt(lv(l, "acc4"), rec(next++), DsdFields::mem4d(mm.acc[l], kXAcc));
    dsdAt(lv(l, "acc"), rec(next++), DsdFields::mem1d(lm * wo, mm.acc[l]));
    dsdAt(lv(l, "bias"), rec(next++), DsdFields::mem4d(mm.bias[l], kXBias));
    if (s.maxPool) {
      // (Channels, output columns, window columns, 1): the accumulator
      // repeats over the window columns.
      SmallVector<int64_t> lens = {lm, wo, s.kw, 1};
      wv::XdsdOp::create(
          b, loc, lv(l, "x_acc"), uint64_t(rec(next++)), lens,
          ArrayRef<int64_t>{kSelOne, kStrideLm, kSelZero, kSelZero});
      wv::XdsdOp::create(
          b, loc, lv(l, "x_w"), uint64_t(rec(next++)), lens,
          ArrayRef<int64_t>{kSelOne, kStrideLm, kSelZero, kSelZero});
      wv::XdsdOp::create(
          b, loc, lv(l, "x_win"), uint64_t(rec(next++)), lens,
          ArrayRef<int64_t>{kSelOne, kStrideOw, kStrideJ, kSelZero});
      wv::XdsdOp::create(
          b, loc, lv(l, "x_bias"), uint64_t(rec(next++)),
          ArrayRef<int64_t>{lm, wo, 1, 1},
          ArrayRef<int64_t>{kSelOne, kSelZero, kSelZero, kSelZero});
      dsdAt(lv(l, "ninf"), rec(next++),
            DsdFields::mem1d(lm * wo, mm.negInf).withStride(0));
      // Its pad columns hold -inf, not zeros: the left pad and the columns
      // from the data's end to the padded width, in every slot (written
      // once in the prologue; rows never overwrite them).
      const int64_t left = s.pl * lk,
                    right = (mm.ringWidth[l] - s.pl - written) * lk;
      dsdAt(lv(l, "lpad_src"), rec(next++),
            DsdFields::mem1d(std::max<int64_t>(left, 1), mm.negInf)
                .withStride(0));
      dsdAt(lv(l, "rpad_src"), rec(next++),
            DsdFields::mem1d(std::max<int64_t>(right, 1), mm.negInf)
                .withStride(0));
      for (int64_t k = 0; k < mm.ringRows[l]; ++k) {
        int64_t base = mm.ring[l] + k * rowWords;
        dsdAt(lv(l, "lpad" + Twine(k)), rec(next++),
              DsdFields::mem1d(std::max<int64_t>(left, 1), base));
        dsdAt(lv(l, "rpad" + Twine(k)), rec(next++),
              DsdFields::mem1d(std::max<int64_t>(right, 1),
                               base + 2 * (s.pl + written) * lk));
      }
      const int64_t strides[4] = {lm, 0, s.sw * lk, s.dw * lk};
      auto type = RankedTensorType::get({1}, b.getIntegerType(16));
      for (auto [k, v] : llvm::enumerate(strides))
        wv::SegmentOp::create(
            b, loc, lv(l, "stride" + Twine(k)), rec(next++), /*per_pe=*/false,
            DenseElementsAttr::get(type, ArrayRef<int16_t>{int16_t(v)}));
      continue;
    }
    SmallVector<int64_t> lens = {lm, wo, s.kw, lk};
    wv::XdsdOp::create(
        b, loc, lv(l, "x_acc"), uint64_t(rec(next++)), lens,
        ArrayRef<int64_t>{kSelOne, kStrideLm, kSelZero, kSelZero});
    wv::XdsdOp::create(
        b, loc, lv(l, "x_w"), uint64_t(rec(next++)), lens,
        ArrayRef<int64_t>{kSelOne, kSelZero, kStrideLm, kStrideCi});
    wv::XdsdOp::create(
        b, loc, lv(l, "x_win"), uint64_t(rec(next++)), lens,
        ArrayRef<int64_t>{kSelZero, kStrideOw, kStrideJ, kSelOne});
    wv::XdsdOp::create(
        b, loc, lv(l, "x_bias"), uint64_t(rec(next++)),
        ArrayRef<int64_t>{lm, wo, 1, 1},
        ArrayRef<int64_t>{kSelOne, kSelZero, kSelZero, kSelZero});
    // The stride registers' values, one word each.
    const int64_t strides[4] = {lm, s.kh * s.kw * lm, s.sw * lk, s.dw * lk};
    auto type = RankedTensorType::get({1}, b.getIntegerType(16));
    for (auto [k, v] : llvm::enumerate(strides))
      wv::SegmentOp::create(
          b, loc, lv(l, "stride" + Twine(k)), rec(next++), /*per_pe=*/false,
          DenseElementsAttr::get(type, ArrayRef<int16_t>{int16_t(v)}));
  }
  const ConvShape &s0 = shape(0), &st = shape(top());
  const int64_t in = band.received() * s0.cin, row = st.cout * st.wout();
  // A residual block's skip: output columns [out0, out1) of each level-0
  // slot (input column x sits at pixel pl + x - in0 of its row).
  if (st.skipAdd)
    for (int64_t k = 0; k < mm.ringRows[0]; ++k)
      dsdAt(("skip" + Twine(k)).str(), rec(next++),
            DsdFields::mem1d(row,
                             mm.ring[0] + k * 2 * mm.ringWidth[0] * s0.cin +
                                 2 * (s0.pl + band.out0 - band.in0) * s0.cin));
  dsdAt("in", rec(next++), DsdFields::fabin(in, colors.column));
  dsdAt("copy_in", rec(next++), DsdFields::fabin(in, colors.in));
  dsdAt("copy_out", rec(next++),
        DsdFields::fabout(in, colors.column).withUtid(0));
  for (int k = 0; k < 2; ++k) {
    dsdAt(("out_buf" + Twine(k)).str(), rec(next++),
          DsdFields::mem1d(row, mm.outBuf + 2 * row * k));
    dsdAt(("send" + Twine(k)).str(), rec(next++),
          DsdFields::fabout(row, colors.out).withUtid(3));
  }
  assert(next <= mm.numRecords && "the memory map's records overflow");
}

void Emitter::useLevel(size_t l) {
  using RF = wv::RegFile;
  if (current == int64_t(l))
    return;
  current = int64_t(l);
  for (int64_t k = 0; k < 4; ++k)
    dsrLoad(RF::stride, k, lv(l, "stride" + Twine(k)));
  dsrLoad(RF::xdsr, kXAcc, lv(l, "x_acc"));
  dsrLoad(RF::xdsr, kXW, lv(l, "x_w"));
  dsrLoad(RF::xdsr, kXWin, lv(l, "x_win"));
  dsrLoad(RF::xdsr, kXBias, lv(l, "x_bias"));
  dsrLoad(RF::ddsr, kDsrMac, lv(l, "acc4"));
}

void Emitter::closeout(const FrustumStep &st, int64_t &outRows) {
  using RF = wv::RegFile;
  const size_t l = size_t(st.level);
  useLevel(l);
  if (l < top()) {
    // Straight into the next level's slot.
    dsrLoad(RF::ddsr, kDsrStore, lv(l + 1, "slot" + Twine(st.slot)));
    dsrLoad(RF::s0dsr, kDsrStore, lv(l, "acc"));
    if (shape(l).relu)
      inst(Opcode::FMAX, {dsr(kDsrStore), imm(wt::SmallImm::Zero)});
    else
      inst(Opcode::MOV32, {ddsr(kDsrStore), s0(kDsrStore)});
  } else {
    // A residual block: the input row of the same index added first.
    if (st.skipSlot >= 0) {
      dsrLoad(RF::ddsr, kDsrStore, lv(l, "acc"));
      dsrLoad(RF::s0dsr, kDsrStore, lv(l, "acc"));
      dsrLoad(RF::s1dsr, kDsrStore, ("skip" + Twine(st.skipSlot)).str());
      inst(Opcode::FADD, {dsr(kDsrStore), s1(kDsrStore)});
    }
    // Into output buffer k, then the send's launch on microthread 3 (it
    // waits for the previous one, so the buffer written next has been
    // sent), a ReLU riding on it.
    int32_t k = int32_t(outRows++ % 2);
    inst(Opcode::MOV32, {ddsr(kDsrOut0 + k), s0(kDsrOut0 + k)});
    if (shape(l).relu)
      inst(Opcode::FMAX, {dsr(kDsrSend0 + k), imm(wt::SmallImm::Zero)});
    else
      inst(Opcode::MOV32, {ddsr(kDsrSend0 + k), s0(kDsrSend0 + k)});
  }
  // The accumulator back to the bias (or zero; a max pool's to -inf).
  dsrLoad(RF::ddsr, kDsrClear, lv(l, "acc"));
  if (shape(l).maxPool) {
    dsrLoad(RF::s0dsr, kDsrClear, lv(l, "ninf"));
    inst(Opcode::MOV32, {ddsr(kDsrClear), s0(kDsrClear)});
  } else if (hasBias(l)) {
    dsrLoad(RF::s0dsr, kDsrClear, lv(l, "bias"));
    inst(Opcode::MOV32, {ddsr(kDsrClear), s0(kDsrClear)});
  } else {
    inst(Opcode::MOV32, {ddsr(kDsrClear), imm(wt::SmallImm::Zero)});
  }
}

void Emitter::emitProgram() {
  using RF = wv::RegFile;
  wv::TaskOp task_ = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&task_.getBody().front());
  dsrLoad(RF::s0dsr, kDsrRecv, "in");
  dsrLoad(RF::ddsr, kDsrCopy, "copy_out");
  dsrLoad(RF::s0dsr, kDsrCopy, "copy_in");
  for (int k = 0; k < 2; ++k) {
    std::string buf = ("out_buf" + Twine(k)).str();
    dsrLoad(RF::ddsr, kDsrOut0 + k, buf);
    dsrLoad(RF::s0dsr, kDsrOut0 + k, lv(top(), "acc"));
    dsrLoad(RF::ddsr, kDsrSend0 + k, ("send" + Twine(k)).str());
    dsrLoad(RF::s0dsr, kDsrSend0 + k, buf);
  }
  // Every level's first accumulator starts at its bias (memory is zero at
  // load).
  // (A max pool's at -inf.)
  for (size_t l = 0; l < band.levels.size(); ++l) {
    if (!hasBias(l) && !shape(l).maxPool)
      continue;
    useLevel(l);
    dsrLoad(RF::ddsr, kDsrClear, lv(l, "acc"));
    dsrLoad(RF::s0dsr, kDsrClear, lv(l, shape(l).maxPool ? "ninf" : "bias"));
    inst(Opcode::MOV32, {ddsr(kDsrClear), s0(kDsrClear)});
  }

  // A max pool's pad columns: -inf in every slot.
  for (size_t l = 0; l < band.levels.size(); ++l) {
    const ConvShape &s = shape(l);
    if (!s.maxPool)
      continue;
    const int64_t written = l == 0 ? band.received() : s.win;
    for (int64_t k = 0; k < mm.ringRows[l]; ++k) {
      if (s.pl > 0) {
        dsrLoad(RF::ddsr, kDsrClear, lv(l, "lpad" + Twine(k)));
        dsrLoad(RF::s0dsr, kDsrClear, lv(l, "lpad_src"));
        inst(Opcode::MOV32, {ddsr(kDsrClear), s0(kDsrClear)});
      }
      if (mm.ringWidth[l] > s.pl + written) {
        dsrLoad(RF::ddsr, kDsrClear, lv(l, "rpad" + Twine(k)));
        dsrLoad(RF::s0dsr, kDsrClear, lv(l, "rpad_src"));
        inst(Opcode::MOV32, {ddsr(kDsrClear), s0(kDsrClear)});
      }
    }
  }

  const std::vector<FrustumStep> steps = frustumSchedule(band);
  const int64_t unroll = shape(top()).hout() % 2 ? 2 : 1;
  label("sample");
  int64_t outRows = 0;
  for (int64_t u = 0; u < unroll; ++u) {
    // (The jump back arrives from the end of the body: whatever level it
    // used last.)
    current = -1;
    for (const FrustumStep &st : steps) {
      switch (st.kind) {
      case FrustumStep::Kind::Receive:
        // The row from the lane into the column color (microthread 0),
        // then into its slot.
        inst(Opcode::MOV32, {ddsr(kDsrCopy), s0(kDsrCopy)});
        dsrLoad(RF::ddsr, kDsrRecv, lv(0, "slot" + Twine(st.slot)));
        inst(Opcode::MOV32, {ddsr(kDsrRecv), s0(kDsrRecv)});
        break;
      case FrustumStep::Kind::Mac: {
        const size_t l = size_t(st.level);
        useLevel(l);
        // A max pool: acc = max(acc, window row), the accumulator as both
        // the destination and the first source.
        dsrLoad(RF::s0dsr, kDsrMac,
                shape(l).maxPool ? lv(l, "acc4") : lv(l, "w" + Twine(st.tap)));
        dsrLoad(RF::s1dsr, kDsrMac, lv(l, "win" + Twine(st.slot)));
        inst(shape(l).maxPool ? Opcode::FMAX : Opcode::FMAC,
             {dsr(kDsrMac), s1(kDsrMac)});
        break;
      }
      case FrustumStep::Kind::Closeout:
        closeout(st, outRows);
        break;
      }
    }
  }
  jump("sample");
}

} // namespace

void emitFrustumChain(OpBuilder &b, Location loc, const DenseLayer &layer,
                      const DenseMapping &m, const DenseColors &colors,
                      StringRef name, const RouteTable &routes) {
  std::vector<FrustumBand> bands =
      frustumBands(layer.frustum, std::max<int64_t>(1, m.tiles));
  assert(!bands.empty() && "the bands were checked at placement");
  for (auto [t, band] : llvm::enumerate(bands))
    Emitter(b, loc, layer, band, int64_t(t), m, colors, name, routes).emit();
}

} // namespace weft::conversion
