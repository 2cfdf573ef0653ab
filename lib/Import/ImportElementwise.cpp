//===- ImportElementwise.cpp - Elementwise ops and their scalar bodies ----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Every elementwise op becomes one linalg.generic over the broadcast shape of
// its operands (numpy broadcasting through the indexing maps). What differs
// between ops is data in kElementwiseOps: arity, accepted element types,
// float attributes, the scalar body that builds one result element, and the
// host form that evaluates the op at import time when every input is known
// (ImportConstants.cpp runs it). Cast, Clip and Where, which need more than a
// body, have handlers of their own here.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace weft::import::detail;

/// Converts a scalar between element types (ONNX Cast semantics).
static Value convertScalar(ImplicitLocOpBuilder &b, Value v, Type to,
                           bool srcUnsigned, bool dstUnsigned) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromF = dyn_cast<FloatType>(from), toF = dyn_cast<FloatType>(to);
  if (fromF && toF)
    return fromF.getWidth() < toF.getWidth()
               ? Value(arith::ExtFOp::create(b, to, v))
               : Value(arith::TruncFOp::create(b, to, v));
  if (to.isInteger(1)) {
    if (fromF)
      return arith::CmpFOp::create(
          b, arith::CmpFPredicate::UNE, v,
          arith::ConstantOp::create(b, from, b.getFloatAttr(from, 0)));
    return arith::CmpIOp::create(
        b, arith::CmpIPredicate::ne, v,
        arith::ConstantOp::create(b, from, b.getIntegerAttr(from, 0)));
  }
  if (fromF)
    return dstUnsigned ? Value(arith::FPToUIOp::create(b, to, v))
                       : Value(arith::FPToSIOp::create(b, to, v));
  if (toF)
    return srcUnsigned ? Value(arith::UIToFPOp::create(b, to, v))
                       : Value(arith::SIToFPOp::create(b, to, v));
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw > tw)
    return arith::TruncIOp::create(b, to, v);
  return srcUnsigned ? Value(arith::ExtUIOp::create(b, to, v))
                     : Value(arith::ExtSIOp::create(b, to, v));
}

//===----------------------------------------------------------------------===//
// Scalar bodies: one result element from the block arguments `a`
//===----------------------------------------------------------------------===//

/// A float constant of the operand type.
static Value cst(ImplicitLocOpBuilder &ib, const ScalarEnv &env, double d) {
  return fconst(ib, env.type, d);
}

static Value intConst(ImplicitLocOpBuilder &ib, const ScalarEnv &env,
                      int64_t v) {
  return arith::ConstantOp::create(ib, env.type,
                                   ib.getIntegerAttr(env.type, v));
}

static Value ltZero(ImplicitLocOpBuilder &ib, const ScalarEnv &env, Value t) {
  return arith::CmpFOp::create(ib, arith::CmpFPredicate::OLT, t,
                               cst(ib, env, 0));
}

/// One math dialect op on a float.
template <typename MathOp>
static Value math1(ImplicitLocOpBuilder &ib, ValueRange a, const ScalarEnv &) {
  return MathOp::create(ib, a[0]);
}

/// A binary arith op, float or integer.
template <typename FloatOp, typename IntOp>
static Value arith2(ImplicitLocOpBuilder &ib, ValueRange a,
                    const ScalarEnv &env) {
  return env.isFloat ? Value(FloatOp::create(ib, a[0], a[1]))
                     : Value(IntOp::create(ib, a[0], a[1]));
}

/// A binary op on i1.
template <typename LogicOp>
static Value logic2(ImplicitLocOpBuilder &ib, ValueRange a, const ScalarEnv &) {
  return LogicOp::create(ib, a[0], a[1]);
}

/// A comparison: ordered on floats, signed or unsigned on integers.
template <arith::CmpFPredicate FloatPred, arith::CmpIPredicate SignedPred,
          arith::CmpIPredicate UnsignedPred>
static Value compare(ImplicitLocOpBuilder &ib, ValueRange a,
                     const ScalarEnv &env) {
  if (env.isFloat)
    return arith::CmpFOp::create(ib, FloatPred, a[0], a[1]);
  return arith::CmpIOp::create(ib, env.isUnsigned ? UnsignedPred : SignedPred,
                               a[0], a[1]);
}

