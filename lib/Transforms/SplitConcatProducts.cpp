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

#include "weft/Transforms/ChannelOps.h"
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

/// a + b elementwise, as the importer writes Add (a join on the fabric).
Value addTensors(OpBuilder &b, Location loc, Value x, Value y) {
  auto type = cast<RankedTensorType>(x.getType());
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{x, y}, ValueRange{empty},
             ArrayRef<AffineMap>{id, id, id}, iters,
             [](OpBuilder &nb, Location l, ValueRange args) {
               Value v = arith::AddFOp::create(nb, l, args[0], args[1]);
               linalg::YieldOp::create(nb, l, v);
             })
      .getResult(0);
}

/// A tensor of `type` filled with zeros (a product's accumulator).
Value zerosOf(OpBuilder &b, Location loc, RankedTensorType type) {
  Value zero = arith::ConstantOp::create(
      b, loc, b.getZeroAttr(type.getElementType()));
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType());
  return linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{empty})
      .getResult(0);
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
      Value init = sum ? zerosOf(rewriter, loc, outType) : mm.getDpsInits()[0];
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
      sum = addTensors(rewriter, loc, sum, p);
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

//===----------------------------------------------------------------------===//
// Concatenations of feature maps along the channels
//===----------------------------------------------------------------------===//

/// A concat of feature maps along the channels ([N, C, spatial...], dim 1)
/// read by `op`, possibly through a tensor.pad of the spatial dimensions
/// with a constant: the parts, and the pad to repeat on each.
struct ChannelConcat {
  tensor::ConcatOp concat;
  tensor::PadOp pad;
};

FailureOr<ChannelConcat> channelConcatOf(Value v) {
  ChannelConcat c;
  if ((c.pad = v.getDefiningOp<tensor::PadOp>())) {
    if (!c.pad.getConstantPaddingValue())
      return failure();
    for (ArrayRef<int64_t> side : {c.pad.getStaticLow(), c.pad.getStaticHigh()})
      if (llvm::any_of(side, ShapedType::isDynamic) || side[0] || side[1])
        return failure();
    v = c.pad.getSource();
  }
  c.concat = v.getDefiningOp<tensor::ConcatOp>();
  if (!c.concat || c.concat.getDim() != 1 ||
      c.concat.getResultType().getRank() < 3 ||
      !c.concat.getResultType().hasStaticShape() ||
      llvm::any_of(c.concat.getInputs(), isConstant))
    return failure();
  return c;
}

/// The parts of `c`, each padded as the concat was.
SmallVector<Value> partsOf(PatternRewriter &rewriter, Location loc,
                           ChannelConcat c) {
  SmallVector<Value> parts;
  for (Value part : c.concat.getInputs()) {
    if (c.pad)
      part = tensor::PadOp::create(rewriter, loc, Type(), part,
                                   c.pad.getMixedLowPad(),
                                   c.pad.getMixedHighPad(),
                                   c.pad.getConstantPaddingValue());
    parts.push_back(part);
  }
  return parts;
}

/// Channels of every part.
SmallVector<int64_t> partChannels(tensor::ConcatOp concat) {
  SmallVector<int64_t> cs;
  for (Value part : concat.getInputs())
    cs.push_back(cast<RankedTensorType>(part.getType()).getDimSize(1));
  return cs;
}

/// `type` with `channels` along dimension 1.
RankedTensorType withChannels(RankedTensorType type, int64_t channels) {
  SmallVector<int64_t> shape(type.getShape());
  shape[1] = channels;
  return RankedTensorType::get(shape, type.getElementType());
}

