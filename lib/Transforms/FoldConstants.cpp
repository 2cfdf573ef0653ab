//===- FoldConstants.cpp - Evaluate tensor ops on constants ---------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Transforms/ConstantData.h"
#include "weft/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>

#define DEBUG_TYPE "weft-fold-constants"

namespace weft {
#define GEN_PASS_DEF_FOLDCONSTANTS
#include "weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace {

static ElementsAttr constantAttr(Value v) {
  auto c = v.getDefiningOp<arith::ConstantOp>();
  return c ? dyn_cast<ElementsAttr>(c.getValue()) : ElementsAttr();
}

/// Row-major strides.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// Evaluates one scalar op of a generic's body; std::nullopt if unknown.
static std::optional<float> evalScalar(Operation &op,
                                       const DenseMap<Value, float> &env) {
  auto arg = [&](unsigned i) { return env.lookup(op.getOperand(i)); };
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    auto f = dyn_cast<FloatAttr>(c.getValue());
    if (!f || !f.getType().isF32())
      return std::nullopt;
    return float(f.getValueAsDouble());
  }
  if (isa<arith::AddFOp>(op))
    return arg(0) + arg(1);
  if (isa<arith::SubFOp>(op))
    return arg(0) - arg(1);
  if (isa<arith::MulFOp>(op))
    return arg(0) * arg(1);
  if (isa<arith::DivFOp>(op))
    return arg(0) / arg(1);
  if (isa<arith::NegFOp>(op))
    return -arg(0);
  if (isa<arith::MaximumFOp>(op))
    return std::isnan(arg(0)) || std::isnan(arg(1)) ? NAN
                                                    : std::max(arg(0), arg(1));
  if (isa<arith::MinimumFOp>(op))
    return std::isnan(arg(0)) || std::isnan(arg(1)) ? NAN
                                                    : std::min(arg(0), arg(1));
  if (isa<math::SqrtOp>(op))
    return std::sqrt(arg(0));
  if (isa<math::ExpOp>(op))
    return std::exp(arg(0));
  if (isa<math::TanhOp>(op))
    return std::tanh(arg(0));
  if (isa<math::AbsFOp>(op))
    return std::fabs(arg(0));
  return std::nullopt;
}

