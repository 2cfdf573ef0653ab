//===- MatchColumnKernel.cpp - Column kernels in the imported linalg IR ---===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Recognises the column kernels (docs/execution-model.md, "Column kernels")
// in the importer's linalg forms: elementwise activations, ops with scalar
// constants or a constant tensor, fused bodies as Expression programs
// (weft/Kernels/Expression.h), and softmax over the sample or an axis.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/ColumnKernels.h"

#include "weft/Kernels/Expression.h"
#include "weft/Transforms/ConstantData.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace weft::conversion {

using column::ExpressionBuilder;
using column::ExprKind;

namespace {

/// What the body of a linalg.generic yields, seen from its block arguments.
struct Body {
  Block *block = nullptr;
  Value yielded;
  bool isArg(Value v, unsigned i) const {
    return i < block->getNumArguments() && v == block->getArgument(i);
  }
  /// The op inside the body that produces `v`, if any.
  Operation *defIn(Value v) const {
    Operation *op = v.getDefiningOp();
    return op && op->getBlock() == block ? op : nullptr;
  }
  /// `v` is produced by one of `OpTys` inside the body.
  template <typename... OpTys> Operation *def(Value v) const {
    Operation *op = defIn(v);
    return op && isa<OpTys...>(op) ? op : nullptr;
  }
};

} // namespace

static Body bodyOf(linalg::GenericOp g) {
  Body b;
  b.block = &g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(b.block->getTerminator());
  if (yield.getNumOperands() == 1)
    b.yielded = yield.getOperand(0);
  return b;
}

static bool isFloatConst(Value v, double value) {
  FloatAttr f;
  if (!matchPattern(v, m_Constant(&f)))
    return false;
  return f.getValueAsDouble() == value;
}

/// Looks through the reshapes the importer puts around keep-dims reductions.
static Value throughReshapes(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
      v = op->getOperand(0);
    else
      break;
  }
  return v;
}

/// Ops of the body other than constants and the terminator.
static int64_t computeOps(const Body &b) {
  int64_t n = 0;
  for (Operation &o : b.block->without_terminator())
    if (!isa<arith::ConstantOp>(o))
      ++n;
  return n;
}

static bool allParallel(linalg::GenericOp g) {
  return llvm::all_of(g.getIteratorTypesArray(), [](utils::IteratorType t) {
    return t == utils::IteratorType::parallel;
  });
}

/// A one-input, one-output elementwise generic with identity maps.
static bool isUnaryElementwise(linalg::GenericOp g) {
  return g.getNumDpsInputs() == 1 && g.getNumDpsInits() == 1 &&
         g->getNumResults() == 1 && allParallel(g) &&
         llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); });
}

/// `yield op(arg0)` for a unary op `OpTy`, nothing else computed.
template <typename OpTy> static bool unaryOfArg(const Body &b) {
  Operation *op = b.yielded ? b.def<OpTy>(b.yielded) : nullptr;
  return op && op->getNumOperands() == 1 && b.isArg(op->getOperand(0), 0) &&
         computeOps(b) == 1;
}

/// `op(x, y)` or `op(y, x)` with one side `isX`; returns the other side.
template <typename Pred> static Value commuted(Operation *op, Pred isX) {
  if (!op || op->getNumOperands() != 2)
    return {};
  if (isX(op->getOperand(0)))
    return op->getOperand(1);
  if (isX(op->getOperand(1)))
    return op->getOperand(0);
  return {};
}

/// A keep-dims reduction of `Kind` (arith::MaximumFOp or arith::AddFOp) over
/// some dimensions of a single input read with the identity map, with the
/// accumulator filled with `init` and the kept dimensions in order in the
/// result. Returns the reduced input, sets `reduced` (per input dimension)
/// and `result` to the reduction's own result (before any reshape).
template <typename Kind>
static Value reductionOf(Value v, double init, std::string &what,
                         SmallVectorImpl<bool> &reduced, Value &result) {
  auto g = throughReshapes(v).getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1) {
    what = "is not a linalg.generic reduction";
    return {};
  }
  Body b = bodyOf(g);
  Operation *op = b.yielded ? b.def<Kind>(b.yielded) : nullptr;
  bool argsOk =
      op && computeOps(b) == 1 &&
      ((b.isArg(op->getOperand(0), 0) && b.isArg(op->getOperand(1), 1)) ||
       (b.isArg(op->getOperand(0), 1) && b.isArg(op->getOperand(1), 0)));
  if (!argsOk) {
    what = ("is not a reduction with " + Kind::getOperationName()).str();
    return {};
  }
  auto fill = g.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !isFloatConst(fill.getInputs()[0], init)) {
    what = "does not start its reduction from " +
           std::string(init < 0 ? "-inf" : "0");
    return {};
  }
  Value in = g.getDpsInputs()[0];
  auto type = dyn_cast<RankedTensorType>(in.getType());
  auto outType = dyn_cast<RankedTensorType>(g->getResult(0).getType());
  if (!type || !type.hasStaticShape() || !outType ||
      !outType.hasStaticShape()) {
    what = "reduces a tensor without a static shape";
    return {};
  }
  SmallVector<utils::IteratorType> its = g.getIteratorTypesArray();
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!maps[0].isIdentity() || int64_t(its.size()) != type.getRank()) {
    what = "does not read its input with an identity map";
    return {};
  }
  reduced.assign(its.size(), false);
  for (size_t d = 0; d < its.size(); ++d)
    reduced[d] = its[d] == utils::IteratorType::reduction;
  // The result keeps the parallel dimensions in order (a unit dimension of
  // the result may read index 0).
  int64_t next = 0;
  for (auto [j, e] : llvm::enumerate(maps[1].getResults())) {
    if (auto c = dyn_cast<AffineConstantExpr>(e);
        c && c.getValue() == 0 && outType.getDimSize(int64_t(j)) == 1)
      continue;
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || int64_t(d.getPosition()) < next || reduced[d.getPosition()]) {
      what = "does not keep its other dimensions in order";
      return {};
    }
    next = int64_t(d.getPosition()) + 1;
  }
  result = g->getResult(0);
  return in;
}

