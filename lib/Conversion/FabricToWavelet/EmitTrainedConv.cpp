//===- EmitTrainedConv.cpp - A trained convolution's PE programs ---------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits the per-PE programs of docs/training.md ("Convolutions") for one
// placed convolution trained by SGD or MBGD, one sample at a time, on its
// inference layout. Per sample every compute PE
//   - keeps every input row it receives (the pads zero) and computes the
//     forward as inference does, one 4-D multiply-accumulate per kernel row
//     inside the input; the last column keeps its output rows (after the
//     ReLU) and sends them on;
//   - takes the gradient rows dL/dy: the last column from the next kernel,
//     masks them by the ReLU (y == 0) and multicasts them west along the
//     row; the other columns take them off the row;
//   - (every trained convolution but the first) computes its part of the
//     gradient of its input, dX[h] += W_i dY[h + pt - i dh] per input row
//     h and kernel row i, a 4-D multiply-accumulate with a negative stride
//     over a gradient row with the window's reach of zeros on both sides,
//     and reduces it down the column to the diagonal, which sends it west;
//   - runs the chain pass, the forward's own 4-D instruction with two
//     operands' roles exchanged (dW_i += x row (oh sh + i dh) * dY[oh]),
//     into the weights themselves under SGD (on dY scaled by -lr) or into
//     the mini-batch's gradient under MBGD, and (the first column) the bias
//     gradient, one 4-D add over the gradient rows.
// The sample's input is taken only after the previous sample's update.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/DenseLayer.h"

#include "SmearedLayout.h"
#include "WaveletBuilder.h"

#include "wavelet/WaveletOps.h"

#include "weft/Kernels/ConvTraining.h"
#include "weft/Machine/Numerics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
namespace wt = weft::machine;
namespace wv = weft::wavelet;

namespace weft::conversion {
namespace {

// GPRs: 6/7 hold -lr, 8 counts the samples of a mini-batch, 9 holds its
// size.
constexpr int64_t kGprLr = 6, kGprCount = 8, kGprBatch = 9;

// DSRs (each a DDSR / S0DSR / S1DSR triple). The forward's are loaded once;
// the backward loads what each instruction uses (a cycle a record).
enum : int64_t {
  kDsrMac = 0,    // d = acc4 (forward) or W_i / G_i (chain), s0, s1
  kDsrRecv = 1,   // d = a stored input row, s0 = the column's input
  kDsrReduce = 2, // not the last column: the partial sums east
  kDsrOut = 3,    // the last column: y row = acc (+ the west's)
  kDsrRelu = 4,   // y row = max(y row, 0)
  kDsrSend = 5,   // the send of a y row (microthread 3)
  kDsrClear = 6,  // acc = 0, or (the first column) acc = bias
  kDsrCopy = 7,   // the diagonal: column <- input row
  kDsrA = 8,      // the backward's scratch DSRs
  kDsrB = 9,
};

// XDSRs. 0-2 hold the forward's (and the chain pass's) dimensions
// (Lm, wout, kw, Lk) for the whole run; 3 the bias's broadcast in the
// forward, the input gradient's destination in its phase; 4 and 5 the input
// gradient's sources, then the bias gradient's vectors.
enum : int64_t {
  kXAcc = 0,  // (1, Lm, 0, 0): acc, a gradient row in the chain pass
  kXW = 1,    // (1, 0, Lm, kh kw Lm): W_i, G_i
  kXWin = 2,  // (0, sw Lk, dw Lk, 1): a stored input row's window
  kXBias = 3, // (Lm, wout) (1, 0): the bias over the row's pixels
  kXIgD = 3,  // (Lm, kw, win, Lk) (0, 0, Lk, 1): dX row
  kXIgW = 4,  //                   (1, Lm, 0, kh kw Lm): W_i
  kXIgY = 5,  //                   (1, -dw Lm, Lm, 0): a padded dY row
  kXBgD = 4,  // (Lm, wout, hout) (1, 0, 0): the bias (gradient)
  kXBgY = 5,  //                  (1, Lm, pitch): the gradient rows
};
// Stride registers.
enum : int64_t {
  kRegLm = 0,   // Lm
  kRegKkLm = 1, // kh kw Lm
  kRegSwLk = 2, // sw Lk (= Lk for the input gradient, stride 1)
  kRegDwLk = 3, // dw Lk
  kRegPitch = 4, // a gradient row's elements
  kRegNegDwLm = 5, // -dw Lm
};

struct PeKey {
  SmearedRole role;
  ReduceKey red;
  bool operator==(const PeKey &o) const {
    return role == o.role && red == o.red;
  }
};

class Emitter : WaveletBuilder {
public:
  Emitter(OpBuilder &b, Location loc, const DenseLayer &layer,
          const DenseMapping &m, const DenseColors &colors,
          const TrainingColors &tc, const DenseTraining &training,
          StringRef name, const RouteTable &routes)
      : WaveletBuilder(b, loc), layer(layer), s(*layer.conv), m(m),
        colors(colors), tc(tc), t(training), name(name), routes(routes),
        mm(trainedConvMap(s, m, training)), lk(mm.lk), lm(mm.lm),
        wo(s.wout()), hout(s.hout()) {}

