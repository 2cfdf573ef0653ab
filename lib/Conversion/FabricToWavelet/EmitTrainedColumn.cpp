//===- EmitTrainedColumn.cpp - Column kernels of a training program ------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The column kernels of docs/training.md: Relu and Tanh with their backward
// step (they keep y and send dL/dx = dL/dy * f'(y) west), and the softmax
// cross-entropy loss after the logits (p = softmax(z) with the Softmax
// kernel's all-reduce, then dL/dz = (p - onehot(label)) / B west, p east).
// Every PE loops over samples; a sample's forward input is taken off the
// fabric only after the previous sample's gradient has been sent. Under
// CPGD a Relu or Tanh runs rounds (the forward of sample i, the backward of
// sample i - lag) and keeps the y of the samples in flight in a ring.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/ColumnKernels.h"

#include "WaveletBuilder.h"

#include "weft/Kernels/Chunks.h"
#include "weft/Kernels/DenseTraining.h"
#include "weft/Machine/Numerics.h"

#include "wavelet/WaveletOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;
namespace wt = weft::machine;
namespace wv = weft::wavelet;

namespace weft::conversion {
namespace {

constexpr int64_t kRecords = kTrainedColumnRecords,
                  kData = kTrainedColumnData;
// GPR pairs: the maximum and the sum of the softmax (as the Softmax
// kernel's), the label as fp32, 1/B.
constexpr int64_t kGprMax = 6, kGprSum = 8, kGprLabel = 10, kGprInvB = 12;

struct Role {
  int64_t len = 0;
  bool first = false, last = false;
  int64_t parity = 0;
  bool operator==(const Role &o) const {
    return len == o.len && first == o.first && last == o.last &&
           parity == o.parity;
  }
};

class Emitter : WaveletBuilder {
public:
  Emitter(OpBuilder &b, Location loc, const TrainedColumn &k, StringRef name,
          StringRef layer, const RouteTable &routes)
      : WaveletBuilder(b, loc), k(k), name(name), layer(layer),
        routes(routes) {}

  Role roleOf(int64_t r) const {
    Role role;
    role.len = chunkSize(k.layout.n, k.layout.rows, r);
    if (k.kind == TrainedColumn::Kind::Loss && k.layout.rows > 1) {
      role.first = r == 0;
      role.last = r + 1 == k.layout.rows;
      role.parity = r % 2;
    }
    return role;
  }
  void emitGroup(int64_t r0, int64_t r1, const Role &role);

private:
  int64_t buffer(int64_t L) {
    int64_t at = nextData;
    nextData += 2 * L;
    return at;
  }
  void rec(StringRef sym, const DsdFields &f) {
    dsdAt(sym, kRecords + 4 * records++, f);
  }
  template <typename S1> void vec(Opcode op, StringRef d, StringRef s0, S1 s1) {
    vecVia(0, op, d, s0, s1);
  }
  void un(Opcode op, StringRef d, StringRef s) { unVia(1, op, d, s); }
  void emitLoss(int64_t L, int64_t r0, int64_t r1, const Role &role);