/// Combines every operand, left to right (Max, Min, Sum).
template <typename FloatOp, typename SignedOp, typename UnsignedOp>
static Value accumulate(ImplicitLocOpBuilder &ib, ValueRange a,
                        const ScalarEnv &env) {
  Value acc = a[0];
  for (Value v : a.drop_front())
    acc = env.isFloat      ? Value(FloatOp::create(ib, acc, v))
          : env.isUnsigned ? Value(UnsignedOp::create(ib, acc, v))
                           : Value(SignedOp::create(ib, acc, v));
  return acc;
}

static Value mean(ImplicitLocOpBuilder &ib, ValueRange a,
                  const ScalarEnv &env) {
  Value sum =
      accumulate<arith::AddFOp, arith::AddIOp, arith::AddIOp>(ib, a, env);
  return arith::DivFOp::create(ib, sum, cst(ib, env, double(a.size())));
}

static Value divide(ImplicitLocOpBuilder &ib, ValueRange a,
                    const ScalarEnv &env) {
  Value v = a[0];
  return env.isFloat      ? Value(arith::DivFOp::create(ib, v, a[1]))
         : env.isUnsigned ? Value(arith::DivUIOp::create(ib, v, a[1]))
                          : Value(arith::DivSIOp::create(ib, v, a[1]));
}

static Value power(ImplicitLocOpBuilder &ib, ValueRange a,
                   const ScalarEnv &env) {
  Value e = convertScalar(ib, a[1], env.type, env.rhsUnsigned, false);
  return math::PowFOp::create(ib, a[0], e);
}

static Value prelu(ImplicitLocOpBuilder &ib, ValueRange a,
                   const ScalarEnv &env) {
  Value v = a[0];
  return arith::SelectOp::create(ib, ltZero(ib, env, v),
                                 arith::MulFOp::create(ib, v, a[1]), v);
}

static Value relu(ImplicitLocOpBuilder &ib, ValueRange a,
                  const ScalarEnv &env) {
  Value v = a[0];
  return env.isFloat
             ? Value(arith::MaximumFOp::create(ib, v, cst(ib, env, 0)))
             : Value(arith::MaxSIOp::create(ib, v, intConst(ib, env, 0)));
}

static Value leakyRelu(ImplicitLocOpBuilder &ib, ValueRange a,
                       const ScalarEnv &env) {
  Value v = a[0];
  return arith::SelectOp::create(
      ib, ltZero(ib, env, v),
      arith::MulFOp::create(ib, v, cst(ib, env, env.attrs[0])), v);
}

static Value sigmoid(ImplicitLocOpBuilder &ib, ValueRange a,
                     const ScalarEnv &env) {
  Value e = math::ExpOp::create(ib, arith::NegFOp::create(ib, a[0]));
  return arith::DivFOp::create(ib, cst(ib, env, 1),
                               arith::AddFOp::create(ib, cst(ib, env, 1), e));
}

/// max(0, min(1, alpha * x + beta)).
static Value hardSigmoidOf(ImplicitLocOpBuilder &ib, const ScalarEnv &env,
                           Value v, double alpha, double beta) {
  Value t = arith::AddFOp::create(
      ib, arith::MulFOp::create(ib, v, cst(ib, env, alpha)),
      cst(ib, env, beta));
  return arith::MaximumFOp::create(
      ib, cst(ib, env, 0), arith::MinimumFOp::create(ib, cst(ib, env, 1), t));
}

static Value hardSigmoid(ImplicitLocOpBuilder &ib, ValueRange a,
                         const ScalarEnv &env) {
  return hardSigmoidOf(ib, env, a[0], env.attrs[0], env.attrs[1]);
}

static Value hardSwish(ImplicitLocOpBuilder &ib, ValueRange a,
                       const ScalarEnv &env) {
  Value v = a[0];
  Value t = hardSigmoidOf(ib, env, v, 1.0 / 6, 0.5);
  return arith::MulFOp::create(ib, v, t);
}

static Value elu(ImplicitLocOpBuilder &ib, ValueRange a, const ScalarEnv &env) {
  Value v = a[0];
  Value e =
      arith::SubFOp::create(ib, math::ExpOp::create(ib, v), cst(ib, env, 1));
  return arith::SelectOp::create(
      ib, ltZero(ib, env, v),
      arith::MulFOp::create(ib, e, cst(ib, env, env.attrs[0])), v);
}

