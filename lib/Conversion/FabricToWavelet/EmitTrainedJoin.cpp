//===- EmitTrainedJoin.cpp - A residual block's trained Add --------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits the per-PE programs of docs/training.md ("Residual blocks") for the
// Add that ends a residual block, trained one sample at a time: a column of
// PEs, each with its chunk of the feature map, that per sample
//   - takes the two inputs' rows in the order they can arrive (the skip's
//     run ahead of the path's by the rows its windows need), adds them,
//     applies the fused ReLU, keeps y and sends it on;
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
#include "weft/Kernels/ConvTraining.h"
#include "weft/Kernels/DenseTraining.h"
#include "weft/Machine/ISA.h"

using namespace mlir;
namespace wt = weft::machine;
namespace wv = weft::wavelet;

namespace weft::conversion {

namespace {

constexpr int64_t kDsrA = 0;

class Emitter : WaveletBuilder {
public:
  Emitter(OpBuilder &b, Location loc, const JoinKernel &k,
          ArrayRef<int> order, int64_t gradIn, const int64_t gradOut[2],
          StringRef name)
      : WaveletBuilder(b, loc), k(k), order(order), gradIn(gradIn),
        name(name) {
    this->gradOut[0] = gradOut[0];
    this->gradOut[1] = gradOut[1];
    rows = llvm::count(order, 0);
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
  void un(Opcode op, StringRef d, StringRef src) { unVia(kDsrA, op, d, src); }
  void vec(Opcode op, StringRef d, StringRef s0, StringRef s1) {
    vecVia(kDsrA, op, d, s0, s1);
  }
  static std::string nth(StringRef what, int64_t i) {
    return (what + Twine(i)).str();
  }
  void emit(int64_t L);

  const JoinKernel &k;
  ArrayRef<int> order;
  const int64_t gradIn;
  int64_t gradOut[2];
  StringRef name;
  int64_t rows = 1;
};

void Emitter::emit(int64_t L) {
  const TrainedJoinMap mm = trainedJoinMap(L, rows);
  int64_t next = 0;
  auto rec = [&](StringRef sym, const DsdFields &f) {
    assert(next < mm.numRecords && "the records overflow");
    dsdAt(sym, mm.records + 4 * next++, f);
  };
  // Row i of each input: elements [i L / rows, (i + 1) L / rows) of the
  // chunk (pixel-major: a map row's pixels are consecutive).
  const int64_t row = L / rows;
  for (int64_t i = 0; i < rows; ++i) {
    rec(nth("a", i), DsdFields::mem1d(row, mm.a + 2 * i * row));
    rec(nth("b", i), DsdFields::mem1d(row, mm.b + 2 * i * row));
  }
  rec("a", DsdFields::mem1d(L, mm.a));
  rec("b", DsdFields::mem1d(L, mm.b));
  rec("y", DsdFields::mem1d(L, mm.y));
  rec("dy", DsdFields::mem1d(L, mm.dy));
  rec("zero", DsdFields::mem1d(L, mm.zero).withStride(0));
  rec("in_a", DsdFields::fabin(row, k.colorA));
  rec("in_b", DsdFields::fabin(row, k.colorB));
  rec("out", DsdFields::fabout(L, k.outColor));
  rec("grad_in", DsdFields::fabin(L, gradIn));
  // (No gradient goes into a producer that is not trained.)
  if (gradOut[0] >= 0)
    rec("grad_a", DsdFields::fabout(L, gradOut[0]));
  if (gradOut[1] >= 0)
    rec("grad_b", DsdFields::fabout(L, gradOut[1]));

  wv::TaskOp t = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&t.getBody().front());
  label("sample");
  // Forward: the two inputs' rows in the order they can arrive (each
  // needs its fork's rows up to its own; the skip's run ahead), so that
  // neither input's producers stall on the other.
  int64_t taken[2] = {0, 0};
  for (int in : order) {
    int64_t i = taken[in]++;
    un(Opcode::MOV32, nth(in == 0 ? "a" : "b", i), in == 0 ? "in_a" : "in_b");
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
  // The path first (its input's last row comes last), then the skip.
  const int skip = order.back() == 0 ? 1 : 0;
  for (int p : {1 - skip, skip})
    if (gradOut[p] >= 0)
      un(Opcode::MOV32, p == 0 ? "grad_a" : "grad_b", "dy");
  jump("sample");
}

} // namespace

LogicalResult emitTrainedJoin(OpBuilder &b, Location loc, const JoinKernel &k,
                              ArrayRef<int> order, int64_t gradIn,
                              const int64_t gradOut[2], StringRef name,
                              const RouteTable &routes) {
  if (k.op != JoinOp::Add || k.broadcast >= 0)
    return emitError(loc) << "join kernel " << name
                          << " is no Add of two whole feature maps, which "
                             "is all weft trains of joins";
  const int64_t rows = llvm::count(order, 0);
  if (rows < 1 || llvm::count(order, 1) != rows)
    return emitError(loc) << "join kernel " << name
                          << ": the order of its inputs' rows takes "
                          << rows << " of a and " << llvm::count(order, 1)
                          << " of b";
  for (int64_t r = 0; r < k.layout.rows; ++r)
    if (chunkSize(k.layout.n, k.layout.rows, r) % rows)
      return emitError(loc) << "join kernel " << name << ": chunk " << r
                            << " does not hold whole rows of " << rows;
  Emitter e(b, loc, k, order, gradIn, gradOut, name);
  forEachColumnGroup(routes, k.x, k.layout.rows,
                     [&](int64_t r0, int64_t r1) { e.emitGroup(r0, r1, routes); });
  return success();
}

} // namespace weft::conversion
