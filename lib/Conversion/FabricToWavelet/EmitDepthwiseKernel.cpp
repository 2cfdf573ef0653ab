//===- EmitDepthwiseKernel.cpp - Grouped convolutions to PE programs -----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits the per-PE programs of docs/execution-model.md ("Depthwise
// convolution") for one placed grouped convolution: a column of PEs laid
// out like a pooling (lib/Conversion/FabricToWavelet/EmitPoolKernel.cpp),
// each holding Gl whole groups (Lc = Gl Kg input and Lo = Gl Mg output
// channels, Kg and Mg a group's) and their weights, with one main task that
// runs the schedule of lib/Kernels/DepthwiseMapping per sample: receive an
// input row into its line-buffer slot (whose pad columns stay zero); for an
// output row, set one of two output buffers to the bias (or zeros), one
// 4-D multiply-accumulate per kernel row inside the input and input channel
// k of a group over (groups, multiplier, output columns, window columns),
// the ReLU (ReLU6: then an fmin against a stride-0 vector of its bound) in
// place, and the row's send on microthread 3.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/DepthwiseKernel.h"

#include "EmitEpilogue.h"
#include "WaveletBuilder.h"

#include "wavelet/WaveletOps.h"

#include "weft/Machine/ISA.h"
#include "weft/Machine/Numerics.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
namespace wt = weft::machine;
namespace wv = weft::wavelet;

namespace weft::conversion {
namespace {

// DSR numbers (each a DDSR / S0DSR / S1DSR triple; `dsr n` names the first
// two). Output buffer k of the two uses n + k.
enum : int32_t {
  kDsrMac = 0,  // d = buffer k as 4-D, s0 = a weight block, s1 = a window
  kDsrRecv = 2, // d = a line-buffer slot, s0 = the input
  kDsrInit = 3, // buffer k = the bias (s0, 4-D) or 0
  kDsrRelu = 5, // buffer k = max(buffer k, 0)
  kDsrSend = 7, // the send of buffer k (microthread 3)
  kDsrClip = 9, // ReLU6: buffer k = min(buffer k, the bound)
  kDsrEpilogue = 11, // a fused activation's steps
};
// XDSRs and stride registers of the 4-D vectors.
enum : int64_t { kXAcc = 0, kXW = 1, kXWin = 2, kXBias = 3 };
enum : int64_t {
  kStrideMg = 0, // a group's output channels (the multiplier)
  kStrideLo = 1, // the PE's output channels: an output pixel
  kStrideKg = 2, // a group's input channels
  kStrideOw = 3, // sw Lc: the next output column's window
  kStrideJ = 4,  // dw Lc: the next window column
};

class Emitter : WaveletBuilder {
public:
  /// `k` is one band's (its shape and column); `band` its index, -1 when
  /// the kernel is not cut into bands.
  Emitter(OpBuilder &b, Location loc, const DepthwiseKernel &k, StringRef name,
          int64_t band)
      : WaveletBuilder(b, loc), k(k), s(k.shape), name(name),
        prefix(band < 0 ? name.str() : (name + "_b" + Twine(band)).str()),
        sch(depthwiseSchedule(s)),
        mm(depthwiseMemoryMap(s, k.rows, k.precision)),
        gl(depthwiseGroups(s, k.rows)), lc(depthwiseLc(s, k.rows)),
        lo(depthwiseLo(s, k.rows)), kg(s.groupIn()), rowLen(lo * s.wout()),
        mixed(k.precision == Precision::Mixed),
        ew(convElementWords(k.precision)) {
    if (!s.epilogue.empty())
      epi = compileEpilogue(s.epilogue);
  }