static Value celu(ImplicitLocOpBuilder &ib, ValueRange a,
                  const ScalarEnv &env) {
  Value v = a[0];
  double alpha = env.attrs[0];
  Value e = arith::SubFOp::create(
      ib,
      math::ExpOp::create(ib,
                          arith::DivFOp::create(ib, v, cst(ib, env, alpha))),
      cst(ib, env, 1));
  return arith::AddFOp::create(
      ib, arith::MaximumFOp::create(ib, cst(ib, env, 0), v),
      arith::MinimumFOp::create(
          ib, cst(ib, env, 0),
          arith::MulFOp::create(ib, e, cst(ib, env, alpha))));
}

static Value selu(ImplicitLocOpBuilder &ib, ValueRange a,
                  const ScalarEnv &env) {
  Value v = a[0];
  double alpha = env.attrs[0], gamma = env.attrs[1];
  Value neg = arith::SubFOp::create(
      ib,
      arith::MulFOp::create(ib, math::ExpOp::create(ib, v),
                            cst(ib, env, alpha)),
      cst(ib, env, alpha));
  Value pos =
      arith::CmpFOp::create(ib, arith::CmpFPredicate::OGT, v, cst(ib, env, 0));
  return arith::MulFOp::create(ib, cst(ib, env, gamma),
                               arith::SelectOp::create(ib, pos, v, neg));
}

static Value softplus(ImplicitLocOpBuilder &ib, ValueRange a,
                      const ScalarEnv &env) {
  return math::LogOp::create(
      ib, arith::AddFOp::create(ib, math::ExpOp::create(ib, a[0]),
                                cst(ib, env, 1)));
}

static Value softsign(ImplicitLocOpBuilder &ib, ValueRange a,
                      const ScalarEnv &env) {
  Value v = a[0];
  return arith::DivFOp::create(
      ib, v,
      arith::AddFOp::create(ib, cst(ib, env, 1), math::AbsFOp::create(ib, v)));
}

static Value thresholdedRelu(ImplicitLocOpBuilder &ib, ValueRange a,
                             const ScalarEnv &env) {
  Value v = a[0];
  return arith::SelectOp::create(
      ib,
      arith::CmpFOp::create(ib, arith::CmpFPredicate::OGT, v,
                            cst(ib, env, env.attrs[0])),
      v, cst(ib, env, 0));
}

static Value reciprocal(ImplicitLocOpBuilder &ib, ValueRange a,
                        const ScalarEnv &env) {
  return arith::DivFOp::create(ib, cst(ib, env, 1), a[0]);
}

static Value negate(ImplicitLocOpBuilder &ib, ValueRange a,
                    const ScalarEnv &env) {
  Value v = a[0];
  return env.isFloat
             ? Value(arith::NegFOp::create(ib, v))
             : Value(arith::SubIOp::create(ib, intConst(ib, env, 0), v));
}

static Value absolute(ImplicitLocOpBuilder &ib, ValueRange a,
                      const ScalarEnv &env) {
  return env.isFloat ? Value(math::AbsFOp::create(ib, a[0]))
                     : Value(math::AbsIOp::create(ib, a[0]));
}

static Value signum(ImplicitLocOpBuilder &ib, ValueRange a,
                    const ScalarEnv &env) {
  Value v = a[0];
  if (env.isFloat) {
    Value pos = arith::CmpFOp::create(ib, arith::CmpFPredicate::OGT, v,
                                      cst(ib, env, 0));
    return arith::SelectOp::create(
        ib, pos, cst(ib, env, 1),
        arith::SelectOp::create(ib, ltZero(ib, env, v), cst(ib, env, -1),
                                cst(ib, env, 0)));
  }
  Value zero = intConst(ib, env, 0);
  Value one = intConst(ib, env, 1);
  Value m1 = intConst(ib, env, -1);
  Value pos = arith::CmpIOp::create(ib, arith::CmpIPredicate::sgt, v, zero);
  Value isNeg = arith::CmpIOp::create(ib, arith::CmpIPredicate::slt, v, zero);
  return arith::SelectOp::create(ib, pos, one,
                                 arith::SelectOp::create(ib, isNeg, m1, zero));
}