  const TrainedColumn &k;
  StringRef name, layer;
  const RouteTable &routes;
  int64_t records = 0, nextData = kData;
};

void Emitter::emitGroup(int64_t r0, int64_t r1, const Role &role) {
  const int64_t h = r1 - r0, y = k.layout.y0 + r0, L = role.len;
  std::string sym =
      (name + "_r" + Twine(r0) + (h > 1 ? "_" + Twine(r1 - 1) : Twine())).str();
  Block *body = peOrGroup(sym, k.x, y, 1, h, layer);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  routesAt(routes, k.x, y);
  records = 0;
  nextData = kData;

  rec("in", DsdFields::fabin(L, k.inColor));
  // CPGD: the gradient goes west on microthread 4 (from a ring slot), so
  // that the kernel before, which takes it in a later round, does not hold
  // this one back.
  const bool pipelined = k.lag > 0;
  if (k.gradOut >= 0)
    rec("grad_out", pipelined ? DsdFields::fabout(L, k.gradOut).withUtid(4)
                         : DsdFields::fabout(L, k.gradOut));
  if (k.kind == TrainedColumn::Kind::Loss) {
    rec("out", DsdFields::fabout(L, k.outColor));
    return emitLoss(L, r0, r1, role);
  }
  // y goes east on microthread 3, so the main thread goes on to take the
  // gradient: a chunk longer than the queues on the way could otherwise
  // wait for a consumer that is itself sending a gradient back (under
  // CPGD), and y is next written after the next kernel has taken it all
  // (SGD: after its gradient came back; CPGD: lag + 1 rounds later).
  rec("out", DsdFields::fabout(L, k.outColor).withUtid(3));

  const bool tanh = k.kind == TrainedColumn::Kind::Tanh;
  // The gradient's buffer: the mask (Relu) or t (Tanh).
  const char *g = tanh ? "t" : "mask";
  if (pipelined) {
    // y and the gradient of sample i at slot i mod (lag + 1), through
    // GPR4: y [2L words], g [2L].
    cpgdConstants(k.samples, k.lag, 4 * L, k.steps);
    int64_t ring = buffer(2 * L * (k.lag + 1));
    rec("y", DsdFields::mem1d(L, ring).withIx());
    rec(g, DsdFields::mem1d(L, ring + 2 * L).withIx());
  } else {
    rec("y", DsdFields::mem1d(L, buffer(L)));
  }
  rec("dy", DsdFields::mem1d(L, buffer(L)));
  rec("grad_in", DsdFields::fabin(L, k.gradIn));
  if (tanh) {
    int64_t ones = buffer(L);
    wv::SegmentOp::create(
        b, loc, "ones_data", ones, /*per_pe=*/false,
        DenseElementsAttr::get(RankedTensorType::get({L}, b.getF32Type()),
                               1.0f));
    rec("ones", DsdFields::mem1d(L, ones));
  } else {
    // A vector of zeros (memory is zero at load and this one is never
    // written).
    rec("zeros", DsdFields::mem1d(L, buffer(L)));
  }
  if (!pipelined)
    rec(g, DsdFields::mem1d(L, buffer(L)));

  wv::TaskOp main = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&main.getBody().front());
  if (pipelined)
    cpgdStart();
  label("sample");
  if (pipelined)
    cpgdSkipForward("forward_done");
  if (tanh) {
    // y = 1 - 2 / (1 + exp(2x)), the steps of the Tanh kernel.
    vec(Opcode::FMUL, "y", "in", imm(wt::SmallImm::Two));
    un(Opcode::FEXP, "y", "y");
    vec(Opcode::FADD, "y", "y", imm(wt::SmallImm::One));
    un(Opcode::FRCP, "y", "y");
    vec(Opcode::FADD, "y", "y", "y");
    vec(Opcode::FSUB, "y", "ones", "y");
  } else {
    vec(Opcode::FMAX, "y", "in", imm(wt::SmallImm::Zero));
  }
  un(Opcode::MOV32, "out", "y");
  if (pipelined) {
    label("forward_done");
    cpgdAdvance("ring_next");
    cpgdSkipBackward("round_done");
  }
  if (k.gradOut >= 0) {
    un(Opcode::MOV32, "dy", "grad_in");
    if (tanh) {
      // dx = dy (1 - y y).
      vec(Opcode::FMUL, "t", "y", "y");
      vec(Opcode::FSUB, "t", "ones", "t");
      if (pipelined) {
        vec(Opcode::FMUL, "t", "dy", "t");
        un(Opcode::MOV32, "grad_out", "t");
      } else {
        vec(Opcode::FMUL, "grad_out", "dy", "t");
      }
    } else {
      // dx = dy where y > 0, else 0.
      vec(Opcode::FCEQ, "mask", "y", imm(wt::SmallImm::Zero));
      vec(Opcode::SEL32, "mask", "zeros", "dy");
      un(Opcode::MOV32, "grad_out", "mask");
    }
  } else {
    // Nothing before it is trained: the gradient is consumed and dropped.
    un(Opcode::MOV32, "dy", "grad_in");
  }
  if (!pipelined)
    return jump("sample");
  label("round_done");
  cpgdNext("sample");
  cpgdEnd();
}

void Emitter::emitLoss(int64_t L, int64_t r0, int64_t r1, const Role &role) {
  const bool reduce = k.layout.rows > 1;
  rec("buf", DsdFields::mem1d(L, buffer(L)));
  rec("p", DsdFields::mem1d(L, buffer(L)));
  int64_t mask = buffer(L);
  rec("mask", DsdFields::mem1d(L, mask));
  rec("mask_lo", DsdFields::mem1d(L, mask).withStride(2));
  rec("onehot", DsdFields::mem1d(L, buffer(L)));
  // CPGD: dL/dz goes west on a microthread from one of two buffers, GPR4
  // toggling between them, so that the loss takes the next logits while
  // the last kernel has not yet taken this gradient.
  const bool pipelined = k.lag > 0;
  if (pipelined) {
    constParam(kGprSlot, 2 * L);
    constParam(kGprRing, 4 * L);
    rec("delta", DsdFields::mem1d(L, buffer(2 * L)).withIx());
  } else {
    rec("delta", DsdFields::mem1d(L, buffer(L)));
  }
  rec("label", DsdFields::fabin(1, k.labelColor).withFormat("dense16x2"));
  // Each PE's class numbers as fp32: chunkBegin(C, R, r) + i.
  int64_t cls = buffer(L), h = r1 - r0;
  {
    std::vector<float> v;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t i = 0; i < L; ++i)
        v.push_back(float(chunkBegin(k.layout.n, k.layout.rows, r) + i));
    std::vector<char> bytes(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    std::string key = (name + "_classes_r" + Twine(r0)).str();
    wv::SegmentOp::create(
        b, loc, "classes_data", cls, /*per_pe=*/true,
        DenseResourceElementsAttr::get(
            RankedTensorType::get({h, 1, L}, b.getF32Type()), key,
            HeapAsmResourceBlob::allocateAndCopyInferAlign(
                ArrayRef<char>(bytes))));
  }
  rec("classes", DsdFields::mem1d(L, cls));
  if (reduce) {
    if (!role.last)
      rec("red_in", DsdFields::fabin(1, k.internal[1 - role.parity]));
    if (!role.first) {
      rec("red_out", DsdFields::fabout(1, k.internal[role.parity]));
      rec("bc_in", DsdFields::fabin(1, k.internal[2]));
    } else {
      rec("bc_out", DsdFields::fabout(1, k.internal[2]));
    }
  }
  uint32_t invB = wt::f32ToBits(1.0f / float(k.batch));
  if (k.batch > 1) {
    constParam(kGprInvB, int64_t(invB & 0xffff));
    constParam(kGprInvB + 1, int64_t(invB >> 16));
  }

  wv::TaskOp main = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&main.getBody().front());
  if (pipelined)
    inst(Opcode::MOVI, {gpr(4), lit(0)});
  using RF = wv::RegFile;
  // The all-reduce of the Softmax kernel (docs/execution-model.md, "The
  // column all-reduce and its colors").
  auto allReduce = [&](Opcode combine, int64_t g) {
    if (!reduce)
      return;
    if (!role.last) {
      dsrLoad(RF::s1dsr, 2, "red_in");
      inst(combine, {gpr(g), s1(2)});
    }
    if (!role.first) {
      dsrLoad(RF::ddsr, 2, "red_out");
      inst(Opcode::MOV32, {ddsr(2), gpr(g)});
      dsrLoad(RF::s0dsr, 2, "bc_in");
      inst(Opcode::MOV32, {gpr(g), s0(2)});
    } else {
      dsrLoad(RF::ddsr, 2, "bc_out");
      inst(Opcode::MOV32, {ddsr(2), gpr(g)});
    }
  };
  label("sample");
  un(Opcode::MOV32, "buf", "in");
  dsrLoad(RF::s0dsr, 1, "buf");
  inst(Opcode::MOV32, {gpr(kGprMax), s0(1)});
  inst(Opcode::FMAXR, {gpr(kGprMax), s0(1)});
  allReduce(Opcode::FMAX, kGprMax);
  vec(Opcode::FSUB, "buf", "buf", gpr(kGprMax));
  un(Opcode::FEXP, "buf", "buf");
  inst(Opcode::MOV32, {gpr(kGprSum), imm(wt::SmallImm::Zero)});
  dsrLoad(RF::s0dsr, 1, "buf");
  inst(Opcode::FSUM, {gpr(kGprSum), s0(1)});
  allReduce(Opcode::FADD, kGprSum);
  inst(Opcode::FRCP, {gpr(kGprSum), gpr(kGprSum)});
  vec(Opcode::FMUL, "p", "buf", gpr(kGprSum));
  un(Opcode::MOV32, "out", "p");
  // dL/dz = (p - onehot(label)) / B.
  dsrLoad(RF::s0dsr, 1, "label");
  inst(Opcode::FI2F, {gpr(kGprLabel), s0(1)});
  vec(Opcode::FCEQ, "mask", "classes", gpr(kGprLabel));
  un(Opcode::FI2F, "onehot", "mask_lo");
  vec(Opcode::FSUB, "delta", "p", "onehot");
  if (k.batch > 1)
    vec(Opcode::FMUL, "delta", "delta", gpr(kGprInvB));
  un(Opcode::MOV32, "grad_out", "delta");
  if (pipelined)
    cpgdAdvance("delta_next");
  jump("sample");
}

} // namespace

