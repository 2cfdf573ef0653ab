//===- EmitColumnKernel.cpp - Column kernels to per-PE wavelet programs ---===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits a column kernel's PEs (docs/execution-model.md, "Column kernels"):
// the classic ops' loops, the axis softmax's group loops, and the steps of
// every other op (weft/Kernels/ColumnSequences.h) as DSD records, DSR loads
// and vector instructions. PEs with the same role form one
// wavelet.pe_group.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/ColumnKernels.h"

#include "WaveletBuilder.h"

#include "weft/Kernels/ColumnSequences.h"
#include "weft/Machine/ISA.h"
#include "weft/Machine/Target.h"

#include "fabric/FabricOps.h"
#include "wavelet/WaveletOps.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

using namespace mlir;
using namespace weft::conversion::column;
namespace wt = weft::machine;
namespace fab = weft::fabric;
namespace wv = weft::wavelet;

namespace weft::conversion {

namespace {

/// The DSD record symbol of a vector id.
std::string vecName(int32_t r) {
  switch (r) {
  case kVecIn:
    return "in";
  case kVecOut:
    return "out";
  case kVecBuf:
    return "buf";
  case kVecBuf2:
    return "buf2";
  case kVecBuf3:
    return "buf3";
  case kVecBuf4:
    return "buf4";
  case kVecBuf5:
    return "buf5";
  case kVecBuf6:
  case kVecBuf6 + 1:
  case kVecBuf6 + 2:
  case kVecBuf6 + 3:
  case kVecBuf6 + 4:
  case kVecBuf6 + 5:
  case kVecBuf6 + 6:
  case kVecBuf6 + 7:
    return "buf" + std::to_string(r - kVecBuf6 + 6);
  case kVecConst:
    return "const";
  default:
    break;
  }
  if (r >= kVecMem0)
    return "c" + std::to_string(r - kVecMem0 + kNumGprConsts);
  if (r >= kVecHi0)
    return "hi" + std::to_string(r - kVecHi0);
  return "lo" + std::to_string(r - kVecLo0);
}

} // namespace

namespace {

using DirSet = uint8_t;
constexpr DirSet bit(wt::Dir d) { return DirSet(1u << unsigned(d)); }

/// What distinguishes the program of one PE of the column.
struct Role {
  int64_t len = 0;    // chunk length
  bool first = false; // row 0 of a multi-row softmax
  bool last = false;  // last row of a multi-row softmax
  int64_t parity = 0; // row parity (softmax reduction colors)
  bool operator==(const Role &o) const {
    return len == o.len && first == o.first && last == o.last &&
           parity == o.parity;
  }
};

class Emitter : WaveletBuilder {
public:
  Emitter(OpBuilder &b, Location loc, const ColumnKernel &k, StringRef name,
          StringRef layer, const RouteTable &routes)
      : WaveletBuilder(b, loc), k(k), name(name), layer(layer), routes(routes) {
  }

  Role roleOf(int64_t r) const;
  void emitGroup(int64_t r0, int64_t r1, const Role &role);

private:
  void emitSequence(int64_t L, int64_t r0, int64_t r1);
  void emitClassic(int64_t L, const Role &role);
  void emitAxisSoftmax(int64_t L);
  /// `wavelet.jump "label" if_true` (a `brt`).
  void jumpIfTrue(StringRef label) {
    wv::JumpOp::create(b, loc, label, wv::JumpCond::if_true);
  }
  void dsd(StringRef sym, Rec index, const DsdFields &fields) {
    dsdAt(sym, kDsdBase + 4 * index, fields);
  }

  const ColumnKernel &k;
  StringRef name, layer;
  const RouteTable &routes;
};

Role Emitter::roleOf(int64_t r) const {
  Role role;
  role.len = chunkSize(k.layout.n, k.layout.rows, r);
  if (isSoftmax(k.op) && k.layout.rows > 1) {
    role.first = r == 0;
    role.last = r == k.layout.rows - 1;
    role.parity = r % 2;
  }
  return role;
}

void Emitter::emitSequence(int64_t L, int64_t r0, int64_t r1) {
  std::vector<Step> steps = sequenceOf(k);

  // Constants: the low half of each in GPR n, the high half in n + 1.
  std::vector<float> consts =
      columnTakesTensor(k.op) ? std::vector<float>() : registerConstants(k);
  for (size_t i = 0; i < consts.size() && i < size_t(kNumGprConsts); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &consts[i], 4);
    for (int half = 0; half < 2; ++half) {
      constParam(kGprConst[i] + half, int64_t((bits >> (16 * half)) & 0xffff));
    }
  }