static Value logicalNot(ImplicitLocOpBuilder &ib, ValueRange a,
                        const ScalarEnv &env) {
  return arith::XOrIOp::create(
      ib, a[0], arith::ConstantOp::create(ib, env.type, ib.getBoolAttr(true)));
}

//===----------------------------------------------------------------------===//
// Host forms: one element at import time
//===----------------------------------------------------------------------===//

static double hostAdd(double a, double b) { return a + b; }
static double hostSub(double a, double b) { return a - b; }
static double hostMul(double a, double b) { return a * b; }
static double hostDiv(double a, double b) { return a / b; }
static double hostMax(double a, double b) { return std::max(a, b); }
static double hostMin(double a, double b) { return std::min(a, b); }
static double hostEqual(double a, double b) { return a == b; }
static double hostLess(double a, double b) { return a < b; }
static double hostGreater(double a, double b) { return a > b; }
static double hostNeg(double a, double) { return -a; }
static double hostAbs(double a, double) { return std::fabs(a); }
static double hostSqrt(double a, double) { return std::sqrt(a); }
static double hostFloor(double a, double) { return std::floor(a); }
static double hostCeil(double a, double) { return std::ceil(a); }

// Integer arithmetic wraps around (two's complement), as in the IR.
static std::optional<int64_t> hostAddInt(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) + uint64_t(b));
}
static std::optional<int64_t> hostSubInt(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) - uint64_t(b));
}
static std::optional<int64_t> hostMulInt(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) * uint64_t(b));
}
static std::optional<int64_t> hostDivInt(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1))
    return std::nullopt;
  return a / b;
}
static std::optional<int64_t> hostMaxInt(int64_t a, int64_t b) {
  return std::max(a, b);
}
static std::optional<int64_t> hostMinInt(int64_t a, int64_t b) {
  return std::min(a, b);
}
static std::optional<int64_t> hostEqualInt(int64_t a, int64_t b) {
  return a == b;
}
static std::optional<int64_t> hostLessInt(int64_t a, int64_t b) {
  return a < b;
}
static std::optional<int64_t> hostGreaterInt(int64_t a, int64_t b) {
  return a > b;
}
static std::optional<int64_t> hostAndInt(int64_t a, int64_t b) {
  return a && b;
}
static std::optional<int64_t> hostOrInt(int64_t a, int64_t b) { return a || b; }
static std::optional<int64_t> hostNegInt(int64_t a, int64_t) {
  return int64_t(0 - uint64_t(a));
}
static std::optional<int64_t> hostAbsInt(int64_t a, int64_t) {
  return a < 0 ? int64_t(0 - uint64_t(a)) : a;
}
static std::optional<int64_t> hostNotInt(int64_t a, int64_t) { return !a; }

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

/// A row without float attributes (withAttrs adds them).
static constexpr ElementwiseOp row(llvm::StringLiteral op, int64_t since,
                                   Arity arity, Broadcast broadcast,
                                   Operands operands, bool compare,
                                   ScalarBodyFn body, HostFloatFn hostFloat,
                                   HostIntFn hostInt) {
  return {op,      since, arity, broadcast, operands,
          compare, {},    body,  hostFloat, hostInt};
}

static constexpr ElementwiseOp unary(llvm::StringLiteral op, int64_t since,
                                     Operands operands, ScalarBodyFn body,
                                     HostFloatFn hostFloat = nullptr,
                                     HostIntFn hostInt = nullptr) {
  return row(op, since, Arity::Unary, Broadcast::Numpy, operands,
             /*compare=*/false, body, hostFloat, hostInt);
}

static constexpr ElementwiseOp binary(llvm::StringLiteral op, int64_t since,
                                      Broadcast broadcast, Operands operands,
                                      ScalarBodyFn body,
                                      HostFloatFn hostFloat = nullptr,
                                      HostIntFn hostInt = nullptr) {
  return row(op, since, Arity::Binary, broadcast, operands, /*compare=*/false,
             body, hostFloat, hostInt);
}

