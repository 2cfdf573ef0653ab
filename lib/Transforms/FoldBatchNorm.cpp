//===- FoldBatchNorm.cpp - Fold BN into convolutions and matmuls ----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Transforms/ConstantData.h"
#include "weft/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/DebugLog.h"

#include <cmath>

#define DEBUG_TYPE "weft-fold-batchnorm"

namespace weft {
#define GEN_PASS_DEF_FOLDBATCHNORM
#include "weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace {

/// What a producer looks like after matching: its constant weight, the
/// weight dimension that runs over output channels, and its accumulator.
struct Producer {
  linalg::LinalgOp op;
  arith::ConstantOp weight;
  int64_t weightChannelDim;
  /// The accumulator's bias constant (null for zeros) and its destination.
  arith::ConstantOp bias;
  Value accInit;
};

static arith::ConstantOp constantOf(Value v) {
  auto c = v.getDefiningOp<arith::ConstantOp>();
  return c && isa<ElementsAttr>(c.getValue()) ? c : nullptr;
}

/// Matches the producer of a BN input, or returns std::nullopt when the
/// shape of the IR does not allow a fold (which is not an error).
static std::optional<Producer> matchProducer(Value x) {
  Operation *def = x.getDefiningOp();
  if (!def || !x.hasOneUse())
    return std::nullopt;
  Producer p;
  if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(def)) {
    p.op = conv;
    p.weightChannelDim = 0;
  } else if (auto dw = dyn_cast<linalg::DepthwiseConv2DNchwChwOp>(def)) {
    p.op = dw;
    p.weightChannelDim = 0;
  } else if (auto mm = dyn_cast<linalg::MatmulOp>(def)) {
    p.op = mm;
    // The output column (d1) runs over channels; find it in B's map.
    AffineMap bMap = mm.getIndexingMapsArray()[1];
    std::optional<unsigned> pos =
        bMap.getResultPosition(getAffineDimExpr(1, def->getContext()));
    if (!pos)
      return std::nullopt;
    p.weightChannelDim = *pos;
  } else {
    return std::nullopt;
  }
  p.weight = constantOf(p.op.getDpsInputs()[1]);
  if (!p.weight)
    return std::nullopt;
  Value init = p.op.getDpsInits()[0];
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    auto zero = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
    auto f = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
    if (!f || !f.getValue().isZero() || !init.hasOneUse())
      return std::nullopt;
    p.accInit = fill.getOutputs()[0];
  } else if (auto bc = init.getDefiningOp<linalg::BroadcastOp>()) {
    // Only a [C] vector broadcast along every dimension but the channel.
    ArrayRef<int64_t> dims = bc.getDimensions();
    if (cast<ShapedType>(bc.getInput().getType()).getRank() != 1 ||
        llvm::is_contained(dims, 1) || !init.hasOneUse())
      return std::nullopt;
    p.bias = constantOf(bc.getInput());
    if (!p.bias)
      return std::nullopt;
    p.accInit = bc.getInit();
  } else {
    return std::nullopt;
  }
  return p;
}