  LogicalResult emitGroups();

private:
  PeKey keyOf(int64_t c, int64_t r) const {
    PeKey k;
    k.role = smearedRole(m, s.cout, c, r);
    if (t.inputGradient)
      k.red = gradientReduceKey(m, c, r);
    return k;
  }
  LogicalResult emitGroup(int64_t c, int64_t r0, int64_t r1,
                          const PeKey &key);
  void emitTurnOnly();
  void emitSegments(int64_t c, int64_t r0, int64_t r1);
  void emitCompute(int64_t c, const PeKey &key);
  void emitForward(bool first, bool last, bool diagonal);
  void emitBackward(int64_t c, const PeKey &key);

  /// A record at the next free slot.
  void rec(StringRef sym, const DsdFields &f) {
    assert(records < mm.numRecords && "the records overflow");
    dsdAt(sym, mm.records + 4 * records++, f);
  }
  void xdsd(StringRef sym, ArrayRef<int64_t> lens, ArrayRef<int64_t> sels) {
    assert(records < mm.numRecords && "the records overflow");
    wv::XdsdOp::create(b, loc, sym, uint64_t(mm.records + 4 * records++),
                       lens, sels);
  }
  /// The vector steps through DSR n (default A), WaveletBuilder's.
  template <typename S1>
  void vec(Opcode op, StringRef d, StringRef s0, S1 s1, int64_t n = kDsrA) {
    vecVia(n, op, d, s0, s1);
  }
  void un(Opcode op, StringRef d, StringRef src, int64_t n = kDsrA) {
    unVia(n, op, d, src);
  }
  void fill(StringRef d, wt::SmallImm v) {
    dsrLoad(wv::RegFile::ddsr, kDsrA, d);
    inst(Opcode::MOV32, {ddsr(kDsrA), imm(v)});
  }
  static std::string nth(StringRef what, int64_t i) {
    return (what + Twine(i)).str();
  }
  /// Word addresses: stored input row h, gradient row oh (its first zero),
  /// output row oh, input-gradient row h.
  int64_t xRow(int64_t h) const { return mm.x + 2 * h * mm.paddedWidth * lk; }
  int64_t dyRow(int64_t oh) const { return mm.dy + 2 * oh * mm.dyPitch; }
  int64_t yRow(int64_t oh) const { return mm.y + 2 * oh * wo * lm; }
  int64_t dxRow(int64_t h) const { return mm.dx + 2 * h * s.win * lk; }

