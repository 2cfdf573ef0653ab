//===- FuseElementwise.cpp - Fuse elementwise DAGs into one generic -------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// An expression that reads its input more than once (SiLU x * sigmoid(x),
// GELU, HardSwish or Softsign written out) arrives from the importer as a
// DAG of elementwise linalg.generics joined by a generic that reads two
// tensors. Every such join whose inputs are all elementwise functions of
// one value absorbs the producers of its inputs (upstream
// linalg::fuseElementwiseOps), latest first, until it reads that one
// tensor (docs/execution-model.md, "Expressions"). A join of two different
// values (a residual add, a gated product u * sigmoid(g)) stays: the
// fabric maps it as a join kernel of two streams.
// Only joins are touched: single-input chains (a dense layer's bias and
// activation, Softmax's steps) keep the forms the kernels match.
//
//===----------------------------------------------------------------------===//

#include "weft/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/DebugLog.h"

#define DEBUG_TYPE "weft-fuse-elementwise"

namespace weft {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;

/// A constant tensor (an arith.constant, or a linalg.fill of a constant),
/// possibly reshaped: not a streamed value.
static bool isConstantTensor(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
      break;
    v = op->getOperand(0);
  }
  if (matchPattern(v, m_Constant()))
    return true;
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.getInputs()[0], m_Constant());
  return false;
}

/// An all-parallel generic with one result written through the identity
/// map.
static bool isElementwise(linalg::GenericOp g) {
  return g && g->getNumResults() == 1 && g.getNumDpsInits() == 1 &&
         llvm::all_of(g.getIteratorTypesArray(),
                      [](utils::IteratorType t) {
                        return t == utils::IteratorType::parallel;
                      }) &&
         g.getIndexingMapsArray().back().isIdentity();
}

/// The distinct streamed (non-constant) inputs of `g`, in operand order.
static SmallVector<Value> streamedInputs(linalg::GenericOp g) {
  SmallVector<Value> v;
  for (Value in : g.getDpsInputs())
    if (!isConstantTensor(in) && !llvm::is_contained(v, in))
      v.push_back(in);
  return v;
}

/// Whether `producer` may be fused into `consumer`: a same-shape
/// elementwise generic that reads its streamed inputs with identity maps
/// and whose result only `consumer` uses.
static bool fusibleInto(linalg::GenericOp producer,
                        linalg::GenericOp consumer) {
  if (!isElementwise(producer) ||
      producer->getResult(0).getType() != consumer->getResult(0).getType())
    return false;
  for (OpOperand *in : producer.getDpsInputOperands())
    if (!isConstantTensor(in->get()) &&
        !producer.getMatchingIndexingMap(in).isIdentity())
      return false;
  return llvm::all_of(producer->getResult(0).getUsers(),
                      [&](Operation *u) { return u == consumer; });
}

/// The one value `v` is an elementwise function of: through elementwise
/// generics (and reshapes) back to the first value that is not one; none
/// when `v` combines several such values (a join of two streams, which the
/// fabric maps as a join kernel, not as an expression).
static std::optional<Value> elementwiseRoot(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
      break;
    v = op->getOperand(0);
  }
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!isElementwise(g))
    return v;
  std::optional<Value> root;
  for (Value in : streamedInputs(g)) {
    std::optional<Value> r = elementwiseRoot(in);
    if (!r || (root && *root != *r))
      return std::nullopt;
    root = r;
  }
  return root ? root : std::optional<Value>(v);
}

namespace {

struct FuseElementwise : weft::impl::FuseElementwiseBase<FuseElementwise> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet dedup(ctx);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(dedup);
    FrozenRewritePatternSet frozen(std::move(dedup));
    // A generic that reads one tensor twice (x + x) reads it once: an
    // elementwise function of one value, not a join of two streams.
    if (failed(applyPatternsGreedily(getOperation(), frozen)))
      return signalPassFailure();
    IRRewriter rewriter(ctx);
    // One fusion at a time, each removing a generic, until no join has a
    // producer to absorb. The dedup patterns make a fused op read x once
    // (x came from both the consumer and the producer).
    while (true) {
      bool fusedOne = false;
      getOperation().walk([&](linalg::GenericOp g) {
        if (isElementwise(g) && succeeded(fuseLatestProducer(rewriter, g))) {
          fusedOne = true;
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (!fusedOne)
        return;
      ++numFused;
      if (failed(applyPatternsGreedily(getOperation(), frozen)))
        return signalPassFailure();
    }
  }

  /// Fuses the latest producer of `g`'s streamed inputs into `g` if `g`
  /// joins two or more of them; fails when it does not or cannot.
  LogicalResult fuseLatestProducer(IRRewriter &rewriter, linalg::GenericOp g) {
    SmallVector<Value> ins = streamedInputs(g);
    if (ins.size() < 2 || !elementwiseRoot(g->getResult(0)))
      return failure();
    // The latest-defined streamed input (block arguments come first).
    Value latest;
    for (Value v : ins) {
      Operation *d = v.getDefiningOp();
      if (!d || d->getBlock() != g->getBlock())
        continue;
      Operation *l = latest ? latest.getDefiningOp() : nullptr;
      if (!l || l->isBeforeInBlock(d))
        latest = v;
    }
    auto producer =
        latest ? latest.getDefiningOp<linalg::GenericOp>() : nullptr;
    if (!producer || !fusibleInto(producer, g))
      return failure();
    OpOperand *operand = nullptr;
    for (OpOperand *o : g.getDpsInputOperands())
      if (o->get() == latest) {
        operand = o;
        break;
      }
    if (!linalg::areElementwiseOpsFusable(operand))
      return failure();
    rewriter.setInsertionPoint(g);
    FailureOr<linalg::ElementwiseOpFusionResult> fused =
        linalg::fuseElementwiseOps(rewriter, operand);
    if (failed(fused))
      return failure();
    for (auto [orig, repl] : fused->replacements)
      rewriter.replaceUsesWithIf(orig, repl, [&](OpOperand &use) {
        return use.getOwner() != producer.getOperation();
      });
    rewriter.eraseOp(g);
    if (producer->use_empty())
      rewriter.eraseOp(producer);
    LDBG() << "fused " << *fused->fusedOp;
    return success();
  }
};

} // namespace