/// The sizes of `t`'s dimensions other than 1.
static SmallVector<int64_t> nonUnitShape(RankedTensorType t) {
  SmallVector<int64_t> s;
  for (int64_t d : t.getShape())
    if (d != 1)
      s.push_back(d);
  return s;
}

/// Whether the binary elementwise generic `g` reads the reduction result
/// `red` of `x` (reduced over `reduced`) through its second input as the
/// value of each element's group: the reshapes between only add or drop
/// unit dimensions, and the broadcast map reads the kept dimensions of `x`
/// larger than 1, in order.
static bool broadcastsGroups(linalg::GenericOp g, Value red,
                             ArrayRef<bool> reduced, RankedTensorType x) {
  Value b = g.getDpsInputs()[1];
  auto bt = cast<RankedTensorType>(b.getType());
  if (nonUnitShape(bt) != nonUnitShape(cast<RankedTensorType>(red.getType())))
    return false;
  AffineMap m = g.getIndexingMapsArray()[1];
  int64_t next = 0;
  for (auto [j, e] : llvm::enumerate(m.getResults())) {
    if (bt.getDimSize(int64_t(j)) == 1)
      continue;
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || int64_t(d.getPosition()) < next ||
        d.getPosition() >= reduced.size() || reduced[d.getPosition()])
      return false;
    next = int64_t(d.getPosition()) + 1;
  }
  // Every kept dimension larger than 1 is read.
  int64_t kept = 0;
  for (int64_t d = 0; d < x.getRank(); ++d)
    if (!reduced[size_t(d)] && x.getDimSize(d) != 1)
      ++kept;
  return kept == int64_t(nonUnitShape(bt).size());
}

/// A two-input elementwise generic `f(a, b)` with a identity-mapped;
/// returns the body and both inputs.
static bool broadcastBinary(linalg::GenericOp g, Body &body, Value &a,
                            Value &b) {
  if (!g || g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1 ||
      !allParallel(g))
    return false;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!maps[0].isIdentity() || !maps[2].isIdentity())
    return false;
  // The reduction that feeds b decides whether it is one value per sample.
  auto bt = dyn_cast<RankedTensorType>(g.getDpsInputs()[1].getType());
  if (!bt || !bt.hasStaticShape())
    return false;
  body = bodyOf(g);
  a = g.getDpsInputs()[0];
  b = g.getDpsInputs()[1];
  return bool(body.yielded);
}

/// The value of a splat f32 constant tensor (an arith.constant, or a
/// linalg.fill of a constant, possibly reshaped), or nothing.
static std::optional<double> splatOf(Value v) {
  v = throughReshapes(v);
  auto asDouble = [](APFloat f) {
    bool lost = false;
    f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    return f.convertToDouble();
  };
  DenseElementsAttr d;
  if (matchPattern(v, m_Constant(&d)) && d.isSplat() &&
      isa<FloatType>(d.getElementType()))
    return asDouble(d.getSplatValue<APFloat>());
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    FloatAttr f;
    if (matchPattern(fill.getInputs()[0], m_Constant(&f)))
      return asDouble(f.getValue());
  }
  return std::nullopt;
}

namespace {

/// A generic with one tensor operand x (identity map) and otherwise splat
/// constants, seen as a scalar function of x.
struct ScalarFn {
  Body body;
  unsigned xArg = 0;
  Value x;
  /// The constant value of each block argument that reads a constant.
  SmallVector<std::optional<double>> argConst;

  bool isX(Value v) const { return body.isArg(v, xArg); }
  std::optional<double> cst(Value v) const {
    FloatAttr f;
    if (matchPattern(v, m_Constant(&f)))
      return f.getValueAsDouble();
    if (auto a = dyn_cast<BlockArgument>(v);
        a && a.getOwner() == body.block && a.getArgNumber() < argConst.size())
      return argConst[a.getArgNumber()];
    return std::nullopt;
  }
  bool isCst(Value v, double c) const {
    std::optional<double> k = cst(v);
    return k && *k == c;
  }
  /// `v` = op(a, b) in the body, op one of `OpTys`.
  template <typename... OpTys> Operation *op(Value v) const {
    return body.def<OpTys...>(v);
  }
  /// `v` = op(x', c) or op(c, x') for a commutative op of `OpTys`: the side
  /// that is not a constant in `other`, the constant in `c`.
  template <typename... OpTys> Value withConst(Value v, double &c) const {
    Operation *o = op<OpTys...>(v);
    if (!o || o->getNumOperands() != 2)
      return {};
    for (int i = 0; i < 2; ++i)
      if (std::optional<double> k = cst(o->getOperand(i))) {
        c = *k;
        return o->getOperand(1 - i);
      }
    return {};
  }
};

} // namespace

/// `g` as a scalar function of its one non-constant operand.
static std::optional<ScalarFn> scalarFnOf(linalg::GenericOp g) {
  if (!g || g.getNumDpsInits() != 1 || g->getNumResults() != 1 ||
      !allParallel(g))
    return std::nullopt;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!maps.back().isIdentity())
    return std::nullopt;
  ScalarFn f;
  f.body = bodyOf(g);
  if (!f.body.yielded)
    return std::nullopt;
  f.argConst.resize(g.getNumDpsInputs());
  int found = 0;
  for (unsigned i = 0; i < g.getNumDpsInputs(); ++i) {
    Value in = g.getDpsInputs()[i];
    if (std::optional<double> c = splatOf(in)) {
      f.argConst[i] = c;
      continue;
    }
    if (!maps[i].isIdentity())
      return std::nullopt;
    ++found;
    f.xArg = i;
    f.x = in;
  }
  if (found != 1)
    return std::nullopt;
  return f;
}