  const DenseLayer &layer;
  const ConvShape &s;
  const DenseMapping &m;
  DenseColors colors;
  TrainingColors tc;
  DenseTraining t;
  StringRef name;
  const RouteTable &routes;
  const TrainedConvMap mm;
  const int64_t lk, lm, wo, hout;
  int64_t records = 0;
  unsigned blobs = 0;
};

LogicalResult Emitter::emitGroups() {
  const int64_t height = m.footprint();
  for (int64_t c = 0; c < m.smear; ++c) {
    int64_t r0 = 0;
    for (int64_t r = 1; r <= height; ++r) {
      if (r < height && keyOf(c, r) == keyOf(c, r0) &&
          sameSwitches(routes, m.x0 + c, m.y0 + r, m.y0 + r0))
        continue;
      PeKey key = keyOf(c, r0);
      if (!key.role.empty() && failed(emitGroup(c, r0, r, key)))
        return failure();
      r0 = r;
    }
  }
  return success();
}

LogicalResult Emitter::emitGroup(int64_t c, int64_t r0, int64_t r1,
                                 const PeKey &key) {
  Block *body = columnGroup(name, c, m.x0 + c, m.y0, r0, r1, routes);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(body);
  records = 0;
  if (!key.role.compute && !key.role.diagonal)
    return success(); // a router-only PE
  if (!key.role.compute) {
    emitTurnOnly();
    return success();
  }
  emitSegments(c, r0, r1);
  emitCompute(c, key);
  // The code must end before the records (trainedConvMap counted it).
  int64_t n = 0;
  body->walk([&](wv::TaskOp task) {
    n += int64_t(task.getBody().front().getOperations().size());
  });
  if (n > trainedConvInstructions(s, m, t))
    return emitError(loc) << "the trained convolution's program of PE ("
                          << m.x0 + c << ", " << m.y0 + r0 << ") has " << n
                          << " instructions, more than the "
                          << trainedConvInstructions(s, m, t)
                          << " its memory map leaves room for";
  return success();
}

/// A diagonal below the rectangle: turns the sample's input rows north and
/// (a convolution sending its input gradient) relays the column's reduced
/// gradient, which arrives from the north, west.
void Emitter::emitTurnOnly() {
  const int64_t row = s.win * lk;
  rec("copy_in", DsdFields::fabin(row, colors.in));
  rec("copy_out", DsdFields::fabout(row, colors.column));
  if (t.inputGradient) {
    rec("grad_relay_in",
        DsdFields::fabin(s.hin * row, tc.reduce[(m.rows - 1) % 2]));
    rec("grad_out", DsdFields::fabout(s.hin * row, tc.gradOut));
  }
  wv::TaskOp task0 = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&task0.getBody().front());
  dsrLoad(wv::RegFile::ddsr, kDsrCopy, "copy_out");
  dsrLoad(wv::RegFile::s0dsr, kDsrCopy, "copy_in");
  label("sample");
  for (int64_t h = 0; h < s.hin; ++h)
    inst(Opcode::MOV32, {ddsr(kDsrCopy), s0(kDsrCopy)});
  if (t.inputGradient)
    un(Opcode::MOV32, "grad_out", "grad_relay_in");
  jump("sample");
}

void Emitter::emitSegments(int64_t c, int64_t r0, int64_t r1) {
  const int64_t h = r1 - r0, kh = s.kh, kw = s.kw;
  auto blob = [&](StringRef what, ArrayRef<int64_t> shape,
                  ArrayRef<char> bytes) -> ElementsAttr {
    auto type = RankedTensorType::get(shape, b.getF32Type());
    std::string key = (name + "_" + what + "_" + Twine(blobs++)).str();
    return DenseResourceElementsAttr::get(
        type, key, HeapAsmResourceBlob::allocateAndCopyInferAlign(bytes));
  };
  // W[ci][i][j][n] of the PE's input and output channels, as inference
  // lays them out (trainedConvWeightPlace reads them back).
  std::vector<char> bytes;
  bytes.reserve(size_t(h * lk * kh * kw * lm * 4));
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t ci = 0; ci < lk; ++ci)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j)
          for (int64_t n = 0; n < lm; ++n) {
            int64_t o = r * lm + n, in = c * lk + ci;
            putF32(bytes, layer.weights[size_t(((o * s.cin + in) * kh + i) *
                                                   kw +
                                               j)]);
          }
  wv::SegmentOp::create(b, loc, "weights", mm.w, /*per_pe=*/true,
                        blob("w", {h, 1, lk * kh * kw * lm}, bytes));
  if (c == 0 && !layer.bias.empty()) {
    std::vector<char> bias;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t n = 0; n < lm; ++n)
        putF32(bias, layer.bias[size_t(r * lm + n)]);
    wv::SegmentOp::create(b, loc, "bias_data", mm.bias, /*per_pe=*/true,
                          blob("b", {h, 1, lm}, bias));
  }
}

