//===- EmitTrainedDense.cpp - A trained dense layer's PE programs --------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits the per-PE programs of docs/training.md ("The dense layer's training
// program") for one placed dense layer: the inference layout of the
// weights, and one sample loop per PE that receives its input chunk, runs
// the forward pass as one matrix instruction, reduces the partial sums
// along the row, then receives the gradient of its neuron chunk, sends the
// gradient of its input chunk back (reduced down the column to the
// diagonal PE) and updates its weights in place. A sample's input is taken
// off the fabric only after the previous sample's update, which is what
// makes the updates SGD. Reverse checkpoints: a layer that does not store
// its input takes it again in its backward pass, which the layer before
// recomputes. Under CPGD (and a pipelined MBGD, once per mini-batch) the
// loop runs rounds instead: the forward of sample i, then the backward of
// sample i - lag, with the inputs (and outputs) of the samples in flight
// in a ring.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/DenseLayer.h"

#include "SmearedLayout.h"
#include "WaveletBuilder.h"

#include "wavelet/WaveletOps.h"

#include "weft/Kernels/DenseTraining.h"
#include "weft/Machine/Numerics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;
namespace wt = weft::machine;
namespace wv = weft::wavelet;

namespace weft::conversion {
namespace {

// GPRs: 6/7 hold -lr, 8 counts the samples of a mini-batch, 9 holds its
// size.
constexpr int64_t kGprLr = 6, kGprCount = 8, kGprBatch = 9;
// XDSRs of the three matrix instructions: a vector over the neurons n, one
// over the inputs t, and the block W[t, n]; stride register 0 holds Lm.
constexpr int64_t kXOverN = 0, kXOverT = 1, kXBlock = 2;
// Scratch DSR numbers: each step loads what it uses (a cycle a record). The
// diagonal's copy uses 11.
constexpr int64_t kDsrA = 0, kDsrB = 1, kDsrCopy = 11;
// Microthreads: 0 the diagonal's copy, 3 the send of y, 5 the row's dL/dz,
// 6 (CPGD) dL/dx to the kernel before.
constexpr int64_t kUtidGradient = 6;

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
      : WaveletBuilder(b, loc), layer(layer), m(m), colors(colors), tc(tc),
        t(training), name(name), routes(routes) {}

  void emitGroups();

private:
  PeKey keyOf(int64_t c, int64_t r) const;
  void emitGroup(int64_t c, int64_t r0, int64_t r1, const PeKey &key);
  void emitCopyOnly(int64_t c);
  void emitCompute(int64_t c, int64_t r0, int64_t r1, const PeKey &key);
  void emitSegments(int64_t c, int64_t r0, int64_t r1, int64_t lk, int64_t lm,
                    const TrainedDenseMap &mm);
  void rec(StringRef sym, const DsdFields &f) {
    dsdAt(sym, nextRecord(), f);
  }
  int64_t nextRecord() {
    int64_t at = TrainedDenseMap::kRecords + 4 * records++;
    assert(at + 4 <= TrainedDenseMap::kData && "the records overflow");
    return at;
  }
  /// The vector steps through DSR A (un: B), WaveletBuilder's.
  template <typename S1> void vec(Opcode op, StringRef d, StringRef s0, S1 s1) {
    vecVia(kDsrA, op, d, s0, s1);
  }
  void un(Opcode op, StringRef d, StringRef s, int64_t n = kDsrB) {
    unVia(n, op, d, s);
  }
  void fill(StringRef d, wt::SmallImm v) {
    dsrLoad(wv::RegFile::ddsr, kDsrB, d);
    inst(Opcode::MOV32, {ddsr(kDsrB), imm(v)});
  }
  ElementsAttr blob(StringRef what, ArrayRef<int64_t> shape,
                    ArrayRef<float> values);