  // DSD records of the vectors the steps use.
  std::set<int32_t> used;
  for (const Step &s : steps) {
    used.insert(s.dst);
    used.insert(s.src0);
    if (s.src1 && s.src1->kind == Opnd::Vec)
      used.insert(s.src1->value);
  }
  int32_t nextRec = kRecFirstFree;
  for (int32_t r : used) {
    if (r == kVecIn)
      dsd("in", kRecIn, DsdFields::fabin(L, k.inColor));
    else if (r == kVecOut)
      dsd("out", kRecOut, DsdFields::fabout(L, k.outColor));
    else if (r == kVecConst) {
      // Each PE's chunk of the constant tensor (1 / C for DivTensor).
      int64_t base = kDataBase + 2 * L * constSlot(k.op), h = r1 - r0;
      std::vector<char> bytes;
      bytes.reserve(size_t(4 * h * L));
      for (int64_t row = r0; row < r1; ++row) {
        int64_t begin = chunkBegin(k.layout.n, k.layout.rows, row);
        for (int64_t j = 0; j < L; ++j) {
          float c = k.params[size_t(begin + j)];
          if (k.op == ColumnOp::DivTensor)
            c = 1.0f / c;
          uint32_t bits;
          std::memcpy(&bits, &c, 4);
          for (int i = 0; i < 4; ++i)
            bytes.push_back(char((bits >> (8 * i)) & 0xff));
        }
      }
      auto type = RankedTensorType::get({h, 1, L}, b.getF32Type());
      std::string key = (name + "_const_r" + Twine(r0)).str();
      wv::SegmentOp::create(b, loc, "const_data", base, /*per_pe=*/true,
                            DenseResourceElementsAttr::get(
                                type, key,
                                HeapAsmResourceBlob::allocateAndCopyInferAlign(
                                    ArrayRef<char>(bytes))));
      dsd("const", kRecConst, DsdFields::mem1d(L, base));
    } else if (r >= kVecMem0) {
      // A constant of the table, the same value for every element.
      dsd(vecName(r), Rec(nextRec++),
          DsdFields::mem1d(L, kConstTable + 2 * (r - kVecMem0)).withStride(0));
    } else if (r >= kVecLo0) {
      // 16-bit halves of a buffer's fp32 elements (low word first).
      int64_t slot = (r - kVecLo0) % 10, half = r >= kVecHi0 ? 1 : 0;
      dsd(vecName(r), Rec(nextRec++),
          DsdFields::mem1d(L, kDataBase + 2 * L * slot + half).withStride(2));
    } else {
      Rec rec = r >= kVecBuf4 ? Rec(nextRec++) : Rec(r);
      dsd(vecName(r), rec, DsdFields::mem1d(L, kDataBase + 2 * L * slotOf(r)));
    }
  }
  // The constants beyond the GPRs' (the table of kConstTable).
  if (consts.size() > size_t(kNumGprConsts)) {
    std::vector<float> table(consts.begin() + kNumGprConsts, consts.end());
    auto type = RankedTensorType::get({int64_t(table.size())}, b.getF32Type());
    wv::SegmentOp::create(b, loc, "const_table", kConstTable,
                          /*per_pe=*/false,
                          DenseElementsAttr::get(type, ArrayRef<float>(table)));
  }

  wv::TaskOp mainTask = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&mainTask.getBody().front());