  void emitGroup(int64_t r0, int64_t r1, const RouteTable &routes) {
    int64_t h = r1 - r0;
    std::string sym =
        (prefix + "_r" + Twine(r0) + (h > 1 ? "_" + Twine(r1 - 1) : Twine()))
            .str();
    Block *body = peOrGroup(sym, k.x, r0, 1, h, name);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body);
    routesAt(routes, k.x, r0);
    emitData(r0, r1);
    emitRecords();
    emitProgram();
  }

private:
  int64_t rec(int64_t i) const { return mm.records + 4 * i; }
  std::string winName(int64_t slot, int64_t c) const {
    return ("win" + Twine(slot) + "_" + Twine(c)).str();
  }
  std::string weightName(int64_t i, int64_t c) const {
    return ("w" + Twine(i) + "_" + Twine(c)).str();
  }
  ElementsAttr blob(StringRef what, ArrayRef<int64_t> shape,
                    ArrayRef<char> bytes, Type element = {}) {
    auto type =
        RankedTensorType::get(shape, element ? element : b.getF32Type());
    std::string key = (prefix + "_" + what + "_" + Twine(blobs++)).str();
    return DenseResourceElementsAttr::get(
        type, key, HeapAsmResourceBlob::allocateAndCopyInferAlign(bytes));
  }
  void emitData(int64_t r0, int64_t r1);
  void emitRecords();
  void emitProgram();

  const DepthwiseKernel &k;
  const ConvShape &s;
  StringRef name;
  std::string prefix;
  const ConvSchedule sch;
  const DepthwiseMemoryMap mm;
  const int64_t gl, lc, lo, kg, rowLen;
  /// Mixed precision: fp16 weights and line buffer (`ew` 16-bit words an
  /// element; fp32: 2).
  const bool mixed;
  const int64_t ew;
  std::optional<EpilogueCode> epi;
  unsigned blobs = 0;
};

void Emitter::emitData(int64_t r0, int64_t r1) {
  const int64_t h = r1 - r0, mg = s.groupOut();
  // Weights per PE as [i][k][j][g][m]: the block of kernel row i and
  // input channel k of a group, window column j, the PE's output channel
  // g Mg + m (OIHW: W[o][k][i][j]).
  std::vector<char> w;
  w.reserve(size_t(h * lo * kg * s.kh * s.kw * 2 * ew));
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t i = 0; i < s.kh; ++i)
      for (int64_t c = 0; c < kg; ++c)
        for (int64_t j = 0; j < s.kw; ++j)
          for (int64_t g = 0; g < gl; ++g)
            for (int64_t m = 0; m < mg; ++m) {
              int64_t o = (r * gl + g) * mg + m;
              (mixed ? putF16 : putF32)(
                  w, k.weights[size_t(((o * kg + c) * s.kh + i) * s.kw + j)]);
            }
  wv::SegmentOp::create(b, loc, "weights", mm.weights, /*per_pe=*/true,
                        blob("w", {h, 1, lo * kg * s.kh * s.kw}, w,
                             mixed ? Type(b.getF16Type())
                                   : Type(b.getF32Type())));
  if (epi)
    EpilogueEmitter(b, loc, *epi, rowLen, mm.epilogue).emitData();
  if (s.reluMax)
    wv::SegmentOp::create(
        b, loc, "clip_data", mm.clip, /*per_pe=*/false,
        DenseElementsAttr::get(RankedTensorType::get({1}, b.getF32Type()),
                               *s.reluMax));
  if (k.bias.empty())
    return;
  std::vector<char> bias;
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t o = 0; o < lo; ++o)
      putF32(bias, k.bias[size_t(r * lo + o)]);
  wv::SegmentOp::create(b, loc, "bias_data", mm.bias, /*per_pe=*/true,
                        blob("b", {h, 1, lo}, bias));
}