/// A binary op with a BOOL result.
static constexpr ElementwiseOp comparison(llvm::StringLiteral op, int64_t since,
                                          Broadcast broadcast,
                                          ScalarBodyFn body,
                                          HostFloatFn hostFloat = nullptr,
                                          HostIntFn hostInt = nullptr) {
  return row(op, since, Arity::Binary, broadcast, Operands::Any,
             /*compare=*/true, body, hostFloat, hostInt);
}

static constexpr ElementwiseOp variadic(llvm::StringLiteral op, int64_t since,
                                        Operands operands, ScalarBodyFn body,
                                        HostFloatFn hostFloat = nullptr,
                                        HostIntFn hostInt = nullptr) {
  return row(op, since, Arity::Variadic, Broadcast::Numpy, operands,
             /*compare=*/false, body, hostFloat, hostInt);
}

/// `base` reading float attributes into ScalarEnv::attrs, in this order.
static constexpr ElementwiseOp
withAttrs(ElementwiseOp base, FloatAttrSpec first, FloatAttrSpec second = {}) {
  base.attrs = {first, second};
  return base;
}

namespace {
using FP = arith::CmpFPredicate;
using IP = arith::CmpIPredicate;
} // namespace

/// Every elementwise op: name, first opset, (broadcasting,) operand types,
/// scalar body, host forms on floats and integers. Binary ops have a row for
/// the broadcasting of opset < 7 and one for numpy broadcasting.
static constexpr ElementwiseOp kElementwiseOps[] = {
    // One operand.
    unary("Abs", 1, Operands::Any, absolute, hostAbs, hostAbsInt),
    unary("Ceil", 1, Operands::Float, math1<math::CeilOp>, hostCeil),
    withAttrs(unary("Celu", 12, Operands::Float, celu), {"alpha", 1.0}),
    unary("Cos", 7, Operands::Float, math1<math::CosOp>),
    withAttrs(unary("Elu", 1, Operands::Float, elu), {"alpha", 1.0}),
    unary("Erf", 9, Operands::Float, math1<math::ErfOp>),
    unary("Exp", 1, Operands::Float, math1<math::ExpOp>),
    unary("Floor", 1, Operands::Float, math1<math::FloorOp>, hostFloor),
    withAttrs(unary("HardSigmoid", 1, Operands::Float, hardSigmoid),
              {"alpha", 0.2}, {"beta", 0.5}),
    unary("HardSwish", 14, Operands::Float, hardSwish),
    withAttrs(unary("LeakyRelu", 1, Operands::Float, leakyRelu),
              {"alpha", 0.01}),
    unary("Log", 1, Operands::Float, math1<math::LogOp>),
    unary("Neg", 1, Operands::Any, negate, hostNeg, hostNegInt),
    unary("Not", 1, Operands::Bool, logicalNot, nullptr, hostNotInt),
    unary("Reciprocal", 1, Operands::Float, reciprocal),
    unary("Relu", 1, Operands::Any, relu),
    unary("Round", 11, Operands::Float, math1<math::RoundEvenOp>),
    withAttrs(unary("Selu", 1, Operands::Float, selu),
              {"alpha", 1.67326319217681884765625},
              {"gamma", 1.05070102214813232421875}),
    unary("Sigmoid", 1, Operands::Float, sigmoid),
    unary("Sign", 9, Operands::Any, signum),
    unary("Sin", 7, Operands::Float, math1<math::SinOp>),
    unary("Softplus", 1, Operands::Float, softplus),
    unary("Softsign", 1, Operands::Float, softsign),
    unary("Sqrt", 1, Operands::Float, math1<math::SqrtOp>, hostSqrt),
    unary("Tanh", 1, Operands::Float, math1<math::TanhOp>),
    withAttrs(unary("ThresholdedRelu", 10, Operands::Float, thresholdedRelu),
              {"alpha", 1.0}),

    // Two operands.
    binary("Add", 1, Broadcast::Legacy, Operands::Any,
           arith2<arith::AddFOp, arith::AddIOp>, hostAdd, hostAddInt),
    binary("Add", 7, Broadcast::Numpy, Operands::Any,
           arith2<arith::AddFOp, arith::AddIOp>, hostAdd, hostAddInt),
    binary("And", 1, Broadcast::Legacy, Operands::Bool, logic2<arith::AndIOp>,
           nullptr, hostAndInt),
    binary("And", 7, Broadcast::Numpy, Operands::Bool, logic2<arith::AndIOp>,
           nullptr, hostAndInt),
    binary("Div", 1, Broadcast::Legacy, Operands::Any, divide, hostDiv,
           hostDivInt),
    binary("Div", 7, Broadcast::Numpy, Operands::Any, divide, hostDiv,
           hostDivInt),
    comparison("Equal", 1, Broadcast::Legacy, compare<FP::OEQ, IP::eq, IP::eq>,
               hostEqual, hostEqualInt),
    comparison("Equal", 7, Broadcast::Numpy, compare<FP::OEQ, IP::eq, IP::eq>,
               hostEqual, hostEqualInt),
    comparison("Greater", 1, Broadcast::Legacy,
               compare<FP::OGT, IP::sgt, IP::ugt>, hostGreater, hostGreaterInt),
    comparison("Greater", 7, Broadcast::Numpy,
               compare<FP::OGT, IP::sgt, IP::ugt>, hostGreater, hostGreaterInt),
    comparison("GreaterOrEqual", 12, Broadcast::Numpy,
               compare<FP::OGE, IP::sge, IP::uge>),
    comparison("Less", 1, Broadcast::Legacy, compare<FP::OLT, IP::slt, IP::ult>,
               hostLess, hostLessInt),
    comparison("Less", 7, Broadcast::Numpy, compare<FP::OLT, IP::slt, IP::ult>,
               hostLess, hostLessInt),
    comparison("LessOrEqual", 12, Broadcast::Numpy,
               compare<FP::OLE, IP::sle, IP::ule>),
    binary("Mul", 1, Broadcast::Legacy, Operands::Any,
           arith2<arith::MulFOp, arith::MulIOp>, hostMul, hostMulInt),
    binary("Mul", 7, Broadcast::Numpy, Operands::Any,
           arith2<arith::MulFOp, arith::MulIOp>, hostMul, hostMulInt),
    binary("Or", 1, Broadcast::Legacy, Operands::Bool, logic2<arith::OrIOp>,
           nullptr, hostOrInt),
    binary("Or", 7, Broadcast::Numpy, Operands::Bool, logic2<arith::OrIOp>,
           nullptr, hostOrInt),
    binary("PRelu", 1, Broadcast::LegacySlope, Operands::Float, prelu),
    binary("PRelu", 7, Broadcast::Numpy, Operands::Float, prelu),
    binary("Pow", 1, Broadcast::Legacy, Operands::FloatBase, power),
    binary("Pow", 7, Broadcast::Numpy, Operands::FloatBase, power),
    binary("Sub", 1, Broadcast::Legacy, Operands::Any,
           arith2<arith::SubFOp, arith::SubIOp>, hostSub, hostSubInt),
    binary("Sub", 7, Broadcast::Numpy, Operands::Any,
           arith2<arith::SubFOp, arith::SubIOp>, hostSub, hostSubInt),
    binary("Xor", 1, Broadcast::Legacy, Operands::Bool, logic2<arith::XOrIOp>),
    binary("Xor", 7, Broadcast::Numpy, Operands::Bool, logic2<arith::XOrIOp>),

    // Any number of operands (import-time evaluation: at most two).
    variadic("Max", 1, Operands::Any,
             accumulate<arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>,
             hostMax, hostMaxInt),
    variadic("Mean", 1, Operands::Float, mean),
    variadic("Min", 1, Operands::Any,
             accumulate<arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>,
             hostMin, hostMinInt),
    variadic("Sum", 1, Operands::Any,
             accumulate<arith::AddFOp, arith::AddIOp, arith::AddIOp>, hostAdd,
             hostAddInt),
};

