//===- SplitConcatProducts.cpp - Concat of streams times a matrix ---------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-split-concat-products: a matrix product of a concatenation of
// several streamed tensors along the feature axis, [a, b] W, equals the sum
// of the products of the parts with W's matching rows, a W_a + b W_b. Two
// towers joined by Concat in front of a classifier become two dense layers
// (the first keeps the accumulator, the bias) and joins that add them: the
// same MACs as the model's product, no data moved across rows. A concat of
// streams that feeds anything else is left alone.
//
//===----------------------------------------------------------------------===//

#include "weft/Transforms/ConstantData.h"
#include "weft/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/DebugLog.h"

#define DEBUG_TYPE "weft-split-concat-products"

namespace weft {
#define GEN_PASS_DEF_SPLITCONCATPRODUCTS
#include "weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace {

/// Whether `v` is a constant (a splat or dense elements, possibly filled).
bool isConstant(Value v) {
  if (matchPattern(v, m_Constant()))
    return true;
  auto fill = v.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_Constant());
}

struct SplitConcatProduct : OpRewritePattern<linalg::MatmulOp> {
  SplitConcatProduct(MLIRContext *ctx, int64_t &count)
      : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(linalg::MatmulOp mm,
                                PatternRewriter &rewriter) const override {
    auto concat = mm.getDpsInputs()[0].getDefiningOp<tensor::ConcatOp>();
    if (!concat || !concat->hasOneUse() || concat.getDim() != 1 ||
        concat.getResultType().getRank() != 2)
      return rewriter.notifyMatchFailure(mm, "no concat of the features");
    if (llvm::count_if(concat.getInputs(),
                       [](Value v) { return !isConstant(v); }) < 2)
      return rewriter.notifyMatchFailure(mm, "fewer than two streams");
    // The weight: a constant W [K, M] or W^T [M, K] (Gemm's transB).
    Value w = mm.getDpsInputs()[1];
    DenseElementsAttr dense;
    ElementsAttr attr;
    if (auto c = w.getDefiningOp<arith::ConstantOp>())
      attr = dyn_cast<ElementsAttr>(c.getValue());
    if (!attr)
      return rewriter.notifyMatchFailure(mm, "the weight is no constant");
    MLIRContext *ctx = mm.getContext();
    AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
               d2 = getAffineDimExpr(2, ctx);
    auto map = [&](AffineExpr a, AffineExpr b) {
      return AffineMap::get(3, 0, {a, b}, ctx);
    };
    SmallVector<AffineMap> maps = mm.getIndexingMapsArray();
    if (maps[0] != map(d0, d2) || maps[2] != map(d0, d1))
      return rewriter.notifyMatchFailure(mm, "the product transposes x");
    bool transposed = maps[1] == map(d1, d2);
    if (!transposed && maps[1] != map(d2, d1))
      return rewriter.notifyMatchFailure(mm, "the weight is neither W nor W^T");
    std::string why;
    FailureOr<SmallVector<float>> values = weft::readF32(attr, why);
    if (failed(values))
      return rewriter.notifyMatchFailure(mm, why);
    auto wType = cast<RankedTensorType>(w.getType());
    int64_t K = concat.getResultType().getDimSize(1);
    int64_t M = transposed ? wType.getDimSize(0) : wType.getDimSize(1);

    // One product per part with W's rows [k0, k0 + Kp), the first onto
    // the original accumulator, the others onto zeros, summed in order.
    Location loc = mm.getLoc();
    auto outType = cast<RankedTensorType>(mm.getResult(0).getType());
    Type f32 = rewriter.getF32Type();
    Value sum;
    int64_t k0 = 0;
    for (Value part : concat.getInputs()) {
      int64_t Kp = cast<RankedTensorType>(part.getType()).getDimSize(1);
      SmallVector<float> rows;
      rows.reserve(size_t(Kp * M));
      for (int64_t k = k0; k < k0 + Kp; ++k)
        for (int64_t m = 0; m < M; ++m)
          rows.push_back(
              (*values)[size_t(transposed ? m * K + k : k * M + m)]);
      k0 += Kp;
      Value wp = arith::ConstantOp::create(
          rewriter, loc,
          weft::makeF32(RankedTensorType::get({Kp, M}, f32), rows,
                        "concat_weights"));
      Value init = mm.getDpsInits()[0];
      if (sum) {
        Value zero =
            arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0));
        Value empty =
            tensor::EmptyOp::create(rewriter, loc, outType.getShape(), f32);
        init = linalg::FillOp::create(rewriter, loc, ValueRange{zero},
                                      ValueRange{empty})
                   .getResult(0);
      }
      auto product = linalg::MatmulOp::create(
          rewriter, loc, TypeRange{outType}, ValueRange{part, wp},
          ValueRange{init});
      if (mm->hasAttr("weft.synthetic"))
        product->setAttr("weft.synthetic", rewriter.getUnitAttr());
      Value p = product.getResult(0);
      if (!sum) {
        sum = p;
        continue;
      }
      Value empty =
          tensor::EmptyOp::create(rewriter, loc, outType.getShape(), f32);
      AffineMap id = rewriter.getMultiDimIdentityMap(2);
      SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
      sum = linalg::GenericOp::create(
                rewriter, loc, TypeRange{outType}, ValueRange{sum, p},
                ValueRange{empty}, ArrayRef<AffineMap>{id, id, id}, iters,
                [](OpBuilder &b, Location l, ValueRange args) {
                  Value s = arith::AddFOp::create(b, l, args[0], args[1]);
                  linalg::YieldOp::create(b, l, s);
                })
                .getResult(0);
    }
    rewriter.replaceOp(mm, sum);
    rewriter.eraseOp(concat);
    ++count;
    LDBG() << "split a product of a concat of "
           << concat.getInputs().size() << " parts";
    return success();
  }

  int64_t &count;
};

struct SplitConcatProducts
    : weft::impl::SplitConcatProductsBase<SplitConcatProducts> {
  void runOnOperation() override {
    int64_t count = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitConcatProduct>(&getContext(), count);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numSplit += count;
  }
};

} // namespace
