//===- EmitTrainedJoin.cpp - A residual block's trained Add --------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits the per-PE programs of docs/training.md ("Residual blocks") for the
// Add that ends a residual block, trained one sample at a time: a column of
// PEs, each with its chunk of the feature map, that per sample
//   - takes the input that arrives first (the block's input, the skip)
//     whole, then the other (the block's path), adds them, applies the
//     fused ReLU, keeps y and sends it on;
//   - takes dL/dy from the next kernel, masks it by the ReLU (y == 0) and
//     sends the same gradient into both paths: first to the block's last
//     kernel (the path, which must run its backward before the block's
//     input can), then along the skip to the block's input.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/JoinKernel.h"

#include "WaveletBuilder.h"

#include "wavelet/WaveletOps.h"

#include "weft/Kernels/Chunks.h"
#include "weft/Kernels/DenseTraining.h"
#include "weft/Machine/ISA.h"

using namespace mlir;
namespace wt = weft::machine;
namespace wv = weft::wavelet;

namespace weft::conversion {

int64_t trainedJoinBytes(int64_t L) {
  // a, b, y, dL/dy and a zero word after the records.
  return 2 * (kTrainedColumnData + 4 * 2 * L + 2);
}

namespace {

constexpr int64_t kDsrA = 0;

class Emitter : WaveletBuilder {
public:
  Emitter(OpBuilder &b, Location loc, const JoinKernel &k, int first,
          int64_t gradIn, const int64_t gradOut[2], StringRef name)
      : WaveletBuilder(b, loc), k(k), first(first), gradIn(gradIn),
        name(name) {
    this->gradOut[0] = gradOut[0];
    this->gradOut[1] = gradOut[1];
  }

  void emitGroup(int64_t r0, int64_t r1, const RouteTable &routes) {
    int64_t h = r1 - r0;
    std::string sym =
        (name + "_r" + Twine(r0) + (h > 1 ? "_" + Twine(r1 - 1) : Twine()))
            .str();
    Block *body = peOrGroup(sym, k.x, r0, 1, h, name);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body);
    routesAt(routes, k.x, r0);
    emit(chunkSize(k.layout.n, k.layout.rows, r0 - k.layout.y0));
  }

private:
  void un(Opcode op, StringRef d, StringRef src) {
    dsrLoad(wv::RegFile::ddsr, kDsrA, d);
    dsrLoad(wv::RegFile::s0dsr, kDsrA, src);
    inst(op, {ddsr(kDsrA), s0(kDsrA)});
  }
  void vec(Opcode op, StringRef d, StringRef s0Name, StringRef s1Name) {
    dsrLoad(wv::RegFile::ddsr, kDsrA, d);
    dsrLoad(wv::RegFile::s0dsr, kDsrA, s0Name);
    dsrLoad(wv::RegFile::s1dsr, kDsrA, s1Name);
    inst(op, {dsr(kDsrA), s1(kDsrA)});
  }
  void emit(int64_t L);

  const JoinKernel &k;
  const int first;
  const int64_t gradIn;
  int64_t gradOut[2];
  StringRef name;
};

void Emitter::emit(int64_t L) {
  // Records from kTrainedColumnRecords, data from kTrainedColumnData.
  int64_t next = 0;
  auto rec = [&](StringRef sym, const DsdFields &f) {
    dsdAt(sym, kTrainedColumnRecords + 4 * next++, f);
  };
  const int64_t a = kTrainedColumnData, bb = a + 2 * L, y = bb + 2 * L,
                dy = y + 2 * L, zero = dy + 2 * L;
  rec("a", DsdFields::mem1d(L, a));
  rec("b", DsdFields::mem1d(L, bb));
  rec("y", DsdFields::mem1d(L, y));
  rec("dy", DsdFields::mem1d(L, dy));
  rec("zero", DsdFields::mem1d(L, zero).withStride(0));
  rec("in_a", DsdFields::fabin(L, k.colorA));
  rec("in_b", DsdFields::fabin(L, k.colorB));
  rec("out", DsdFields::fabout(L, k.outColor));
  rec("grad_in", DsdFields::fabin(L, gradIn));
  rec("grad_a", DsdFields::fabout(L, gradOut[0]));
  rec("grad_b", DsdFields::fabout(L, gradOut[1]));

  wv::TaskOp t = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&t.getBody().front());
  label("sample");
  // Forward: the input that arrives first, whole, then the other.
  if (first == 1) {
    un(Opcode::MOV32, "b", "in_b");
    un(Opcode::MOV32, "a", "in_a");
  } else {
    un(Opcode::MOV32, "a", "in_a");
    un(Opcode::MOV32, "b", "in_b");
  }
  vec(Opcode::FADD, "y", "a", "b");
  if (k.relu) {
    dsrLoad(wv::RegFile::ddsr, kDsrA, "y");
    dsrLoad(wv::RegFile::s0dsr, kDsrA, "y");
    inst(Opcode::FMAX, {dsr(kDsrA), imm(wt::SmallImm::Zero)});
  }
  un(Opcode::MOV32, "out", "y");
  // Backward: dL/dy masked by the ReLU (a holds the mask), into both
  // paths.
  un(Opcode::MOV32, "dy", "grad_in");
  if (k.relu) {
    dsrLoad(wv::RegFile::ddsr, kDsrA, "a");
    dsrLoad(wv::RegFile::s0dsr, kDsrA, "y");
    inst(Opcode::FCEQ, {dsr(kDsrA), imm(wt::SmallImm::Zero)});
    vec(Opcode::SEL32, "a", "zero", "dy");
    un(Opcode::MOV32, "dy", "a");
  }
  // The path first (the input that arrives last), then the skip.
  un(Opcode::MOV32, first == 1 ? "grad_a" : "grad_b", "dy");
  un(Opcode::MOV32, first == 1 ? "grad_b" : "grad_a", "dy");
  jump("sample");
}

} // namespace

LogicalResult emitTrainedJoin(OpBuilder &b, Location loc, const JoinKernel &k,
                              int first, int64_t gradIn,
                              const int64_t gradOut[2], StringRef name,
                              const RouteTable &routes) {
  if (k.op != JoinOp::Add || k.broadcast >= 0)
    return emitError(loc) << "join kernel " << name
                          << " is no Add of two whole feature maps, which "
                             "is all weft trains of joins";
  Emitter e(b, loc, k, first, gradIn, gradOut, name);
  forEachColumnGroup(routes, k.x, k.layout.rows,
                     [&](int64_t r0, int64_t r1) { e.emitGroup(r0, r1, routes); });
  return success();
}

} // namespace weft::conversion