ArrayRef<ElementwiseOp> weft::import::detail::elementwiseOps() {
  return kElementwiseOps;
}

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

static Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// Lines `rhs` up with `lhs` by the `broadcast`/`axis` attributes of opset
/// < 7 (Broadcast::Legacy and LegacySlope); numpy broadcasting needs
/// nothing.
static FailureOr<Value> legacyBroadcast(GraphImporter &imp, Broadcast mode,
                                        Value lhs, Value rhs) {
  if (mode == Broadcast::Numpy)
    return rhs;
  using GI = GraphImporter;
  FailureOr<int64_t> bcast = imp.intAttr("broadcast", 0);
  if (failed(bcast))
    return failure();
  int64_t ra = GI::shapeOf(lhs).size(), rb = GI::shapeOf(rhs).size();
  FailureOr<int64_t> axis = imp.intAttr("axis", ra - rb);
  if (failed(axis))
    return failure();
  if (*bcast) {
    // B is aligned with A starting at `axis`.
    if (*axis < 0)
      *axis += ra;
    if (*axis < 0 || *axis + rb > ra)
      return imp.fail("legacy broadcast axis " + Twine(*axis) +
                      " does not fit B into A");
    SmallVector<int64_t> s(*axis, 1);
    llvm::append_range(s, GI::shapeOf(rhs));
    s.resize(ra, 1);
    rhs = imp.reshape(rhs, s);
  } else if (mode == Broadcast::Legacy &&
             GI::shapeOf(rhs) != GI::shapeOf(lhs)) {
    return imp.fail("opset " + Twine(imp.opset()) +
                    " needs equal shapes unless broadcast=1");
  }
  // Old PRelu exports give a per-channel slope as [C].
  if (mode == Broadcast::LegacySlope && rb == 1 && ra > 2 &&
      GI::shapeOf(rhs)[0] == GI::shapeOf(lhs)[1] && GI::shapeOf(rhs)[0] != 1) {
    SmallVector<int64_t> s = {GI::shapeOf(rhs)[0]};
    s.resize(ra - 1, 1);
    rhs = imp.reshape(rhs, s);
  }
  return rhs;
}