  // DSR numbers (planDsrs): the permanent ones are loaded once before the
  // loop, the scratch DSRs before the steps that need them.
  using RF = wv::RegFile;
  DsrPlan plan = planDsrs(steps);
  for (size_t n = 0; n < plan.pairs.size(); ++n) {
    dsrLoad(RF::ddsr, int64_t(n), vecName(plan.pairs[n].first));
    dsrLoad(RF::s0dsr, int64_t(n), vecName(plan.pairs[n].second));
  }
  for (size_t n = 0; n < plan.s1.size(); ++n)
    dsrLoad(RF::s1dsr, int64_t(n), vecName(plan.s1[n]));
  label("sample");
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step &s = steps[i];
    const DsrPlan::Use &u = plan.uses[i];
    if (u.loadPair) {
      dsrLoad(RF::ddsr, u.pair, vecName(s.dst));
      dsrLoad(RF::s0dsr, u.pair, vecName(s.src0));
    }
    if (u.loadS1)
      dsrLoad(RF::s1dsr, u.s1, vecName(s.src1->value));
    int64_t n = u.pair;
    Opcode opcode = wv::toOpcode(s.op);
    if (wt::info(s.op).family == wt::Family::Un) {
      inst(opcode, {ddsr(n), s0(n)});
      continue;
    }
    wv::OperandAttr src;
    switch (s.src1->kind) {
    case Opnd::Vec:
      src = s1(u.s1);
      break;
    case Opnd::Gpr:
      src = gpr(s.src1->value);
      break;
    case Opnd::Imm:
      src = operand(wv::OperandKind::imm, s.src1->value);
      break;
    }
    inst(opcode, {dsr(n), src});
  }
  jump("sample");
}

void Emitter::emitAxisSoftmax(int64_t L) {
  const AxisLoop lp = axisLoop(k, L);
  const bool log = k.op == ColumnOp::AxisLogSoftmax;
  using RF = wv::RegFile;

  // The loop's constants (word offsets), set at load time.
  constParam(kGprEnd, 2 * L);
  if (lp.stride > 1) {
    constParam(kGprInnerEnd0, 2 * lp.stride);
    constParam(kGprSkip, 2 * lp.stride * (lp.group - 1));
    constParam(kGprBlock, 2 * lp.stride * lp.group);
  } else {
    constParam(kGprSkip, 2 * lp.group);
  }

  // The chunk in `buf`; `grp` is the group at word offset GPR4 of it (G
  // elements, I apart), `tmp` LogSoftmax's exponentials of one group.
  int64_t buf = kDataBase, buf2 = kDataBase + 2 * L;
  dsd("in", kRecIn, DsdFields::fabin(L, k.inColor));
  dsd("out", kRecOut, DsdFields::fabout(L, k.outColor));
  dsd("buf", kRecBuf, DsdFields::mem1d(L, buf));
  dsd("grp", kRecBuf2,
      DsdFields::mem1d(lp.group, buf).withStride(lp.stride).withIx());
  if (log)
    dsd("tmp", kRecBuf3, DsdFields::mem1d(lp.group, buf2));

  wv::TaskOp mainTask = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&mainTask.getBody().front());
  dsrLoad(RF::ddsr, 0, "buf");
  dsrLoad(RF::s0dsr, 0, "in");
  dsrLoad(RF::ddsr, 1, "grp");
  dsrLoad(RF::s0dsr, 1, "grp");
  if (log) {
    dsrLoad(RF::ddsr, 2, "tmp");
    dsrLoad(RF::s0dsr, 2, "tmp");
  }
  dsrLoad(RF::ddsr, 3, "out");
  dsrLoad(RF::s0dsr, 3, "buf");
  label("sample");
  inst(Opcode::MOV32, {ddsr(0), s0(0)}); // buf = in
  inst(Opcode::MOVI, {gpr(4), lit(0)});  // the first group
  if (lp.stride > 1)
    inst(Opcode::MOV16, {gpr(kGprInnerEnd), gpr(kGprInnerEnd0)});
  label("group");
  inst(Opcode::MOV32, {gpr(kGprMax), s0(1)}); // m = grp[0]
  inst(Opcode::FMAXR, {gpr(kGprMax), s0(1)}); // m = max(m, grp...)
  inst(Opcode::FSUB, {dsr(1), gpr(kGprMax)}); // grp = grp - m
  inst(Opcode::FEXP, {ddsr(log ? 2 : 1), s0(1)});
  inst(Opcode::MOV32, {gpr(kGprSum), imm(wt::SmallImm::Zero)});
  inst(Opcode::FSUM, {gpr(kGprSum), s0(log ? 2 : 1)}); // s = sum(exp)
  if (log) {
    inst(Opcode::FLOG, {gpr(kGprSum), gpr(kGprSum)});
    inst(Opcode::FSUB, {dsr(1), gpr(kGprSum)}); // grp = (x - m) - log(s)
  } else {
    inst(Opcode::FRCP, {gpr(kGprSum), gpr(kGprSum)});
    inst(Opcode::FMUL, {dsr(1), gpr(kGprSum)}); // grp = e * (1 / s)
  }
  if (lp.stride > 1) {
    // The next group of the block starts one element on; after the
    // block's I groups, skip its other G - 1 rows.
    inst(Opcode::ADD16, {gpr(4), imm(wt::SmallImm::Two)});
    inst(Opcode::CLTU16, {gpr(4), gpr(kGprInnerEnd)});
    jumpIfTrue("group");
    inst(Opcode::ADD16, {gpr(4), gpr(kGprSkip)});
    inst(Opcode::ADD16, {gpr(kGprInnerEnd), gpr(kGprBlock)});
  } else {
    inst(Opcode::ADD16, {gpr(4), gpr(kGprSkip)});
  }
  inst(Opcode::CLTU16, {gpr(4), gpr(kGprEnd)});
  jumpIfTrue("group");
  inst(Opcode::MOV32, {ddsr(3), s0(3)}); // out = buf
  jump("sample");
}