void Emitter::emitCompute(int64_t c, const PeKey &key) {
  const int64_t S = m.smear;
  const bool first = c == 0, last = c == S - 1;
  const bool bias = first && !layer.bias.empty();
  const int64_t pin = colors.psum[c % 2],
                pout = last ? colors.out : colors.psum[(c + 1) % 2];
  const int64_t row = wo * lm;

  // Per-PE constants: -lr and the mini-batch.
  uint32_t lrBits = wt::f32ToBits(-t.lr);
  constParam(kGprLr, int64_t(lrBits & 0xffff));
  constParam(kGprLr + 1, int64_t(lrBits >> 16));
  if (t.mbgd)
    constParam(kGprBatch, t.batch);

  // The XDSDs and stride words.
  const int64_t sZero = kSelZero, sOne = kSelOne;
  xdsd("x_acc", {lm, wo, s.kw, lk}, {sOne, kRegLm, sZero, sZero});
  xdsd("x_w", {lm, wo, s.kw, lk}, {sOne, sZero, kRegLm, kRegKkLm});
  xdsd("x_win", {lm, wo, s.kw, lk}, {sZero, kRegSwLk, kRegDwLk, sOne});
  xdsd("x_bias", {lm, wo, 1, 1}, {sOne, sZero, sZero, sZero});
  xdsd("x_bg_d", {lm, wo, hout, 1}, {sOne, sZero, sZero, sZero});
  xdsd("x_bg_y", {lm, wo, hout, 1}, {sOne, kRegLm, kRegPitch, sZero});
  const bool upsample = mm.dyu >= 0;
  if (upsample) {
    // The upsampling copy (Lm, wout): dY[ow] to pixel ow sw (stride
    // register 4 holds sw Lm then).
    xdsd("x_up_d", {lm, wo, 1, 1}, {sOne, kRegPitch, sZero, sZero});
    xdsd("x_up_s", {lm, wo, 1, 1}, {sOne, kRegLm, sZero, sZero});
  }
  if (t.inputGradient) {
    xdsd("x_ig_d", {lm, s.kw, s.win, lk}, {sZero, sZero, kRegSwLk, sOne});
    xdsd("x_ig_w", {lm, s.kw, s.win, lk}, {sOne, kRegLm, sZero, kRegKkLm});
    xdsd("x_ig_y", {lm, s.kw, s.win, lk}, {sOne, kRegNegDwLm, kRegLm, sZero});
  }
  // (Strided input gradients: two more words, Lk and sw Lm, which the
  // input gradient's phase loads into registers 2 and 4.)
  const int64_t strides[8] = {lm,        s.kh * s.kw * lm, s.sw * lk,
                              s.dw * lk, mm.dyPitch,       -s.dw * lm,
                              lk,        s.sw * lm};
  strideWords(ArrayRef<int64_t>(strides, upsample ? 8 : 6), [&] {
    assert(records < mm.numRecords && "the records overflow");
    return mm.records + 4 * records++;
  });

  // The forward's records.
  for (int64_t h = 0; h < s.hin; ++h) {
    rec(nth("recv", h),
        DsdFields::mem1d(s.win * lk, xRow(h) + 2 * s.pl * lk));
    rec(nth("x", h), DsdFields::mem4d(xRow(h), kXWin));
  }
  for (int64_t i = 0; i < s.kh; ++i)
    rec(nth("w", i), DsdFields::mem4d(mm.w + 2 * i * s.kw * lm, kXW));
  rec("acc4", DsdFields::mem4d(mm.acc, kXAcc));
  rec("acc", DsdFields::mem1d(row, mm.acc));
  rec("in", DsdFields::fabin(s.win * lk, colors.column));
  if (!first)
    rec("psum_in", DsdFields::fabin(row, pin));
  if (!last)
    rec("psum_out", DsdFields::fabout(row, pout));
  if (bias)
    rec("bias4", DsdFields::mem4d(mm.bias, kXBias));
  if (last) {
    for (int64_t oh = 0; oh < hout; ++oh)
      rec(nth("y", oh), DsdFields::mem1d(row, yRow(oh)));
    rec("send", DsdFields::fabout(row, pout).withUtid(3));
  }
  if (key.role.diagonal) {
    rec("copy_in", DsdFields::fabin(s.win * lk, colors.in));
    rec("copy_out",
        DsdFields::fabout(s.win * lk, colors.column).withUtid(0));
  }
  // The backward's.
  for (int64_t oh = 0; oh < hout; ++oh) {
    rec(nth("dy", oh), DsdFields::mem1d(row, dyRow(oh) + 2 * mm.dyLeft * lm));
    rec(nth("dy4_", oh),
        DsdFields::mem4d(dyRow(oh) + 2 * mm.dyLeft * lm, kXAcc));
  }
  rec("dy_all", DsdFields::mem1d(hout * mm.dyPitch, mm.dy));
  if (last) {
    rec("grad_in", DsdFields::fabin(row, tc.gradIn));
    if (tc.gradIn2 >= 0)
      rec("grad_in2", DsdFields::fabin(row, tc.gradIn2));
    if (S > 1)
      rec("delta_send", DsdFields::fabout(row, tc.deltaRow));
    if (s.relu) {
      rec("mask", DsdFields::mem1d(row, mm.mask));
      rec("zero", DsdFields::mem1d(row, mm.zero).withStride(0));
    }
  } else {
    rec("delta_in", DsdFields::fabin(row, tc.deltaRow));
  }
  if (t.mbgd) {
    for (int64_t i = 0; i < s.kh; ++i)
      rec(nth("g", i), DsdFields::mem4d(mm.g + 2 * i * s.kw * lm, kXW));
    const int64_t n = lk * s.kh * s.kw * lm;
    rec("w_all", DsdFields::mem1d(n, mm.w));
    rec("g_all", DsdFields::mem1d(n, mm.g));
  }
  if (bias) {
    const int64_t to = t.mbgd ? mm.gb : mm.bias;
    rec("bg4", DsdFields::mem4d(to, kXBgD));
    rec("bg_y4", DsdFields::mem4d(mm.dy + 2 * mm.dyLeft * lm, kXBgY));
    if (t.mbgd) {
      rec("bias", DsdFields::mem1d(lm, mm.bias));
      rec("gb", DsdFields::mem1d(lm, mm.gb));
    }
  }
  if (t.inputGradient) {
    for (int64_t h = 0; h < s.hin; ++h)
      rec(nth("dx4_", h), DsdFields::mem4d(dxRow(h), kXIgD));
    for (int64_t i = 0; i < s.kh; ++i)
      rec(nth("wig", i), DsdFields::mem4d(mm.w + 2 * i * s.kw * lm, kXIgW));
    for (int64_t oh = 0; oh < hout; ++oh) {
      if (!upsample) {
        rec(nth("dyp", oh),
            DsdFields::mem4d(dyRow(oh) + 2 * (mm.dyLeft + s.pl) * lm, kXIgY));
        continue;
      }
      int64_t row = mm.dyu + 2 * oh * mm.upPitch;
      rec(nth("dyp", oh),
          DsdFields::mem4d(row + 2 * (mm.upLeft + s.pl) * lm, kXIgY));
      rec(nth("dyu", oh), DsdFields::mem4d(row + 2 * mm.upLeft * lm, kXIgD));
      rec(nth("dys", oh), DsdFields::mem4d(dyRow(oh), kXIgW));
    }
    const int64_t n = s.hin * s.win * lk;
    rec("dx", DsdFields::mem1d(n, mm.dx));
    // Upper rows send south on U[r % 2], lower rows north on
    // U[(r + 1) % 2]; the diagonal sends west (Routing.h).
    const int p = key.red.parity;
    switch (key.red.reduce) {
    case ReduceRole::Upper:
      if (key.red.receives)
        rec("red_in", DsdFields::fabin(n, tc.reduce[1 - p]));
      rec("red_out", DsdFields::fabout(n, tc.reduce[p]));
      break;
    case ReduceRole::Lower:
      if (key.red.receives)
        rec("red_in", DsdFields::fabin(n, tc.reduce[p]));
      rec("red_out", DsdFields::fabout(n, tc.reduce[1 - p]));
      break;
    case ReduceRole::Diagonal:
      if (key.red.receives)
        rec("red_north", DsdFields::fabin(n, tc.reduce[1 - p]));
      if (key.red.receivesSouth)
        rec("red_south", DsdFields::fabin(n, tc.reduce[p]));
      rec("red_out", DsdFields::fabout(n, tc.gradOut));
      break;
    case ReduceRole::None:
      break;
    }
  }

  // The program.
  using RF = wv::RegFile;
  wv::TaskOp task0 = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&task0.getBody().front());
  loadStrides(6);
  dsrLoad(RF::xdsr, kXAcc, "x_acc");
  dsrLoad(RF::xdsr, kXW, "x_w");
  dsrLoad(RF::xdsr, kXWin, "x_win");
  dsrLoad(RF::ddsr, kDsrMac, "acc4");
  dsrLoad(RF::s0dsr, kDsrRecv, "in");
  if (!last) {
    dsrLoad(RF::ddsr, kDsrReduce, "psum_out");
    dsrLoad(RF::s0dsr, kDsrReduce, "acc");
    if (!first)
      dsrLoad(RF::s1dsr, kDsrReduce, "psum_in");
  } else {
    dsrLoad(RF::s0dsr, kDsrOut, "acc");
    if (!first)
      dsrLoad(RF::s1dsr, kDsrOut, "psum_in");
    dsrLoad(RF::ddsr, kDsrSend, "send");
  }
  dsrLoad(RF::ddsr, kDsrClear, "acc");
  if (bias)
    dsrLoad(RF::s0dsr, kDsrClear, "bias4");
  if (key.role.diagonal) {
    dsrLoad(RF::ddsr, kDsrCopy, "copy_out");
    dsrLoad(RF::s0dsr, kDsrCopy, "copy_in");
  }
  if (t.mbgd)
    inst(Opcode::MOVI, {gpr(kGprCount), lit(0)});

  label("sample");
  // The first row's accumulator starts at the bias as the previous
  // sample's update left it (memory is zero at load otherwise).
  if (bias) {
    dsrLoad(RF::xdsr, kXBias, "x_bias");
    inst(Opcode::MOV32, {ddsr(kDsrClear), s0(kDsrClear)});
  }
  emitForward(first, last, key.role.diagonal);
  emitBackward(c, key);
  jump("sample");
}

