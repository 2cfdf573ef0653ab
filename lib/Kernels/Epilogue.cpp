//===- Epilogue.cpp - A convolution's fused activation --------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Column ops as Expression programs, and the price of one in a
// convolution's closeout (docs/execution-model.md, "Fused activations").
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/Epilogue.h"

#include "weft/Machine/ISA.h"

#include <cmath>
#include <set>

namespace wt = weft::machine;

namespace weft::conversion {

using namespace column;

int64_t EpilogueCode::memoryConstants() const {
  return int64_t(code.consts.size()) > kNumGprConsts
             ? int64_t(code.consts.size()) - kNumGprConsts
             : 0;
}

EpilogueCode compileEpilogue(const std::vector<float> &program) {
  EpilogueCode e;
  std::string why;
  if (!checkExpression(program, why)) {
    e.code.error = why;
    return e;
  }
  e.code = compileExpression(program);
  std::set<int32_t> used;
  for (const Step &s : e.code.steps) {
    used.insert(s.dst);
    used.insert(s.src0);
    if (s.src1 && s.src1->kind == Opnd::Vec)
      used.insert(s.src1->value);
  }
  for (int32_t v : used)
    if (v != kVecIn && v != kVecOut)
      e.vectors.push_back(v);
  return e;
}

std::optional<std::vector<float>>
epilogueProgram(ColumnOp op, const std::vector<float> &params) {
  ExpressionBuilder b;
  auto p = [&](size_t i) { return i < params.size() ? params[i] : 0.0f; };
  int32_t y = 0;
  switch (op) {
  case ColumnOp::Expression:
    return params;
  case ColumnOp::Sigmoid: {
    // As the Sigmoid kernel: fneg, fexp, fadd 1, frcp.
    int32_t n = b.add(ExprKind::Unary, 0, int32_t(ColumnOp::Neg), 0);
    n = b.add(ExprKind::Unary, n, int32_t(ColumnOp::Exp), 0);
    n = b.add(ExprKind::Add, n, b.constant(1.0f), 0);
    y = b.add(ExprKind::Unary, n, int32_t(ColumnOp::Reciprocal), 0);
    break;
  }
  case ColumnOp::Tanh:
    y = b.add(ExprKind::Tanh, 0, 0, 0);
    break;
  case ColumnOp::HardSigmoid:
  case ColumnOp::HardSwish: {
    // As the kernels: fmul alpha, fadd beta, fmin 1, fmax 0 (and x times
    // that).
    int32_t n = b.add(ExprKind::Mul, 0, b.constant(p(0)), 0);
    n = b.add(ExprKind::Add, n, b.constant(p(1)), 0);
    n = b.add(ExprKind::Min, n, b.constant(1.0f), 0);
    y = b.add(ExprKind::Max, n, b.constant(0.0f), 0);
    if (op == ColumnOp::HardSwish)
      y = b.add(ExprKind::Mul, 0, y, 0);
    break;
  }
  case ColumnOp::LeakyRelu: {
    // As the kernel: max(x, alpha x) for alpha in [0, 1], min for alpha >
    // 1, else x < 0 ? alpha x : x.
    float alpha = p(0);
    int32_t ax = b.add(ExprKind::Mul, 0, b.constant(alpha), 0);
    if (alpha >= 0) {
      y = b.add(alpha <= 1 ? ExprKind::Max : ExprKind::Min, 0, ax, 0);
    } else {
      int32_t neg = b.add(ExprKind::Lt, 0, b.constant(0.0f), 0);
      y = b.add(ExprKind::Select, neg, ax, 0);
    }
    break;
  }
  case ColumnOp::Clip: {
    // min(max(x, lo), hi), an infinite bound left out.
    y = 0;
    if (p(0) != -INFINITY)
      y = b.add(ExprKind::Max, y, b.constant(p(0)), 0);
    if (params.size() > 1 && p(1) != INFINITY)
      y = b.add(ExprKind::Min, y, b.constant(p(1)), 0);
    if (y == 0)
      return std::nullopt; // no bound: a copy
    break;
  }
  case ColumnOp::Softplus: {
    // As the kernel: fexp, fadd 1, flog.
    int32_t n = b.add(ExprKind::Unary, 0, int32_t(ColumnOp::Exp), 0);
    n = b.add(ExprKind::Add, n, b.constant(1.0f), 0);
    y = b.add(ExprKind::Unary, n, int32_t(ColumnOp::Log), 0);
    break;
  }
  case ColumnOp::Softsign: {
    // As the kernel: x (1 / (1 + |x|)).
    int32_t n = b.add(ExprKind::Unary, 0, int32_t(ColumnOp::Abs), 0);
    n = b.add(ExprKind::Add, n, b.constant(1.0f), 0);
    n = b.add(ExprKind::Unary, n, int32_t(ColumnOp::Reciprocal), 0);
    y = b.add(ExprKind::Mul, 0, n, 0);
    break;
  }
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
    y = b.add(ExprKind::Unary, 0, int32_t(op), 0);
    break;
  case ColumnOp::PowScalar:
    y = b.add(ExprKind::Unary, 0, int32_t(op), p(0));
    break;
  default:
    return std::nullopt;
  }
  std::string why;
  return b.finish(y, why);
}

std::vector<EpilogueLoads> epilogueLoads(const EpilogueCode &e) {
  // The output buffer is one vector, whether read as in or written as out.
  auto canon = [](int32_t v) { return v == kVecIn ? kVecOut : v; };
  const int32_t none = -1;
  int32_t d = none, s0 = none, s1 = none;
  std::vector<EpilogueLoads> loads;
  for (const Step &s : e.code.steps) {
    EpilogueLoads l;
    l.d = canon(s.dst) != d;
    l.s0 = canon(s.src0) != s0;
    d = canon(s.dst);
    s0 = canon(s.src0);
    if (s.src1 && s.src1->kind == Opnd::Vec) {
      l.s1 = canon(s.src1->value) != s1;
      s1 = canon(s.src1->value);
    }
    loads.push_back(l);
  }
  return loads;
}

int64_t epilogueRecords(const EpilogueCode &e) {
  return int64_t(e.vectors.size());
}

int64_t epilogueWords(const EpilogueCode &e, int64_t rowLen) {
  return 2 * rowLen * e.code.buffers + 2 * e.memoryConstants();
}

int64_t epilogueInstructions(const EpilogueCode &e) {
  int64_t n = int64_t(e.code.steps.size());
  for (const EpilogueLoads &l : epilogueLoads(e))
    n += l.count();
  return n;
}

/// A DSR load's cycles.
static int64_t load() {
  return int64_t(wt::instructionCycles(wt::Opcode::LDD, 1, false));
}

int64_t epilogueCycles(const EpilogueCode &e, int64_t rowLen) {
  std::vector<EpilogueLoads> loads = epilogueLoads(e);
  int64_t t = 0;
  for (size_t i = 0; i < loads.size(); ++i)
    t += loads[i].count() * load() +
         wt::vectorCycles(e.code.steps[i].op, rowLen);
  return t;
}

int64_t epilogueFreeCycles(const EpilogueCode &e) {
  std::vector<EpilogueLoads> loads = epilogueLoads(e);
  int64_t t = 0;
  for (size_t i = 0; i < loads.size(); ++i)
    t += loads[i].count() * load() +
         int64_t(wt::info(e.code.steps[i].op).startup);
  return t;
}

} // namespace weft::conversion