void Emitter::emitRecords() {
  const int64_t rowWords = ew * sch.paddedWidth * lc;
  int64_t next = 0;
  // Line-buffer slots: where a row is received (its interior; the pad
  // columns stay zero) and, per input channel of a group, where the
  // windows read it.
  for (int64_t i = 0; i < sch.ringRows; ++i) {
    int64_t base = mm.ring + i * rowWords;
    dsdAt(("recv" + Twine(i)).str(), rec(next++),
          DsdFields::mem1d(s.win * lc, base + ew * s.pl * lc));
    for (int64_t c = 0; c < kg; ++c)
      dsdAt(winName(i, c), rec(next++),
            DsdFields::mem4d(base + ew * c, kXWin));
  }
  for (int64_t i = 0; i < s.kh; ++i)
    for (int64_t c = 0; c < kg; ++c)
      dsdAt(weightName(i, c), rec(next++),
            DsdFields::mem4d(mm.weights + ew * (i * kg + c) * s.kw * lo,
                             kXW));
  for (int64_t i = 0; i < 2; ++i) {
    int64_t buf = mm.outBuf + 2 * rowLen * i;
    dsdAt(("acc" + Twine(i)).str(), rec(next++), DsdFields::mem4d(buf, kXAcc));
    dsdAt(("buf" + Twine(i)).str(), rec(next++), DsdFields::mem1d(rowLen, buf));
    dsdAt(("send" + Twine(i)).str(), rec(next++),
          DsdFields::fabout(rowLen, k.outColor).withUtid(3));
  }
  dsdAt("in", rec(next++), DsdFields::fabin(s.win * lc, k.inColor));
  if (!k.bias.empty())
    dsdAt("bias", rec(next++), DsdFields::mem4d(mm.bias, kXBias));
  if (s.reluMax)
    dsdAt("clip", rec(next++), DsdFields::mem1d(rowLen, mm.clip).withStride(0));
  if (epi)
    EpilogueEmitter(b, loc, *epi, rowLen, mm.epilogue).emitRecords([&] {
      return rec(next++);
    });
  // The multiply-accumulate's dimensions: (groups, multiplier, output
  // columns, window columns), the same lengths for its three operands.
  // The buffer acc[ow][g Mg + m] repeats over the window columns, a
  // weight block [j][g][m] over the output columns, a window x[w][g Kg + k]
  // over the multiplier.
  SmallVector<int64_t> lens = {gl, s.groupOut(), s.wout(), s.kw};
  wv::XdsdOp::create(
      b, loc, "x_acc", uint64_t(rec(next++)), lens,
      ArrayRef<int64_t>{kStrideMg, kSelOne, kStrideLo, kSelZero});
  wv::XdsdOp::create(
      b, loc, "x_w", uint64_t(rec(next++)), lens,
      ArrayRef<int64_t>{kStrideMg, kSelOne, kSelZero, kStrideLo});
  wv::XdsdOp::create(
      b, loc, "x_win", uint64_t(rec(next++)), lens,
      ArrayRef<int64_t>{kStrideKg, kSelZero, kStrideOw, kStrideJ});
  // The bias broadcast over the output columns.
  wv::XdsdOp::create(b, loc, "x_bias", uint64_t(rec(next++)),
                     ArrayRef<int64_t>{lo, s.wout(), 1, 1},
                     ArrayRef<int64_t>{kSelOne, kSelZero, kSelZero, kSelZero});
  // The stride registers' values, one word each.
  const int64_t strides[5] = {s.groupOut(), lo, kg, s.sw * lc, s.dw * lc};
  strideWords(strides, [&] { return rec(next++); });
  assert(next <= mm.numRecords && "the memory map's records overflow");
}

