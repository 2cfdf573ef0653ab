//===- MatchConvLayer.cpp - Recognising convolution layers ----------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A convolution layer in the importer's form: an optional ReLU (or ReLU6,
// a Clip from 0) over a
// linalg.conv_2d_nchw_fchw (or conv_1d_ncw_fcw) with constant weights,
// whose accumulator is zeros or the bias broadcast over the batch and the
// pixels, reading the input or a zero tensor.pad of its spatial dimensions
// (the ONNX Conv's pads). Grouped convolutions (lib/Import/ImportNN.cpp):
// a depthwise one as linalg.depthwise_conv_2d_nchw_chw, any other as
// linalg.conv_2d_ngchw_gfchw between the reshapes of the input to
// [N, G, C/G, H, W] and of the result back to [N, M, H, W].
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/DenseLayer.h"

#include "weft/Transforms/ConstantData.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

using namespace mlir;

namespace weft::conversion {

static FailureOr<SmallVector<float>> constantOf(Value v, std::string &why) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  auto attr = cst ? dyn_cast<ElementsAttr>(cst.getValue()) : ElementsAttr();
  if (!attr) {
    why = "its weights are not a constant tensor";
    return failure();
  }
  return readF32(attr, why);
}

static bool isZero(Value v) {
  auto c = v.getDefiningOp<arith::ConstantOp>();
  auto f = c ? dyn_cast<FloatAttr>(c.getValue()) : FloatAttr();
  return f && f.getValue().isZero() && !f.getValue().isNegative();
}

bool isRelu(Operation *op) {
  auto g = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1)
    return false;
  for (utils::IteratorType t : g.getIteratorTypesArray())
    if (t != utils::IteratorType::parallel)
      return false;
  Block &b = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(b.getTerminator());
  auto max = yield.getOperand(0).getDefiningOp<arith::MaximumFOp>();
  if (!max || max->getBlock() != &b)
    return false;
  Value x = b.getArgument(0);
  return (max.getLhs() == x && isZero(max.getRhs())) ||
         (max.getRhs() == x && isZero(max.getLhs()));
}

/// The value of `v` in `g`'s body when it is a constant: an f32
/// arith.constant, or the block argument of a splat f32 constant input (the
/// importer passes Clip's bounds as 0-d tensors).
static std::optional<float> scalarOf(linalg::GenericOp g, Value v) {
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if (auto f = dyn_cast<FloatAttr>(c.getValue()); f && f.getType().isF32())
      return float(f.getValueAsDouble());
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &g.getRegion().front() ||
      arg.getArgNumber() >= g.getNumDpsInputs())
    return std::nullopt;
  auto c =
      g.getDpsInputs()[arg.getArgNumber()].getDefiningOp<arith::ConstantOp>();
  auto e = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : DenseElementsAttr();
  if (!e || !e.isSplat() || !e.getElementType().isF32())
    return std::nullopt;
  return e.getSplatValue<float>();
}

/// Whether `g` is min(max(x, 0), hi) (or max(min(x, hi), 0)) of its first
/// input x with a constant hi > 0: ReLU6, ONNX's Clip from 0 in the
/// importer's form. Sets `hi`.
static bool isClippedRelu(linalg::GenericOp g, float &hi) {
  if (g.getNumDpsInputs() < 1 || g.getNumDpsInits() != 1)
    return false;
  for (utils::IteratorType t : g.getIteratorTypesArray())
    if (t != utils::IteratorType::parallel)
      return false;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!maps.front().isIdentity() || !maps.back().isIdentity())
    return false;
  Block &b = g.getRegion().front();
  Value x = b.getArgument(0);
  // `op` of x and a constant: that constant.
  auto bound = [&](Operation *op, Value from) -> std::optional<float> {
    if (!op || op->getBlock() != &b || op->getNumOperands() != 2)
      return std::nullopt;
    Value l = op->getOperand(0), r = op->getOperand(1);
    if (l == from)
      return scalarOf(g, r);
    if (r == from)
      return scalarOf(g, l);
    return std::nullopt;
  };
  Operation *last = b.getTerminator()->getOperand(0).getDefiningOp();
  std::optional<float> lo, top;
  if (isa_and_nonnull<arith::MinimumFOp>(last)) {
    for (Value v : last->getOperands())
      if (auto max = v.getDefiningOp<arith::MaximumFOp>();
          max && (lo = bound(max, x)) && (top = bound(last, v)))
        break;
  } else if (isa_and_nonnull<arith::MaximumFOp>(last)) {
    for (Value v : last->getOperands())
      if (auto min = v.getDefiningOp<arith::MinimumFOp>();
          min && (top = bound(min, x)) && (lo = bound(last, v)))
        break;
  }
  if (!lo || !top || *lo != 0.0f || std::signbit(*lo) || !(*top > 0.0f) ||
      std::isinf(*top))
    return false;
  hi = *top;
  return true;
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