/// Max, Min, Sum, Mean: every present input is an operand.
static LogicalResult importVariadic(GraphImporter &imp,
                                    const ElementwiseOp &op) {
  imp.ignoreAttrs({"consumed_inputs"});
  SmallVector<Value> ins;
  ImportedValue *first = nullptr;
  for (int64_t i = 0; i < imp.numInputs(); ++i)
    if (ImportedValue *v = imp.input(i)) {
      if (!first)
        first = v;
      ins.push_back(imp.operand(i));
    }
  if (ins.empty())
    return imp.fail("needs at least one input");
  ScalarEnv env;
  env.type = elementTypeOf(ins[0]);
  for (Value v : ins)
    if (elementTypeOf(v) != env.type)
      return imp.fail("operand element types differ");
  env.isFloat = isa<FloatType>(env.type);
  env.isUnsigned = isUnsignedDtype(first->dtype);
  if (op.operands == Operands::Float && !env.isFloat)
    return imp.fail("needs floating-point inputs");
  FailureOr<Value> r = imp.elementwise(
      ins, env.type, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
        return op.body(ib, a, env);
      });
  if (failed(r))
    return failure();
  imp.setOutput(0, *r, first->dtype);
  return success();
}

LogicalResult GraphImporter::importElementwise(const ElementwiseOp &op) {
  if (op.arity == Arity::Variadic)
    return importVariadic(*this, op);
  ignoreAttrs({"consumed_inputs"});
  bool binary = op.arity == Arity::Binary;
  FailureOr<ImportedValue *> x = required(0);
  if (failed(x))
    return failure();
  SmallVector<Value> ins = {operand(0)};
  if (binary) {
    FailureOr<ImportedValue *> y = required(1);
    if (failed(y))
      return failure();
    FailureOr<Value> rhs =
        legacyBroadcast(*this, op.broadcast, ins[0], operand(1));
    if (failed(rhs))
      return failure();
    ins.push_back(*rhs);
  }
  ScalarEnv env;
  env.type = elementTypeOf(ins[0]);
  if (binary && op.operands != Operands::FloatBase &&
      elementTypeOf(ins[1]) != env.type)
    return fail("operand element types differ");
  env.isFloat = isa<FloatType>(env.type);
  env.isUnsigned = isUnsignedDtype((*x)->dtype);
  env.rhsUnsigned = binary && isUnsignedDtype(input(1)->dtype);
  if (!env.isFloat &&
      (op.operands == Operands::Float || op.operands == Operands::FloatBase))
    return fail("needs a floating-point input, got " + dtypeName((*x)->dtype));
  if (op.operands == Operands::Bool && !env.type.isInteger(1))
    return fail("needs BOOL inputs");
  for (size_t i = 0; i < op.attrs.size(); ++i) {
    if (!op.attrs[i].name)
      continue;
    FailureOr<double> a = floatAttr(op.attrs[i].name, op.attrs[i].dflt);
    if (failed(a))
      return failure();
    env.attrs[i] = *a;
  }
  Type resultType = op.compare ? Type(b.getI1Type()) : env.type;
  int32_t resultDtype =
      op.compare ? int32_t(onnx::TensorProto::BOOL) : (*x)->dtype;
  FailureOr<Value> r =
      elementwise(ins, resultType, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
        return op.body(ib, a, env);
      });
  if (failed(r))
    return failure();
  setOutput(0, *r, resultDtype);
  return success();
}