  const DenseLayer &layer;
  const DenseMapping &m;
  DenseColors colors;
  TrainingColors tc;
  DenseTraining t;
  StringRef name;
  const RouteTable &routes;
  int64_t records = 0;
  unsigned blobs = 0;
};

ElementsAttr Emitter::blob(StringRef what, ArrayRef<int64_t> shape,
                           ArrayRef<float> values) {
  auto type = RankedTensorType::get(shape, b.getF32Type());
  std::string key = (name + "_" + what + "_" + Twine(blobs++)).str();
  std::vector<char> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return DenseResourceElementsAttr::get(
      type, key, HeapAsmResourceBlob::allocateAndCopyInferAlign(
                     ArrayRef<char>(bytes)));
}

PeKey Emitter::keyOf(int64_t c, int64_t r) const {
  PeKey k;
  k.role = smearedRole(m, layer.M, c, r);
  if (t.inputGradient)
    k.red = gradientReduceKey(m, c, r);
  return k;
}

void Emitter::emitGroups() {
  const int64_t height = m.footprint();
  for (int64_t c = 0; c < m.smear; ++c) {
    int64_t r0 = 0;
    for (int64_t r = 1; r <= height; ++r) {
      if (r < height && keyOf(c, r) == keyOf(c, r0) &&
          sameSwitches(routes, m.x0 + c, m.y0 + r, m.y0 + r0))
        continue;
      PeKey key = keyOf(c, r0);
      if (!key.role.empty())
        emitGroup(c, r0, r, key);
      r0 = r;
    }
  }
}

void Emitter::emitGroup(int64_t c, int64_t r0, int64_t r1, const PeKey &key) {
  Block *body = columnGroup(name, c, m.x0 + c, m.y0, r0, r1, routes);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(body);
  records = 0;
  if (!key.role.compute && !key.role.diagonal)
    return; // a router-only PE
  if (!key.role.compute)
    return emitCopyOnly(c);
  emitCompute(c, r0, r1, key);
}

/// A diagonal below the rectangle: turns its chunk north, sample by sample,
/// and (a layer sending its input gradient) relays the column's reduced
/// gradient, which arrives from the north, west.
void Emitter::emitCopyOnly(int64_t c) {
  const int64_t lk = chunkSize(layer.K, m.smear, c);
  rec("copy_in", DsdFields::fabin(lk, colors.in));
  rec("copy_out", DsdFields::fabout(lk, colors.column).withUtid(0));
  const bool pipelined = t.lag > 0;
  if (t.inputGradient) {
    rec("grad_relay_in", DsdFields::fabin(lk, tc.reduce[(m.rows - 1) % 2]));
    // CPGD: taken into a ring slot, then sent on a microthread, so that the
    // kernel before, which takes it in a later round, holds back neither
    // this PE nor the column whose sum it is.
    DsdFields out = DsdFields::fabout(lk, tc.gradOut);
    rec("grad_out", pipelined ? out.withUtid(kUtidGradient) : out);
    if (pipelined)
      rec("relay", DsdFields::mem1d(lk, TrainedDenseMap::kData).withIx());
  }
  if (pipelined)
    cpgdConstants(t.rounds(), t.lag, t.inputGradient ? 2 * lk : 0, t.steps());
  wv::TaskOp task0 = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&task0.getBody().front());
  dsrLoad(wv::RegFile::ddsr, kDsrCopy, "copy_out");
  dsrLoad(wv::RegFile::s0dsr, kDsrCopy, "copy_in");
  if (pipelined)
    cpgdStart();
  label("sample");
  if (pipelined)
    cpgdSkipForward("forward_done");
  inst(Opcode::MOV32, {ddsr(kDsrCopy), s0(kDsrCopy)});
  if (pipelined) {
    label("forward_done");
    if (t.inputGradient)
      cpgdAdvance("ring_next");
    cpgdSkipBackward("round_done");
  }
  if (t.inputGradient && pipelined) {
    un(Opcode::MOV32, "relay", "grad_relay_in");
    un(Opcode::MOV32, "grad_out", "relay");
  } else if (t.inputGradient) {
    un(Opcode::MOV32, "grad_out", "grad_relay_in");
  }
  if (!t.storesInput)
    inst(Opcode::MOV32, {ddsr(kDsrCopy), s0(kDsrCopy)});
  if (!pipelined)
    return jump("sample");
  label("round_done");
  cpgdNext("sample");
  cpgdEnd();
}

void Emitter::emitSegments(int64_t c, int64_t r0, int64_t r1, int64_t lk,
                           int64_t lm, const TrainedDenseMap &mm) {
  const int64_t h = r1 - r0, kb = chunkBegin(layer.K, m.smear, c);
  std::vector<float> w;
  w.reserve(size_t(h * lk * lm));
  for (int64_t r = r0; r < r1; ++r) {
    int64_t mb = chunkBegin(layer.M, m.rows, r);
    // (A feature-map input arrives pixel-major per chunk.)
    for (int64_t tt = 0; tt < lk; ++tt) {
      int64_t k = layer.inputPixels
                      ? featureMapIndex(c, lk, layer.inputPixels, tt)
                      : kb + tt;
      for (int64_t n = 0; n < lm; ++n)
        w.push_back(layer.weights[size_t(k * layer.M + mb + n)]);
    }
  }
  wv::SegmentOp::create(b, loc, "weights", mm.w, /*per_pe=*/true,
                        blob("w", {h, 1, lk * lm}, w));
  if (mm.bias >= 0) {
    std::vector<float> bias;
    for (int64_t r = r0; r < r1; ++r) {
      int64_t mb = chunkBegin(layer.M, m.rows, r);
      for (int64_t n = 0; n < lm; ++n)
        bias.push_back(layer.bias[size_t(mb + n)]);
    }
    wv::SegmentOp::create(b, loc, "bias_data", mm.bias, /*per_pe=*/true,
                          blob("b", {h, 1, lm}, bias));
  }
}

