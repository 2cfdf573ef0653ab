//===- MatchPoolLayer.cpp - Recognising pooling layers --------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// MaxPool, AveragePool, GlobalMaxPool and GlobalAveragePool in the forms
// lib/Import/ImportNN.cpp (importPool, importGlobalPool) gives them. The
// IR keeps the pads the windows read and the divisors, not ONNX's
// attributes: the explicit pads, ceil_mode and count_include_pad are the
// first combination that reproduces the output size, the pads read and
// every divisor.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/PoolKernel.h"

#include "weft/Transforms/ConstantData.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace weft::conversion {

/// The float constant `v` is, if it is one.
static std::optional<APFloat> floatConstant(Value v) {
  auto c = v ? v.getDefiningOp<arith::ConstantOp>() : arith::ConstantOp();
  auto f = c ? dyn_cast<FloatAttr>(c.getValue()) : FloatAttr();
  if (!f)
    return std::nullopt;
  return f.getValue();
}
static bool isZero(Value v) {
  std::optional<APFloat> f = floatConstant(v);
  return f && f->isZero() && !f->isNegative();
}
static bool isNegInf(Value v) {
  std::optional<APFloat> f = floatConstant(v);
  return f && f->isInfinity() && f->isNegative();
}

static SmallVector<int64_t> ints(DenseIntElementsAttr a, size_t n) {
  SmallVector<int64_t> v;
  if (a)
    for (APInt x : a.getValues<APInt>())
      v.push_back(x.getSExtValue());
  if (v.size() != n)
    v.assign(n, 1);
  return v;
}

/// `v` with expand_shape / collapse_shape in front of it dropped (recorded
/// in `ops`).
static Value throughReshapes(Value v, SmallVector<Operation *> &ops) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    ops.push_back(def);
    v = def->getOperand(0);
  }
  return v;
}

namespace {
/// An average's division: the sum it divides and the divisor of every
/// output pixel (one for all, or a constant per pixel).
struct Division {
  linalg::GenericOp op;
  Value sum;
  bool uniform = true;
  double divisor = 1;
  SmallVector<float> perPixel;
};
} // namespace

/// `g` as x / c (one input, c a float constant) or x / d (d a constant of
/// the output's spatial shape, indexed by the trailing loops).
static std::optional<Division> matchDivision(linalg::GenericOp g) {
  if (!g || g.getNumDpsInits() != 1 || g.getNumDpsInputs() < 1 ||
      g.getNumDpsInputs() > 2 || g.getNumReductionLoops() != 0)
    return std::nullopt;
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto div = yield.getOperand(0).getDefiningOp<arith::DivFOp>();
  if (!div || div.getLhs() != body.getArgument(0))
    return std::nullopt;
  Division d;
  d.op = g;
  d.sum = g.getDpsInputs()[0];
  if (!g.getIndexingMapsArray()[0].isIdentity())
    return std::nullopt;
  if (g.getNumDpsInputs() == 1) {
    std::optional<APFloat> c = floatConstant(div.getRhs());
    if (!c)
      return std::nullopt;
    d.divisor = c->convertToDouble();
    return d;
  }
  if (div.getRhs() != body.getArgument(1))
    return std::nullopt;
  auto cst = g.getDpsInputs()[1].getDefiningOp<arith::ConstantOp>();
  auto attr = cst ? dyn_cast<ElementsAttr>(cst.getValue()) : ElementsAttr();
  if (!attr)
    return std::nullopt;
  // The divisor is indexed by the trailing (spatial) loops.
  AffineMap map = g.getIndexingMapsArray()[1];
  unsigned rank = g.getNumLoops();
  for (unsigned i = 0; i < map.getNumResults(); ++i)
    if (map.getResult(i) !=
        getAffineDimExpr(rank - map.getNumResults() + i, g.getContext()))
      return std::nullopt;
  std::string why;
  FailureOr<SmallVector<float>> v = readF32(attr, why);
  if (failed(v))
    return std::nullopt;
  d.uniform = false;
  d.perPixel = std::move(*v);
  return d;
}