namespace {

/// A two-input generic combining x (identity map) with a non-splat f32
/// constant tensor read through any broadcasting map.
struct TensorFn {
  Body body;
  unsigned xArg = 0, cArg = 1;
  Value x;
  /// The constant broadcast to the result's shape, row-major.
  std::vector<float> c;
};

} // namespace

/// `g` as x combined with a constant tensor; `why` says what is wrong
/// once it is clear the generic has that shape.
static std::optional<TensorFn> tensorFnOf(linalg::GenericOp g,
                                          std::string *why = nullptr) {
  if (!g || g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1 ||
      g->getNumResults() != 1 || !allParallel(g))
    return std::nullopt;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  auto rt = dyn_cast<RankedTensorType>(g->getResult(0).getType());
  if (!maps.back().isIdentity() || !rt || !rt.hasStaticShape())
    return std::nullopt;
  TensorFn f;
  f.body = bodyOf(g);
  if (!f.body.yielded)
    return std::nullopt;
  int found = 0;
  for (unsigned i = 0; i < 2; ++i) {
    Value in = g.getDpsInputs()[i];
    ElementsAttr attr;
    if (splatOf(in) || matchPattern(throughReshapes(in), m_Constant(&attr)))
      continue;
    if (!maps[i].isIdentity())
      return std::nullopt;
    ++found;
    f.xArg = i;
    f.x = in;
  }
  if (found != 1)
    return std::nullopt;
  f.cArg = 1 - f.xArg;
  Value cv = g.getDpsInputs()[f.cArg];
  ElementsAttr attr;
  if (!matchPattern(throughReshapes(cv), m_Constant(&attr)))
    return std::nullopt;
  auto ct = dyn_cast<RankedTensorType>(cv.getType());
  std::string readWhy;
  FailureOr<SmallVector<float>> vals = readF32(attr, readWhy);
  if (!ct || !ct.hasStaticShape() || failed(vals) ||
      int64_t(vals->size()) != ct.getNumElements()) {
    if (why)
      *why = "its constant operand cannot be read as f32 (" + readWhy + ")";
    return std::nullopt;
  }
  // Broadcast at compile time: element i of the result reads the constant
  // at map(indices of i).
  AffineMap cmap = maps[f.cArg];
  ArrayRef<int64_t> shape = rt.getShape(), cshape = ct.getShape();
  if (cmap.getNumDims() != shape.size() ||
      cmap.getNumResults() != cshape.size()) {
    if (why)
      *why = "its constant operand's map does not fit the shapes";
    return std::nullopt;
  }
  int64_t n = rt.getNumElements();
  f.c.resize(size_t(n));
  SmallVector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i;
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      idx[d] = rest % shape[d];
      rest /= shape[d];
    }
    SmallVector<int64_t, 4> at = cmap.compose(idx);
    int64_t lin = 0;
    for (size_t d = 0; d < at.size(); ++d) {
      if (at[d] < 0 || at[d] >= cshape[d]) {
        if (why)
          *why = "its constant operand is read out of bounds";
        return std::nullopt;
      }
      lin = lin * cshape[d] + at[d];
    }
    f.c[size_t(i)] = (*vals)[size_t(lin)];
  }
  return f;
}

/// The ops with a constant tensor, in the importer's forms.
static std::optional<ColumnOp> matchTensorFn(const TensorFn &f) {
  const Body &b = f.body;
  Value y = b.yielded;
  int64_t n = computeOps(b);
  auto isX = [&](Value v) { return b.isArg(v, f.xArg); };
  auto isC = [&](Value v) { return b.isArg(v, f.cArg); };
  // `o` = op(x, C) or, when commutative, op(C, x).
  auto binary = [&](Operation *o, bool commutative) {
    if (!o || o->getNumOperands() != 2)
      return false;
    return (isX(o->getOperand(0)) && isC(o->getOperand(1))) ||
           (commutative && isC(o->getOperand(0)) && isX(o->getOperand(1)));
  };
  if (n == 1) {
    if (binary(b.def<arith::AddFOp>(y), true))
      return ColumnOp::AddTensor;
    if (binary(b.def<arith::MulFOp>(y), true))
      return ColumnOp::MulTensor;
    if (binary(b.def<arith::SubFOp>(y), false))
      return ColumnOp::SubTensor;
    if (Operation *o = b.def<arith::SubFOp>(y);
        o && isC(o->getOperand(0)) && isX(o->getOperand(1)))
      return ColumnOp::TensorSub;
    if (binary(b.def<arith::DivFOp>(y), false))
      return ColumnOp::DivTensor;
    if (binary(b.def<arith::MaximumFOp, arith::MaxNumFOp>(y), true))
      return ColumnOp::MaxTensor;
    if (binary(b.def<arith::MinimumFOp, arith::MinNumFOp>(y), true))
      return ColumnOp::MinTensor;
  }
  // PRelu: select(x < 0, x * C, x).
  if (Operation *s = b.def<arith::SelectOp>(y); s && n == 3) {
    auto cmp =
        dyn_cast_or_null<arith::CmpFOp>(s->getOperand(0).getDefiningOp());
    if (cmp && cmp->getBlock() == b.block &&
        cmp.getPredicate() == arith::CmpFPredicate::OLT && isX(cmp.getLhs()) &&
        isFloatConst(cmp.getRhs(), 0.0) && isX(s->getOperand(2)) &&
        binary(b.def<arith::MulFOp>(s->getOperand(1)), true))
      return ColumnOp::PRelu;
  }
  return std::nullopt;
}

Value columnKernelOperand(Value result) {
  auto g = result.getDefiningOp<linalg::GenericOp>();
  if (std::optional<ScalarFn> f = scalarFnOf(g))
    return f->x;
  std::optional<TensorFn> t = tensorFnOf(g);
  return t ? t->x : Value();
}