void Emitter::emitForward(bool first, bool last, bool diagonal) {
  const bool bias = first && !layer.bias.empty();
  int64_t received = 0;
  auto receiveThrough = [&](int64_t h) {
    for (; received <= h && received < s.hin; ++received) {
      // The diagonal first launches the copy of the row into its column
      // (microthread 0).
      if (diagonal)
        inst(Opcode::MOV32, {ddsr(kDsrCopy), s0(kDsrCopy)});
      dsrLoad(wv::RegFile::ddsr, kDsrRecv, nth("recv", received));
      inst(Opcode::MOV32, {ddsr(kDsrRecv), s0(kDsrRecv)});
    }
  };
  for (int64_t oh = 0; oh < hout; ++oh) {
    std::vector<int64_t> taps = trainedConvTaps(s, oh);
    if (!taps.empty())
      receiveThrough(s.inputRow(oh, taps.back()));
    for (int64_t i : taps) {
      dsrLoad(wv::RegFile::s0dsr, kDsrMac, nth("w", i));
      dsrLoad(wv::RegFile::s1dsr, kDsrMac, nth("x", s.inputRow(oh, i)));
      inst(Opcode::FMAC, {dsr(kDsrMac), s1(kDsrMac)});
    }
    if (!last) {
      if (first)
        inst(Opcode::MOV32, {ddsr(kDsrReduce), s0(kDsrReduce)});
      else
        inst(Opcode::FADD, {dsr(kDsrReduce), s1(kDsrReduce)});
    } else {
      // y row oh = acc (+ the west's partial sums), after the ReLU; kept
      // for the backward (the ReLU's mask) and sent on microthread 3.
      std::string y = nth("y", oh);
      dsrLoad(wv::RegFile::ddsr, kDsrOut, y);
      if (first)
        inst(Opcode::MOV32, {ddsr(kDsrOut), s0(kDsrOut)});
      else
        inst(Opcode::FADD, {dsr(kDsrOut), s1(kDsrOut)});
      if (s.relu) {
        dsrLoad(wv::RegFile::ddsr, kDsrRelu, y);
        dsrLoad(wv::RegFile::s0dsr, kDsrRelu, y);
        inst(Opcode::FMAX, {dsr(kDsrRelu), imm(wt::SmallImm::Zero)});
      }
      dsrLoad(wv::RegFile::s0dsr, kDsrSend, y);
      inst(Opcode::MOV32, {ddsr(kDsrSend), s0(kDsrSend)});
    }
    if (bias)
      inst(Opcode::MOV32, {ddsr(kDsrClear), s0(kDsrClear)});
    else
      inst(Opcode::MOV32, {ddsr(kDsrClear), imm(wt::SmallImm::Zero)});
  }
  // The rows no window reads.
  receiveThrough(s.hin - 1);
}