/// Whether `g` reduces every spatial dimension of its [N, C, spatial...]
/// input into [N, C] with `maximumf` (max) or `addf`.
static bool isGlobalReduction(linalg::GenericOp g, bool &max) {
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1)
    return false;
  auto in = dyn_cast<RankedTensorType>(g.getDpsInputs()[0].getType());
  if (!in || (in.getRank() != 3 && in.getRank() != 4))
    return false;
  SmallVector<utils::IteratorType> iters = g.getIteratorTypesArray();
  for (auto [i, t] : llvm::enumerate(iters))
    if ((t == utils::IteratorType::reduction) != (i >= 2))
      return false;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  MLIRContext *ctx = g.getContext();
  if (!maps[0].isIdentity() ||
      maps[1] != AffineMap::get(in.getRank(), 0,
                                {getAffineDimExpr(0, ctx),
                                 getAffineDimExpr(1, ctx)},
                                ctx))
    return false;
  Block &body = g.getRegion().front();
  Operation *op = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!op || op->getBlock() != &body || op->getNumOperands() != 2 ||
      !llvm::is_contained(op->getOperands(), body.getArgument(0)) ||
      !llvm::is_contained(op->getOperands(), body.getArgument(1)))
    return false;
  if (isa<arith::MaximumFOp>(op))
    max = true;
  else if (isa<arith::AddFOp>(op))
    max = false;
  else
    return false;
  return true;
}

/// The accumulator of `init`: a fill of -inf (max) or 0 (sum), recorded.
static bool filledWith(Value init, bool max, SmallVector<Operation *> &ops) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill || !(max ? isNegInf(fill.getInputs()[0])
                     : isZero(fill.getInputs()[0])))
    return false;
  ops.push_back(fill);
  return true;
}

static FailureOr<PoolLayer> matchGlobal(linalg::GenericOp g,
                                        std::optional<Division> division,
                                        SmallVector<Operation *> ops,
                                        std::string &why) {
  bool max = false;
  isGlobalReduction(g, max);
  PoolLayer layer;
  auto in = cast<RankedTensorType>(g.getDpsInputs()[0].getType());
  if (!in.hasStaticShape() || !in.getElementType().isF32()) {
    why = "its tensors are not static f32";
    return failure();
  }
  if (!filledWith(g.getDpsInits()[0], max, ops)) {
    why = max ? "its maximum does not start from -inf"
              : "its sum does not start from 0";
    return failure();
  }
  PoolShape &s = layer.shape;
  s.max = max;
  s.c = in.getDimSize(1);
  s.hin = in.getRank() == 4 ? in.getDimSize(2) : 1;
  s.win = in.getShape().back();
  s.kh = s.hin;
  s.kw = s.win;
  if (!max) {
    if (!division || !division->uniform ||
        division->divisor != double(s.hin * s.win)) {
      why = "a sum over the feature map is a pooling only when divided by "
            "its " +
            std::to_string(s.hin * s.win) + " pixels (GlobalAveragePool)";
      return failure();
    }
  } else if (division) {
    why = "a maximum over the feature map is divided";
    return failure();
  }
  ops.insert(ops.begin(), g);
  layer.batch = in.getDimSize(0);
  layer.input = g.getDpsInputs()[0];
  layer.namer = g;
  layer.ops = std::move(ops);
  return layer;
}