LogicalResult GraphImporter::importCast() {
  FailureOr<int64_t> to = intAttr("to", 0);
  if (failed(to))
    return failure();
  ignoreAttrs({"saturate"});
  FailureOr<Type> toType = elementType(*to);
  FailureOr<ImportedValue *> x = required(0);
  if (failed(toType) || failed(x))
    return failure();
  Value v = operand(0);
  bool srcUnsigned = isUnsignedDtype((*x)->dtype),
       dstUnsigned = isUnsignedDtype(*to);
  FailureOr<Value> r =
      elementwise(v, *toType, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
        return convertScalar(ib, a[0], *toType, srcUnsigned, dstUnsigned);
      });
  if (failed(r))
    return failure();
  setOutput(0, *r, *to);
  return success();
}

LogicalResult GraphImporter::importClip(ParamFrom form) {
  FailureOr<ImportedValue *> x = required(0);
  if (failed(x))
    return failure();
  SmallVector<Value> ins = {operand(0)};
  Type et = elementTypeOf(ins[0]);
  bool isFloat = isa<FloatType>(et);
  int minIdx = -1, maxIdx = -1;
  if (form == ParamFrom::Attribute) {
    ignoreAttrs({"consumed_inputs"});
    FailureOr<double> lo = floatAttr("min", -INFINITY),
                      hi = floatAttr("max", INFINITY);
    if (failed(lo) || failed(hi) || failed(attributeNotInput(1, "min")) ||
        failed(attributeNotInput(2, "max")))
      return failure();
    if (!isFloat)
      return fail("needs a floating-point input");
    ins.push_back(filled({}, et, *lo));
    minIdx = 1;
    ins.push_back(filled({}, et, *hi));
    maxIdx = 2;
  } else {
    if (failed(inputNotAttribute(1, "min")) ||
        failed(inputNotAttribute(2, "max")))
      return failure();
    if (input(1)) {
      minIdx = ins.size();
      ins.push_back(operand(1));
    }
    if (input(2)) {
      maxIdx = ins.size();
      ins.push_back(operand(2));
    }
  }
  bool isUnsigned = isUnsignedDtype((*x)->dtype);
  FailureOr<Value> r = elementwise(
      ins, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) -> Value {
        Value v = a[0];
        if (minIdx >= 0)
          v = isFloat      ? Value(arith::MaximumFOp::create(ib, v, a[minIdx]))
              : isUnsigned ? Value(arith::MaxUIOp::create(ib, v, a[minIdx]))
                           : Value(arith::MaxSIOp::create(ib, v, a[minIdx]));
        if (maxIdx >= 0)
          v = isFloat      ? Value(arith::MinimumFOp::create(ib, v, a[maxIdx]))
              : isUnsigned ? Value(arith::MinUIOp::create(ib, v, a[maxIdx]))
                           : Value(arith::MinSIOp::create(ib, v, a[maxIdx]));
        return v;
      });
  if (failed(r))
    return failure();
  setOutput(0, *r, (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importWhere() {
  for (unsigned i = 0; i < 3; ++i)
    if (failed(required(i)))
      return failure();
  Value c = operand(0), x = operand(1), y = operand(2);
  Type et = elementTypeOf(x);
  FailureOr<Value> r = elementwise(
      ValueRange{c, x, y}, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
        return arith::SelectOp::create(ib, a[0], a[1], a[2]);
      });
  if (failed(r))
    return failure();
  setOutput(0, *r, input(1)->dtype);
  return success();
}
