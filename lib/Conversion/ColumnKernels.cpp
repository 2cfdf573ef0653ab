//===- ColumnKernels.cpp - Per-row layers on one column of PEs ------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Elementwise activations and Softmax/LogSoftmax on one column of PEs
// (docs/execution-model.md, "Column kernels"): the matcher for the
// importer's linalg forms, the per-PE programs and the cost model.
//
// Every PE runs one task that never ends: it loads its DSRs once and then
// loops over samples (a `jump` back costs one cycle; re-activating a task
// would cost an activate and a pick). The main thread only ever waits for
// wavelets that other PEs (or the host) send, and only ever sends wavelets
// that other PEs consume, so no send can wait on its own CE.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/ColumnKernels.h"

#include "WaveletBuilder.h"
#include "weft/Conversion/DenseLayer.h"

#include "../Transforms/ConstantData.h"

#include "fabric/FabricOps.h"
#include "wavelet/WaveletOps.h"

#include "weft/Target/ISA.h"
#include "weft/Target/Numerics.h"
#include "weft/Target/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

using namespace mlir;
namespace wt = weft::target;
namespace fab = weft::fabric;
namespace wv = weft::wavelet;

namespace weft::conversion {

const char *columnOpName(ColumnOp op) {
  switch (op) {
  case ColumnOp::Relu:
    return "Relu";
  case ColumnOp::Sigmoid:
    return "Sigmoid";
  case ColumnOp::Tanh:
    return "Tanh";
  case ColumnOp::Softmax:
    return "Softmax";
  case ColumnOp::LogSoftmax:
    return "LogSoftmax";
  case ColumnOp::Copy:
    return "Copy";
  case ColumnOp::Abs:
    return "Abs";
  case ColumnOp::Neg:
    return "Neg";
  case ColumnOp::Exp:
    return "Exp";
  case ColumnOp::Log:
    return "Log";
  case ColumnOp::Sqrt:
    return "Sqrt";
  case ColumnOp::Reciprocal:
    return "Reciprocal";
  case ColumnOp::LeakyRelu:
    return "LeakyRelu";
  case ColumnOp::ThresholdedRelu:
    return "ThresholdedRelu";
  case ColumnOp::Elu:
    return "Elu";
  case ColumnOp::Selu:
    return "Selu";
  case ColumnOp::Softplus:
    return "Softplus";
  case ColumnOp::Softsign:
    return "Softsign";
  case ColumnOp::HardSigmoid:
    return "HardSigmoid";
  case ColumnOp::HardSwish:
    return "HardSwish";
  case ColumnOp::Clip:
    return "Clip";
  case ColumnOp::AddScalar:
    return "AddScalar";
  case ColumnOp::SubScalar:
    return "SubScalar";
  case ColumnOp::ScalarSub:
    return "ScalarSub";
  case ColumnOp::MulScalar:
    return "MulScalar";
  case ColumnOp::DivScalar:
    return "DivScalar";
  case ColumnOp::Sign:
    return "Sign";
  case ColumnOp::Floor:
    return "Floor";
  case ColumnOp::Ceil:
    return "Ceil";
  case ColumnOp::Round:
    return "Round";
  case ColumnOp::Sin:
    return "Sin";
  case ColumnOp::Cos:
    return "Cos";
  case ColumnOp::Erf:
    return "Erf";
  case ColumnOp::Celu:
    return "Celu";
  case ColumnOp::Square:
    return "Square";
  case ColumnOp::PowScalar:
    return "PowScalar";
  case ColumnOp::AddTensor:
    return "AddTensor";
  case ColumnOp::SubTensor:
    return "SubTensor";
  case ColumnOp::TensorSub:
    return "TensorSub";
  case ColumnOp::MulTensor:
    return "MulTensor";
  case ColumnOp::DivTensor:
    return "DivTensor";
  case ColumnOp::MaxTensor:
    return "MaxTensor";
  case ColumnOp::MinTensor:
    return "MinTensor";
  case ColumnOp::PRelu:
    return "PRelu";
  case ColumnOp::AxisSoftmax:
    return "AxisSoftmax";
  case ColumnOp::AxisLogSoftmax:
    return "AxisLogSoftmax";
  case ColumnOp::Expression:
    return "Expression";
  }
  return "?";
}

int64_t columnParamCount(ColumnOp op) {
  switch (op) {
  case ColumnOp::LeakyRelu:
  case ColumnOp::ThresholdedRelu:
  case ColumnOp::Elu:
  case ColumnOp::AddScalar:
  case ColumnOp::SubScalar:
  case ColumnOp::ScalarSub:
  case ColumnOp::MulScalar:
  case ColumnOp::DivScalar:
  case ColumnOp::Celu:
  case ColumnOp::PowScalar:
    return 1;
  case ColumnOp::Selu:
  case ColumnOp::HardSigmoid:
  case ColumnOp::HardSwish:
  case ColumnOp::Clip:
  case ColumnOp::AxisSoftmax:
  case ColumnOp::AxisLogSoftmax:
    return 2;
  default:
    return 0;
  }
}

bool columnTakesTensor(ColumnOp op) {
  switch (op) {
  case ColumnOp::AddTensor:
  case ColumnOp::SubTensor:
  case ColumnOp::TensorSub:
  case ColumnOp::MulTensor:
  case ColumnOp::DivTensor:
  case ColumnOp::MaxTensor:
  case ColumnOp::MinTensor:
  case ColumnOp::PRelu:
    return true;
  default:
    return false;
  }
}

static bool isSoftmax(ColumnOp op) {
  return op == ColumnOp::Softmax || op == ColumnOp::LogSoftmax;
}

bool isAxisSoftmax(ColumnOp op) {
  return op == ColumnOp::AxisSoftmax || op == ColumnOp::AxisLogSoftmax;
}

/// AxisSoftmax's group length G and stride I (1 for a malformed kernel,
/// which emitColumnKernel rejects).
static std::pair<int64_t, int64_t> axisGroups(const std::vector<float> &p) {
  if (p.size() != 2 || !(p[0] >= 1) || !(p[1] >= 1))
    return {1, 1};
  return {int64_t(p[0]), int64_t(p[1])};
}

int64_t columnChunkMultiple(ColumnOp op, const std::vector<float> &params) {
  if (!isAxisSoftmax(op))
    return 1;
  auto [g, i] = axisGroups(params);
  return g * i;
}

bool columnRowsAllowed(ColumnOp op, const std::vector<float> &params, int64_t n,
                       int64_t rows) {
  if (rows < 1 || n < 1 || chunkSize(n, rows, rows - 1) < 1)
    return false;
  return chunkSize(n, rows, 0) % columnChunkMultiple(op, params) == 0;
}

int64_t internalColors(ColumnOp op) { return isSoftmax(op) ? 3 : 0; }

/// The ops of the original five (emitted and costed by their own code).
static bool isClassic(ColumnOp op) {
  return op == ColumnOp::Relu || op == ColumnOp::Sigmoid ||
         op == ColumnOp::Tanh || isSoftmax(op);
}

int64_t columnBuffers(ColumnOp op) {
  switch (op) {
  case ColumnOp::Relu:
  case ColumnOp::Copy:
  case ColumnOp::Abs:
  case ColumnOp::Neg:
  case ColumnOp::Exp:
  case ColumnOp::Log:
  case ColumnOp::Sqrt:
  case ColumnOp::Reciprocal:
  case ColumnOp::AddScalar:
  case ColumnOp::SubScalar:
  case ColumnOp::MulScalar:
  case ColumnOp::DivScalar:
    return 0;
  case ColumnOp::Tanh:
  case ColumnOp::LogSoftmax:
  case ColumnOp::AxisLogSoftmax:
  case ColumnOp::ThresholdedRelu:
  case ColumnOp::Softsign:
  case ColumnOp::HardSwish:
    return 2;
  case ColumnOp::Celu:
  case ColumnOp::PowScalar:
    return 2;
  case ColumnOp::LeakyRelu:
  case ColumnOp::Elu:
  case ColumnOp::Selu:
  case ColumnOp::Sin:
  case ColumnOp::Cos:
    return 3;
  case ColumnOp::Floor:
  case ColumnOp::Ceil:
  case ColumnOp::Round:
    return 4;
  case ColumnOp::Erf:
    return 5;
  // The constant tensor's chunk is the last buffer.
  case ColumnOp::TensorSub:
    return 2;
  case ColumnOp::PRelu:
    return 4;
  case ColumnOp::Expression:
    return kExpressionBuffers;
  default:
    return 1;
  }
}

/// The buffer slot of the constant tensor's chunk (after the sequence's).
static int64_t constSlot(ColumnOp op) { return columnBuffers(op) - 1; }

//===----------------------------------------------------------------------===//
// Matching
//===----------------------------------------------------------------------===//

namespace {

/// What the body of a linalg.generic yields, seen from its block arguments.
struct Body {
  Block *block = nullptr;
  Value yielded;
  bool isArg(Value v, unsigned i) const {
    return i < block->getNumArguments() && v == block->getArgument(i);
  }
  /// `v` is produced by an op named `name` inside the body.
  Operation *def(Value v, StringRef name) const {
    Operation *op = v.getDefiningOp();
    if (!op || op->getBlock() != block || op->getName().getStringRef() != name)
      return nullptr;
    return op;
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

/// `yield op(arg0)` for a unary op named `name`, nothing else computed.
static bool unaryOfArg(const Body &b, StringRef name) {
  Operation *op = b.yielded ? b.def(b.yielded, name) : nullptr;
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

/// A keep-dims reduction of `kind` ("arith.maximumf" or "arith.addf") over
/// some dimensions of a single input read with the identity map, with the
/// accumulator filled with `init` and the kept dimensions in order in the
/// result. Returns the reduced input, sets `reduced` (per input dimension)
/// and `result` to the reduction's own result (before any reshape).
static Value reductionOf(Value v, StringRef kind, double init,
                         std::string &what, SmallVectorImpl<bool> &reduced,
                         Value &result) {
  auto g = throughReshapes(v).getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1) {
    what = "is not a linalg.generic reduction";
    return {};
  }
  Body b = bodyOf(g);
  Operation *op = b.yielded ? b.def(b.yielded, kind) : nullptr;
  bool argsOk =
      op && computeOps(b) == 1 &&
      ((b.isArg(op->getOperand(0), 0) && b.isArg(op->getOperand(1), 1)) ||
       (b.isArg(op->getOperand(0), 1) && b.isArg(op->getOperand(1), 0)));
  if (!argsOk) {
    what = ("is not a reduction with " + kind).str();
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
  /// `v` = name(a, b) in the body.
  Operation *op(Value v, StringRef name) const { return body.def(v, name); }
  /// `v` = name(x', c) or name(c, x') for a commutative op: the side that is
  /// not a constant in `other`, the constant in `c`.
  Value withConst(Value v, StringRef name, double &c) const {
    Operation *o = op(v, name);
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
  // `v` = name(x, C) or, when commutative, name(C, x).
  auto binary = [&](Value v, StringRef name, bool commutative) {
    Operation *o = b.def(v, name);
    if (!o || o->getNumOperands() != 2)
      return false;
    return (isX(o->getOperand(0)) && isC(o->getOperand(1))) ||
           (commutative && isC(o->getOperand(0)) && isX(o->getOperand(1)));
  };
  if (n == 1) {
    if (binary(y, "arith.addf", true))
      return ColumnOp::AddTensor;
    if (binary(y, "arith.mulf", true))
      return ColumnOp::MulTensor;
    if (binary(y, "arith.subf", false))
      return ColumnOp::SubTensor;
    if (Operation *o = b.def(y, "arith.subf");
        o && isC(o->getOperand(0)) && isX(o->getOperand(1)))
      return ColumnOp::TensorSub;
    if (binary(y, "arith.divf", false))
      return ColumnOp::DivTensor;
    for (StringRef name : {"arith.maximumf", "arith.maxnumf"})
      if (binary(y, name, true))
        return ColumnOp::MaxTensor;
    for (StringRef name : {"arith.minimumf", "arith.minnumf"})
      if (binary(y, name, true))
        return ColumnOp::MinTensor;
  }
  // PRelu: select(x < 0, x * C, x).
  if (Operation *s = b.def(y, "arith.select"); s && n == 3) {
    auto cmp =
        dyn_cast_or_null<arith::CmpFOp>(s->getOperand(0).getDefiningOp());
    if (cmp && cmp->getBlock() == b.block &&
        cmp.getPredicate() == arith::CmpFPredicate::OLT && isX(cmp.getLhs()) &&
        isFloatConst(cmp.getRhs(), 0.0) && isX(s->getOperand(2)) &&
        binary(s->getOperand(1), "arith.mulf", true))
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

/// The elementwise ops beyond Relu, Sigmoid and Tanh, in the importer's
/// forms. Sets `params`.
static std::optional<ColumnOp> matchScalarFn(const ScalarFn &f,
                                             std::vector<float> &params) {
  Value y = f.body.yielded;
  int64_t n = computeOpsOf(f);
  auto unary = [&](Value v, StringRef name) -> Operation * {
    Operation *o = f.op(v, name);
    return o && o->getNumOperands() == 1 ? o : nullptr;
  };
  // Copy: the body yields x.
  if (f.isX(y) && n == 0)
    return ColumnOp::Copy;
  // One math op of x.
  static const std::pair<const char *, ColumnOp> kUnary[] = {
      {"math.absf", ColumnOp::Abs},  {"arith.negf", ColumnOp::Neg},
      {"math.exp", ColumnOp::Exp},   {"math.log", ColumnOp::Log},
      {"math.sqrt", ColumnOp::Sqrt}, {"math.floor", ColumnOp::Floor},
      {"math.ceil", ColumnOp::Ceil}, {"math.roundeven", ColumnOp::Round},
      {"math.sin", ColumnOp::Sin},   {"math.cos", ColumnOp::Cos},
      {"math.erf", ColumnOp::Erf}};
  for (auto [name, op] : kUnary)
    if (Operation *o = unary(y, name); o && f.isX(o->getOperand(0)) && n == 1)
      return op;
  double c = 0, c2 = 0;
  // Square: x * x (ReduceSumSquare's and ReduceL2's elementwise step).
  if (Operation *o = f.op(y, "arith.mulf");
      o && n == 1 && f.isX(o->getOperand(0)) && f.isX(o->getOperand(1)))
    return ColumnOp::Square;
  // Pow with a scalar constant exponent.
  if (Operation *o = f.op(y, "math.powf");
      o && n == 1 && f.isX(o->getOperand(0)))
    if (std::optional<double> k = f.cst(o->getOperand(1))) {
      params = {float(*k)};
      return ColumnOp::PowScalar;
    }
  // Celu: max(0, x) + min(0, (exp(x / alpha) - 1) * alpha), the division
  // and the product absent when the clean-up folded alpha = 1 away.
  if (Operation *add = f.op(y, "arith.addf"); add && n >= 5 && n <= 7) {
    auto isMaxX = [&](Value v) {
      double zero = 1;
      for (StringRef name : {"arith.maximumf", "arith.maxnumf"})
        if (Value w = f.withConst(v, name, zero); w && f.isX(w) && zero == 0)
          return true;
      return false;
    };
    for (int i = 0; i < 2; ++i) {
      if (!isMaxX(add->getOperand(i)))
        continue;
      Value m;
      double zero = 1;
      for (StringRef name : {"arith.minimumf", "arith.minnumf"})
        if (!m)
          m = f.withConst(add->getOperand(1 - i), name, zero);
      if (!m || zero != 0)
        break;
      double alpha = 1, inner = 1;
      bool hasMul = false, hasDiv = false;
      if (Value v = f.withConst(m, "arith.mulf", alpha)) {
        m = v;
        hasMul = true;
      }
      Operation *sub = f.op(m, "arith.subf");
      Operation *ex = sub && f.isCst(sub->getOperand(1), 1)
                          ? unary(sub->getOperand(0), "math.exp")
                          : nullptr;
      if (!ex)
        break;
      Value d = ex->getOperand(0);
      if (Operation *dv = f.op(d, "arith.divf"); dv && f.isX(dv->getOperand(0)))
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
  // x op c, c op x.
  if (Operation *o = f.op(y, "arith.divf"); o && n == 1) {
    if (f.isCst(o->getOperand(0), 1.0) && f.isX(o->getOperand(1)))
      return ColumnOp::Reciprocal;
    if (f.isX(o->getOperand(0)))
      if (std::optional<double> k = f.cst(o->getOperand(1))) {
        params = {float(*k)};
        return ColumnOp::DivScalar;
      }
  }
  if (Operation *o = f.op(y, "arith.subf"); o && n == 1) {
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
    if (Value v = f.withConst(y, "arith.addf", c); v && f.isX(v)) {
      params = {float(c)};
      return ColumnOp::AddScalar;
    }
    if (Value v = f.withConst(y, "arith.mulf", c); v && f.isX(v)) {
      params = {float(c)};
      return ColumnOp::MulScalar;
    }
  }
  // Clip: min(max(x, lo), hi), max(x, lo) or min(x, hi) (either order).
  for (StringRef maxName : {"arith.maximumf", "arith.maxnumf"})
    for (StringRef minName : {"arith.minimumf", "arith.minnumf"}) {
      if (Value v = f.withConst(y, minName, c2)) {
        if (f.isX(v) && n == 1) {
          params = {-INFINITY, float(c2)};
          return ColumnOp::Clip;
        }
        if (Value w = f.withConst(v, maxName, c); w && f.isX(w) && n == 2) {
          params = {float(c), float(c2)};
          return ColumnOp::Clip;
        }
      }
      if (Value v = f.withConst(y, maxName, c); v && f.isX(v) && n == 1) {
        params = {float(c), INFINITY};
        return ColumnOp::Clip;
      }
    }
  // Sign: select(x > 0, 1, select(x < 0, -1, 0)).
  if (Operation *s1 = f.op(y, "arith.select"); s1 && n == 4) {
    auto cmpOf = [&](Value c, arith::CmpFPredicate pred) {
      auto cmp = dyn_cast_or_null<arith::CmpFOp>(c.getDefiningOp());
      return cmp && cmp->getBlock() == f.body.block &&
             cmp.getPredicate() == pred && f.isX(cmp.getLhs()) &&
             f.isCst(cmp.getRhs(), 0);
    };
    Operation *s2 = f.op(s1->getOperand(2), "arith.select");
    if (s2 && cmpOf(s1->getOperand(0), arith::CmpFPredicate::OGT) &&
        f.isCst(s1->getOperand(1), 1) &&
        cmpOf(s2->getOperand(0), arith::CmpFPredicate::OLT) &&
        f.isCst(s2->getOperand(1), -1) && f.isCst(s2->getOperand(2), 0))
      return ColumnOp::Sign;
  }
  // HardSigmoid: max(0, min(1, x * alpha + beta)); HardSwish: x times it.
  auto hardSigmoid = [&](Value v, double &alpha, double &beta) {
    double zero = 1, one = 0;
    Value mn = f.withConst(v, "arith.maximumf", zero);
    Value add = mn ? f.withConst(mn, "arith.minimumf", one) : Value();
    Value mul = add ? f.withConst(add, "arith.addf", beta) : Value();
    Value xv = mul ? f.withConst(mul, "arith.mulf", alpha) : Value();
    return xv && f.isX(xv) && zero == 0 && one == 1;
  };
  if (hardSigmoid(y, c, c2) && n == 4) {
    params = {float(c), float(c2)};
    return ColumnOp::HardSigmoid;
  }
  if (Operation *o = f.op(y, "arith.mulf"); o && n == 5)
    for (int i = 0; i < 2; ++i)
      if (f.isX(o->getOperand(i)) && hardSigmoid(o->getOperand(1 - i), c, c2)) {
        params = {float(c), float(c2)};
        return ColumnOp::HardSwish;
      }
  // Softplus: log(exp(x) + 1).
  if (Operation *lg = unary(y, "math.log"); lg && n == 3) {
    Value e = f.withConst(lg->getOperand(0), "arith.addf", c);
    Operation *ex = e ? unary(e, "math.exp") : nullptr;
    if (ex && f.isX(ex->getOperand(0)) && c == 1)
      return ColumnOp::Softplus;
  }
  // Softsign: x / (1 + |x|).
  if (Operation *dv = f.op(y, "arith.divf"); dv && n == 3) {
    Value a = f.withConst(dv->getOperand(1), "arith.addf", c);
    Operation *ab = a ? unary(a, "math.absf") : nullptr;
    if (f.isX(dv->getOperand(0)) && ab && f.isX(ab->getOperand(0)) && c == 1)
      return ColumnOp::Softsign;
  }
  // The selects: select(x < 0, neg, x) (LeakyRelu, Elu), select(x > 0, x,
  // neg) (Selu, under a product with gamma) and select(x > alpha, x, 0)
  // (ThresholdedRelu).
  auto select = [&](Value v, Value &cond, Value &t, Value &e) {
    Operation *s = f.op(v, "arith.select");
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
      if (Value v = f.withConst(t, "arith.mulf", c); v && f.isX(v) && n == 3) {
        params = {float(c)};
        return ColumnOp::LeakyRelu;
      }
      // Elu: (exp(x) - 1) * alpha.
      if (Value v = f.withConst(t, "arith.mulf", c); v && n == 5) {
        Operation *sub = f.op(v, "arith.subf");
        Operation *ex = sub ? unary(sub->getOperand(0), "math.exp") : nullptr;
        if (ex && f.isX(ex->getOperand(0)) && f.isCst(sub->getOperand(1), 1)) {
          params = {float(c)};
          return ColumnOp::Elu;
        }
      }
      // Elu with alpha = 1, after the clean-up folded the product away.
      if (Operation *sub = f.op(t, "arith.subf"); sub && n == 4) {
        Operation *ex = unary(sub->getOperand(0), "math.exp");
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
  if (Value sv = f.withConst(y, "arith.mulf", c2);
      sv && n == 6 && select(sv, cond, t, e) &&
      compare(cond, arith::CmpFPredicate::OGT, k) && k == 0 && f.isX(t)) {
    Operation *sub = f.op(e, "arith.subf");
    std::optional<double> a2 = sub ? f.cst(sub->getOperand(1)) : std::nullopt;
    Value ev = sub ? f.withConst(sub->getOperand(0), "arith.mulf", c) : Value();
    Operation *ex = ev ? unary(ev, "math.exp") : nullptr;
    if (ex && f.isX(ex->getOperand(0)) && a2 && *a2 == c) {
      params = {float(c), float(c2)};
      return ColumnOp::Selu;
    }
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Expressions: a fused body compiled node by node
//===----------------------------------------------------------------------===//

namespace {

/// The kind of a node of an Expression program. Node 0 is x; node i >= 1
/// is params[4 (i - 1) ..] = {kind, a, b, v}, a and b node indices.
enum class ExprKind : int32_t {
  Const = 0,  ///< the constant v
  Add = 1,    ///< a + b
  Sub = 2,    ///< a - b
  Mul = 3,    ///< a b
  Div = 4,    ///< a / b
  Max = 5,    ///< max(a, b)
  Min = 6,    ///< min(a, b)
  Lt = 7,     ///< a < b (a condition: only selects read it)
  Le = 8,     ///< a <= b, computed as !(b < a)
  Select = 9, ///< a ? b : node v
  Unary = 10, ///< the unary column op b of a, its constant v (Pow)
  Tanh = 11,  ///< tanh(a), as the Tanh kernel: 1 - 2 / (1 + exp(2a))
};
constexpr int64_t kExprFields = 4;

struct ExprNode {
  ExprKind kind = ExprKind::Const;
  int32_t a = 0, b = 0, c = 0; // c: Select's false arm
  float v = 0;
};

/// The nodes of an Expression program (node 0, x, included).
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

} // namespace

/// The body of `f` as an Expression program, or nothing with a sentence in
/// `why`. Only the ops the yielded value depends on are kept.
static std::optional<std::vector<float>> expressionOf(const ScalarFn &f,
                                                      std::string &why) {
  std::vector<float> prog;
  llvm::DenseMap<Value, int32_t> node;
  std::map<uint32_t, int32_t> consts;
  int32_t count = 1;
  auto add = [&](ExprKind k, int32_t a, int32_t b, float v) {
    prog.insert(prog.end(), {float(int32_t(k)), float(a), float(b), v});
    return count++;
  };
  auto operand = [&](Value v) -> std::optional<int32_t> {
    if (f.isX(v))
      return 0;
    if (auto it = node.find(v); it != node.end())
      return it->second;
    if (std::optional<double> c = f.cst(v)) {
      float cf = float(*c);
      uint32_t bits;
      std::memcpy(&bits, &cf, 4);
      auto [it, fresh] = consts.try_emplace(bits, 0);
      if (fresh)
        it->second = add(ExprKind::Const, 0, 0, cf);
      return it->second;
    }
    return std::nullopt;
  };
  static const std::pair<const char *, ExprKind> kBinary[] = {
      {"arith.addf", ExprKind::Add},     {"arith.subf", ExprKind::Sub},
      {"arith.mulf", ExprKind::Mul},     {"arith.divf", ExprKind::Div},
      {"arith.maximumf", ExprKind::Max}, {"arith.maxnumf", ExprKind::Max},
      {"arith.minimumf", ExprKind::Min}, {"arith.minnumf", ExprKind::Min}};
  static const std::pair<const char *, ColumnOp> kUnary[] = {
      {"arith.negf", ColumnOp::Neg},      {"math.absf", ColumnOp::Abs},
      {"math.exp", ColumnOp::Exp},        {"math.log", ColumnOp::Log},
      {"math.sqrt", ColumnOp::Sqrt},      {"math.erf", ColumnOp::Erf},
      {"math.sin", ColumnOp::Sin},        {"math.cos", ColumnOp::Cos},
      {"math.floor", ColumnOp::Floor},    {"math.ceil", ColumnOp::Ceil},
      {"math.roundeven", ColumnOp::Round}};
  for (Operation &op : f.body.block->without_terminator()) {
    if (isa<arith::ConstantOp>(op))
      continue;
    StringRef name = op.getName().getStringRef();
    auto fail = [&](StringRef what) {
      why = ("its fused body has " + name + " " + what).str();
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
    for (auto [n, k] : kBinary)
      if (name == n)
        out = add(k, in[0], in[1], 0);
    for (auto [n, k] : kUnary)
      if (name == n)
        out = add(ExprKind::Unary, in[0], int32_t(k), 0);
    if (name == "math.tanh") {
      out = add(ExprKind::Tanh, in[0], 0, 0);
    } else if (name == "math.rsqrt") {
      int32_t s = add(ExprKind::Unary, in[0], int32_t(ColumnOp::Sqrt), 0);
      out = add(ExprKind::Unary, s, int32_t(ColumnOp::Reciprocal), 0);
    } else if (name == "math.powf") {
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
    } else if (name == "arith.select") {
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
  // The yielded node last: drop the nodes after it and those it does not
  // read (dead code) by rebuilding in order from the reachable set.
  std::vector<ExprNode> nodes = exprNodes(prog);
  std::vector<bool> live(nodes.size(), false);
  live[size_t(*y)] = true;
  for (int32_t i = *y; i > 0; --i) {
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
  for (size_t i = 1; i <= size_t(*y); ++i) {
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
  std::string checkWhy;
  if (failed(checkExpression(out, checkWhy))) {
    why = "its fused body " + checkWhy;
    return std::nullopt;
  }
  return out;
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
    for (StringRef max : {"arith.maximumf", "arith.maxnumf"}) {
      Operation *op = body.def(body.yielded, max);
      if (op && computeOps(body) == 1 &&
          commuted(op, [&](Value v) { return body.isArg(v, 0); }) &&
          isFloatConst(commuted(op, [&](Value v) { return body.isArg(v, 0); }),
                       0.0)) {
        input = x;
        return ColumnOp::Relu;
      }
    }
    if (unaryOfArg(body, "math.tanh")) {
      input = x;
      return ColumnOp::Tanh;
    }
    // Sigmoid: 1 / (1 + exp(-x)), the sum in either order.
    if (Operation *div = body.def(body.yielded, "arith.divf")) {
      Operation *add = body.def(div->getOperand(1), "arith.addf");
      Value e = commuted(add, [](Value v) { return isFloatConst(v, 1.0); });
      Operation *exp = e ? body.def(e, "math.exp") : nullptr;
      Operation *neg =
          exp ? body.def(exp->getOperand(0), "arith.negf") : nullptr;
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
  Operation *div = last.def(last.yielded, "arith.divf");
  Operation *sub = last.def(last.yielded, "arith.subf");
  if (div && last.isArg(div->getOperand(0), 0) &&
      last.isArg(div->getOperand(1), 1) && computeOps(last) == 1) {
    op = ColumnOp::Softmax;
  } else if (Operation *log =
                 sub ? last.def(sub->getOperand(1), "math.log") : nullptr;
             log && last.isArg(sub->getOperand(0), 0) &&
             last.isArg(log->getOperand(0), 1) && computeOps(last) == 2) {
    op = ColumnOp::LogSoftmax;
  } else if (auto logG = s.getDefiningOp<linalg::GenericOp>();
             sub && logG && last.isArg(sub->getOperand(0), 0) &&
             last.isArg(sub->getOperand(1), 1) && computeOps(last) == 1 &&
             isUnaryElementwise(logG) && unaryOfArg(bodyOf(logG), "math.log")) {
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
  Value e = reductionOf(s, "arith.addf", 0.0, what, sumDims, sumRed);
  if (!e) {
    why = "the normalizer of its " + std::string(columnOpName(op)) + " " + what;
    return failure();
  }
  auto expG = e.getDefiningOp<linalg::GenericOp>();
  if (!expG || !isUnaryElementwise(expG) ||
      !unaryOfArg(bodyOf(expG), "math.exp")) {
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
      !(subOp = shift.def(shift.yielded, "arith.subf")) ||
      !shift.isArg(subOp->getOperand(0), 0) ||
      !shift.isArg(subOp->getOperand(1), 1) || computeOps(shift) != 1) {
    why = "its exponent is not x - max(x) with the maximum broadcast";
    return failure();
  }
  Value reduced =
      reductionOf(m, "arith.maximumf", -INFINITY, what, maxDims, maxRed);
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
  params->assign({float(groupLen), float(stride)});
  return op == ColumnOp::Softmax ? ColumnOp::AxisSoftmax
                                 : ColumnOp::AxisLogSoftmax;
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

namespace {

// PE memory map, in words: task table 0..639, code from slot 320, DSD
// records from word 1024, data from 1152 (as the dense layer).
constexpr int64_t kDsdBase = 1024;
constexpr int64_t kDataBase = 1152;
constexpr int64_t kMainTask = 32;

// GPR pairs: the running maximum and the running sum.
constexpr int32_t kGprMax = 6, kGprSum = 8;
// AxisSoftmax's loop registers (16-bit word offsets into the chunk; GPR 4
// is the group's offset, which the `ix` DSD adds to its base): the end of
// the chunk, the end of the current block's first row and its initial
// value, the step to the next block after its I groups (or to the next
// group when I = 1), and a block's length.
constexpr int32_t kGprEnd = 10, kGprInnerEnd = 11, kGprInnerEnd0 = 12,
                  kGprSkip = 13, kGprBlock = 14;

/// The shape of AxisSoftmax's loops on a chunk of L elements.
struct AxisLoop {
  int64_t group = 1, stride = 1;  // G, I
  int64_t groups = 0, blocks = 0; // per chunk
};
AxisLoop axisLoop(const ColumnKernel &k, int64_t L) {
  AxisLoop lp;
  std::tie(lp.group, lp.stride) = axisGroups(k.params);
  lp.blocks = L / (lp.group * lp.stride);
  lp.groups = lp.blocks * lp.stride;
  return lp;
}

// DSD records (index i is at kDsdBase + 4 i).
enum Rec : int64_t {
  kRecIn = 0, // fabin L on inColor
  kRecOut,    // fabout L on outColor
  kRecBuf,    // mem1d L at buf
  kRecBuf2,   // mem1d L at buf2 (LogSoftmax: the exponentials; Tanh: ones)
  kRecRedIn,  // fabin 1: the partial max/sum from the row below
  kRecRedOut, // fabout 1: this row's partial max/sum to the row above
  kRecBcIn,   // fabin 1: the global max/sum from row 0
  kRecBcOut,  // fabout 1: row 0's broadcast
  kRecBuf3,   // mem1d L at buf3 (the elementwise sequences' third vector)
  kRecConst,  // mem1d L: this PE's chunk of the constant tensor
};

} // namespace

//===----------------------------------------------------------------------===//
// Instruction sequences of the elementwise ops with constants
//===----------------------------------------------------------------------===//

namespace {

/// Where an operand of a sequence step lives: one of the kernel's vectors
/// (in, out, buf, buf2, buf3), a GPR pair holding a constant, or a small
/// immediate.
struct Opnd {
  enum Kind { Vec, Gpr, Imm } kind = Vec;
  int32_t value = 0; // Vec: a Rec; Gpr: the pair's first GPR; Imm: SmallImm
};

/// One vector instruction over the chunk: dst = op(src0[, src1]).
struct Step {
  wt::Opcode op;
  int32_t dst, src0; // Recs
  std::optional<Opnd> src1;
};

// The buffers of the sequences (DSD record indices after the softmax ones).
constexpr int32_t kVecIn = 0, kVecOut = 1, kVecBuf = 2, kVecBuf2 = 3,
                  kVecBuf3 = 8, kVecConst = 9;
// Vectors beyond those: buffers 4 and 5, 16-bit views of a buffer's low
// and high halves (stride 2), and the constants kept in memory. Their DSD
// records are numbered from kRecFirstFree in the order of these ids.
constexpr int32_t kVecBuf4 = 10, kVecBuf5 = 11;
// An Expression's buffers beyond buf5 (ids 12 .. 19, slots 5 ..).
constexpr int32_t kVecBuf6 = 12;
constexpr int32_t kVecLo0 = 20, kVecHi0 = 30, kVecMem0 = 40;
constexpr int32_t kRecFirstFree = 10;
/// The low (high) 16-bit halves of buffer `b`'s elements.
constexpr int32_t lowHalves(int32_t slot) { return kVecLo0 + slot; }
constexpr int32_t highHalves(int32_t slot) { return kVecHi0 + slot; }
// The constants: the first six live in GPR pairs 10/11, 12/13, 14/15, 2/3,
// 6/7 and 8/9 (GPRs 0/1 take picked wavelets, 4 is the index register; the
// elementwise ops use no softmax registers); the others in a table at
// kConstTable, each read through a mem1d DSD of stride 0, which gives the
// same value for every element. Records end below the table.
constexpr int32_t kGprConst[] = {10, 12, 14, 2, 6, 8};
constexpr int64_t kNumGprConsts = 6;
constexpr int64_t kConstTable = 1120;
constexpr int64_t kMaxMemConsts = (kDsdBase + 128 - kConstTable) / 2;
constexpr int64_t kMaxRecords = (kConstTable - kDsdBase) / 4;

/// The buffer slot of a buffer id (buf .. buf5).
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
/// buffers it uses; `error` says why it cannot be, if it cannot.
struct ExprCode {
  std::vector<Step> steps;
  std::vector<float> consts;
  int64_t buffers = 0;
  std::string error;
};
ExprCode compileExpression(const std::vector<float> &params);

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

const Opnd kZero{Opnd::Imm, int32_t(wt::SmallImm::Zero)},
    kOne{Opnd::Imm, int32_t(wt::SmallImm::One)},
    kMinusOne{Opnd::Imm, int32_t(wt::SmallImm::MinusOne)},
    kHalf{Opnd::Imm, int32_t(wt::SmallImm::Half)},
    kTwo{Opnd::Imm, int32_t(wt::SmallImm::Two)};
Opnd vec(int32_t id) { return {Opnd::Vec, id}; }

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

ExprCode ExprCompiler::run() {
  size_t N = nodes.size();
  auto fail = [&](const std::string &why) {
    code.error = why;
    return code;
  };
  if (N < 2)
    return fail("computes nothing");
  // Validate and count the reads of every value.
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
            vecOf[size_t(j)] != kVecIn && llvm::count(js, j) == 1) {
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

ExprCode compileExpression(const std::vector<float> &params) {
  return ExprCompiler(params).run();
}

} // namespace

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

/// Which DSRs the steps use. A (dst, src0) pair is `dsr n` (DDSR n and
/// S0DSR n) and a vector second source S1DSR n. Up to 12 of each are
/// loaded once before the loop; with more, the first 11 are, and the
/// others share DSR 11, loaded again before each step that needs another
/// one than it holds (2 cycles for a pair, 1 for a second source).
struct DsrPlan {
  struct Use {
    int32_t pair = 0, s1 = 0;
    bool loadPair = false, loadS1 = false;
  };
  std::vector<std::pair<int32_t, int32_t>> pairs; ///< loaded before the loop
  std::vector<int32_t> s1;                        ///< loaded before the loop
  std::vector<Use> uses;                          ///< per step
};

DsrPlan planDsrs(const std::vector<Step> &steps) {
  constexpr size_t kDsrs = wt::Arch::kNumDSRs;
  std::vector<std::pair<int32_t, int32_t>> pairs;
  std::vector<int32_t> s1s;
  for (const Step &s : steps) {
    if (llvm::find(pairs, std::make_pair(s.dst, s.src0)) == pairs.end())
      pairs.push_back({s.dst, s.src0});
    if (s.src1 && s.src1->kind == Opnd::Vec &&
        llvm::find(s1s, s.src1->value) == s1s.end())
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
    auto it = llvm::find(plan.pairs, p);
    if (it != plan.pairs.end()) {
      u.pair = int32_t(it - plan.pairs.begin());
    } else {
      u.pair = int32_t(kDsrs - 1);
      u.loadPair = heldPair != p;
      heldPair = p;
    }
    if (s.src1 && s.src1->kind == Opnd::Vec) {
      auto jt = llvm::find(plan.s1, s.src1->value);
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
  void emitAxisSoftmax(int64_t L);
  /// `wavelet.jump "label" if_true` (a `brt`).
  void jumpIfTrue(StringRef label) {
    OperationState st(loc, wv::JumpOp::getOperationName());
    st.addAttribute("label", b.getStringAttr(label));
    st.addAttribute(
        "cond", wv::JumpCondAttr::get(b.getContext(), wv::JumpCond::if_true));
    b.create(st);
  }
  void dsd(StringRef sym, Rec index, wv::DsdKind kind,
           ArrayRef<NamedAttribute> fields) {
    dsdAt(sym, kDsdBase + 4 * index, kind, fields);
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
      OperationState p(loc, wv::ParamOp::getOperationName());
      p.addAttribute("gpr", b.getI64IntegerAttr(kGprConst[i] + half));
      p.addAttribute("map", AffineMapAttr::get(AffineMap::get(
                                2, 0,
                                b.getAffineConstantExpr(
                                    int64_t((bits >> (16 * half)) & 0xffff)))));
      b.create(p);
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
      dsd("in", kRecIn, wv::DsdKind::fabin,
          {i64("length", L), i64("color", k.inColor)});
    else if (r == kVecOut)
      dsd("out", kRecOut, wv::DsdKind::fabout,
          {i64("length", L), i64("color", k.outColor)});
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
      OperationState s(loc, wv::SegmentOp::getOperationName());
      s.addAttribute(SymbolTable::getSymbolAttrName(),
                     b.getStringAttr("const_data"));
      s.addAttribute("address", b.getI64IntegerAttr(base));
      s.addAttribute("per_pe", b.getUnitAttr());
      s.addAttribute("value",
                     DenseResourceElementsAttr::get(
                         type, key,
                         HeapAsmResourceBlob::allocateAndCopyInferAlign(
                             ArrayRef<char>(bytes))));
      b.create(s);
      dsd("const", kRecConst, wv::DsdKind::mem1d,
          {i64("length", L), i64("base", base)});
    } else if (r >= kVecMem0) {
      // A constant of the table, the same value for every element.
      dsd(vecName(r), Rec(nextRec++), wv::DsdKind::mem1d,
          {i64("length", L), i64("base", kConstTable + 2 * (r - kVecMem0)),
           i64("stride", 0)});
    } else if (r >= kVecLo0) {
      // 16-bit halves of a buffer's fp32 elements (low word first).
      int64_t slot = (r - kVecLo0) % 10, half = r >= kVecHi0 ? 1 : 0;
      dsd(vecName(r), Rec(nextRec++), wv::DsdKind::mem1d,
          {i64("length", L), i64("base", kDataBase + 2 * L * slot + half),
           i64("stride", 2)});
    } else {
      Rec rec = r >= kVecBuf4 ? Rec(nextRec++) : Rec(r);
      dsd(vecName(r), rec, wv::DsdKind::mem1d,
          {i64("length", L), i64("base", kDataBase + 2 * L * slotOf(r))});
    }
  }
  // The constants beyond the GPRs' (the table of kConstTable).
  if (consts.size() > size_t(kNumGprConsts)) {
    std::vector<float> table(consts.begin() + kNumGprConsts, consts.end());
    auto type = RankedTensorType::get({int64_t(table.size())}, b.getF32Type());
    OperationState s(loc, wv::SegmentOp::getOperationName());
    s.addAttribute(SymbolTable::getSymbolAttrName(),
                   b.getStringAttr("const_table"));
    s.addAttribute("address", b.getI64IntegerAttr(kConstTable));
    s.addAttribute("value",
                   DenseElementsAttr::get(type, ArrayRef<float>(table)));
    b.create(s);
  }

  wv::TaskOp mainTask = task("main", wv::TaskKind::local, kMainTask, true);
  b.setInsertionPointToStart(&mainTask.getBody().front());

  // DSR numbers (planDsrs): the permanent ones are loaded once before the
  // loop, the scratch DSRs before the steps that need them.
  using K = wt::OperandKind;
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
    int32_t n = u.pair;
    const wt::OpcodeInfo &info = wt::info(s.op);
    if (info.family == wt::Family::Un) {
      inst(info.mnemonic, {int32_t(K::Ddsr), n, int32_t(K::S0dsr), n});
      continue;
    }
    int32_t kind = 0, value = 0;
    switch (s.src1->kind) {
    case Opnd::Vec:
      kind = int32_t(K::S1dsr);
      value = u.s1;
      break;
    case Opnd::Gpr:
      kind = int32_t(K::Gpr);
      value = s.src1->value;
      break;
    case Opnd::Imm:
      kind = int32_t(K::Imm);
      value = s.src1->value;
      break;
    }
    inst(info.mnemonic, {int32_t(K::Dsr), n, kind, value});
  }
  jump("sample");
}

void Emitter::emitAxisSoftmax(int64_t L) {
  const AxisLoop lp = axisLoop(k, L);
  const bool log = k.op == ColumnOp::AxisLogSoftmax;
  using K = wt::OperandKind;
  using RF = wv::RegFile;
  const int32_t gpr = int32_t(K::Gpr), imm = int32_t(K::Imm),
                dsrK = int32_t(K::Dsr), ddsr = int32_t(K::Ddsr),
                s0 = int32_t(K::S0dsr);
  const int32_t zero = int32_t(wt::SmallImm::Zero),
                two = int32_t(wt::SmallImm::Two);

  // The loop's constants (word offsets), set at load time.
  auto param = [&](int32_t g, int64_t value) {
    OperationState p(loc, wv::ParamOp::getOperationName());
    p.addAttribute("gpr", b.getI64IntegerAttr(g));
    p.addAttribute("map", AffineMapAttr::get(AffineMap::get(
                              2, 0, b.getAffineConstantExpr(value))));
    b.create(p);
  };
  param(kGprEnd, 2 * L);
  if (lp.stride > 1) {
    param(kGprInnerEnd0, 2 * lp.stride);
    param(kGprSkip, 2 * lp.stride * (lp.group - 1));
    param(kGprBlock, 2 * lp.stride * lp.group);
  } else {
    param(kGprSkip, 2 * lp.group);
  }

  // The chunk in `buf`; `grp` is the group at word offset GPR4 of it (G
  // elements, I apart), `tmp` LogSoftmax's exponentials of one group.
  int64_t buf = kDataBase, buf2 = kDataBase + 2 * L;
  dsd("in", kRecIn, wv::DsdKind::fabin,
      {i64("length", L), i64("color", k.inColor)});
  dsd("out", kRecOut, wv::DsdKind::fabout,
      {i64("length", L), i64("color", k.outColor)});
  dsd("buf", kRecBuf, wv::DsdKind::mem1d, {i64("length", L), i64("base", buf)});
  dsd("grp", kRecBuf2, wv::DsdKind::mem1d,
      {i64("length", lp.group), i64("base", buf), i64("stride", lp.stride),
       b.getNamedAttr("ix", b.getUnitAttr())});
  if (log)
    dsd("tmp", kRecBuf3, wv::DsdKind::mem1d,
        {i64("length", lp.group), i64("base", buf2)});

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
  const int32_t cmp = int32_t(K::Gpr);
  label("sample");
  inst("mov32", {ddsr, 0, s0, 0}); // buf = in
  inst("movi", {4, 0});            // the first group
  if (lp.stride > 1)
    inst("mov16", {gpr, kGprInnerEnd, gpr, kGprInnerEnd0});
  label("group");
  inst("mov32", {gpr, kGprMax, s0, 1});  // m = grp[0]
  inst("fmaxr", {gpr, kGprMax, s0, 1});  // m = max(m, grp...)
  inst("fsub", {dsrK, 1, gpr, kGprMax}); // grp = grp - m
  inst("fexp", {ddsr, log ? 2 : 1, s0, 1});
  inst("mov32", {gpr, kGprSum, imm, zero});
  inst("fsum", {gpr, kGprSum, s0, log ? 2 : 1}); // s = sum(exp)
  if (log) {
    inst("flog", {gpr, kGprSum, gpr, kGprSum});
    inst("fsub", {dsrK, 1, gpr, kGprSum}); // grp = (x - m) - log(s)
  } else {
    inst("frcp", {gpr, kGprSum, gpr, kGprSum});
    inst("fmul", {dsrK, 1, gpr, kGprSum}); // grp = e * (1 / s)
  }
  if (lp.stride > 1) {
    // The next group of the block starts one element on; after the
    // block's I groups, skip its other G - 1 rows.
    inst("add16", {gpr, 4, imm, two});
    inst("cltu16", {cmp, 4, gpr, kGprInnerEnd});
    jumpIfTrue("group");
    inst("add16", {gpr, 4, gpr, kGprSkip});
    inst("add16", {gpr, kGprInnerEnd, gpr, kGprBlock});
  } else {
    inst("add16", {gpr, 4, gpr, kGprSkip});
  }
  inst("cltu16", {cmp, 4, gpr, kGprEnd});
  jumpIfTrue("group");
  inst("mov32", {ddsr, 3, s0, 3}); // out = buf
  jump("sample");
}

void Emitter::emitGroup(int64_t r0, int64_t r1, const Role &role) {
  MLIRContext *ctx = b.getContext();
  int64_t h = r1 - r0, L = role.len;
  int64_t y = k.layout.y0 + r0;
  bool reduce = isSoftmax(k.op) && k.layout.rows > 1;

  std::string sym =
      (name + "_r" + Twine(r0) + (h > 1 ? "_" + Twine(r1 - 1) : Twine())).str();
  OperationState st(loc, h > 1 ? wv::PeGroupOp::getOperationName()
                               : wv::PeOp::getOperationName());
  st.addAttribute(SymbolTable::getSymbolAttrName(), b.getStringAttr(sym));
  if (h > 1) {
    st.addAttribute("rect", fab::RectAttr::get(ctx, k.x, y, 1, h));
  } else {
    st.addAttribute("x", b.getI64IntegerAttr(k.x));
    st.addAttribute("y", b.getI64IntegerAttr(y));
  }
  st.addAttribute("layer", b.getStringAttr(layer));
  st.addRegion()->emplaceBlock();
  Operation *pe = b.create(st);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&pe->getRegion(0).front());

  // Routes (weft/Conversion/Routing.h): the chunk in from the west, the
  // result out to the east; for a column softmax the partial results go
  // north on the sender's parity color and row 0's totals are multicast
  // south on the third color.
  routesAt(routes, k.x, y);
  int64_t redOut = 0, redIn = 0, bc = 0;
  if (reduce) {
    redOut = k.internal[role.parity];
    redIn = k.internal[1 - role.parity];
    bc = k.internal[2];
  }

  if (isAxisSoftmax(k.op)) {
    emitAxisSoftmax(L);
    return;
  }
  if (!isClassic(k.op)) {
    emitSequence(L, r0, r1);
    return;
  }

  // Data: buf (and buf2) of L fp32 each.
  int64_t buf = kDataBase, buf2 = kDataBase + 2 * L;
  if (k.op == ColumnOp::Tanh) {
    // A vector of ones for 1 - 2r (Vec ops take their first source from a
    // DSR, never from an immediate).
    auto type = RankedTensorType::get({L}, b.getF32Type());
    OperationState s(loc, wv::SegmentOp::getOperationName());
    s.addAttribute(SymbolTable::getSymbolAttrName(),
                   b.getStringAttr("ones_data"));
    s.addAttribute("address", b.getI64IntegerAttr(buf2));
    s.addAttribute("value", DenseElementsAttr::get(type, 1.0f));
    b.create(s);
  }

  // DSD records.
  dsd("in", kRecIn, wv::DsdKind::fabin,
      {i64("length", L), i64("color", k.inColor)});
  dsd("out", kRecOut, wv::DsdKind::fabout,
      {i64("length", L), i64("color", k.outColor)});
  if (k.op != ColumnOp::Relu)
    dsd("buf", kRecBuf, wv::DsdKind::mem1d,
        {i64("length", L), i64("base", buf)});
  if (k.op == ColumnOp::Tanh || k.op == ColumnOp::LogSoftmax)
    dsd(k.op == ColumnOp::Tanh ? "ones" : "exps", kRecBuf2, wv::DsdKind::mem1d,
        {i64("length", L), i64("base", buf2)});
  if (reduce) {
    if (!role.last)
      dsd("red_in", kRecRedIn, wv::DsdKind::fabin,
          {i64("length", 1), i64("color", redIn)});
    if (!role.first) {
      dsd("red_out", kRecRedOut, wv::DsdKind::fabout,
          {i64("length", 1), i64("color", redOut)});
      dsd("bc_in", kRecBcIn, wv::DsdKind::fabin,
          {i64("length", 1), i64("color", bc)});
    } else {
      dsd("bc_out", kRecBcOut, wv::DsdKind::fabout,
          {i64("length", 1), i64("color", bc)});
    }
  }

  using K = wt::OperandKind;
  const int32_t gpr = int32_t(K::Gpr), imm = int32_t(K::Imm),
                dsrK = int32_t(K::Dsr), ddsr = int32_t(K::Ddsr),
                s0 = int32_t(K::S0dsr), s1 = int32_t(K::S1dsr);
  const int32_t zero = int32_t(wt::SmallImm::Zero),
                one = int32_t(wt::SmallImm::One),
                two = int32_t(wt::SmallImm::Two);

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
    inst("fmax", {dsrK, 0, imm, zero});
    break;
  case ColumnOp::Sigmoid:
    // buf = -in; buf = exp(buf); buf += 1; out = 1 / buf.
    dsrLoad(RF::ddsr, 0, "buf");
    dsrLoad(RF::s0dsr, 0, "in");
    dsrLoad(RF::ddsr, 1, "buf");
    dsrLoad(RF::s0dsr, 1, "buf");
    dsrLoad(RF::ddsr, 2, "out");
    label("sample");
    inst("fneg", {ddsr, 0, s0, 0});
    inst("fexp", {ddsr, 1, s0, 1});
    inst("fadd", {dsrK, 1, imm, one});
    inst("frcp", {ddsr, 2, s0, 1});
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
    inst("fmul", {dsrK, 0, imm, two});
    inst("fexp", {ddsr, 1, s0, 1});
    inst("fadd", {dsrK, 1, imm, one});
    inst("frcp", {ddsr, 1, s0, 1});
    inst("fadd", {dsrK, 1, s1, 1});
    inst("fsub", {dsrK, 2, s1, 1});
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
    auto allReduce = [&](StringRef combine, int32_t g) {
      if (!reduce)
        return;
      if (!role.last)
        inst(combine, {gpr, g, s1, 4});
      if (!role.first) {
        inst("mov32", {ddsr, 5, gpr, g});
        inst("mov32", {gpr, g, s0, 6});
      } else {
        inst("mov32", {ddsr, 6, gpr, g});
      }
    };
    label("sample");
    inst("mov32", {ddsr, 0, s0, 0});      // buf = in
    inst("mov32", {gpr, kGprMax, s0, 1}); // m = buf[0]
    inst("fmaxr", {gpr, kGprMax, s0, 1}); // m = max(m, buf...)
    allReduce("fmax", kGprMax);
    inst("fsub", {dsrK, 1, gpr, kGprMax}); // buf = buf - m
    inst("fexp", {ddsr, 2, s0, 1});        // e = exp(buf)
    inst("mov32", {gpr, kGprSum, imm, zero});
    inst("fsum", {gpr, kGprSum, s0, log ? 2 : 1}); // s = sum(e)
    allReduce("fadd", kGprSum);
    if (log) {
      inst("flog", {gpr, kGprSum, gpr, kGprSum});
      inst("fsub", {dsrK, 3, gpr, kGprSum}); // out = (x - m) - log(s)
    } else {
      inst("frcp", {gpr, kGprSum, gpr, kGprSum});
      inst("fmul", {dsrK, 3, gpr, kGprSum}); // out = e * (1 / s)
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
  auto program = dyn_cast_or_null<wv::ProgramOp>(
      b.getInsertionBlock() ? b.getInsertionBlock()->getParentOp() : nullptr);
  if (!program)
    return emitError(loc) << "column kernel " << name
                          << " must be emitted inside a wavelet.program";
  wt::Target target = program.getTargetAttr().getModel();
  if (k.x >= int64_t(target.width()) ||
      lay.y0 + lay.rows > int64_t(target.height()))
    return emitError(loc) << "column kernel " << name << " at column " << k.x
                          << ", rows " << lay.y0 << ".." << lay.y0 + lay.rows
                          << " does not fit the " << target.width() << "x"
                          << target.height() << " fabric";
  int64_t wantParams = columnTakesTensor(k.op) ? lay.n : columnParamCount(k.op);
  if (k.op == ColumnOp::Expression) {
    std::string why;
    if (failed(checkExpression(k.params, why)))
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
    auto add = [&](const RoutePlan &plan, int64_t color) {
      for (const auto &[pe, sw] : plan.get())
        own[pe][color] = sw;
    };
    add(columnInputs(k.x, lay.y0, lay.rows), k.inColor);
    add(columnResults(k.x, lay.y0, lay.rows), k.outColor);
    if (reduce)
      for (int j = 0; j < 3; ++j)
        if (k.internal[j] >= 0)
          add(columnReduce(k.x, lay.y0, lay.rows, j), k.internal[j]);
    routes = &own;
  }
  Emitter e(b, loc, k, name, layer, *routes);
  int64_t r0 = 0;
  for (int64_t r = 1; r <= lay.rows; ++r) {
    if (r < lay.rows && e.roleOf(r) == e.roleOf(r0))
      continue;
    e.emitGroup(r0, r, e.roleOf(r0));
    r0 = r;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Cost model
//===----------------------------------------------------------------------===//

static int64_t cyc(wt::Opcode op, int64_t n) {
  return int64_t(wt::instructionCycles(op, uint64_t(n), true));
}
static int64_t scalar(wt::Opcode op) {
  return int64_t(wt::instructionCycles(op, 1, false));
}

int64_t predictColumnKernelCycles(const ColumnKernel &k) {
  using O = wt::Opcode;
  const RowChunks &lay = k.layout;
  const int64_t jump = scalar(O::JMP);
  if (isAxisSoftmax(k.op)) {
    // Every PE loops on its own over the groups of its chunk; the longest
    // chunk sets the pace (docs/execution-model.md, "Softmax over an
    // axis").
    int64_t L = chunkSize(lay.n, lay.rows, 0);
    AxisLoop lp = axisLoop(k, L);
    const bool log = k.op == ColumnOp::AxisLogSoftmax;
    const int64_t G = lp.group;
    int64_t group = scalar(O::MOV32) + cyc(O::FMAXR, G) + cyc(O::FSUB, G) +
                    cyc(O::FEXP, G) + scalar(O::MOV32) + cyc(O::FSUM, G) +
                    (log ? scalar(O::FLOG) + cyc(O::FSUB, G)
                         : scalar(O::FRCP) + cyc(O::FMUL, G));
    int64_t next = scalar(O::ADD16) + scalar(O::CLTU16) + scalar(O::BRT);
    int64_t t = cyc(O::MOV32, L) + scalar(O::MOVI) +
                lp.groups * (group + next) + cyc(O::MOV32, L) + jump;
    if (lp.stride > 1)
      t += scalar(O::MOV16) + lp.blocks * (2 * scalar(O::ADD16) +
                                           scalar(O::CLTU16) + scalar(O::BRT));
    return t;
  }
  if (!isClassic(k.op)) {
    // The sequence, every step over the longest chunk, and the jump.
    int64_t L = chunkSize(lay.n, lay.rows, 0), t = jump;
    std::vector<Step> steps = sequenceOf(k);
    for (const Step &s : steps)
      t += cyc(s.op, L);
    // DSR loads inside the loop (only when a sequence needs more than 12).
    for (const DsrPlan::Use &u : planDsrs(steps).uses)
      t += (u.loadPair ? scalar(O::LDD) + scalar(O::LDS0) : 0) +
           (u.loadS1 ? scalar(O::LDS1) : 0);
    return t;
  }
  if (!isSoftmax(k.op)) {
    // Every PE loops on its own; the longest chunk sets the pace.
    int64_t L = chunkSize(lay.n, lay.rows, 0);
    switch (k.op) {
    case ColumnOp::Relu:
      return cyc(O::FMAX, L) + jump;
    case ColumnOp::Sigmoid:
      return cyc(O::FNEG, L) + cyc(O::FEXP, L) + cyc(O::FADD, L) +
             cyc(O::FRCP, L) + jump;
    default:
      return cyc(O::FMUL, L) + cyc(O::FEXP, L) + cyc(O::FADD, L) +
             cyc(O::FRCP, L) + cyc(O::FADD, L) + cyc(O::FSUB, L) + jump;
    }
  }
  // Softmax: the rows wait for each other twice per sample, so the model
  // replays the column's schedule (docs/execution-model.md, "Column
  // kernels") for a few samples and returns the steady-state interval.
  // Times are the cycles at which each PE's next instruction starts; a
  // wavelet sent by an instruction starting at t is in the CE queue one
  // hop north at t + 4, and r hops south of row 0 at t + 3 + r.
  const int64_t R = lay.rows;
  const bool log = k.op == ColumnOp::LogSoftmax;
  std::vector<int64_t> t(size_t(R), 0), sent(size_t(R), 0);
  const int64_t recvScalar = 1;                // fmax/fadd/mov32 gpr, fabin
  const int64_t sendScalar = cyc(O::MOV32, 1); // mov32 fabout(1), gpr
  auto allReduce = [&]() {
    if (R == 1)
      return;
    // Up the column, last row first.
    for (int64_t r = R - 1; r >= 0; --r) {
      if (r < R - 1)
        t[r] = std::max(t[r], sent[r + 1] + 4) + recvScalar;
      if (r > 0) {
        sent[r] = t[r];
        t[r] += sendScalar;
      }
    }
    // Row 0 multicasts the total down.
    int64_t bcStart = t[0];
    t[0] += sendScalar;
    for (int64_t r = 1; r < R; ++r)
      t[r] = std::max(t[r], bcStart + 3 + r) + recvScalar;
  };
  const int samples = 12;
  std::vector<int64_t> ends;
  for (int s = 0; s < samples; ++s) {
    for (int64_t r = 0; r < R; ++r) {
      int64_t L = chunkSize(lay.n, R, r);
      t[r] += cyc(O::MOV32, L) + scalar(O::MOV32) + cyc(O::FMAXR, L);
    }
    allReduce();
    for (int64_t r = 0; r < R; ++r) {
      int64_t L = chunkSize(lay.n, R, r);
      t[r] += cyc(O::FSUB, L) + cyc(O::FEXP, L) + scalar(O::MOV32) +
              cyc(O::FSUM, L);
    }
    allReduce();
    for (int64_t r = 0; r < R; ++r) {
      int64_t L = chunkSize(lay.n, R, r);
      t[r] += (log ? scalar(O::FLOG) + cyc(O::FSUB, L)
                   : scalar(O::FRCP) + cyc(O::FMUL, L)) +
              jump;
    }
    ends.push_back(t[0]);
  }
  // The schedule becomes periodic after a few samples.
  return (ends[samples - 1] - ends[samples / 2]) / (samples - 1 - samples / 2);
}

FailureOr<int64_t> checkExpression(const std::vector<float> &params,
                                   std::string &why) {
  if (params.empty() || params.size() % kExprFields) {
    why = "has a program of " + std::to_string(params.size()) +
          " floats, not a positive multiple of " + std::to_string(kExprFields);
    return failure();
  }
  for (size_t i = 0; i < params.size(); i += kExprFields)
    for (size_t j = 0; j < 3; ++j)
      if (params[i + j] != std::floor(params[i + j]) || params[i + j] < 0 ||
          params[i + j] > 1e6f) {
        why = "has a malformed node " + std::to_string(i / kExprFields + 1);
        return failure();
      }
  ExprCode code = compileExpression(params);
  if (!code.error.empty()) {
    why = code.error;
    return failure();
  }
  return int64_t(code.steps.size());
}

} // namespace weft::conversion