/// Body ops that compute (not constants).
static int64_t computeOpsOf(const ScalarFn &f) { return computeOps(f.body); }

/// `v` = op(a) in the body, for an op of `OpTys` with one operand.
template <typename... OpTys>
static Operation *unaryOp(const ScalarFn &f, Value v) {
  Operation *o = f.op<OpTys...>(v);
  return o && o->getNumOperands() == 1 ? o : nullptr;
}

/// The column op of a one-operand math op that has one.
static std::optional<ColumnOp> unaryColumnOp(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<ColumnOp>>(op)
      .Case([](math::AbsFOp) { return ColumnOp::Abs; })
      .Case([](arith::NegFOp) { return ColumnOp::Neg; })
      .Case([](math::ExpOp) { return ColumnOp::Exp; })
      .Case([](math::LogOp) { return ColumnOp::Log; })
      .Case([](math::SqrtOp) { return ColumnOp::Sqrt; })
      .Case([](math::FloorOp) { return ColumnOp::Floor; })
      .Case([](math::CeilOp) { return ColumnOp::Ceil; })
      .Case([](math::RoundEvenOp) { return ColumnOp::Round; })
      .Case([](math::SinOp) { return ColumnOp::Sin; })
      .Case([](math::CosOp) { return ColumnOp::Cos; })
      .Case([](math::ErfOp) { return ColumnOp::Erf; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The expression node of a two-operand arith op that has one.
static std::optional<ExprKind> binaryExprKind(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<ExprKind>>(op)
      .Case([](arith::AddFOp) { return ExprKind::Add; })
      .Case([](arith::SubFOp) { return ExprKind::Sub; })
      .Case([](arith::MulFOp) { return ExprKind::Mul; })
      .Case([](arith::DivFOp) { return ExprKind::Div; })
      .Case<arith::MaximumFOp, arith::MaxNumFOp>(
          [](Operation *) { return ExprKind::Max; })
      .Case<arith::MinimumFOp, arith::MinNumFOp>(
          [](Operation *) { return ExprKind::Min; })
      .Default([](Operation *) { return std::nullopt; });
}

/// Copy, one math op of x, Square and Pow.
static std::optional<ColumnOp> matchOneOp(const ScalarFn &f,
                                          std::vector<float> &params) {
  Value y = f.body.yielded;
  int64_t n = computeOpsOf(f);
  // Copy: the body yields x.
  if (f.isX(y) && n == 0)
    return ColumnOp::Copy;
  // One math op of x.
  if (Operation *o = f.body.defIn(y);
      o && o->getNumOperands() == 1 && f.isX(o->getOperand(0)) && n == 1)
    if (std::optional<ColumnOp> op = unaryColumnOp(o))
      return *op;
  // Square: x * x (ReduceSumSquare's and ReduceL2's elementwise step).
  if (Operation *o = f.op<arith::MulFOp>(y);
      o && n == 1 && f.isX(o->getOperand(0)) && f.isX(o->getOperand(1)))
    return ColumnOp::Square;
  // Pow with a scalar constant exponent.
  if (Operation *o = f.op<math::PowFOp>(y);
      o && n == 1 && f.isX(o->getOperand(0)))
    if (std::optional<double> k = f.cst(o->getOperand(1))) {
      params = {float(*k)};
      return ColumnOp::PowScalar;
    }
  return std::nullopt;
}

/// Celu, with or without the division and the product by alpha.
static std::optional<ColumnOp> matchCelu(const ScalarFn &f,
                                         std::vector<float> &params) {
  Value y = f.body.yielded;
  int64_t n = computeOpsOf(f);
  // Celu: max(0, x) + min(0, (exp(x / alpha) - 1) * alpha), the division
  // and the product absent when the clean-up folded alpha = 1 away.
  if (Operation *add = f.op<arith::AddFOp>(y); add && n >= 5 && n <= 7) {
    auto isMaxX = [&](Value v) {
      double zero = 1;
      Value w = f.withConst<arith::MaximumFOp, arith::MaxNumFOp>(v, zero);
      return w && f.isX(w) && zero == 0;
    };
    for (int i = 0; i < 2; ++i) {
      if (!isMaxX(add->getOperand(i)))
        continue;
      double zero = 1;
      Value m = f.withConst<arith::MinimumFOp, arith::MinNumFOp>(
          add->getOperand(1 - i), zero);
      if (!m || zero != 0)
        break;
      double alpha = 1, inner = 1;
      bool hasMul = false, hasDiv = false;
      if (Value v = f.withConst<arith::MulFOp>(m, alpha)) {
        m = v;
        hasMul = true;
      }
      Operation *sub = f.op<arith::SubFOp>(m);
      Operation *ex = sub && f.isCst(sub->getOperand(1), 1)
                          ? unaryOp<math::ExpOp>(f, sub->getOperand(0))
                          : nullptr;
      if (!ex)
        break;
      Value d = ex->getOperand(0);
      if (Operation *dv = f.op<arith::DivFOp>(d);
          dv && f.isX(dv->getOperand(0)))
        if (std::optional<double> k = f.cst(dv->getOperand(1))) {
          inner = *k;
          d = dv->getOperand(0);
          hasDiv = true;
        }
      int64_t want = 5 + int64_t(hasMul) + int64_t(hasDiv);
      if (f.isX(d) && alpha == inner && n == want) {
        params = {float(alpha)};
        return ColumnOp::Celu;
      }
      break;
    }
  }
  return std::nullopt;
}

/// x op c and c op x for + - * /, and Clip.
static std::optional<ColumnOp> matchScalarConst(const ScalarFn &f,
                                                std::vector<float> &params) {
  Value y = f.body.yielded;
  int64_t n = computeOpsOf(f);
  double c = 0, c2 = 0;
  // x op c, c op x.
  if (Operation *o = f.op<arith::DivFOp>(y); o && n == 1) {
    if (f.isCst(o->getOperand(0), 1.0) && f.isX(o->getOperand(1)))
      return ColumnOp::Reciprocal;
    if (f.isX(o->getOperand(0)))
      if (std::optional<double> k = f.cst(o->getOperand(1))) {
        params = {float(*k)};
        return ColumnOp::DivScalar;
      }
  }
  if (Operation *o = f.op<arith::SubFOp>(y); o && n == 1) {
    if (f.isX(o->getOperand(0)))
      if (std::optional<double> k = f.cst(o->getOperand(1))) {
        params = {float(*k)};
        return ColumnOp::SubScalar;
      }
    if (f.isX(o->getOperand(1)))
      if (std::optional<double> k = f.cst(o->getOperand(0))) {
        params = {float(*k)};
        return ColumnOp::ScalarSub;
      }
  }
  if (n == 1) {
    if (Value v = f.withConst<arith::AddFOp>(y, c); v && f.isX(v)) {
      params = {float(c)};
      return ColumnOp::AddScalar;
    }
    if (Value v = f.withConst<arith::MulFOp>(y, c); v && f.isX(v)) {
      params = {float(c)};
      return ColumnOp::MulScalar;
    }
  }
  // Clip: min(max(x, lo), hi), max(x, lo) or min(x, hi) (either order).
  if (Value v = f.withConst<arith::MinimumFOp, arith::MinNumFOp>(y, c2)) {
    if (f.isX(v) && n == 1) {
      params = {-INFINITY, float(c2)};
      return ColumnOp::Clip;
    }
    if (Value w = f.withConst<arith::MaximumFOp, arith::MaxNumFOp>(v, c);
        w && f.isX(w) && n == 2) {
      params = {float(c), float(c2)};
      return ColumnOp::Clip;
    }
  }
  if (Value v = f.withConst<arith::MaximumFOp, arith::MaxNumFOp>(y, c);
      v && f.isX(v) && n == 1) {
    params = {float(c), INFINITY};
    return ColumnOp::Clip;
  }
  return std::nullopt;
}

/// Sign, HardSigmoid, HardSwish, Softplus and Softsign.
static std::optional<ColumnOp> matchSignAndHard(const ScalarFn &f,
                                                std::vector<float> &params) {
  Value y = f.body.yielded;
  int64_t n = computeOpsOf(f);
  double c = 0, c2 = 0;
  // Sign: select(x > 0, 1, select(x < 0, -1, 0)).
  if (Operation *s1 = f.op<arith::SelectOp>(y); s1 && n == 4) {
    auto cmpOf = [&](Value c, arith::CmpFPredicate pred) {
      auto cmp = dyn_cast_or_null<arith::CmpFOp>(c.getDefiningOp());
      return cmp && cmp->getBlock() == f.body.block &&
             cmp.getPredicate() == pred && f.isX(cmp.getLhs()) &&
             f.isCst(cmp.getRhs(), 0);
    };
    Operation *s2 = f.op<arith::SelectOp>(s1->getOperand(2));
    if (s2 && cmpOf(s1->getOperand(0), arith::CmpFPredicate::OGT) &&
        f.isCst(s1->getOperand(1), 1) &&
        cmpOf(s2->getOperand(0), arith::CmpFPredicate::OLT) &&
        f.isCst(s2->getOperand(1), -1) && f.isCst(s2->getOperand(2), 0))
      return ColumnOp::Sign;
  }
  // HardSigmoid: max(0, min(1, x * alpha + beta)); HardSwish: x times it.
  auto hardSigmoid = [&](Value v, double &alpha, double &beta) {
    double zero = 1, one = 0;
    Value mn = f.withConst<arith::MaximumFOp>(v, zero);
    Value add = mn ? f.withConst<arith::MinimumFOp>(mn, one) : Value();
    Value mul = add ? f.withConst<arith::AddFOp>(add, beta) : Value();
    Value xv = mul ? f.withConst<arith::MulFOp>(mul, alpha) : Value();
    return xv && f.isX(xv) && zero == 0 && one == 1;
  };
  if (hardSigmoid(y, c, c2) && n == 4) {
    params = {float(c), float(c2)};
    return ColumnOp::HardSigmoid;
  }
  if (Operation *o = f.op<arith::MulFOp>(y); o && n == 5)
    for (int i = 0; i < 2; ++i)
      if (f.isX(o->getOperand(i)) && hardSigmoid(o->getOperand(1 - i), c, c2)) {
        params = {float(c), float(c2)};
        return ColumnOp::HardSwish;
      }
  // Softplus: log(exp(x) + 1).
  if (Operation *lg = unaryOp<math::LogOp>(f, y); lg && n == 3) {
    Value e = f.withConst<arith::AddFOp>(lg->getOperand(0), c);
    Operation *ex = e ? unaryOp<math::ExpOp>(f, e) : nullptr;
    if (ex && f.isX(ex->getOperand(0)) && c == 1)
      return ColumnOp::Softplus;
  }
  // Softsign: x / (1 + |x|).
  if (Operation *dv = f.op<arith::DivFOp>(y); dv && n == 3) {
    Value a = f.withConst<arith::AddFOp>(dv->getOperand(1), c);
    Operation *ab = a ? unaryOp<math::AbsFOp>(f, a) : nullptr;
    if (f.isX(dv->getOperand(0)) && ab && f.isX(ab->getOperand(0)) && c == 1)
      return ColumnOp::Softsign;
  }
  return std::nullopt;
}

/// The ops that select on a comparison of x: LeakyRelu, Elu,
/// ThresholdedRelu and Selu.
static std::optional<ColumnOp> matchSelects(const ScalarFn &f,
                                            std::vector<float> &params) {
  Value y = f.body.yielded;
  int64_t n = computeOpsOf(f);
  double c = 0, c2 = 0;
  // The selects: select(x < 0, neg, x) (LeakyRelu, Elu), select(x > 0, x,
  // neg) (Selu, under a product with gamma) and select(x > alpha, x, 0)
  // (ThresholdedRelu).
  auto select = [&](Value v, Value &cond, Value &t, Value &e) {
    Operation *s = f.op<arith::SelectOp>(v);
    if (!s)
      return false;
    cond = s->getOperand(0);
    t = s->getOperand(1);
    e = s->getOperand(2);
    return true;
  };
  auto compare = [&](Value cond, arith::CmpFPredicate pred, double &k) {
    auto cmp = dyn_cast_or_null<arith::CmpFOp>(cond.getDefiningOp());
    if (!cmp || cmp->getBlock() != f.body.block || cmp.getPredicate() != pred ||
        !f.isX(cmp.getLhs()))
      return false;
    std::optional<double> r = f.cst(cmp.getRhs());
    if (!r)
      return false;
    k = *r;
    return true;
  };
  Value cond, t, e;
  double k = 0;
  if (select(y, cond, t, e)) {
    if (compare(cond, arith::CmpFPredicate::OLT, k) && k == 0 && f.isX(e)) {
      // LeakyRelu: x * alpha.
      if (Value v = f.withConst<arith::MulFOp>(t, c); v && f.isX(v) && n == 3) {
        params = {float(c)};
        return ColumnOp::LeakyRelu;
      }
      // Elu: (exp(x) - 1) * alpha.
      if (Value v = f.withConst<arith::MulFOp>(t, c); v && n == 5) {
        Operation *sub = f.op<arith::SubFOp>(v);
        Operation *ex =
            sub ? unaryOp<math::ExpOp>(f, sub->getOperand(0)) : nullptr;
        if (ex && f.isX(ex->getOperand(0)) && f.isCst(sub->getOperand(1), 1)) {
          params = {float(c)};
          return ColumnOp::Elu;
        }
      }
      // Elu with alpha = 1, after the clean-up folded the product away.
      if (Operation *sub = f.op<arith::SubFOp>(t); sub && n == 4) {
        Operation *ex = unaryOp<math::ExpOp>(f, sub->getOperand(0));
        if (ex && f.isX(ex->getOperand(0)) && f.isCst(sub->getOperand(1), 1)) {
          params = {1.0f};
          return ColumnOp::Elu;
        }
      }
    }
    if (compare(cond, arith::CmpFPredicate::OGT, k) && f.isX(t) &&
        f.isCst(e, 0) && n == 2) {
      params = {float(k)};
      return ColumnOp::ThresholdedRelu;
    }
  }
  // Selu: gamma * select(x > 0, x, exp(x) * alpha - alpha).
  if (Value sv = f.withConst<arith::MulFOp>(y, c2);
      sv && n == 6 && select(sv, cond, t, e) &&
      compare(cond, arith::CmpFPredicate::OGT, k) && k == 0 && f.isX(t)) {
    Operation *sub = f.op<arith::SubFOp>(e);
    std::optional<double> a2 = sub ? f.cst(sub->getOperand(1)) : std::nullopt;
    Value ev =
        sub ? f.withConst<arith::MulFOp>(sub->getOperand(0), c) : Value();
    Operation *ex = ev ? unaryOp<math::ExpOp>(f, ev) : nullptr;
    if (ex && f.isX(ex->getOperand(0)) && a2 && *a2 == c) {
      params = {float(c), float(c2)};
      return ColumnOp::Selu;
    }
  }
  return std::nullopt;
}

/// The elementwise ops beyond Relu, Sigmoid and Tanh, in the importer's
/// forms. Sets `params`.
static std::optional<ColumnOp> matchScalarFn(const ScalarFn &f,
                                             std::vector<float> &params) {
  for (auto match : {matchOneOp, matchCelu, matchScalarConst, matchSignAndHard,
                     matchSelects})
    if (std::optional<ColumnOp> op = match(f, params))
      return op;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Expressions: a fused body compiled node by node
//===----------------------------------------------------------------------===//

/// The body of `f` as an Expression program, or nothing with a sentence in
/// `why`. Only the ops the yielded value depends on are kept.
static std::optional<std::vector<float>> expressionOf(const ScalarFn &f,
                                                      std::string &why) {
  ExpressionBuilder prog;
  llvm::DenseMap<Value, int32_t> node;
  auto add = [&](ExprKind k, int32_t a, int32_t b, float v) {
    return prog.add(k, a, b, v);
  };
  auto operand = [&](Value v) -> std::optional<int32_t> {
    if (f.isX(v))
      return 0;
    if (auto it = node.find(v); it != node.end())
      return it->second;
    if (std::optional<double> c = f.cst(v))
      return prog.constant(float(*c));
    return std::nullopt;
  };
  for (Operation &op : f.body.block->without_terminator()) {
    if (isa<arith::ConstantOp>(op))
      continue;
    auto fail = [&](StringRef what) {
      why = ("its fused body has " + op.getName().getStringRef() + " " + what)
                .str();
      return std::nullopt;
    };
    if (op.getNumResults() != 1)
      return fail("with several results");
    SmallVector<int32_t> in;
    for (Value v : op.getOperands()) {
      std::optional<int32_t> i = operand(v);
      if (!i)
        return fail("of a value that is neither x, a constant nor a node");
      in.push_back(*i);
    }
    int32_t out = -1;
    if (std::optional<ExprKind> k = binaryExprKind(&op))
      out = add(*k, in[0], in[1], 0);
    if (std::optional<ColumnOp> k = unaryColumnOp(&op))
      out = add(ExprKind::Unary, in[0], int32_t(*k), 0);
    if (isa<math::TanhOp>(op)) {
      out = add(ExprKind::Tanh, in[0], 0, 0);
    } else if (isa<math::RsqrtOp>(op)) {
      int32_t s = add(ExprKind::Unary, in[0], int32_t(ColumnOp::Sqrt), 0);
      out = add(ExprKind::Unary, s, int32_t(ColumnOp::Reciprocal), 0);
    } else if (isa<math::PowFOp>(op)) {
      std::optional<double> c = f.cst(op.getOperand(1));
      if (!c)
        return fail("with an exponent that is not a constant");
      out =
          add(ExprKind::Unary, in[0], int32_t(ColumnOp::PowScalar), float(*c));
    } else if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
      using P = arith::CmpFPredicate;
      switch (cmp.getPredicate()) {
      case P::OLT:
      case P::ULT:
        out = add(ExprKind::Lt, in[0], in[1], 0);
        break;
      case P::OGT:
      case P::UGT:
        out = add(ExprKind::Lt, in[1], in[0], 0);
        break;
      case P::OLE:
      case P::ULE:
        out = add(ExprKind::Le, in[0], in[1], 0);
        break;
      case P::OGE:
      case P::UGE:
        out = add(ExprKind::Le, in[1], in[0], 0);
        break;
      default:
        return fail("with a predicate other than <, <=, >, >=");
      }
    } else if (isa<arith::SelectOp>(op)) {
      out = add(ExprKind::Select, in[0], in[1], float(in[2]));
    }
    if (out < 0)
      return fail("(no column kernel computes it)");
    node[op.getResult(0)] = out;
  }
  std::optional<int32_t> y = operand(f.body.yielded);
  if (!y || *y == 0) {
    why = "its fused body yields x or a value it does not compute";
    return std::nullopt;
  }
  std::string checkWhy;
  std::optional<std::vector<float>> out = prog.finish(*y, checkWhy);
  if (!out)
    why = "its fused body " + checkWhy;
  return out;
}

/// Softmax and LogSoftmax over the sample or over adjacent axes of it,
/// whose last step is `g` (of result type `type`).
static FailureOr<ColumnOp> matchSoftmax(linalg::GenericOp g,
                                        RankedTensorType type, Value &input,
                                        std::string &why,
                                        std::vector<float> &params) {
  // Softmax: e / sum(e); LogSoftmax: d - log(sum(e)); with
  // d = x - max(x), e = exp(d).
  Body last;
  Value a, s;
  if (!broadcastBinary(g, last, a, s)) {
    why = "it is neither a one-input elementwise linalg.generic nor the "
          "last step of a softmax (a two-input elementwise generic)";
    return failure();
  }
  ColumnOp op;
  Operation *div = last.def<arith::DivFOp>(last.yielded);
  Operation *sub = last.def<arith::SubFOp>(last.yielded);
  if (div && last.isArg(div->getOperand(0), 0) &&
      last.isArg(div->getOperand(1), 1) && computeOps(last) == 1) {
    op = ColumnOp::Softmax;
  } else if (Operation *log =
                 sub ? last.def<math::LogOp>(sub->getOperand(1)) : nullptr;
             log && last.isArg(sub->getOperand(0), 0) &&
             last.isArg(log->getOperand(0), 1) && computeOps(last) == 2) {
    op = ColumnOp::LogSoftmax;
  } else if (auto logG = s.getDefiningOp<linalg::GenericOp>();
             sub && logG && last.isArg(sub->getOperand(0), 0) &&
             last.isArg(sub->getOperand(1), 1) && computeOps(last) == 1 &&
             isUnaryElementwise(logG) &&
             unaryOfArg<math::LogOp>(bodyOf(logG))) {
    // LogSoftmax's function expansion: the log of the sum is a generic of
    // its own on the reduced tensor.
    op = ColumnOp::LogSoftmax;
    s = logG.getDpsInputs()[0];
  } else {
    why = "its two-input body is neither a / b (Softmax) nor "
          "a - log(b) (LogSoftmax)";
    return failure();
  }
  std::string what;
  SmallVector<bool> sumDims, maxDims;
  Value sumRed, maxRed;
  Value e = reductionOf<arith::AddFOp>(s, 0.0, what, sumDims, sumRed);
  if (!e) {
    why = "the normalizer of its " + std::string(columnOpName(op)) + " " + what;
    return failure();
  }
  auto expG = e.getDefiningOp<linalg::GenericOp>();
  if (!expG || !isUnaryElementwise(expG) ||
      !unaryOfArg<math::ExpOp>(bodyOf(expG))) {
    why = "its sum does not add up math.exp of the shifted input";
    return failure();
  }
  Value d = expG.getDpsInputs()[0];
  if ((op == ColumnOp::Softmax && a != e) ||
      (op == ColumnOp::LogSoftmax && a != d)) {
    why = std::string("the ") + columnOpName(op) +
          " does not normalise the values it summed";
    return failure();
  }
  Body shift;
  Value x, m;
  auto subG = d.getDefiningOp<linalg::GenericOp>();
  Operation *subOp;
  if (!broadcastBinary(subG, shift, x, m) ||
      !(subOp = shift.def<arith::SubFOp>(shift.yielded)) ||
      !shift.isArg(subOp->getOperand(0), 0) ||
      !shift.isArg(subOp->getOperand(1), 1) || computeOps(shift) != 1) {
    why = "its exponent is not x - max(x) with the maximum broadcast";
    return failure();
  }
  Value reduced =
      reductionOf<arith::MaximumFOp>(m, -INFINITY, what, maxDims, maxRed);
  if (!reduced) {
    why = "the maximum of its " + std::string(columnOpName(op)) + " " + what;
    return failure();
  }
  if (reduced != x) {
    why = "it subtracts the maximum of another tensor";
    return failure();
  }
  auto xt = cast<RankedTensorType>(x.getType());
  if (!xt.getElementType().isF32() || xt != type) {
    why = "its input is not an f32 tensor of the result's shape";
    return failure();
  }
  if (maxDims != sumDims) {
    why = std::string("its ") + columnOpName(op) +
          " takes the maximum and the sum over different dimensions";
    return failure();
  }
  if (!broadcastsGroups(subG, maxRed, maxDims, xt) ||
      !broadcastsGroups(g, sumRed, sumDims, xt)) {
    why = std::string("its ") + columnOpName(op) +
          " does not broadcast the maximum or the sum back along the "
          "dimensions it reduced";
    return failure();
  }
  // The groups: G elements along the reduced dimensions (those larger than
  // 1 must be adjacent), I apart, I the product of the dimensions after
  // them; the whole sample when G is all of it.
  int64_t firstDim = -1, lastDim = -1;
  for (int64_t dim = 0; dim < xt.getRank(); ++dim)
    if (maxDims[size_t(dim)] && xt.getDimSize(dim) != 1) {
      if (firstDim < 0)
        firstDim = dim;
      lastDim = dim;
    }
  for (int64_t dim = firstDim + 1; firstDim >= 0 && dim < lastDim; ++dim)
    if (!maxDims[size_t(dim)] && xt.getDimSize(dim) != 1) {
      why = std::string("its ") + columnOpName(op) + " reduces dimensions " +
            std::to_string(firstDim) + " and " + std::to_string(lastDim) +
            " but keeps dimension " + std::to_string(dim) + " of size " +
            std::to_string(xt.getDimSize(dim)) +
            " between them; weft maps a softmax over adjacent dimensions";
      return failure();
    }
  int64_t n = xt.getNumElements(), groupLen = 1, stride = 1;
  for (int64_t dim = 0; dim < xt.getRank(); ++dim) {
    if (maxDims[size_t(dim)])
      groupLen *= xt.getDimSize(dim);
    else if (firstDim >= 0 && dim > lastDim)
      stride *= xt.getDimSize(dim);
  }
  input = x;
  if (groupLen == n)
    return op;
  if (groupLen == 1)
    stride = 1; // groups of one element: every result is 1 (or 0)
  params.assign({float(groupLen), float(stride)});
  return op == ColumnOp::Softmax ? ColumnOp::AxisSoftmax
                                 : ColumnOp::AxisLogSoftmax;
}

FailureOr<ColumnOp> matchColumnKernel(Value result, Value &input,
                                      std::string &why,
                                      std::vector<float> *params) {
  std::vector<float> found;
  if (!params)
    params = &found;
  params->clear();
  auto g = result.getDefiningOp<linalg::GenericOp>();
  if (!g) {
    why = "it is not computed by a linalg.generic";
    return failure();
  }
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32()) {
    why = "its result is not a statically shaped f32 tensor";
    return failure();
  }
  Body body = bodyOf(g);
  if (isUnaryElementwise(g) && body.yielded) {
    Value x = g.getDpsInputs()[0];
    // Relu: maximumf(x, 0) (the importer's form), either order.
    Operation *op = body.def<arith::MaximumFOp, arith::MaxNumFOp>(body.yielded);
    if (op && computeOps(body) == 1 &&
        commuted(op, [&](Value v) { return body.isArg(v, 0); }) &&
        isFloatConst(commuted(op, [&](Value v) { return body.isArg(v, 0); }),
                     0.0)) {
      input = x;
      return ColumnOp::Relu;
    }
    if (unaryOfArg<math::TanhOp>(body)) {
      input = x;
      return ColumnOp::Tanh;
    }
    // Sigmoid: 1 / (1 + exp(-x)), the sum in either order.
    if (Operation *div = body.def<arith::DivFOp>(body.yielded)) {
      Operation *add = body.def<arith::AddFOp>(div->getOperand(1));
      Value e = commuted(add, [](Value v) { return isFloatConst(v, 1.0); });
      Operation *exp = e ? body.def<math::ExpOp>(e) : nullptr;
      Operation *neg =
          exp ? body.def<arith::NegFOp>(exp->getOperand(0)) : nullptr;
      if (isFloatConst(div->getOperand(0), 1.0) && neg &&
          body.isArg(neg->getOperand(0), 0) && computeOps(body) == 4) {
        input = x;
        return ColumnOp::Sigmoid;
      }
    }
  }
  if (std::optional<ScalarFn> fn = scalarFnOf(g)) {
    if (std::optional<ColumnOp> op = matchScalarFn(*fn, *params)) {
      input = fn->x;
      return *op;
    }
    // No single known op: the body as a whole (a fused expression).
    std::string exprWhy;
    if (std::optional<std::vector<float>> prog = expressionOf(*fn, exprWhy)) {
      input = fn->x;
      *params = std::move(*prog);
      return ColumnOp::Expression;
    }
    why = "its elementwise body is none of the per-row ops weft maps (Relu, "
          "Sigmoid, Tanh, Abs, Neg, Exp, Log, Sqrt, Reciprocal, LeakyRelu, "
          "ThresholdedRelu, Elu, Celu, Selu, Softplus, Softsign, HardSigmoid, "
          "HardSwish, Clip, Sign, Floor, Ceil, Round, Sin, Cos, Erf, Pow with "
          "a scalar exponent, or x with a scalar constant: + - * /), and as an "
          "expression " +
          exprWhy;
    return failure();
  }

  std::string tensorWhy;
  if (std::optional<TensorFn> fn = tensorFnOf(g, &tensorWhy)) {
    if (std::optional<ColumnOp> op = matchTensorFn(*fn)) {
      input = fn->x;
      *params = std::move(fn->c);
      return *op;
    }
    why = "its body combines its input with a constant tensor in none of the "
          "ways weft maps (x + C, x - C, C - x, x * C, x / C, max, min, PRelu)";
    return failure();
  }
  if (!tensorWhy.empty()) {
    why = tensorWhy;
    return failure();
  }

  return matchSoftmax(g, type, input, why, *params);
}

} // namespace weft::conversion