struct FoldBatchNorm : weft::impl::FoldBatchNormBase<FoldBatchNorm> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> bns;
    getOperation().walk([&](linalg::GenericOp g) {
      if (g->hasAttr("weft.batchnorm_epsilon"))
        bns.push_back(g);
    });
    for (linalg::GenericOp bn : bns)
      if (failed(fold(bn)))
        return signalPassFailure();
  }

  /// Folds one BN if its producer allows; fails (after saying why) only when
  /// a matching pattern's constants cannot be read.
  LogicalResult fold(linalg::GenericOp bn) {
    auto eps = dyn_cast<FloatAttr>(bn->getAttr("weft.batchnorm_epsilon"));
    if (!eps || bn.getNumDpsInputs() != 5 || bn->getNumResults() != 1)
      return bn.emitOpError("is tagged weft.batchnorm_epsilon but is not a "
                            "(x, scale, bias, mean, var) normalization with "
                            "a float epsilon");
    std::optional<Producer> p = matchProducer(bn.getDpsInputs()[0]);
    if (!p) {
      LDBG() << "no foldable producer for " << bn;
      return success();
    }
    // getDpsInputs() returns a SmallVector by value: keep it alive while
    // drop_begin's iterators walk it.
    SmallVector<Value> inputs = bn.getDpsInputs();
    SmallVector<arith::ConstantOp> params;
    for (Value v : llvm::drop_begin(inputs)) {
      params.push_back(constantOf(v));
      if (!params.back())
        return success(); // Run-time statistics: nothing to fold.
    }
    std::string why;
    auto read = [&](arith::ConstantOp c) {
      return weft::readF32(cast<ElementsAttr>(c.getValue()), why);
    };
    FailureOr<SmallVector<float>> scale = read(params[0]),
                                  beta = read(params[1]),
                                  mean = read(params[2]),
                                  var = read(params[3]),
                                  weight = read(p->weight);
    FailureOr<SmallVector<float>> bias =
        p->bias ? read(p->bias) : FailureOr<SmallVector<float>>();
    if (failed(scale) || failed(beta) || failed(mean) || failed(var) ||
        failed(weight) || (p->bias && failed(bias)))
      return bn.emitError("cannot fold batch normalization into ")
             << p->op->getName() << ": " << why;
    int64_t c = scale->size();
    auto wType = cast<RankedTensorType>(p->weight.getType());
    if (wType.getDimSize(p->weightChannelDim) != c ||
        beta->size() != size_t(c) || mean->size() != size_t(c) ||
        var->size() != size_t(c) || (p->bias && bias->size() != size_t(c)))
      return bn.emitError("batch normalization over ")
             << c << " channels does not match the weight shape " << wType;

    SmallVector<float> s(c), newBias(c);
    for (int64_t i = 0; i < c; ++i) {
      double si = double((*scale)[i]) /
                  std::sqrt(double((*var)[i]) + eps.getValueAsDouble());
      s[i] = float(si);
      double b0 = p->bias ? double((*bias)[i]) : 0.0;
      newBias[i] = float((b0 - double((*mean)[i])) * si + double((*beta)[i]));
    }
    // Scale the weight along its channel dimension.
    ArrayRef<int64_t> ws = wType.getShape();
    int64_t inner = 1;
    for (int64_t d = p->weightChannelDim + 1; d < wType.getRank(); ++d)
      inner *= ws[d];
    SmallVector<float> w = *weight;
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = float(double(w[i]) * double(s[(i / inner) % c]));

    OpBuilder b(p->op);
    Location loc = bn.getLoc();
    auto newW = arith::ConstantOp::create(
        b, p->weight.getLoc(), wType,
        cast<TypedAttr>(weft::makeF32(wType, w, "bn_folded_weight")));
    auto biasType = RankedTensorType::get({c}, b.getF32Type());
    auto newB = arith::ConstantOp::create(
        b, loc, biasType,
        cast<TypedAttr>(weft::makeF32(biasType, newBias, "bn_folded_bias")));
    auto outType = cast<RankedTensorType>(p->accInit.getType());
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < outType.getRank(); ++d)
      if (d != 1)
        dims.push_back(d);
    Value acc =
        linalg::BroadcastOp::create(b, loc, newB, p->accInit, dims).getResult()[0];
    Operation *oldInit = p->op.getDpsInits()[0].getDefiningOp();
    p->op->setOperand(1, newW);
    p->op.getDpsInitsMutable()[0].set(acc);
    bn->getResult(0).replaceAllUsesWith(p->op->getResult(0));
    p->op->setLoc(FusedLoc::get(b.getContext(), {p->op->getLoc(), loc}));
    bn.erase();
    if (oldInit && oldInit->use_empty())
      oldInit->erase();
    for (arith::ConstantOp old : params)
      if (old->use_empty())
        old.erase();
    if (p->weight->use_empty())
      p->weight.erase();
    if (p->bias && p->bias->use_empty())
      p->bias.erase();
    ++numFolded;
    return success();
  }
};

} // namespace