struct FoldConstants : weft::impl::FoldConstantsBase<FoldConstants> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) { ops.push_back(op); });
    // Program order: a folded op can make its users foldable.
    for (Operation *op : ops) {
      std::optional<ElementsAttr> r = fold(op);
      if (!r)
        continue;
      OpBuilder b(op);
      // A broadcast repeats one constant's values: the result keeps that
      // constant's location, which names the initializer it is (weftc train
      // writes a trained bias back into it; docs/training.md).
      Location loc = op->getLoc();
      if (auto bc = dyn_cast<linalg::BroadcastOp>(op))
        if (auto src = bc.getInput().getDefiningOp<arith::ConstantOp>())
          loc = src.getLoc();
      auto c = arith::ConstantOp::create(b, loc,
                                         op->getResult(0).getType(),
                                         cast<TypedAttr>(*r));
      op->getResult(0).replaceAllUsesWith(c);
      SmallVector<Value> operands(op->getOperands());
      op->erase();
      for (Value v : operands)
        if (Operation *d = v.getDefiningOp())
          if (d->use_empty() && isa<arith::ConstantOp, tensor::EmptyOp>(d))
            d->erase();
      ++numFolded;
    }
  }

  std::optional<ElementsAttr> fold(Operation *op) {
    if (op->getNumResults() != 1)
      return std::nullopt;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() > maxElements)
      return std::nullopt;
    std::string why;
    // Reshapes reinterpret the same bytes: no copy for blobs.
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op)) {
      ElementsAttr in = constantAttr(op->getOperand(0));
      if (!in)
        return std::nullopt;
      if (auto dense = dyn_cast<DenseElementsAttr>(in))
        return ElementsAttr(dense.reshape(type));
      if (auto res = dyn_cast<DenseResourceElementsAttr>(in))
        return ElementsAttr(
            DenseResourceElementsAttr::get(type, res.getRawHandle()));
      return std::nullopt;
    }
    if (auto t = dyn_cast<linalg::TransposeOp>(op)) {
      ElementsAttr in = constantAttr(t.getInput());
      if (!in)
        return std::nullopt;
      FailureOr<SmallVector<float>> v = weft::readF32(in, why);
      if (failed(v))
        return std::nullopt;
      auto inShape = cast<ShapedType>(in.getType()).getShape();
      SmallVector<int64_t> is = stridesOf(inShape);
      ArrayRef<int64_t> perm = t.getPermutation();
      return gather(type, [&](ArrayRef<int64_t> idx) {
        int64_t lin = 0;
        for (size_t d = 0; d < idx.size(); ++d)
          lin += idx[d] * is[perm[d]];
        return (*v)[lin];
      });
    }
    if (auto bc = dyn_cast<linalg::BroadcastOp>(op)) {
      ElementsAttr in = constantAttr(bc.getInput());
      if (!in)
        return std::nullopt;
      FailureOr<SmallVector<float>> v = weft::readF32(in, why);
      if (failed(v))
        return std::nullopt;
      SmallVector<int64_t> kept;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (!llvm::is_contained(bc.getDimensions(), d))
          kept.push_back(d);
      SmallVector<int64_t> is =
          stridesOf(cast<ShapedType>(in.getType()).getShape());
      return gather(type, [&](ArrayRef<int64_t> idx) {
        int64_t lin = 0;
        for (size_t k = 0; k < kept.size(); ++k)
          lin += idx[kept[k]] * is[k];
        return (*v)[lin];
      });
    }
    if (auto g = dyn_cast<linalg::GenericOp>(op))
      return foldGeneric(g, type);
    return std::nullopt;
  }

  std::optional<ElementsAttr> foldGeneric(linalg::GenericOp g,
                                          RankedTensorType type) {
    if (g.getNumDpsInputs() == 0 || g.getNumDpsInits() != 1 ||
        g.getNumReductionLoops() != 0 || !type.getElementType().isF32() ||
        g->hasAttr("weft.batchnorm_epsilon"))
      return std::nullopt;
    SmallVector<AffineMap> maps = g.getIndexingMapsArray();
    if (!maps.back().isIdentity())
      return std::nullopt;
    SmallVector<SmallVector<float>> ins;
    SmallVector<SmallVector<int64_t>> strides;
    std::string why;
    for (Value v : g.getDpsInputs()) {
      ElementsAttr a = constantAttr(v);
      if (!a)
        return std::nullopt;
      FailureOr<SmallVector<float>> data = weft::readF32(a, why);
      if (failed(data))
        return std::nullopt;
      ins.push_back(std::move(*data));
      strides.push_back(stridesOf(cast<ShapedType>(a.getType()).getShape()));
    }
    Block &body = g.getRegion().front();
    for (Operation &op : body.without_terminator())
      if (op.getNumRegions() || op.getNumResults() != 1)
        return std::nullopt;
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    // Only maps whose results are dims or the constant 0 (broadcasting).
    for (AffineMap m : ArrayRef<AffineMap>(maps).drop_back())
      for (AffineExpr e : m.getResults())
        if (!isa<AffineDimExpr>(e) &&
            !(isa<AffineConstantExpr>(e) &&
              cast<AffineConstantExpr>(e).getValue() == 0))
          return std::nullopt;
    bool ok = true;
    ElementsAttr result = gather(type, [&](ArrayRef<int64_t> idx) -> float {
      DenseMap<Value, float> env;
      for (auto [i, m] : llvm::enumerate(ArrayRef<AffineMap>(maps).drop_back())) {
        int64_t lin = 0;
        for (auto [r, e] : llvm::enumerate(m.getResults()))
          if (auto d = dyn_cast<AffineDimExpr>(e))
            lin += idx[d.getPosition()] * strides[i][r];
        env[body.getArgument(i)] = ins[i][lin];
      }
      for (Operation &op : body.without_terminator()) {
        std::optional<float> r = evalScalar(op, env);
        if (!r) {
          ok = false;
          return 0;
        }
        env[op.getResult(0)] = *r;
      }
      return env.lookup(yield.getOperand(0));
    });
    if (!ok)
      return std::nullopt;
    return result;
  }

  /// Builds a constant of `type` from an element function of the indices.
  ElementsAttr gather(RankedTensorType type,
                      llvm::function_ref<float(ArrayRef<int64_t>)> fn) {
    int64_t n = type.getNumElements();
    ArrayRef<int64_t> shape = type.getShape();
    SmallVector<float> out(n);
    SmallVector<int64_t> idx(shape.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      out[i] = fn(idx);
      for (int64_t d = int64_t(idx.size()) - 1; d >= 0; --d) {
        if (++idx[d] < shape[d])
          break;
        idx[d] = 0;
      }
    }
    return weft::makeF32(type, out, "folded");
  }
};

} // namespace