void Emitter::emitGroup(int64_t r0, int64_t r1, const Role &role) {
  int64_t h = r1 - r0, L = role.len;
  int64_t y = k.layout.y0 + r0;

  std::string sym =
      (name + "_r" + Twine(r0) + (h > 1 ? "_" + Twine(r1 - 1) : Twine())).str();
  Block *body = peOrGroup(sym, k.x, y, 1, h, layer);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);

  // Routes (weft/Kernels/Routing.h): the chunk in from the west, the
  // result out to the east; for a column softmax the partial results go
  // north on the sender's parity color and row 0's totals are multicast
  // south on the third color.
  routesAt(routes, k.x, y);
  if (isAxisSoftmax(k.op))
    emitAxisSoftmax(L);
  else if (!isClassic(k.op))
    emitSequence(L, r0, r1);
  else
    emitClassic(L, role);
}

/// Relu, Sigmoid, Tanh, Softmax and LogSoftmax: their buffers, DSD records
/// and loop, written out op by op.
void Emitter::emitClassic(int64_t L, const Role &role) {
  bool reduce = isSoftmax(k.op) && k.layout.rows > 1;
  int64_t redOut = 0, redIn = 0, bc = 0;
  if (reduce) {
    redOut = k.internal[role.parity];
    redIn = k.internal[1 - role.parity];
    bc = k.internal[2];
  }

  // Data: buf (and buf2) of L fp32 each.
  int64_t buf = kDataBase, buf2 = kDataBase + 2 * L;
  if (k.op == ColumnOp::Tanh) {
    // A vector of ones for 1 - 2r (Vec ops take their first source from a
    // DSR, never from an immediate).
    auto type = RankedTensorType::get({L}, b.getF32Type());
    wv::SegmentOp::create(b, loc, "ones_data", buf2, /*per_pe=*/false,
                          DenseElementsAttr::get(type, 1.0f));
  }

  // DSD records.
  dsd("in", kRecIn, DsdFields::fabin(L, k.inColor));
  dsd("out", kRecOut, DsdFields::fabout(L, k.outColor));
  if (k.op != ColumnOp::Relu)
    dsd("buf", kRecBuf, DsdFields::mem1d(L, buf));
  if (k.op == ColumnOp::Tanh || k.op == ColumnOp::LogSoftmax)
    dsd(k.op == ColumnOp::Tanh ? "ones" : "exps", kRecBuf2,
        DsdFields::mem1d(L, buf2));
  if (reduce) {
    if (!role.last)
      dsd("red_in", kRecRedIn, DsdFields::fabin(1, redIn));
    if (!role.first) {
      dsd("red_out", kRecRedOut, DsdFields::fabout(1, redOut));
      dsd("bc_in", kRecBcIn, DsdFields::fabin(1, bc));
    } else {
      dsd("bc_out", kRecBcOut, DsdFields::fabout(1, bc));
    }
  }

  wv::TaskOp mainTask = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&mainTask.getBody().front());

  // DSR numbers: `dsr n` pairs DDSR n with S0DSR n.
  using RF = wv::RegFile;
  switch (k.op) {
  case ColumnOp::Relu:
    // out = max(in, 0), straight from the fabric to the fabric.
    dsrLoad(RF::ddsr, 0, "out");
    dsrLoad(RF::s0dsr, 0, "in");
    label("sample");
    inst(Opcode::FMAX, {dsr(0), imm(wt::SmallImm::Zero)});
    break;
  case ColumnOp::Sigmoid:
    // buf = -in; buf = exp(buf); buf += 1; out = 1 / buf.
    dsrLoad(RF::ddsr, 0, "buf");
    dsrLoad(RF::s0dsr, 0, "in");
    dsrLoad(RF::ddsr, 1, "buf");
    dsrLoad(RF::s0dsr, 1, "buf");
    dsrLoad(RF::ddsr, 2, "out");
    label("sample");
    inst(Opcode::FNEG, {ddsr(0), s0(0)});
    inst(Opcode::FEXP, {ddsr(1), s0(1)});
    inst(Opcode::FADD, {dsr(1), imm(wt::SmallImm::One)});
    inst(Opcode::FRCP, {ddsr(2), s0(1)});
    break;
  case ColumnOp::Tanh:
    // r = 1 / (1 + exp(2 in)); out = 1 - 2 r.
    dsrLoad(RF::ddsr, 0, "buf");
    dsrLoad(RF::s0dsr, 0, "in");
    dsrLoad(RF::ddsr, 1, "buf");
    dsrLoad(RF::s0dsr, 1, "buf");
    dsrLoad(RF::s1dsr, 1, "buf");
    dsrLoad(RF::ddsr, 2, "out");
    dsrLoad(RF::s0dsr, 2, "ones");
    label("sample");
    inst(Opcode::FMUL, {dsr(0), imm(wt::SmallImm::Two)});
    inst(Opcode::FEXP, {ddsr(1), s0(1)});
    inst(Opcode::FADD, {dsr(1), imm(wt::SmallImm::One)});
    inst(Opcode::FRCP, {ddsr(1), s0(1)});
    inst(Opcode::FADD, {dsr(1), s1(1)});
    inst(Opcode::FSUB, {dsr(2), s1(1)});
    break;
  case ColumnOp::Softmax:
  case ColumnOp::LogSoftmax: {
    bool log = k.op == ColumnOp::LogSoftmax;
    dsrLoad(RF::ddsr, 0, "buf");
    dsrLoad(RF::s0dsr, 0, "in");
    dsrLoad(RF::ddsr, 1, "buf");
    dsrLoad(RF::s0dsr, 1, "buf");
    dsrLoad(RF::ddsr, 2, log ? "exps" : "buf");
    if (log)
      dsrLoad(RF::s0dsr, 2, "exps");
    dsrLoad(RF::ddsr, 3, "out");
    dsrLoad(RF::s0dsr, 3, "buf");
    if (reduce) {
      if (!role.last)
        dsrLoad(RF::s1dsr, 4, "red_in");
      if (!role.first) {
        dsrLoad(RF::ddsr, 5, "red_out");
        dsrLoad(RF::s0dsr, 6, "bc_in");
      } else {
        dsrLoad(RF::ddsr, 6, "bc_out");
      }
    }
    // Combines this row's partial value in `g` with the rows below, sends
    // it north and receives the column's total from row 0.
    auto allReduce = [&](Opcode combine, int32_t g) {
      if (!reduce)
        return;
      if (!role.last)
        inst(combine, {gpr(g), s1(4)});
      if (!role.first) {
        inst(Opcode::MOV32, {ddsr(5), gpr(g)});
        inst(Opcode::MOV32, {gpr(g), s0(6)});
      } else {
        inst(Opcode::MOV32, {ddsr(6), gpr(g)});
      }
    };
    label("sample");
    inst(Opcode::MOV32, {ddsr(0), s0(0)});      // buf = in
    inst(Opcode::MOV32, {gpr(kGprMax), s0(1)}); // m = buf[0]
    inst(Opcode::FMAXR, {gpr(kGprMax), s0(1)}); // m = max(m, buf...)
    allReduce(Opcode::FMAX, kGprMax);
    inst(Opcode::FSUB, {dsr(1), gpr(kGprMax)}); // buf = buf - m
    inst(Opcode::FEXP, {ddsr(2), s0(1)});       // e = exp(buf)
    inst(Opcode::MOV32, {gpr(kGprSum), imm(wt::SmallImm::Zero)});
    inst(Opcode::FSUM, {gpr(kGprSum), s0(log ? 2 : 1)}); // s = sum(e)
    allReduce(Opcode::FADD, kGprSum);
    if (log) {
      inst(Opcode::FLOG, {gpr(kGprSum), gpr(kGprSum)});
      inst(Opcode::FSUB, {dsr(3), gpr(kGprSum)}); // out = (x - m) - log(s)
    } else {
      inst(Opcode::FRCP, {gpr(kGprSum), gpr(kGprSum)});
      inst(Opcode::FMUL, {dsr(3), gpr(kGprSum)}); // out = e * (1 / s)
    }
    break;
  }
  default:
    llvm_unreachable("the other ops are emitted by emitSequence");
  }
  jump("sample");
}

} // namespace