FailureOr<DenseLayer> matchConvLayer(Value result, std::string &why) {
  DenseLayer layer;
  layer.result = result;
  ConvShape s;
  Value v = result;
  SmallVector<Operation *> ops;
  float hi = 0;
  if (auto g = v.getDefiningOp<linalg::GenericOp>(); g && isRelu(g)) {
    s.relu = true;
    ops.push_back(g);
    v = g.getDpsInputs()[0];
  } else if (g && isClippedRelu(g, hi)) {
    s.relu = true;
    s.reluMax = hi;
    ops.push_back(g);
    v = g.getDpsInputs()[0];
  }
  // A grouped convolution's [N, G, M/G, H, W] result, reshaped back to
  // [N, M, H, W].
  if (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
      collapse &&
      collapse.getSrc().getDefiningOp<linalg::Conv2DNgchwGfchwOp>()) {
    ops.push_back(collapse);
    v = collapse.getSrc();
  }
  Operation *conv = v.getDefiningOp();
  bool is1d = isa_and_nonnull<linalg::Conv1DNcwFcwOp>(conv);
  bool depthwise = isa_and_nonnull<linalg::DepthwiseConv2DNchwChwOp>(conv);
  bool grouped = isa_and_nonnull<linalg::Conv2DNgchwGfchwOp>(conv);
  if (!isa_and_nonnull<linalg::Conv2DNchwFchwOp, linalg::Conv1DNcwFcwOp,
                       linalg::DepthwiseConv2DNchwChwOp,
                       linalg::Conv2DNgchwGfchwOp>(conv)) {
    if (isa_and_nonnull<linalg::Conv2DNgchwFgchwOp>(conv))
      why = "grouped convolutions with the filter's groups second "
            "(conv_2d_ngchw_fgchw) are not supported on the fabric yet";
    else
      why = "not a convolution";
    return failure();
  }
  auto named = cast<linalg::LinalgOp>(conv);
  ops.insert(ops.begin(), conv);
  Value in = named.getDpsInputs()[0], filter = named.getDpsInputs()[1],
        init = named.getDpsInits()[0];
  auto fType = cast<RankedTensorType>(filter.getType());
  auto outType = cast<RankedTensorType>(init.getType());
  // A grouped convolution reads its (padded) input reshaped to
  // [N, G, C/G, H, W] (an expand_shape keeps the row-major order, whatever
  // dimension it groups a unit C/G with).
  if (grouped) {
    auto expand = in.getDefiningOp<tensor::ExpandShapeOp>();
    auto from = expand ? cast<RankedTensorType>(expand.getSrc().getType())
                       : RankedTensorType();
    ArrayRef<int64_t> to = cast<RankedTensorType>(in.getType()).getShape();
    if (!from || from.getRank() != 4 || !from.hasStaticShape() ||
        from.getDimSize(0) != to[0] || from.getDimSize(1) != to[1] * to[2] ||
        from.getDimSize(2) != to[3] || from.getDimSize(3) != to[4]) {
      why = "its input is not a feature map [N, C, H, W] reshaped to "
            "[N, G, C/G, H, W]";
      return failure();
    }
    ops.insert(ops.begin(), expand);
    in = expand.getSrc();
  }
  auto inType = cast<RankedTensorType>(in.getType());
  if (!inType.hasStaticShape() || !fType.hasStaticShape() ||
      !outType.hasStaticShape() || !inType.getElementType().isF32()) {
    why = "its tensors are not static f32";
    return failure();
  }
  // Strides and dilations.
  SmallVector<int64_t> strides, dilations;
  if (is1d) {
    auto c = cast<linalg::Conv1DNcwFcwOp>(conv);
    strides = ints(c.getStrides(), 1);
    dilations = ints(c.getDilations(), 1);
  } else if (depthwise) {
    auto c = cast<linalg::DepthwiseConv2DNchwChwOp>(conv);
    strides = ints(c.getStrides(), 2);
    dilations = ints(c.getDilations(), 2);
  } else if (grouped) {
    auto c = cast<linalg::Conv2DNgchwGfchwOp>(conv);
    strides = ints(c.getStrides(), 2);
    dilations = ints(c.getDilations(), 2);
  } else {
    auto c = cast<linalg::Conv2DNchwFchwOp>(conv);
    strides = ints(c.getStrides(), 2);
    dilations = ints(c.getDilations(), 2);
  }
  // Pads: a zero tensor.pad of the spatial dimensions only.
  if (auto pad = in.getDefiningOp<tensor::PadOp>()) {
    Value padValue = pad.getConstantPaddingValue();
    SmallVector<int64_t> low(pad.getStaticLow()), high(pad.getStaticHigh());
    bool ok = padValue && isZero(padValue) &&
              llvm::none_of(low, ShapedType::isDynamic) &&
              llvm::none_of(high, ShapedType::isDynamic) && low[0] == 0 &&
              high[0] == 0 && low[1] == 0 && high[1] == 0;
    if (!ok) {
      why = "its input pad is not a static zero pad of the spatial "
            "dimensions";
      return failure();
    }
    if (is1d) {
      s.pl = low[2];
      s.pr = high[2];
    } else {
      s.pt = low[2];
      s.pl = low[3];
      s.pb = high[2];
      s.pr = high[3];
    }
    ops.insert(ops.begin(), pad);
    in = pad.getSource();
    inType = cast<RankedTensorType>(in.getType());
  }
  ArrayRef<int64_t> x = inType.getShape(), f = fType.getShape();
  s.cin = x[1];
  s.hin = is1d ? 1 : x[2];
  s.win = x.back();
  s.kw = f.back();
  s.kh = is1d ? 1 : f[f.size() - 2];
  int64_t filterIn = f[1];
  if (depthwise) {
    // Filter [C, kh, kw]: one output channel per input channel.
    s.groups = s.cout = filterIn = f[0];
  } else if (grouped) {
    // Filter [G, M/G, C/G, kh, kw].
    s.groups = f[0];
    s.cout = f[0] * f[1];
    filterIn = f[0] * f[2];
  } else {
    s.cout = f[0];
  }
  if (filterIn != s.cin) {
    why = "its filter's input channels differ from its input's";
    return failure();
  }
  s.sh = is1d ? 1 : strides[0];
  s.sw = strides.back();
  s.dh = is1d ? 1 : dilations[0];
  s.dw = dilations.back();
  std::string bad = s.check();
  if (!bad.empty()) {
    why = "not a convolution the fabric runs: " + bad;
    return failure();
  }
  ArrayRef<int64_t> y = outType.getShape();
  int64_t yChannels = grouped ? y[1] * y[2] : y[1];
  if (yChannels != s.cout || (!is1d && y[y.size() - 2] != s.hout()) ||
      y.back() != s.wout()) {
    why = "its result shape does not follow from its input and window";
    return failure();
  }
  // Weights (OIHW with I = C/G; a 1-D filter is OIW = OI1W; a depthwise
  // filter [C, kh, kw] and a grouped one [G, M/G, C/G, kh, kw] are OIHW in
  // that order).
  FailureOr<SmallVector<float>> w = constantOf(filter, why);
  if (failed(w))
    return failure();
  layer.weights.assign(w->begin(), w->end());
  // (A grouped or depthwise filter is reshaped first: its constant is no
  // initializer then, and such convolutions are not trained.)
  if (!s.grouped())
    layer.weightsSource = initializerName(filter);
  // The accumulator: zeros, or the bias broadcast.
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    if (!isZero(fill.getInputs()[0])) {
      why = "its accumulator is filled with a value other than 0";
      return failure();
    }
    ops.push_back(fill);
  } else {
    std::string ignored;
    FailureOr<SmallVector<float>> b = constantOf(init, ignored);
    if (failed(b)) {
      why = "its accumulator is neither zeros nor a constant bias";
      return failure();
    }
    int64_t n = y[0], pixels = int64_t(b->size()) / (n * s.cout);
    layer.bias.assign(size_t(s.cout), 0.0f);
    for (int64_t o = 0; o < s.cout; ++o)
      layer.bias[size_t(o)] = (*b)[size_t(o * pixels)];
    for (int64_t i = 0; i < int64_t(b->size()); ++i)
      if ((*b)[size_t(i)] != layer.bias[size_t((i / pixels) % s.cout)]) {
        why = "its accumulator is not one bias per output channel";
        return failure();
      }
    s.bias = true;
    // The bias is broadcast over the pixels, usually folded into one
    // constant: its source is the initializer that constant was made from.
    Value bv = init;
    if (auto bc = init.getDefiningOp<linalg::BroadcastOp>())
      bv = bc.getInput();
    layer.biasSource = initializerName(bv);
  }
  layer.batch = x[0];
  layer.K = s.inElements();
  layer.M = s.outElements();
  layer.relu = s.relu;
  layer.conv = s;
  layer.input = in;
  layer.ops = std::move(ops);
  return layer;
}

} // namespace weft::conversion