void Emitter::emitProgram() {
  using RF = wv::RegFile;
  const bool bias = !k.bias.empty();
  wv::TaskOp t = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&t.getBody().front());
  loadStrides(5);
  dsrLoad(RF::xdsr, kXAcc, "x_acc");
  dsrLoad(RF::xdsr, kXW, "x_w");
  dsrLoad(RF::xdsr, kXWin, "x_win");
  if (bias)
    dsrLoad(RF::xdsr, kXBias, "x_bias");
  for (int i = 0; i < 2; ++i) {
    std::string buf = ("buf" + Twine(i)).str();
    dsrLoad(RF::ddsr, kDsrMac + i, ("acc" + Twine(i)).str());
    dsrLoad(RF::ddsr, kDsrInit + i, buf);
    if (bias)
      dsrLoad(RF::s0dsr, kDsrInit + i, "bias");
    if (s.relu) {
      dsrLoad(RF::ddsr, kDsrRelu + i, buf);
      dsrLoad(RF::s0dsr, kDsrRelu + i, buf);
    }
    if (s.reluMax) {
      dsrLoad(RF::ddsr, kDsrClip + i, buf);
      dsrLoad(RF::s0dsr, kDsrClip + i, buf);
      dsrLoad(RF::s1dsr, kDsrClip + i, "clip");
    }
    dsrLoad(RF::ddsr, kDsrSend + i, ("send" + Twine(i)).str());
    dsrLoad(RF::s0dsr, kDsrSend + i, buf);
  }
  dsrLoad(RF::s0dsr, kDsrRecv, "in");

  label("sample");
  int64_t outRows = 0;
  for (int64_t u = 0; u < sch.unroll; ++u)
    for (const ConvStep &st : sch.steps) {
      if (st.receive) {
        dsrLoad(RF::ddsr, kDsrRecv, ("recv" + Twine(st.slot)).str());
        inst(mixed ? Opcode::FF2H : Opcode::MOV32,
             {ddsr(kDsrRecv), s0(kDsrRecv)});
        continue;
      }
      int32_t i = int32_t(outRows % 2);
      if (bias)
        inst(Opcode::MOV32, {ddsr(kDsrInit + i), s0(kDsrInit + i)});
      else
        inst(Opcode::MOV32, {ddsr(kDsrInit + i), imm(wt::SmallImm::Zero)});
      for (auto [tap, slot] : llvm::zip(st.taps, st.slots))
        for (int64_t c = 0; c < kg; ++c) {
          dsrLoad(RF::s0dsr, kDsrMac + i, weightName(tap, c));
          dsrLoad(RF::s1dsr, kDsrMac + i, winName(slot, c));
          inst(mixed ? Opcode::FMACHS : Opcode::FMAC,
               {dsr(kDsrMac + i), s1(kDsrMac + i)});
        }
      if (s.relu)
        inst(Opcode::FMAX, {dsr(kDsrRelu + i), imm(wt::SmallImm::Zero)});
      if (s.reluMax)
        inst(Opcode::FMIN, {dsr(kDsrClip + i), s1(kDsrClip + i)});
      // A fused activation, in place.
      if (epi)
        EpilogueEmitter(b, loc, *epi, rowLen, mm.epilogue)
            .emitRow(("buf" + Twine(i)).str(), kDsrEpilogue);
      // Launches the send on microthread 3 (it waits for the previous one,
      // so the buffer set next has been sent).
      inst(Opcode::MOV32, {ddsr(kDsrSend + i), s0(kDsrSend + i)});
      ++outRows;
    }
  jump("sample");
}

} // namespace

LogicalResult emitDepthwiseKernel(OpBuilder &b, Location loc,
                                  const DepthwiseKernel &k, StringRef name,
                                  const RouteTable &routes) {
  FailureOr<machine::Target> target = columnTarget(
      b, loc, "depthwise kernel " + name, k.x + k.tiles - 1, 0, k.rows);
  if (failed(target))
    return failure();
  const ConvShape &s = k.shape;
  std::string why = s.check();
  if (why.empty())
    why = depthwiseBandsProblem(s, k.rows, k.tiles,
                                int64_t(target->memoryBytes()), k.precision);
  if (!why.empty())
    return emitError(loc) << "depthwise kernel " << name << " on " << k.rows
                          << " rows: " << why;
  if (int64_t(k.weights.size()) != s.cout * s.groupIn() * s.kh * s.kw ||
      (!k.bias.empty() && int64_t(k.bias.size()) != s.cout))
    return emitError(loc) << "depthwise kernel " << name << " has "
                          << k.weights.size() << " weights and "
                          << k.bias.size() << " biases for "
                          << s.cout * s.groupIn() * s.kh * s.kw << " and "
                          << s.cout;
  if (k.inColor == k.outColor)
    return emitError(loc) << "depthwise kernel " << name
                          << " receives and sends on the same color "
                          << k.inColor;
  // Unbanded (the convolution itself), or bands of output columns
  // (docs/execution-model.md, "Depthwise convolution"): each band's column
  // runs the program of its own convolution; the routers split the input
  // rows and merge the output rows (lib/Kernels/Routing).
  std::vector<ConvShape> shapes = {s};
  if (k.tiles > 1) {
    shapes.clear();
    for (const ConvTile &band : convTiles(s, k.tiles))
      shapes.push_back(band.shape);
  }
  for (auto [t, shape] : llvm::enumerate(shapes)) {
    DepthwiseKernel bk = k;
    bk.shape = shape;
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