LogicalResult emitTrainedColumn(OpBuilder &b, Location loc,
                                const TrainedColumn &k, StringRef name,
                                StringRef layer, const RouteTable &routes) {
  const RowChunks &lay = k.layout;
  if (lay.n < 1 || lay.rows < 1 ||
      chunkSize(lay.n, lay.rows, lay.rows - 1) < 1)
    return emitError(loc) << "trained column kernel " << name << ": "
                          << lay.rows << " rows leave a chunk of its "
                          << lay.n << " elements empty";
  const bool loss = k.kind == TrainedColumn::Kind::Loss;
  if (loss && (k.labelColor < 0 || k.gradOut < 0 ||
               (lay.rows > 1 && (k.internal[1] < 0 || k.internal[2] < 0)) ||
               (lay.rows > 2 && k.internal[0] < 0)))
    return emitError(loc) << "the loss kernel " << name
                          << " needs its labels', gradient's and (on "
                             "several rows) all-reduce's colors";
  if (loss && lay.n > 32767)
    return emitError(loc) << "the loss kernel " << name << " has " << lay.n
                          << " classes; labels are int16";
  if (!loss && k.gradIn < 0)
    return emitError(loc) << "trained column kernel " << name
                          << " needs the color of its gradient";
  int64_t L = chunkSize(lay.n, lay.rows, 0);
  FailureOr<wt::Target> target =
      columnTarget(b, loc, "trained column kernel " + name, k.x, lay.y0,
                   lay.rows);
  if (failed(target))
    return failure();
  if (k.lag > 0 && ((loss && k.lag != 1) || (!loss && k.samples < 1)))
    return emitError(loc) << "trained column kernel " << name
                          << ": a Relu or Tanh trails its forward over at "
                             "least one sample, the loss double-buffers its "
                             "gradient (lag 1)";
  if (trainedColumnBytes(L, loss, k.lag) > 2 * int64_t(target->memoryWords()))
    return emitError(loc) << "trained column kernel " << name
                          << ": a chunk of " << L << " elements needs "
                          << trainedColumnBytes(L, loss, k.lag)
                          << " bytes of PE memory, more than the "
                          << 2 * target->memoryWords() << " available";
  Emitter e(b, loc, k, name, layer, routes);
  forEachRowGroup(
      routes, k.x, lay.y0, lay.rows,
      [&](int64_t a, int64_t c) { return e.roleOf(a) == e.roleOf(c); },
      [&](int64_t r0, int64_t r1) { e.emitGroup(r0, r1, e.roleOf(r0)); });
  return success();
}

} // namespace weft::conversion
