//===- Expression.cpp - Fused elementwise bodies compiled to steps --------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The expression compiler: an Expression program (weft/Kernels/Expression.h)
// node by node into vector steps, each node's value in a buffer freed after
// its last read, the unary column ops' own sequences renamed into the
// expression's buffers and constants.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/Expression.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

namespace wt = weft::machine;

namespace weft::conversion::column {

std::vector<ExprNode> exprNodes(const std::vector<float> &p) {
  std::vector<ExprNode> nodes(1);
  for (size_t i = 0; i + kExprFields <= p.size(); i += kExprFields) {
    ExprNode n;
    n.kind = ExprKind(int32_t(p[i]));
    n.a = int32_t(p[i + 1]);
    n.b = int32_t(p[i + 2]);
    n.v = p[i + 3];
    if (n.kind == ExprKind::Select)
      n.c = int32_t(p[i + 3]);
    nodes.push_back(n);
  }
  return nodes;
}

namespace {

/// The vector id of expression buffer `s` (the sequences' buf .. buf5,
/// then ids kVecBuf6 on).
int32_t exprSlotId(int64_t s) {
  static const int32_t ids[] = {kVecBuf, kVecBuf2, kVecBuf3, kVecBuf4,
                                kVecBuf5};
  return s < 5 ? ids[s] : int32_t(kVecBuf6 + (s - 5));
}

/// Whether `op` is a unary column op an Expression node may apply (its
/// sequence reads in once and writes out once, last).
bool exprUnaryOk(ColumnOp op) {
  switch (op) {
  case ColumnOp::Neg:
  case ColumnOp::Abs:
  case ColumnOp::Exp:
  case ColumnOp::Log:
  case ColumnOp::Sqrt:
  case ColumnOp::Reciprocal:
  case ColumnOp::Erf:
  case ColumnOp::Sin:
  case ColumnOp::Cos:
  case ColumnOp::Floor:
  case ColumnOp::Ceil:
  case ColumnOp::Round:
  case ColumnOp::PowScalar:
    return true;
  default:
    return false;
  }
}

class ExprCompiler {
public:
  explicit ExprCompiler(const std::vector<float> &params)
      : nodes(exprNodes(params)) {}

  ExprCode run();

private:
  using O = wt::Opcode;
  bool isCond(int32_t i) const {
    return nodes[size_t(i)].kind == ExprKind::Lt ||
           nodes[size_t(i)].kind == ExprKind::Le;
  }
  bool isConst(int32_t i) const {
    return i > 0 && nodes[size_t(i)].kind == ExprKind::Const;
  }
  /// A constant as an operand: a small immediate if it is one, else a GPR
  /// pair or a memory constant, shared by equal values.
  Opnd cst(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    static const std::pair<float, wt::SmallImm> kImm[] = {
        {0.0f, wt::SmallImm::Zero},
        {1.0f, wt::SmallImm::One},
        {-1.0f, wt::SmallImm::MinusOne},
        {2.0f, wt::SmallImm::Two},
        {0.5f, wt::SmallImm::Half}};
    for (auto [f, imm] : kImm) {
      uint32_t fb;
      std::memcpy(&fb, &f, 4);
      if (fb == bits)
        return {Opnd::Imm, int32_t(imm)};
    }
    for (size_t i = 0; i < code.consts.size(); ++i) {
      uint32_t cb;
      std::memcpy(&cb, &code.consts[i], 4);
      if (cb == bits)
        return constant(int64_t(i));
    }
    code.consts.push_back(v);
    return constant(int64_t(code.consts.size() - 1));
  }
  Opnd opnd(int32_t i) {
    return isConst(i) ? cst(nodes[size_t(i)].v) : vec(vecOf[size_t(i)]);
  }
  int32_t alloc() {
    int64_t s;
    if (!freeSlots.empty()) {
      s = *freeSlots.begin();
      freeSlots.erase(freeSlots.begin());
    } else {
      s = code.buffers++;
    }
    return exprSlotId(s);
  }
  void release(int32_t id) {
    for (int64_t s = 0; s < code.buffers; ++s)
      if (exprSlotId(s) == id)
        freeSlots.insert(s);
  }
  /// One read of node i's value done (frees its buffer after the last).
  void read(int32_t i, std::vector<int32_t> &dying) {
    if (isConst(i))
      return;
    if (--remaining[size_t(i)] == 0 && vecOf[size_t(i)] != kVecIn)
      dying.push_back(vecOf[size_t(i)]);
  }
  void push(O op, int32_t dst, int32_t src0, std::optional<Opnd> src1 = {}) {
    code.steps.push_back({op, dst, src0, src1});
  }
  std::string countReads();
  void unary(ColumnOp op, float param, int32_t src, int32_t dst);
  void select(int32_t i, int32_t dst, bool last);