void Emitter::emitBackward(int64_t c, const PeKey &key) {
  using RF = wv::RegFile;
  const bool first = c == 0, last = c == m.smear - 1;
  const bool bias = first && !layer.bias.empty();
  // The gradient rows: the last column takes them from the next kernel,
  // masks them by the ReLU (0 where y is 0) and multicasts them west along
  // the row on the main thread (the row's PEs wait for them); the others
  // take them off the row.
  for (int64_t oh = 0; oh < hout; ++oh) {
    std::string dy = nth("dy", oh);
    if (!last) {
      un(Opcode::MOV32, dy, "delta_in");
      continue;
    }
    un(Opcode::MOV32, dy, "grad_in");
    // A fork into a residual block: the two paths' gradients add.
    if (tc.gradIn2 >= 0)
      vec(Opcode::FADD, dy, dy, "grad_in2");
    if (s.relu) {
      vec(Opcode::FCEQ, "mask", nth("y", oh), imm(wt::SmallImm::Zero));
      vec(Opcode::SEL32, "mask", "zero", dy);
      un(Opcode::MOV32, dy, "mask");
    }
    if (m.smear > 1)
      un(Opcode::MOV32, "delta_send", dy);
  }

  // The gradient of the input, with the weights of the forward: per input
  // row h and kernel row i whose output row exists, dX[h] += W_i dY[oh],
  // then the column's sum down to the diagonal and west.
  if (t.inputGradient && mm.dyu >= 0) {
    // Strided: the gradient rows upsampled by sw (the zeros between are
    // never written), and Lk into register 2 for dX's stride.
    dsrLoad(RF::stride, kRegPitch, "stride7");
    dsrLoad(RF::xdsr, kXIgD, "x_up_d");
    dsrLoad(RF::xdsr, kXIgW, "x_up_s");
    for (int64_t oh = 0; oh < hout; ++oh)
      un(Opcode::MOV32, nth("dyu", oh), nth("dys", oh), kDsrB);
    dsrLoad(RF::stride, kRegSwLk, "stride6");
  }
  if (t.inputGradient) {
    dsrLoad(RF::xdsr, kXIgD, "x_ig_d");
    dsrLoad(RF::xdsr, kXIgW, "x_ig_w");
    dsrLoad(RF::xdsr, kXIgY, "x_ig_y");
    fill("dx", wt::SmallImm::Zero);
    for (int64_t h = 0; h < s.hin; ++h) {
      std::vector<int64_t> taps = trainedConvInputTaps(s, h);
      if (taps.empty())
        continue;
      dsrLoad(RF::ddsr, kDsrB, nth("dx4_", h));
      for (int64_t i : taps) {
        int64_t oh = (h + s.pt - i * s.dh) / s.sh;
        dsrLoad(RF::s0dsr, kDsrB, nth("wig", i));
        dsrLoad(RF::s1dsr, kDsrB, nth("dyp", oh));
        inst(Opcode::FMAC, {dsr(kDsrB), s1(kDsrB)});
      }
    }
    emitGradientReduce(*this, key.red, kDsrA, kDsrA,
                       /*sumBeforeSend=*/false);
    if (mm.dyu >= 0) {
      dsrLoad(RF::stride, kRegSwLk, "stride2");
      dsrLoad(RF::stride, kRegPitch, "stride4");
    }
  }

  // The chain pass: SGD adds -lr x dY into the weights themselves, MBGD
  // x dY into the mini-batch's gradient.
  if (!t.mbgd)
    vec(Opcode::FMUL, "dy_all", "dy_all", gpr(kGprLr));
  for (int64_t oh = 0; oh < hout; ++oh)
    for (int64_t i : trainedConvTaps(s, oh)) {
      dsrLoad(RF::ddsr, kDsrMac, nth(t.mbgd ? "g" : "w", i));
      dsrLoad(RF::s0dsr, kDsrMac, nth("dy4_", oh));
      dsrLoad(RF::s1dsr, kDsrMac, nth("x", s.inputRow(oh, i)));
      inst(Opcode::FMAC, {dsr(kDsrMac), s1(kDsrMac)});
    }
  dsrLoad(RF::ddsr, kDsrMac, "acc4");
  if (bias) {
    // b (or the mini-batch's gb) += the sum of the gradient rows over the
    // pixels.
    dsrLoad(RF::xdsr, kXBgD, "x_bg_d");
    dsrLoad(RF::xdsr, kXBgY, "x_bg_y");
    vec(Opcode::FADD, "bg4", "bg4", "bg_y4");
  }
  if (!t.mbgd)
    return;
  // The step's end: W += G (-lr), b += gb (-lr), both cleared.
  inst(Opcode::ADD16, {gpr(kGprCount), imm(wt::SmallImm::One)});
  inst(Opcode::CEQ16, {gpr(kGprCount), gpr(kGprBatch)});
  wv::JumpOp::create(b, loc, "sample", wv::JumpCond::if_false);
  vec(Opcode::FMAC, "w_all", "g_all", gpr(kGprLr));
  fill("g_all", wt::SmallImm::Zero);
  if (bias) {
    vec(Opcode::FMAC, "bias", "gb", gpr(kGprLr));
    fill("gb", wt::SmallImm::Zero);
  }
  inst(Opcode::MOVI, {gpr(kGprCount), lit(0)});
}

} // namespace

LogicalResult emitTrainedConvLayer(OpBuilder &b, Location loc,
                                   const DenseLayer &layer,
                                   const DenseMapping &m,
                                   const DenseColors &colors,
                                   const TrainingColors &trainingColors,
                                   const DenseTraining &training,
                                   StringRef name, const RouteTable &routes) {
  return Emitter(b, loc, layer, m, colors, trainingColors, training, name,
                 routes)
      .emitGroups();
}

} // namespace weft::conversion
