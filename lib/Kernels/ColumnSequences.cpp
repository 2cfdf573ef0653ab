//===- ColumnSequences.cpp - Instruction sequences of the column ops ------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The steps of every elementwise op with constants (docs/execution-model.md,
// "Column kernels" has each one's sequence and accuracy), the constants
// they keep in registers, and the DSR plan that loads their vectors.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ColumnSequences.h"

#include "weft/Kernels/Expression.h"
#include "weft/Machine/Target.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace wt = weft::machine;

namespace weft::conversion::column {

bool isClassic(ColumnOp op) {
  return op == ColumnOp::Relu || op == ColumnOp::Sigmoid ||
         op == ColumnOp::Tanh || isSoftmax(op);
}

AxisLoop axisLoop(const ColumnKernel &k, int64_t L) {
  AxisLoop lp;
  std::tie(lp.group, lp.stride) = axisGroups(k.params);
  lp.blocks = L / (lp.group * lp.stride);
  lp.groups = lp.blocks * lp.stride;
  return lp;
}

int64_t slotOf(int32_t id) {
  switch (id) {
  case kVecBuf:
    return 0;
  case kVecBuf2:
    return 1;
  case kVecBuf3:
    return 2;
  case kVecBuf4:
    return 3;
  case kVecBuf5:
    return 4;
  default:
    return 5 + (id - kVecBuf6);
  }
}

namespace {

// Sin and Cos: x = k pi + r with k = round(x / pi) (for Cos, x = (k + 1/2)
// pi + r), pi split into three parts (Cody-Waite): pi1 has 8 significant
// bits and pi2 12, so k pi1 is exact for |k| < 2^16 and k pi2 for |k| <
// 2^12. sin(r) = r + r z (s1 + z (s2 + z (s3 + z s4))), z = r^2, is a
// minimax fit of relative error 6.9e-9 on |r| <= pi/2 + 0.02.
constexpr float kInvPi = 0.318309886183790671538f; // 1 / pi
constexpr float kPi1 = 3.140625f;                  // 201 / 64
constexpr float kPi2 = 9.67502593994140625e-4f;
constexpr float kPi3 = 1.509958025280866e-7f;
constexpr float kSin[] = {-0.16666658222675323f, 0.008333045057952404f,
                          -0.00019807943317573518f, 2.6019497454399243e-06f};
// Erf: below |x| = 0.75, x (c0 + z (c1 + ... + z c5)) with z = x^2 (a
// minimax fit of erf(x) / x, relative error 1.4e-9); above, the form of
// Abramowitz-Stegun 7.1.26, erf |x| = 1 - t Q(t) e^{-x^2} with t = 1 / (1 +
// p |x|), Q of degree 4 refitted on [0.75, 4] (absolute error 1.7e-8;
// A-S's own coefficients give 1.5e-7).
constexpr float kErfP = 0.3275911f, kErfSplit = 0.75f;
constexpr float kErfQ[] = {1.0028340816497803f, -1.2785723209381104f,
                           1.2267783880233765f, -0.18831756711006165f,
                           0.23705874383449554f}; // q4 .. q0
constexpr float kErfC[] = {
    -0.0006749513559043407f, 0.00511434581130743f,
    -0.026834623888134956f,  0.11283376812934875f,
    -0.3761261999607086f,    1.1283791065216064f}; // c5 .. c0

/// An Expression program compiled: its steps (in is read once, out written
/// once, by the last step), its constants (registerConstants) and the

} // namespace

/// The kernel's params with a default for a missing one (0).
float param(const ColumnKernel &k, size_t i) {
  return i < k.params.size() ? k.params[i] : 0.0f;
}

/// The constants the sequence keeps in GPR pairs kGprConst[i].
std::vector<float> registerConstants(const ColumnKernel &k) {
  switch (k.op) {
  case ColumnOp::ThresholdedRelu:
    return {-param(k, 0)}; // x > alpha as -x < -alpha
  case ColumnOp::DivScalar:
    return {1.0f / param(k, 0)};
  case ColumnOp::Sign:
    return {0x1p100f}; // twice: any nonzero finite x to at least 2^51
  case ColumnOp::Floor:
  case ColumnOp::Ceil:
  case ColumnOp::Round:
    return {0x1p23f, 0x1p100f};
  case ColumnOp::Sin:
  case ColumnOp::Cos:
    return {kInvPi,  k.op == ColumnOp::Sin ? 0x1.8p23f : 0x1.8p23f + 1,
            -kPi1,   -kPi2,
            -kPi3,   kSin[3],
            kSin[2], kSin[1],
            kSin[0]};
  case ColumnOp::Erf: {
    std::vector<float> v = {kErfP, kErfSplit};
    v.insert(v.end(), std::begin(kErfQ), std::end(kErfQ));
    v.insert(v.end(), std::begin(kErfC), std::end(kErfC));
    return v;
  }
  case ColumnOp::Celu:
    return {1.0f / param(k, 0), param(k, 0)};
  case ColumnOp::Expression:
    return compileExpression(k.params).consts;

  default: {
    std::vector<float> v;
    for (int64_t i = 0; i < columnParamCount(k.op); ++i)
      v.push_back(param(k, size_t(i)));
    return v;
  }
  }
}

/// Constant i of registerConstants: a GPR pair or a memory constant.
Opnd constant(int64_t i) {
  if (i < kNumGprConsts)
    return {Opnd::Gpr, kGprConst[i]};
  return {Opnd::Vec, kVecMem0 + int32_t(i - kNumGprConsts)};
}

namespace {

/// Floor, Ceil and Round (constants 2^23 and 2^100). |x| is rounded to the
/// nearest integer, ties to even, by (|x| + 2^23) - 2^23, exact for |x| <
/// 2^23, where the sum's ulp is 1; |x| >= 2^23 (an integer already), inf
/// and NaN are kept by a select. The sign comes back through a product
/// with sign(x) = clamp(x 2^200, -1, 1) (Sign's trick), which also gives
/// -0 for -0 and for x in (-0.5, 0]. Floor subtracts 1 where the rounded
/// value y is above x (the comparison's i32 1 through FI2F of its low
/// half); Ceil is -floor(-x).
std::vector<Step> roundingSequence(ColumnOp op) {
  using O = wt::Opcode;
  const int32_t in = kVecIn, out = kVecOut, x = kVecBuf, a = kVecBuf2,
                m = kVecBuf3, r = kVecBuf4;
  const Opnd two23 = constant(0), two100 = constant(1);
  std::vector<Step> s = {
      {op == ColumnOp::Ceil ? O::FNEG : O::MOV32, x, in, {}},
      {O::FABS, a, x, {}},
      {O::FCLT, m, a, two23}, // |x| < 2^23 (false for NaN)
      {O::FADD, r, a, two23},
      {O::FSUB, r, r, two23},   // round(|x|)
      {O::SEL32, m, r, vec(a)}, // round(|x|), or |x| when large
      {O::FMUL, a, x, two100},  // sign(x) into a
      {O::FMUL, a, a, two100},
      {O::FMIN, a, a, kOne},
      {O::FMAX, a, a, kMinusOne}};
  if (op == ColumnOp::Round) {
    s.push_back({O::FMUL, out, m, vec(a)});
    return s;
  }
  // y = round(x) in m; r = (x < y); a = float(r); floor = y - a.
  s.push_back({O::FMUL, m, m, vec(a)});
  s.push_back({O::FCLT, r, x, vec(m)});
  s.push_back({O::FI2F, a, lowHalves(3), {}});
  if (op == ColumnOp::Floor) {
    s.push_back({O::FSUB, out, m, vec(a)});
    return s;
  }
  s.push_back({O::FSUB, m, m, vec(a)});
  s.push_back({O::FNEG, out, m, {}});
  return s;
}

/// Sin and Cos (constants: 1/pi, the rounding constant, -pi1, -pi2, -pi3,
/// s4 .. s1). k = round(x / pi) (Cos: round(x / pi - 1/2)) by adding and
/// subtracting 1.5 2^23 (+ 1 for Cos); while k + 1.5 2^23 is in memory, the
/// low bit of its significand is k's parity (Cos: k + 1's), which SHL16
/// moves to bit 15 and XOR16 into the sign of r = x - k pi (Cos: x - (k +
/// 1/2) pi), since sin(x) = (-1)^k sin(r) and cos(x) = (-1)^(k+1) sin(r).
std::vector<Step> sinCosSequence(ColumnOp op) {
  using O = wt::Opcode;
  const int32_t in = kVecIn, out = kVecOut, r = kVecBuf, kb = kVecBuf2,
                t = kVecBuf3, z = kVecBuf2, p = kVecBuf3;
  bool cos = op == ColumnOp::Cos;
  std::vector<Step> s = {{O::MOV32, r, in, {}}, {O::FMUL, kb, r, constant(0)}};
  if (cos)
    s.push_back({O::FSUB, kb, kb, kHalf});
  s.push_back({O::FADD, kb, kb, constant(1)});
  // The parity bit to bit 15 (a shift by -1 & 15 = 15).
  s.push_back({O::SHL16, t, lowHalves(1), kMinusOne});
  s.push_back({O::FSUB, kb, kb, constant(1)});
  if (cos)
    s.push_back({O::FADD, kb, kb, kHalf});
  // r = x - k pi1 - k pi2 - k pi3 (FMAC: dst += src0 src1).
  for (int i = 2; i <= 4; ++i)
    s.push_back({O::FMAC, r, kb, constant(i)});
  s.push_back({O::XOR16, highHalves(0), highHalves(0), vec(t)});
  // sin(r) = r + r z (s1 + z (s2 + z (s3 + z s4))).
  s.push_back({O::FMUL, z, r, vec(r)});
  s.push_back({O::FMUL, p, z, constant(5)});
  for (int i = 6; i <= 8; ++i) {
    s.push_back({O::FADD, p, p, constant(i)});
    s.push_back({O::FMUL, p, p, vec(z)});
  }
  s.push_back({O::FMUL, p, p, vec(r)});
  s.push_back({O::FADD, out, r, vec(p)});
  return s;
}

/// Erf (constants: p, 0.75, q4 .. q0, c5 .. c0): both branches over the
/// whole chunk, then a select on |x| < 0.75.
std::vector<Step> erfSequence() {
  using O = wt::Opcode;
  const int32_t in = kVecIn, out = kVecOut, x = kVecBuf, a = kVecBuf2,
                t = kVecBuf3, q = kVecBuf4, n = kVecBuf5;
  std::vector<Step> s = {{O::MOV32, x, in, {}},
                         {O::FABS, a, x, {}},
                         // t = 1 / (1 + p |x|)
                         {O::FMUL, t, a, constant(0)},
                         {O::FADD, t, t, kOne},
                         {O::FRCP, t, t, {}},
                         // q = t Q(t)
                         {O::FMUL, q, t, constant(2)}};
  for (int i = 3; i <= 6; ++i) {
    s.push_back({O::FADD, q, q, constant(i)});
    s.push_back({O::FMUL, q, q, vec(t)});
  }
  // q = t Q(t) e^{-x^2} - 1 = -erf |x|; t = (x < 0); n = -q; t = erf(x).
  const int32_t e = t;
  s.push_back({O::FMUL, e, a, vec(a)});
  s.push_back({O::FNEG, e, e, {}});
  s.push_back({O::FEXP, e, e, {}});
  s.push_back({O::FMUL, q, q, vec(e)});
  s.push_back({O::FSUB, q, q, kOne});
  s.push_back({O::FCLT, t, x, kZero});
  s.push_back({O::FNEG, n, q, {}});
  s.push_back({O::SEL32, t, q, vec(n)});
  // The small branch: x (c0 + z (c1 + ... + z c5)), z = x^2, in n.
  const int32_t z = q;
  s.push_back({O::FMUL, z, x, vec(x)});
  s.push_back({O::FMUL, n, z, constant(7)});
  for (int i = 8; i <= 11; ++i) {
    s.push_back({O::FADD, n, n, constant(i)});
    s.push_back({O::FMUL, n, n, vec(z)});
  }
  s.push_back({O::FADD, n, n, constant(12)});
  s.push_back({O::FMUL, n, n, vec(x)});
  // |x| < 0.75 ? small : large.
  s.push_back({O::FCLT, a, a, constant(1)});
  s.push_back({O::SEL32, a, n, vec(t)});
  s.push_back({O::MOV32, out, a, {}});
  return s;
}

/// x^c for a constant c: by products for an integer |c| <= 1024 (then a
/// reciprocal for c < 0), sqrt for c = +-1/2, else exp(c log x).
std::vector<Step> powSequence(float c) {
  using O = wt::Opcode;
  const int32_t in = kVecIn, out = kVecOut, x = kVecBuf, acc = kVecBuf2;
  if (c == 0)
    // 1 for every x, NaN included: x 0 is 0 or NaN, maxNum(NaN, 0) = 0.
    return {{O::FMUL, x, in, kZero},
            {O::FMAX, x, x, kZero},
            {O::FADD, out, x, kOne}};
  if (c == 0.5f)
    return {{O::FSQRT, out, in, {}}};
  if (c == -0.5f)
    return {{O::FSQRT, x, in, {}}, {O::FRCP, out, x, {}}};
  float mag = std::fabs(c);
  if (mag != std::floor(mag) || mag > 1024)
    return {{O::FLOG, x, in, {}},
            {O::FMUL, x, x, constant(0)},
            {O::FEXP, out, x, {}}};
  unsigned e = unsigned(mag);
  if (e == 1)
    return {{c < 0 ? O::FRCP : O::MOV32, out, in, {}}};
  // Left-to-right binary powering: acc = x^(leading bits of e).
  std::vector<Step> s = {{O::MOV32, x, in, {}}};
  int top = 31;
  while (!(e >> top & 1))
    --top;
  int32_t cur = x;
  for (int bit = top - 1; bit >= 0; --bit) {
    s.push_back({O::FMUL, acc, cur, vec(cur)});
    cur = acc;
    if (e >> bit & 1)
      s.push_back({O::FMUL, acc, acc, vec(x)});
  }
  if (c < 0)
    s.push_back({O::FRCP, out, acc, {}});
  else
    s.back().dst = out;
  return s;
}

} // namespace

std::vector<Step> sequenceOf(const ColumnKernel &k) {
  using O = wt::Opcode;
  const Opnd p0{Opnd::Gpr, kGprConst[0]}, p1{Opnd::Gpr, kGprConst[1]};
  const Opnd zero{Opnd::Imm, int32_t(wt::SmallImm::Zero)},
      one{Opnd::Imm, int32_t(wt::SmallImm::One)};
  const Opnd buf{Opnd::Vec, kVecBuf}, buf2{Opnd::Vec, kVecBuf2},
      cvec{Opnd::Vec, kVecConst};
  const int32_t in = kVecIn, out = kVecOut, b1 = kVecBuf, b2 = kVecBuf2,
                b3 = kVecBuf3;
  switch (k.op) {
  case ColumnOp::Copy:
    return {{O::MOV32, out, in, {}}};
  case ColumnOp::Abs:
    return {{O::FABS, out, in, {}}};
  case ColumnOp::Neg:
    return {{O::FNEG, out, in, {}}};
  case ColumnOp::Exp:
    return {{O::FEXP, out, in, {}}};
  case ColumnOp::Log:
    return {{O::FLOG, out, in, {}}};
  case ColumnOp::Sqrt:
    return {{O::FSQRT, out, in, {}}};
  case ColumnOp::Reciprocal:
    return {{O::FRCP, out, in, {}}};
  case ColumnOp::AddScalar:
    return {{O::FADD, out, in, p0}};
  case ColumnOp::SubScalar:
    return {{O::FSUB, out, in, p0}};
  case ColumnOp::MulScalar:
  case ColumnOp::DivScalar:
    return {{O::FMUL, out, in, p0}};
  case ColumnOp::Sign: {
    // x 2^200 clamped to [-1, 1]: exact for every x but NaN (the smallest
    // subnormal, 2^-149, becomes 2^51; zeros stay zeros).
    const Opnd minusOne{Opnd::Imm, int32_t(wt::SmallImm::MinusOne)};
    return {{O::FMUL, b1, in, p0},
            {O::FMUL, b1, b1, p0},
            {O::FMIN, b1, b1, one},
            {O::FMAX, out, b1, minusOne}};
  }
  case ColumnOp::Floor:
  case ColumnOp::Ceil:
  case ColumnOp::Round:
    return roundingSequence(k.op);
  case ColumnOp::Sin:
  case ColumnOp::Cos:
    return sinCosSequence(k.op);
  case ColumnOp::Erf:
    return erfSequence();
  case ColumnOp::Celu:
    // (exp(x / alpha) - 1) alpha, min with 0, plus max(x, 0).
    return {{O::MOV32, b1, in, {}},  {O::FMUL, b2, b1, p0},
            {O::FEXP, b2, b2, {}},   {O::FSUB, b2, b2, one},
            {O::FMUL, b2, b2, p1},   {O::FMIN, b2, b2, zero},
            {O::FMAX, b1, b1, zero}, {O::FADD, out, b1, buf2}};
  case ColumnOp::Square:
    return {{O::MOV32, b1, in, {}}, {O::FMUL, out, b1, buf}};
  case ColumnOp::PowScalar:
    return powSequence(param(k, 0));
  case ColumnOp::ScalarSub:
    // c - x = (-x) + c exactly (both round the same real number).
    return {{O::FNEG, b1, in, {}}, {O::FADD, out, b1, p0}};
  case ColumnOp::LeakyRelu: {
    float alpha = param(k, 0);
    if (alpha >= 0)
      // alpha <= 1: alpha x >= x exactly when x < 0, so max picks the
      // branch; alpha > 1: min does.
      return {{O::MOV32, b1, in, {}},
              {O::FMUL, b2, b1, p0},
              {alpha <= 1 ? O::FMAX : O::FMIN, out, b1, buf2}};
    return {{O::MOV32, b1, in, {}},
            {O::FMUL, b2, b1, p0},
            {O::FCLT, b3, b1, zero},
            {O::SEL32, b3, b2, buf},
            {O::MOV32, out, b3, {}}};
  }
  case ColumnOp::ThresholdedRelu:
    return {{O::MOV32, b1, in, {}},
            {O::FNEG, b2, b1, {}},
            {O::FCLT, b2, b2, p0},
            {O::SEL32, b2, b1, zero},
            {O::MOV32, out, b2, {}}};
  case ColumnOp::Elu:
    return {{O::MOV32, b1, in, {}},  {O::FEXP, b2, b1, {}},
            {O::FSUB, b2, b2, one},  {O::FMUL, b2, b2, p0},
            {O::FCLT, b3, b1, zero}, {O::SEL32, b3, b2, buf},
            {O::MOV32, out, b3, {}}};
  case ColumnOp::Selu:
    return {{O::MOV32, b1, in, {}},  {O::FEXP, b2, b1, {}},
            {O::FMUL, b2, b2, p0},   {O::FSUB, b2, b2, p0},
            {O::FCLT, b3, b1, zero}, {O::SEL32, b3, b2, buf},
            {O::FMUL, out, b3, p1}};
  case ColumnOp::Softplus:
    return {
        {O::FEXP, b1, in, {}}, {O::FADD, b1, b1, one}, {O::FLOG, out, b1, {}}};
  case ColumnOp::Softsign:
    return {{O::MOV32, b1, in, {}},
            {O::FABS, b2, b1, {}},
            {O::FADD, b2, b2, one},
            {O::FRCP, b2, b2, {}},
            {O::FMUL, out, b1, buf2}};
  case ColumnOp::HardSigmoid:
    return {{O::FMUL, b1, in, p0},
            {O::FADD, b1, b1, p1},
            {O::FMIN, b1, b1, one},
            {O::FMAX, out, b1, zero}};
  case ColumnOp::HardSwish:
    return {{O::MOV32, b1, in, {}},  {O::FMUL, b2, b1, p0},
            {O::FADD, b2, b2, p1},   {O::FMIN, b2, b2, one},
            {O::FMAX, b2, b2, zero}, {O::FMUL, out, b1, buf2}};
  case ColumnOp::Clip: {
    bool lo = param(k, 0) != -INFINITY, hi = param(k, 1) != INFINITY;
    if (lo && hi)
      return {{O::FMAX, b1, in, p0}, {O::FMIN, out, b1, p1}};
    if (lo)
      return {{O::FMAX, out, in, p0}};
    if (hi)
      return {{O::FMIN, out, in, p1}};
    return {{O::MOV32, out, in, {}}};
  }
  // The constant tensor's chunk is a vector second source (DivTensor's
  // holds 1 / C).
  case ColumnOp::AddTensor:
    return {{O::FADD, out, in, cvec}};
  case ColumnOp::SubTensor:
    return {{O::FSUB, out, in, cvec}};
  case ColumnOp::TensorSub:
    return {{O::FNEG, b1, in, {}}, {O::FADD, out, b1, cvec}};
  case ColumnOp::MulTensor:
  case ColumnOp::DivTensor:
    return {{O::FMUL, out, in, cvec}};
  case ColumnOp::MaxTensor:
    return {{O::FMAX, out, in, cvec}};
  case ColumnOp::MinTensor:
    return {{O::FMIN, out, in, cvec}};
  case ColumnOp::PRelu:
    return {{O::MOV32, b1, in, {}},
            {O::FMUL, b2, b1, cvec},
            {O::FCLT, b3, b1, zero},
            {O::SEL32, b3, b2, buf},
            {O::MOV32, out, b3, {}}};
  case ColumnOp::Expression:
    return compileExpression(k.params).steps;
  default:
    return {};
  }
}

DsrPlan planDsrs(const std::vector<Step> &steps) {
  constexpr size_t kDsrs = wt::Arch::kNumDSRs;
  std::vector<std::pair<int32_t, int32_t>> pairs;
  std::vector<int32_t> s1s;
  for (const Step &s : steps) {
    if (std::find(pairs.begin(), pairs.end(), std::make_pair(s.dst, s.src0)) ==
        pairs.end())
      pairs.push_back({s.dst, s.src0});
    if (s.src1 && s.src1->kind == Opnd::Vec &&
        std::find(s1s.begin(), s1s.end(), s.src1->value) == s1s.end())
      s1s.push_back(s.src1->value);
  }
  DsrPlan plan;
  size_t keepPairs = pairs.size() <= kDsrs ? pairs.size() : kDsrs - 1;
  size_t keepS1 = s1s.size() <= kDsrs ? s1s.size() : kDsrs - 1;
  plan.pairs.assign(pairs.begin(), pairs.begin() + keepPairs);
  plan.s1.assign(s1s.begin(), s1s.begin() + keepS1);
  // What the scratch DSRs hold; nothing at the top of the loop (a loop
  // body that reloads them at their first use is correct on every pass).
  std::optional<std::pair<int32_t, int32_t>> heldPair;
  std::optional<int32_t> heldS1;
  for (const Step &s : steps) {
    DsrPlan::Use u;
    auto p = std::make_pair(s.dst, s.src0);
    auto it = std::find(plan.pairs.begin(), plan.pairs.end(), p);
    if (it != plan.pairs.end()) {
      u.pair = int32_t(it - plan.pairs.begin());
    } else {
      u.pair = int32_t(kDsrs - 1);
      u.loadPair = heldPair != p;
      heldPair = p;
    }
    if (s.src1 && s.src1->kind == Opnd::Vec) {
      auto jt = std::find(plan.s1.begin(), plan.s1.end(), s.src1->value);
      if (jt != plan.s1.end()) {
        u.s1 = int32_t(jt - plan.s1.begin());
      } else {
        u.s1 = int32_t(kDsrs - 1);
        u.loadS1 = heldS1 != s.src1->value;
        heldS1 = s.src1->value;
      }
    }
    plan.uses.push_back(u);
  }
  return plan;
}

} // namespace weft::conversion::column