/// `v` as %g prints it (7, not 7.000000e+00).
static std::string shortNum(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", double(v));
  return buf;
}

LogicalResult emitColumnKernel(OpBuilder &b, Location loc,
                               const ColumnKernel &k, StringRef name,
                               StringRef layer, const RouteTable *routes) {
  const RowChunks &lay = k.layout;
  if (lay.n < 1 || lay.rows < 1 || lay.y0 < 0 || k.x < 0)
    return emitError(loc) << "column kernel " << name << " has " << lay.n
                          << " elements on " << lay.rows << " rows at (" << k.x
                          << ", " << lay.y0
                          << "); it needs at least one of each";
  if (chunkSize(lay.n, lay.rows, lay.rows - 1) < 1)
    return emitError(loc) << "column kernel " << name << ": " << lay.rows
                          << " rows leave the last chunk of " << lay.n
                          << " elements (chunks of "
                          << chunkSize(lay.n, lay.rows, 0) << ") empty";
  int64_t L = chunkSize(lay.n, lay.rows, 0);
  if (L > 32767)
    return emitError(loc) << "column kernel " << name << ": a chunk of " << L
                          << " elements exceeds the 32767-element vector "
                             "length";
  // The enclosing wavelet.program's target bounds colors, rows and memory.
  FailureOr<wt::Target> fits =
      columnTarget(b, loc, "column kernel " + name, k.x, lay.y0, lay.rows);
  if (failed(fits))
    return failure();
  wt::Target target = *fits;
  int64_t wantParams = columnTakesTensor(k.op) ? lay.n : columnParamCount(k.op);
  if (k.op == ColumnOp::Expression) {
    std::string why;
    if (!checkExpression(k.params, why))
      return emitError(loc)
             << "column kernel " << name << " (Expression) " << why;
  } else if (int64_t(k.params.size()) != wantParams)
    return emitError(loc) << "column kernel " << name << " ("
                          << columnOpName(k.op) << ") takes " << wantParams
                          << " constants, got " << k.params.size();
  if (isAxisSoftmax(k.op)) {
    float g = k.params[0], i = k.params[1];
    if (!(g >= 1) || !(i >= 1) || g != std::floor(g) || i != std::floor(i) ||
        int64_t(g) * int64_t(i) > lay.n || lay.n % (int64_t(g) * int64_t(i)))
      return emitError(loc)
             << "column kernel " << name << " (" << columnOpName(k.op)
             << ") has groups of " << shortNum(g) << " elements " << shortNum(i)
             << " apart, which do not "
             << "tile its " << lay.n << " elements";
    if (int64_t(i) > kMaxAxisStride)
      return emitError(loc)
             << "column kernel " << name << " (" << columnOpName(k.op)
             << "): the elements of a group are " << int64_t(i)
             << " apart, beyond the " << kMaxAxisStride
             << "-element stride of a DSD; the softmax axis needs fewer "
                "elements after it";
    int64_t block = columnChunkMultiple(k.op, k.params);
    if (!columnRowsAllowed(k.op, k.params, lay.n, lay.rows))
      return emitError(loc)
             << "column kernel " << name << " (" << columnOpName(k.op)
             << "): " << lay.rows << " rows cut its " << lay.n
             << " elements into chunks of " << L
             << ", which split its blocks of " << block
             << " elements (each PE must hold whole groups)";
  }
  if (!isClassic(k.op) && !columnTakesTensor(k.op) && !isAxisSoftmax(k.op)) {
    // The sequence's constants beyond the GPRs and its DSD records fit
    // below the data (never false for the sequences of this file).
    int64_t memConsts = std::max<int64_t>(
        0, int64_t(registerConstants(k).size()) - kNumGprConsts);
    std::set<int32_t> extra;
    for (const Step &s : sequenceOf(k))
      for (int32_t v :
           {s.dst, s.src0,
            s.src1 && s.src1->kind == Opnd::Vec ? s.src1->value : kVecIn})
        if (v >= kVecBuf4 && v != kVecConst)
          extra.insert(v);
    if (memConsts > kMaxMemConsts ||
        kRecFirstFree + int64_t(extra.size()) > kMaxRecords)
      return emitError(loc)
             << "column kernel " << name << " (" << columnOpName(k.op)
             << ") needs " << memConsts << " constants in memory and "
             << kRecFirstFree + int64_t(extra.size())
             << " DSD records, more than its PEs hold";
  }
  int64_t words = 2 * L * columnBuffers(k.op);
  if (kDataBase + words > int64_t(target.memoryWords()))
    return emitError(loc) << "column kernel " << name << ": a chunk of " << L
                          << " elements needs " << 2 * (kDataBase + words)
                          << " bytes of PE memory, more than the "
                          << 2 * target.memoryWords() << " available";
  bool reduce = isSoftmax(k.op) && lay.rows > 1;
  SmallVector<int64_t> colors = {k.inColor, k.outColor};
  if (reduce) {
    if (int64_t(k.internal.size()) < internalColors(k.op))
      return emitError(loc)
             << "column kernel " << name << " (" << columnOpName(k.op)
             << " over " << lay.rows << " rows) needs " << internalColors(k.op)
             << " internal colors, got " << k.internal.size();
    // A channel no PE of this column uses (-1: the even reduction over two
    // rows) has no color.
    for (int64_t j = 0; j < internalColors(k.op); ++j)
      if (k.internal[j] >= 0)
        colors.push_back(k.internal[j]);
  }
  for (size_t i = 0; i < colors.size(); ++i) {
    if (!target.isRoutableColor(colors[i]))
      return emitError(loc) << "column kernel " << name << ": color "
                            << colors[i] << " is not routable on a target "
                            << "with " << target.routableColors() << " colors";
    for (size_t j = 0; j < i; ++j)
      if (colors[i] == colors[j])
        return emitError(loc) << "column kernel " << name << " uses color "
                              << colors[i] << " twice (input, output and "
                              << "internal colors must differ)";
  }

  // Without the fabric.route ops of a routed program (unit tests build
  // kernels directly), the column's own routes from the same schemes.
  RouteTable own;
  if (!routes) {
    addRoute(own, columnInputs(k.x, lay.y0, lay.rows), k.inColor);
    addRoute(own, columnResults(k.x, lay.y0, lay.rows), k.outColor);
    if (reduce)
      for (int j = 0; j < 3; ++j)
        if (k.internal[j] >= 0)
          addRoute(own, columnReduce(k.x, lay.y0, lay.rows, j), k.internal[j]);
    routes = &own;
  }
  Emitter e(b, loc, k, name, layer, *routes);
  forEachRowGroup(
      *routes, k.x, lay.y0, lay.rows,
      [&](int64_t r, int64_t r0) { return e.roleOf(r) == e.roleOf(r0); },
      [&](int64_t r0, int64_t r1) { e.emitGroup(r0, r1, e.roleOf(r0)); });
  return success();
}

} // namespace weft::conversion