void Emitter::emitCompute(int64_t c, int64_t r0, int64_t r1,
                          const PeKey &key) {
  const int64_t S = m.smear;
  const bool first = c == 0, last = c == S - 1;
  const bool hasBias = last && !layer.bias.empty();
  const int64_t lk = chunkSize(layer.K, S, c), lm = key.role.lm;
  const TrainedDenseMap mm =
      trainedDenseMap(lk, lm, last, !layer.bias.empty(), layer.relu, t);
  // CPGD: x, y and delta live in the ring, at GPR4's slot.
  const bool pipelined = t.lag > 0;
  auto ring = [&](DsdFields f) { return pipelined ? f.withIx() : f; };
  const int64_t pin = colors.psum[c % 2],
                pout = last ? colors.out : colors.psum[(c + 1) % 2];

  // Per-PE constants: -lr and the mini-batch.
  uint32_t lrBits = wt::f32ToBits(-t.lr);
  constParam(kGprLr, int64_t(lrBits & 0xffff));
  constParam(kGprLr + 1, int64_t(lrBits >> 16));
  if (t.mbgd && !pipelined)
    constParam(kGprBatch, t.batch);
  if (pipelined)
    cpgdConstants(t.rounds(), t.lag, mm.slotWords, t.steps());
  emitSegments(c, r0, r1, lk, lm, mm);

  // The matrix instructions' dimensions: the larger chunk first
  // (docs/training.md, "The matrix instructions").
  const bool nFirst = lm >= lk;
  auto box = [&](int64_t selN, int64_t selT) {
    SmallVector<int64_t> lens = {nFirst ? lm : lk, nFirst ? lk : lm, 1, 1};
    SmallVector<int64_t> sels = {nFirst ? selN : selT, nFirst ? selT : selN,
                                 kSelZero, kSelZero};
    return std::make_pair(lens, sels);
  };
  auto xdsd = [&](StringRef sym, int64_t selN, int64_t selT) {
    auto [lens, sels] = box(selN, selT);
    wv::XdsdOp::create(b, loc, sym, uint64_t(nextRecord()), lens, sels);
  };
  xdsd("x_over_n", kSelOne, kSelZero);
  xdsd("x_over_t", kSelZero, kSelOne);
  xdsd("x_block", kSelOne, /*stride register 0=*/0);
  strideWords({lm}, [&] { return nextRecord(); });

  rec("acc", DsdFields::mem1d(lm, mm.acc));
  rec("acc4", DsdFields::mem4d(mm.acc, kXOverN));
  rec("w4", DsdFields::mem4d(mm.w, kXBlock));
  rec("x", ring(DsdFields::mem1d(lk, mm.x)));
  rec("x4", ring(DsdFields::mem4d(mm.x, kXOverT)));
  rec("x_in", DsdFields::fabin(lk, colors.column));
  rec("delta", ring(DsdFields::mem1d(lm, mm.delta)));
  rec("delta4", ring(DsdFields::mem4d(mm.delta, kXOverN)));
  if (!t.mbgd) {
    rec("dlr", DsdFields::mem1d(lm, mm.dlr));
    rec("dlr4", DsdFields::mem4d(mm.dlr, kXOverN));
  } else {
    rec("w", DsdFields::mem1d(lk * lm, mm.w));
    rec("g", DsdFields::mem1d(lk * lm, mm.g));
    rec("g4", DsdFields::mem4d(mm.g, kXBlock));
  }
  if (!first)
    rec("psum_in", DsdFields::fabin(lm, pin));
  if (!last) {
    rec("psum_out", DsdFields::fabout(lm, pout));
    rec("delta_in", DsdFields::fabin(lm, tc.deltaRow));
  } else {
    rec("y", ring(DsdFields::mem1d(lm, mm.y)));
    rec("send", DsdFields::fabout(lm, pout).withUtid(3));
    if (t.recomputesOutput)
      rec("resend", DsdFields::fabout(lm, pout));
    rec("grad_in", DsdFields::fabin(lm, tc.gradIn));
    if (S > 1)
      // CPGD: on the main thread. A microthread gets the datapath only
      // when the main thread leaves it, so the row would wait for dL/dz
      // until this PE's two matrix instructions of the backward pass are
      // done; the row's PEs are waiting for it, so the send costs about
      // Lm cycles.
      rec("delta_send", pipelined ? DsdFields::fabout(lm, tc.deltaRow)
                             : DsdFields::fabout(lm, tc.deltaRow).withUtid(5));
    if (hasBias)
      rec("bias", DsdFields::mem1d(lm, mm.bias));
    if (mm.gb >= 0)
      rec("gb", DsdFields::mem1d(lm, mm.gb));
    if (mm.mask >= 0)
      rec("mask", DsdFields::mem1d(lm, mm.mask));
  }
  if (t.inputGradient) {
    rec("dx", ring(DsdFields::mem1d(lk, mm.dx)));
    rec("dx4", ring(DsdFields::mem4d(mm.dx, kXOverT)));
    // Upper rows send south on U[r % 2], lower rows north on
    // U[(r + 1) % 2]; the diagonal sends west (Routing.h).
    int p = key.red.parity;
    switch (key.red.reduce) {
    case ReduceRole::Upper:
      if (key.red.receives)
        rec("red_in", DsdFields::fabin(lk, tc.reduce[1 - p]));
      rec("red_out", DsdFields::fabout(lk, tc.reduce[p]));
      break;
    case ReduceRole::Lower:
      if (key.red.receives)
        rec("red_in", DsdFields::fabin(lk, tc.reduce[p]));
      rec("red_out", DsdFields::fabout(lk, tc.reduce[1 - p]));
      break;
    case ReduceRole::Diagonal:
      if (key.red.receives)
        rec("red_north", DsdFields::fabin(lk, tc.reduce[1 - p]));
      if (key.red.receivesSouth)
        rec("red_south", DsdFields::fabin(lk, tc.reduce[p]));
      // CPGD: dL/dx goes west on a microthread (its dx is in the ring).
      rec("red_out", pipelined ? DsdFields::fabout(lk, tc.gradOut)
                                .withUtid(kUtidGradient)
                          : DsdFields::fabout(lk, tc.gradOut));
      break;
    case ReduceRole::None:
      break;
    }
  }
  if (key.role.diagonal) {
    rec("copy_in", DsdFields::fabin(lk, colors.in));
    rec("copy_out", DsdFields::fabout(lk, colors.column).withUtid(0));
  }

  wv::TaskOp task0 = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&task0.getBody().front());
  loadStrides(1);
  dsrLoad(wv::RegFile::xdsr, kXOverN, "x_over_n");
  dsrLoad(wv::RegFile::xdsr, kXOverT, "x_over_t");
  dsrLoad(wv::RegFile::xdsr, kXBlock, "x_block");
  if (key.role.diagonal) {
    dsrLoad(wv::RegFile::ddsr, kDsrCopy, "copy_out");
    dsrLoad(wv::RegFile::s0dsr, kDsrCopy, "copy_in");
  }
  if (t.mbgd && !pipelined)
    inst(Opcode::MOVI, {gpr(kGprCount), lit(0)});
  if (pipelined)
    cpgdStart();

  label("sample");
  // Forward. The diagonal launches the copy of its chunk into the column
  // (microthread 0); every PE takes its chunk off the column only now, after
  // the previous sample's update (CPGD: after the backward of the sample
  // lag + 1 before it).
  if (pipelined)
    cpgdSkipForward("forward_done");
  if (key.role.diagonal)
    inst(Opcode::MOV32, {ddsr(kDsrCopy), s0(kDsrCopy)});
  un(Opcode::MOV32, "x", "x_in");
  // The forward from x in memory; run again in the backward pass when the
  // next layer recomputes its input (trainedDenseForwardCycles counts it).
  // The recomputed y goes out on the main thread: the next sample's
  // forward, which the layer before may feed before the next layer has
  // taken this y, must not overwrite it mid-send.
  auto forward = [&](bool again) {
    vec(Opcode::FMAC, "acc4", "w4", "x4");
    if (!last) {
      if (first)
        un(Opcode::MOV32, "psum_out", "acc");
      else
        vec(Opcode::FADD, "psum_out", "acc", "psum_in");
    } else {
      if (!first)
        vec(Opcode::FADD, "acc", "acc", "psum_in");
      if (hasBias)
        vec(Opcode::FADD, "acc", "acc", "bias");
      if (layer.relu)
        vec(Opcode::FMAX, "y", "acc", imm(wt::SmallImm::Zero));
      else
        un(Opcode::MOV32, "y", "acc");
      // The send of y runs on microthread 3: y is next written after this
      // sample's gradient has come back (or, recomputed, with the same
      // values), so after the send.
      un(Opcode::MOV32, again ? "resend" : "send", "y");
    }
    fill("acc", wt::SmallImm::Zero);
  };
  forward(false);
  // CPGD: the backward of the sample lag before, whose x (and y) are in the
  // next slot of the ring.
  if (pipelined) {
    label("forward_done");
    cpgdAdvance("ring_next");
    cpgdSkipBackward("round_done");
  }

  // Delta. The last column receives dL/dy from the east, applies f' and
  // multicasts dL/dz west along the row (microthread 5); the others receive
  // that.
  if (last) {
    un(Opcode::MOV32, "delta", "grad_in");
    if (layer.relu) {
      // mask = (y == 0); then delta where y > 0, else 0 (acc is zero).
      vec(Opcode::FCEQ, "mask", "y", imm(wt::SmallImm::Zero));
      vec(Opcode::SEL32, "mask", "acc", "delta");
      un(Opcode::MOV32, "delta", "mask");
    }
    if (S > 1)
      un(Opcode::MOV32, "delta_send", "delta");
  } else {
    un(Opcode::MOV32, "delta", "delta_in");
  }
  // Reverse checkpoints: the next layer does not store its input; this one
  // recomputes it from its own x (still in memory: dx has not overwritten
  // it yet) with the weights and bias of the forward, and sends it again.
  if (t.recomputesOutput)
    forward(true);
  if (hasBias) {
    if (t.mbgd)
      vec(Opcode::FADD, "gb", "gb", "delta");
    else
      vec(Opcode::FMAC, "bias", "delta", gpr(kGprLr));
  }
  if (t.inputGradient) {
    // dx[t] = sum_n W[t, n] delta[n], with the weights before the update,
    // then reduced down the column to the diagonal, which sends it west.
    fill("dx", wt::SmallImm::Zero);
    vec(Opcode::FMAC, "dx4", "w4", "delta4");
    // CPGD: both sums into dx on the main thread, then dx west on a
    // microthread (the column is not held back by the kernel before).
    emitGradientReduce(*this, key.red, kDsrA, kDsrB,
                       /*sumBeforeSend=*/pipelined);
  }
  // A layer that does not store x takes it again, recomputed by the layer
  // before, into dx's memory (dx has gone west).
  if (!t.storesInput) {
    if (key.role.diagonal)
      inst(Opcode::MOV32, {ddsr(kDsrCopy), s0(kDsrCopy)});
    un(Opcode::MOV32, "x", "x_in");
  }
  // Chain and update.
  if (!t.mbgd) {
    vec(Opcode::FMUL, "dlr", "delta", gpr(kGprLr));
    vec(Opcode::FMAC, "w4", "x4", "dlr4");
  } else {
    vec(Opcode::FMAC, "g4", "x4", "delta4");
  }
  // The step's end (MBGD): W += g (-lr), b += gb (-lr), clear both.
  auto applyStep = [&] {
    vec(Opcode::FMAC, "w", "g", gpr(kGprLr));
    fill("g", wt::SmallImm::Zero);
    if (mm.gb >= 0) {
      vec(Opcode::FMAC, "bias", "gb", gpr(kGprLr));
      fill("gb", wt::SmallImm::Zero);
    }
  };
  if (!pipelined) {
    if (t.mbgd) {
      // After the step's last sample.
      inst(Opcode::ADD16, {gpr(kGprCount), imm(wt::SmallImm::One)});
      inst(Opcode::CEQ16, {gpr(kGprCount), gpr(kGprBatch)});
      wv::JumpOp::create(b, loc, "sample", wv::JumpCond::if_false);
      applyStep();
      inst(Opcode::MOVI, {gpr(kGprCount), lit(0)});
    }
    return jump("sample");
  }
  label("round_done");
  cpgdNext("sample");
  // A pipelined MBGD: the mini-batch's rounds are done, the pipeline
  // drained; update, then the next mini-batch.
  if (t.mbgd)
    applyStep();
  cpgdEnd();
}

} // namespace

void emitTrainedDenseLayer(OpBuilder &b, Location loc, const DenseLayer &layer,
                           const DenseMapping &m, const DenseColors &colors,
                           const TrainingColors &trainingColors,
                           const DenseTraining &training, StringRef name,
                           const RouteTable &routes) {
  Emitter(b, loc, layer, m, colors, trainingColors, training, name, routes)
      .emitGroups();
}

} // namespace weft::conversion