/// Channels [c0, c0 + n) of an accumulator or init `v` of `type`: an empty
/// tensor, a fill of a constant or a constant tensor; null for anything
/// else.
Value channelsOf(PatternRewriter &rewriter, Location loc, Value v,
                 int64_t c0, int64_t n) {
  auto type = cast<RankedTensorType>(v.getType());
  RankedTensorType partType = withChannels(type, n);
  if (v.getDefiningOp<tensor::EmptyOp>())
    return tensor::EmptyOp::create(rewriter, loc, partType.getShape(),
                                   partType.getElementType());
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    if (!fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
      return {};
    Value empty = tensor::EmptyOp::create(rewriter, loc, partType.getShape(),
                                          partType.getElementType());
    return linalg::FillOp::create(rewriter, loc, fill.getInputs(),
                                  ValueRange{empty})
        .getResult(0);
  }
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  auto attr = cst ? dyn_cast<ElementsAttr>(cst.getValue()) : ElementsAttr();
  std::string why;
  FailureOr<SmallVector<float>> values =
      attr ? weft::readF32(attr, why) : FailureOr<SmallVector<float>>();
  if (!attr || failed(values))
    return {};
  // [outer, C, inner] -> [outer, n, inner].
  int64_t outer = type.getDimSize(0), channels = type.getDimSize(1);
  int64_t inner = type.getNumElements() / (outer * channels);
  SmallVector<float> part;
  part.reserve(size_t(outer * n * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = c0; c < c0 + n; ++c)
      for (int64_t i = 0; i < inner; ++i)
        part.push_back((*values)[size_t((o * channels + c) * inner + i)]);
  return arith::ConstantOp::create(
      rewriter, loc, weft::makeF32(partType, part, "concat_part"));
}

/// The constant `w` [F, C, k...] cut along dimension 1 at the parts'
/// channels.
FailureOr<SmallVector<ElementsAttr>> splitWeights(Value w,
                                                  ArrayRef<int64_t> cs) {
  auto cst = w.getDefiningOp<arith::ConstantOp>();
  auto attr = cst ? dyn_cast<ElementsAttr>(cst.getValue()) : ElementsAttr();
  if (!attr)
    return failure();
  std::string why;
  FailureOr<SmallVector<float>> values = weft::readF32(attr, why);
  if (failed(values))
    return failure();
  auto type = cast<RankedTensorType>(w.getType());
  int64_t F = type.getDimSize(0), C = type.getDimSize(1);
  int64_t window = type.getNumElements() / (F * C);
  SmallVector<ElementsAttr> parts;
  int64_t c0 = 0;
  for (int64_t n : cs) {
    SmallVector<float> part;
    part.reserve(size_t(F * n * window));
    for (int64_t f = 0; f < F; ++f)
      for (int64_t c = c0; c < c0 + n; ++c)
        for (int64_t k = 0; k < window; ++k)
          part.push_back((*values)[size_t((f * C + c) * window + k)]);
    parts.push_back(weft::makeF32(withChannels(type, n), part,
                                  "concat_weights"));
    c0 += n;
  }
  return parts;
}

/// A convolution of a concat of feature maps along the channels,
/// conv([a, b], [W_a, W_b]) = conv(a, W_a) + conv(b, W_b): one convolution
/// per part with the weights of its input channels, the first onto the
/// original accumulator (the bias), the others onto zeros, summed in order
/// by elementwise adds (joins on the fabric). Every convolution reading the
/// concat is split on its own; the concat goes when nothing reads it.
template <typename ConvOp>
struct SplitConcatConv : OpRewritePattern<ConvOp> {
  SplitConcatConv(MLIRContext *ctx, int64_t &count)
      : OpRewritePattern<ConvOp>(ctx), count(count) {}

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    FailureOr<ChannelConcat> c = channelConcatOf(conv.getDpsInputs()[0]);
    if (failed(c))
      return rewriter.notifyMatchFailure(conv, "no concat of feature maps");
    SmallVector<int64_t> cs = partChannels(c->concat);
    FailureOr<SmallVector<ElementsAttr>> weights =
        splitWeights(conv.getDpsInputs()[1], cs);
    if (failed(weights))
      return rewriter.notifyMatchFailure(conv, "the weight is no constant");
    Location loc = conv.getLoc();
    auto outType = cast<RankedTensorType>(conv.getResult(0).getType());
    SmallVector<Value> parts = partsOf(rewriter, loc, *c);
    Value sum;
    for (auto [part, w] : llvm::zip(parts, *weights)) {
      Value init =
          sum ? zerosOf(rewriter, loc, outType) : conv.getDpsInits()[0];
      Value wp = arith::ConstantOp::create(rewriter, loc, w);
      Operation *partConv = rewriter.clone(*conv.getOperation());
      partConv->setOperand(0, part);
      partConv->setOperand(1, wp);
      partConv->setOperand(2, init);
      Value p = partConv->getResult(0);
      if (!sum) {
        sum = p;
        continue;
      }
      sum = addTensors(rewriter, loc, sum, p);
    }
    rewriter.replaceOp(conv, sum);
    ++count;
    LDBG() << "split a convolution of a concat of " << parts.size()
           << " parts";
    return success();
  }

  int64_t &count;
};