FailureOr<PoolLayer> matchPoolLayer(Value result, std::string &why) {
  why.clear();
  SmallVector<Operation *> ops;
  Value v = result;
  std::optional<Division> division =
      matchDivision(v.getDefiningOp<linalg::GenericOp>());
  if (division) {
    ops.push_back(division->op);
    v = throughReshapes(division->sum, ops);
  }
  bool globalMax = false;
  if (auto g = v.getDefiningOp<linalg::GenericOp>();
      g && isGlobalReduction(g, globalMax)) {
    if (division && globalMax) {
      why = "a maximum over the feature map is divided";
      return failure();
    }
    FailureOr<PoolLayer> layer = matchGlobal(g, division, ops, why);
    if (succeeded(layer))
      layer->result = result;
    return layer;
  }
  Operation *pool = v.getDefiningOp();
  bool is1d = isa_and_nonnull<linalg::PoolingNcwMaxOp, linalg::PoolingNcwSumOp>(
      pool);
  bool max = isa_and_nonnull<linalg::PoolingNchwMaxOp, linalg::PoolingNcwMaxOp>(
      pool);
  if (!isa_and_nonnull<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp,
                       linalg::PoolingNcwMaxOp, linalg::PoolingNcwSumOp>(
          pool)) {
    if (isa_and_nonnull<linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp,
                        linalg::PoolingNwcMaxOp, linalg::PoolingNwcSumOp>(
            pool))
      why = "only NCHW and NCW pools run on the fabric";
    return failure();
  }
  if (max && division) {
    why = "a max pool is divided";
    return failure();
  }
  if (!max && !division) {
    why = "a sum pool without its division is no AveragePool";
    return failure();
  }
  auto named = cast<linalg::LinalgOp>(pool);
  Value in = named.getDpsInputs()[0], window = named.getDpsInputs()[1],
        init = named.getDpsInits()[0];
  auto inType = cast<RankedTensorType>(in.getType());
  auto wType = cast<RankedTensorType>(window.getType());
  auto outType = cast<RankedTensorType>(init.getType());
  if (!inType.hasStaticShape() || !wType.hasStaticShape() ||
      !outType.hasStaticShape() || !inType.getElementType().isF32()) {
    why = "its tensors are not static f32";
    return failure();
  }
  SmallVector<Operation *> front;
  if (!filledWith(init, max, front)) {
    why = max ? "its accumulator is not filled with -inf"
              : "its accumulator is not filled with 0";
    return failure();
  }
  SmallVector<int64_t> strides, dilations;
  if (is1d) {
    strides = ints(pool->getAttrOfType<DenseIntElementsAttr>("strides"), 1);
    dilations =
        ints(pool->getAttrOfType<DenseIntElementsAttr>("dilations"), 1);
  } else {
    strides = ints(pool->getAttrOfType<DenseIntElementsAttr>("strides"), 2);
    dilations =
        ints(pool->getAttrOfType<DenseIntElementsAttr>("dilations"), 2);
  }
  // The pads the windows read: -inf (max) or 0 (sum), spatial only.
  int64_t pt = 0, pl = 0, pbT = 0, prT = 0;
  if (auto pad = in.getDefiningOp<tensor::PadOp>()) {
    Value padValue = pad.getConstantPaddingValue();
    SmallVector<int64_t> low(pad.getStaticLow()), high(pad.getStaticHigh());
    bool valueOk = padValue && (max ? isNegInf(padValue) : isZero(padValue));
    if (!valueOk) {
      why = max ? "its input pad is not -inf (a max pool reads -inf pads)"
                : "its input pad is not 0 (an average pool reads 0 pads)";
      return failure();
    }
    if (llvm::any_of(low, ShapedType::isDynamic) ||
        llvm::any_of(high, ShapedType::isDynamic) || low[0] || high[0] ||
        low[1] || high[1]) {
      why = "its input pad is not a static pad of the spatial dimensions";
      return failure();
    }
    if (is1d) {
      pl = low[2];
      prT = high[2];
    } else {
      pt = low[2], pl = low[3], pbT = high[2], prT = high[3];
    }
    front.insert(front.begin(), pad);
    in = pad.getSource();
    inType = cast<RankedTensorType>(in.getType());
  }
  ArrayRef<int64_t> x = inType.getShape(), y = outType.getShape();
  PoolShape base;
  base.max = max;
  base.c = x[1];
  base.hin = is1d ? 1 : x[2];
  base.win = x.back();
  base.kh = is1d ? 1 : wType.getDimSize(0);
  base.kw = wType.getShape().back();
  base.sh = is1d ? 1 : strides[0];
  base.sw = strides.back();
  base.dh = is1d ? 1 : dilations[0];
  base.dw = dilations.back();
  base.pt = pt;
  base.pl = pl;
  int64_t oh = is1d ? 1 : y[2], ow = y.back();
  if (!division || division->uniform) {
    // (Nothing to recover for a max pool; a uniform divisor is checked
    // below.)
  } else if (int64_t(division->perPixel.size()) != oh * ow) {
    why = "its divisors are not one per output pixel";
    return failure();
  }
  // ONNX's attributes: the first combination that reproduces the output,
  // the pads read and the divisors.
  std::optional<PoolShape> found;
  for (int ceil = 0; ceil < 2 && !found; ++ceil)
    for (int include = 0; include < (max ? 1 : 2) && !found; ++include)
      for (int64_t pb = pbT; pb >= 0 && !found; --pb)
        for (int64_t pr = prT; pr >= 0 && !found; --pr) {
          PoolShape s = base;
          s.ceil = ceil;
          s.includePad = include;
          s.pb = pb;
          s.pr = pr;
          if (!s.check().empty() || s.hout() != oh || s.wout() != ow ||
              s.padBottom() != pbT || s.padRight() != prT)
            continue;
          bool ok = true;
          for (int64_t i = 0; i < oh && ok && !max; ++i)
            for (int64_t j = 0; j < ow && ok; ++j) {
              double d = double(s.rowCount(i) * s.colCount(j));
              double want = division->uniform
                                ? division->divisor
                                : double(division->perPixel[size_t(i * ow + j)]);
              ok = d == want;
            }
          if (ok)
            found = s;
        }
  if (!found) {
    std::string bad = base.check();
    why = bad.empty() ? "its output size, pads and divisors match no ONNX "
                        "pooling (kernel, strides, pads, ceil_mode, "
                        "count_include_pad)"
                      : "not a pooling the fabric runs: " + bad;
    return failure();
  }
  PoolLayer layer;
  layer.shape = *found;
  layer.batch = x[0];
  layer.input = in;
  layer.result = result;
  layer.namer = pool;
  layer.ops = std::move(front);
  layer.ops.push_back(pool);
  layer.ops.append(ops.begin(), ops.end());
  return layer;
}

} // namespace weft::conversion