  std::vector<ExprNode> nodes;
  std::vector<int32_t> vecOf;
  std::vector<int64_t> remaining;
  std::set<int64_t> freeSlots;
  ExprCode code;
};

/// Appends the sequence of the unary column op `op` reading `src` and
/// writing `dst`, its buffers and constants renamed to the expression's.
void ExprCompiler::unary(ColumnOp op, float param, int32_t src, int32_t dst) {
  ColumnKernel sub;
  sub.op = op;
  if (op == ColumnOp::PowScalar)
    sub.params = {param};
  std::vector<Step> ss = sequenceOf(sub);
  std::vector<float> sc = registerConstants(sub);
  auto isBuf = [](int32_t r) {
    return r == kVecBuf || r == kVecBuf2 || r == kVecBuf3 || r == kVecBuf4 ||
           r == kVecBuf5;
  };
  // A leading copy of in into a buffer the sequence never writes again
  // (and never views by halves) reads src directly, when src is memory.
  std::optional<int32_t> alias;
  if (!ss.empty() && ss[0].op == O::MOV32 && ss[0].src0 == kVecIn &&
      isBuf(ss[0].dst) && src != kVecIn) {
    int32_t b = ss[0].dst;
    int64_t slot = slotOf(b);
    bool ok = true;
    for (size_t i = 1; i < ss.size(); ++i)
      for (int32_t r :
           {ss[i].dst, ss[i].src0,
            ss[i].src1 && ss[i].src1->kind == Opnd::Vec ? ss[i].src1->value
                                                        : kVecIn})
        if ((i > 0 && ss[i].dst == b) || r == lowHalves(int32_t(slot)) ||
            r == highHalves(int32_t(slot)))
          ok = false;
    if (ok) {
      alias = b;
      ss.erase(ss.begin());
    }
  }
  std::map<int64_t, int32_t> slots; // the sequence's slot -> our buffer id
  auto buf = [&](int64_t slot) {
    auto [it, fresh] = slots.try_emplace(slot, 0);
    if (fresh)
      it->second = alloc();
    return it->second;
  };
  auto ourSlot = [&](int32_t id) {
    for (int64_t s = 0;; ++s)
      if (exprSlotId(s) == id)
        return int32_t(s);
  };
  auto vecId = [&](int32_t r) -> int32_t {
    if (r == kVecIn)
      return src;
    if (r == kVecOut)
      return dst;
    if (alias && r == *alias)
      return src;
    if (isBuf(r))
      return buf(slotOf(r));
    if (r >= kVecHi0 && r < kVecMem0)
      return highHalves(ourSlot(buf(r - kVecHi0)));
    if (r >= kVecLo0 && r < kVecHi0)
      return lowHalves(ourSlot(buf(r - kVecLo0)));
    return r;
  };
  auto mapOpnd = [&](Opnd o) -> Opnd {
    if (o.kind == Opnd::Gpr) {
      for (int64_t i = 0; i < kNumGprConsts; ++i)
        if (kGprConst[i] == o.value)
          return cst(sc[size_t(i)]);
    }
    if (o.kind == Opnd::Vec && o.value >= kVecMem0)
      return cst(sc[size_t(o.value - kVecMem0 + kNumGprConsts)]);
    if (o.kind == Opnd::Vec)
      return vec(vecId(o.value));
    return o;
  };
  for (const Step &s : ss) {
    Step t{s.op, vecId(s.dst), vecId(s.src0), {}};
    if (s.src1)
      t.src1 = mapOpnd(*s.src1);
    code.steps.push_back(t);
  }
  for (auto [slot, id] : slots)
    release(id);
}

/// Node i, a select: the mask of its condition in a fresh buffer, then
/// SEL32 (which reads the mask from its destination).
void ExprCompiler::select(int32_t i, int32_t dst, bool last) {
  const ExprNode &n = nodes[size_t(i)];
  const ExprNode &c = nodes[size_t(n.a)];
  // a < b as is; a <= b as !(b < a), the arms swapped.
  int32_t p = c.a, q = c.b, t = n.b, f = n.c;
  if (c.kind == ExprKind::Le)
    std::swap(p, q), std::swap(t, f);
  int32_t m = last ? alloc() : dst;
  if (isConst(p)) {
    // p < q as -q < -p.
    push(O::FNEG, m, vecOf[size_t(q)]);
    push(O::FCLT, m, m, cst(-nodes[size_t(p)].v));
  } else {
    push(O::FCLT, m, vecOf[size_t(p)], opnd(q));
  }
  push(O::SEL32, m, vecOf[size_t(t)], opnd(f));
  if (last) {
    push(O::MOV32, kVecOut, m);
    release(m);
  }
}

/// Validates the program and counts the reads of every value; returns why
/// it is malformed, or nothing.
std::string ExprCompiler::countReads() {
  size_t N = nodes.size();
  auto fail = [](const std::string &why) { return why; };
  if (N < 2)
    return fail("computes nothing");
  remaining.assign(N, 0);
  auto inRange = [&](int32_t j, size_t i) { return j >= 0 && size_t(j) < i; };
  for (size_t i = 1; i < N; ++i) {
    const ExprNode &n = nodes[i];
    auto count = [&](int32_t j) { ++remaining[size_t(j)]; };
    switch (n.kind) {
    case ExprKind::Const:
      break;
    case ExprKind::Unary:
      if (!inRange(n.a, i) || !exprUnaryOk(ColumnOp(n.b)))
        return fail("has an unknown unary op");
      if (isConst(n.a) || n.a == 0 ? false : isCond(n.a))
        return fail("applies a math op to a comparison");
      if (isConst(n.a))
        return fail("applies a math op to a constant");
      count(n.a);
      break;
    case ExprKind::Tanh:
      if (!inRange(n.a, i) || isConst(n.a) || (n.a > 0 && isCond(n.a)))
        return fail("takes tanh of a constant or a comparison");
      count(n.a);
      break;
    case ExprKind::Add:
    case ExprKind::Sub:
    case ExprKind::Mul:
    case ExprKind::Div:
    case ExprKind::Max:
    case ExprKind::Min:
    case ExprKind::Lt:
    case ExprKind::Le:
      if (!inRange(n.a, i) || !inRange(n.b, i) || (n.a > 0 && isCond(n.a)) ||
          (n.b > 0 && isCond(n.b)))
        return fail("has an operand out of order or a comparison as a "
                    "number");
      if (isConst(n.a) && isConst(n.b))
        return fail("has an op of two constants (not folded)");
      break; // a comparison's operands are read by its selects
    case ExprKind::Select: {
      if (!inRange(n.a, i) || !inRange(n.b, i) || !inRange(n.c, i) ||
          n.a == 0 || !isCond(n.a) || (n.b > 0 && isCond(n.b)) ||
          (n.c > 0 && isCond(n.c)))
        return fail("has a select without a comparison");
      const ExprNode &c = nodes[size_t(n.a)];
      bool swapArms = c.kind == ExprKind::Le;
      int32_t tArm = swapArms ? n.c : n.b;
      if (isConst(tArm))
        return fail("selects a constant when its condition holds (SEL32 "
                    "takes a vector there)");
      count(c.a), count(c.b), count(n.b), count(n.c);
      break;
    }
    default:
      return fail("has an unknown node kind");
    }
    if (n.kind == ExprKind::Add || n.kind == ExprKind::Sub ||
        n.kind == ExprKind::Mul || n.kind == ExprKind::Div ||
        n.kind == ExprKind::Max || n.kind == ExprKind::Min)
      count(n.a), count(n.b);
  }
  if (isConst(int32_t(N - 1)) || isCond(int32_t(N - 1)))
    return fail("yields a constant or a comparison");
  if (remaining[0] == 0)
    return fail("does not read x");
  return "";
}

ExprCode ExprCompiler::run() {
  auto fail = [&](const std::string &why) {
    code.error = why;
    return code;
  };
  if (std::string why = countReads(); !why.empty())
    return fail(why);
  size_t N = nodes.size();
  vecOf.assign(N, -1);
  // x: read from the fabric where it is used once, else copied first.
  if (remaining[0] == 1) {
    vecOf[0] = kVecIn;
  } else {
    vecOf[0] = alloc();
    push(O::MOV32, vecOf[0], kVecIn);
  }
  for (size_t i = 1; i < N; ++i) {
    const ExprNode &n = nodes[i];
    if (n.kind == ExprKind::Const || isCond(int32_t(i)))
      continue;
    bool last = i == N - 1;
    std::vector<int32_t> dying;
    auto reads = [&](std::initializer_list<int32_t> js) {
      for (int32_t j : js)
        read(j, dying);
    };
    // The destination may reuse the buffer of an operand read for the last
    // time here: every node writes it in its last step only (SEL32 aside).
    auto destination = [&](std::initializer_list<int32_t> js) -> int32_t {
      if (last)
        return kVecOut;
      for (int32_t j : js)
        if (!isConst(j) && remaining[size_t(j)] == 1 &&
            vecOf[size_t(j)] != kVecIn &&
            std::count(js.begin(), js.end(), j) == 1) {
          int32_t id = vecOf[size_t(j)];
          remaining[size_t(j)] = 0; // its buffer becomes ours
          return id;
        }
      return alloc();
    };
    int32_t dst;
    switch (n.kind) {
    case ExprKind::Unary:
    case ExprKind::Tanh: {
      int32_t src = vecOf[size_t(n.a)];
      bool reuse = !last && remaining[size_t(n.a)] == 1 && src != kVecIn;
      dst = last ? kVecOut : reuse ? src : alloc();
      if (reuse)
        remaining[size_t(n.a)] = 0;
      if (n.kind == ExprKind::Unary) {
        unary(ColumnOp(n.b), n.v, src, dst);
      } else {
        int32_t t = alloc();
        push(O::FMUL, t, src, kTwo);
        push(O::FEXP, t, t);
        push(O::FADD, t, t, kOne);
        push(O::FRCP, t, t);
        push(O::FADD, t, t, vec(t));
        push(O::FNEG, t, t);
        push(O::FADD, dst, t, kOne);
        release(t);
      }
      if (!reuse)
        reads({n.a});
      break;
    }
    case ExprKind::Select: {
      const ExprNode &c = nodes[size_t(n.a)];
      dst = last ? kVecOut : alloc();
      select(int32_t(i), dst, last);
      reads({c.a, c.b, n.b, n.c});
      break;
    }
    default: {
      int32_t a = n.a, b = n.b;
      O op = n.kind == ExprKind::Add   ? O::FADD
             : n.kind == ExprKind::Sub ? O::FSUB
             : n.kind == ExprKind::Mul ? O::FMUL
             : n.kind == ExprKind::Max ? O::FMAX
             : n.kind == ExprKind::Min ? O::FMIN
                                       : O::FMUL;
      bool commutes = n.kind != ExprKind::Sub && n.kind != ExprKind::Div;
      if (isConst(a) && commutes)
        std::swap(a, b);
      std::vector<int32_t> dyingEarly;
      if (n.kind == ExprKind::Div && isConst(b)) {
        // x / c as x (1 / c), as DivScalar.
        dst = destination({a});
        push(O::FMUL, dst, vecOf[size_t(a)], cst(1.0f / nodes[size_t(b)].v));
      } else if (n.kind == ExprKind::Div) {
        // a / b as a (1 / b); 1 / b alone for a = 1.
        float one = 1.0f;
        if (isConst(a) && nodes[size_t(a)].v == one) {
          dst = destination({b});
          push(O::FRCP, dst, vecOf[size_t(b)]);
        } else {
          int32_t t = alloc();
          push(O::FRCP, t, vecOf[size_t(b)]);
          dst = destination({a, b});
          if (isConst(a))
            push(O::FMUL, dst, t, opnd(a));
          else
            push(O::FMUL, dst, vecOf[size_t(a)], vec(t));
          release(t);
        }
      } else if (isConst(a)) {
        // c - b as (-b) + c, exactly as ScalarSub.
        int32_t t = alloc();
        push(O::FNEG, t, vecOf[size_t(b)]);
        dst = destination({b});
        push(O::FADD, dst, t, opnd(a));
        release(t);
      } else {
        dst = destination({a, b});
        push(op, dst, vecOf[size_t(a)], opnd(b));
      }
      reads({n.a, n.b});
      break;
    }
    }
    // A destination taken over from an operand is not freed.
    for (int32_t d : dying)
      if (d != dst)
        release(d);
    vecOf[i] = dst;
    if (code.buffers > kExpressionBuffers)
      return fail("needs " + std::to_string(code.buffers) +
                  " buffers, more than the " +
                  std::to_string(kExpressionBuffers) + " an Expression has");
  }
  // The limits of emitColumnKernel: constants in memory and DSD records.
  int64_t memConsts =
      std::max<int64_t>(0, int64_t(code.consts.size()) - kNumGprConsts);
  std::set<int32_t> extra;
  for (const Step &s : code.steps)
    for (int32_t v :
         {s.dst, s.src0,
          s.src1 && s.src1->kind == Opnd::Vec ? s.src1->value : kVecIn})
      if (v >= kVecBuf4 && v != kVecConst)
        extra.insert(v);
  if (memConsts > kMaxMemConsts)
    return fail("needs " + std::to_string(code.consts.size()) +
                " distinct constants, more than the " +
                std::to_string(kNumGprConsts + kMaxMemConsts) + " a PE holds");
  if (kRecFirstFree + int64_t(extra.size()) > kMaxRecords)
    return fail("needs " + std::to_string(kRecFirstFree + extra.size()) +
                " DSD records, more than the " + std::to_string(kMaxRecords) +
                " a PE holds");
  return code;
}

} // namespace

ExprCode compileExpression(const std::vector<float> &params) {
  return ExprCompiler(params).run();
}

//===----------------------------------------------------------------------===//
// Building a program
//===----------------------------------------------------------------------===//

int32_t ExpressionBuilder::add(ExprKind k, int32_t a, int32_t b, float v) {
  prog.insert(prog.end(), {float(int32_t(k)), float(a), float(b), v});
  return count++;
}

int32_t ExpressionBuilder::constant(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  auto [it, fresh] = consts.try_emplace(bits, 0);
  if (fresh)
    it->second = add(ExprKind::Const, 0, 0, v);
  return it->second;
}

std::optional<std::vector<float>>
ExpressionBuilder::finish(int32_t y, std::string &why) const {
  // The yielded node last: drop the nodes after it and those it does not
  // read (dead code) by rebuilding in order from the reachable set.
  std::vector<ExprNode> nodes = exprNodes(prog);
  std::vector<bool> live(nodes.size(), false);
  live[size_t(y)] = true;
  for (int32_t i = y; i > 0; --i) {
    if (!live[size_t(i)])
      continue;
    const ExprNode &n = nodes[size_t(i)];
    auto mark = [&](int32_t j) { live[size_t(j)] = true; };
    switch (n.kind) {
    case ExprKind::Const:
      break;
    case ExprKind::Unary:
    case ExprKind::Tanh:
      mark(n.a);
      break;
    case ExprKind::Select:
      mark(n.a), mark(n.b), mark(n.c);
      break;
    default:
      mark(n.a), mark(n.b);
    }
  }
  std::vector<int32_t> renum(nodes.size(), 0);
  std::vector<float> out;
  int32_t next = 1;
  for (size_t i = 1; i <= size_t(y); ++i) {
    if (!live[i])
      continue;
    ExprNode n = nodes[i];
    auto r = [&](int32_t j) { return float(renum[size_t(j)]); };
    float a = n.kind == ExprKind::Const ? 0 : r(n.a);
    float b = n.kind == ExprKind::Unary || n.kind == ExprKind::Const ||
                      n.kind == ExprKind::Tanh
                  ? float(n.b)
                  : r(n.b);
    float v = n.kind == ExprKind::Select ? r(n.c) : n.v;
    out.insert(out.end(), {float(int32_t(n.kind)), a, b, v});
    renum[i] = next++;
  }
  if (!checkExpression(out, why))
    return std::nullopt;
  return out;
}

} // namespace weft::conversion::column

namespace weft::conversion {

std::optional<int64_t> checkExpression(const std::vector<float> &params,
                                       std::string &why) {
  if (params.empty() || params.size() % column::kExprFields) {
    why = "has a program of " + std::to_string(params.size()) +
          " floats, not a positive multiple of " +
          std::to_string(column::kExprFields);
    return std::nullopt;
  }
  for (size_t i = 0; i < params.size(); i += column::kExprFields)
    for (size_t j = 0; j < 3; ++j)
      if (params[i + j] != std::floor(params[i + j]) || params[i + j] < 0 ||
          params[i + j] > 1e6f) {
        why = "has a malformed node " +
              std::to_string(i / column::kExprFields + 1);
        return std::nullopt;
      }
  column::ExprCode code = column::compileExpression(params);
  if (!code.error.empty()) {
    why = code.error;
    return std::nullopt;
  }
  return int64_t(code.steps.size());
}

} // namespace weft::conversion