/// An op that works channel by channel (a pooling, a depthwise
/// convolution, an elementwise op of one feature map) applied to a concat
/// along the channels is the concat of the op applied to each part, with
/// its accumulator (and a depthwise convolution's weights) cut at the
/// parts' channels: the concat moves towards the convolution or matrix
/// product that reads it, where it splits.
struct SinkConcat : RewritePattern {
  SinkConcat(MLIRContext *ctx, int64_t &count)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        count(count) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    int weight = -1;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !weft::isChannelwiseLinalgOp(op, weight) ||
        !linalgOp.hasPureTensorSemantics() || op->getNumResults() != 1)
      return failure();
    FailureOr<ChannelConcat> c =
        channelConcatOf(linalgOp.getDpsInputs()[0]);
    if (failed(c))
      return rewriter.notifyMatchFailure(op, "no concat of feature maps");
    Location loc = op->getLoc();
    SmallVector<int64_t> cs = partChannels(c->concat);
    Value init = linalgOp.getDpsInits()[0];
    // Check every cut before creating anything.
    std::string why;
    FailureOr<SmallVector<float>> w;
    if (weight >= 0) {
      auto cst = linalgOp.getDpsInputs()[weight]
                     .getDefiningOp<arith::ConstantOp>();
      auto attr =
          cst ? dyn_cast<ElementsAttr>(cst.getValue()) : ElementsAttr();
      if (!attr || failed(w = weft::readF32(attr, why)))
        return rewriter.notifyMatchFailure(op, "the weight is no constant");
    }
    if (!init.getDefiningOp<tensor::EmptyOp>() &&
        !init.getDefiningOp<linalg::FillOp>() &&
        !init.getDefiningOp<arith::ConstantOp>())
      return rewriter.notifyMatchFailure(op, "an accumulator we cannot cut");
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<Value> parts = partsOf(rewriter, loc, *c);
    SmallVector<Value> results;
    int64_t c0 = 0;
    for (auto [part, n] : llvm::zip(parts, cs)) {
      Value partInit = channelsOf(rewriter, loc, init, c0, n);
      if (!partInit)
        return rewriter.notifyMatchFailure(op, "an accumulator we cannot cut");
      Operation *partOp = rewriter.clone(*op);
      partOp->setOperand(0, part);
      if (weight >= 0) {
        auto wType =
            cast<RankedTensorType>(linalgOp.getDpsInputs()[weight].getType());
        int64_t window = wType.getNumElements() / wType.getDimSize(0);
        SmallVector<int64_t> shape(wType.getShape());
        shape[0] = n;
        ArrayRef<float> slice(w->data() + c0 * window, size_t(n * window));
        partOp->setOperand(
            weight, arith::ConstantOp::create(
                        rewriter, loc,
                        weft::makeF32(RankedTensorType::get(
                                          shape, wType.getElementType()),
                                      slice, "concat_weights")));
      }
      partOp->setOperand(linalgOp.getNumDpsInputs(), partInit);
      partOp->getResult(0).setType(withChannels(outType, n));
      results.push_back(partOp->getResult(0));
      c0 += n;
    }
    rewriter.replaceOpWithNewOp<tensor::ConcatOp>(op, outType, 1, results);
    ++count;
    LDBG() << "moved a concat of " << parts.size() << " parts below "
           << op->getName();
    return success();
  }

  int64_t &count;
};

/// A flattening of a concat along the channels, [N, C, spatial...] ->
/// [N, C x spatial], is the concat of the flattened parts along the
/// features (the matrix product that reads it then splits).
struct SinkConcatCollapse : OpRewritePattern<tensor::CollapseShapeOp> {
  SinkConcatCollapse(MLIRContext *ctx, int64_t &count)
      : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(tensor::CollapseShapeOp op,
                                PatternRewriter &rewriter) const override {
    auto concat = op.getSrc().getDefiningOp<tensor::ConcatOp>();
    SmallVector<ReassociationIndices> groups = op.getReassociationIndices();
    if (!concat || concat.getDim() != 1 || groups.size() != 2 ||
        groups[0].size() != 1 || op.getResultType().isDynamicDim(1) ||
        llvm::any_of(concat.getInputs(), isConstant))
      return rewriter.notifyMatchFailure(op, "no flattened concat");
    SmallVector<Value> parts;
    for (Value part : concat.getInputs()) {
      auto type = cast<RankedTensorType>(part.getType());
      int64_t n = type.getNumElements() / type.getDimSize(0);
      parts.push_back(tensor::CollapseShapeOp::create(
          rewriter, op.getLoc(),
          RankedTensorType::get({type.getDimSize(0), n},
                                type.getElementType()),
          part, groups));
    }
    rewriter.replaceOpWithNewOp<tensor::ConcatOp>(op, op.getResultType(), 1,
                                                  parts);
    ++count;
    return success();
  }

  int64_t &count;
};

struct SplitConcatProducts
    : weft::impl::SplitConcatProductsBase<SplitConcatProducts> {
  void runOnOperation() override {
    int64_t count = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitConcatProduct, SplitConcatConv<linalg::Conv2DNchwFchwOp>,
                 SplitConcatConv<linalg::Conv1DNcwFcwOp>, SinkConcat,
                 SinkConcatCollapse>(&getContext(), count);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numSplit += count;
  }
};

} // namespace
