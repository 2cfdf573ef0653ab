//===- SplitJoins.cpp - Elementwise bodies of several streams, op by op --===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-split-joins: an elementwise linalg.generic that combines two or
// more different tensors in a body of several ops (a variadic Max, Sum or
// Mean of three inputs: max(max(a, b), c), (a + b + c) / 3) becomes one
// generic per op of its body, each of one or two tensors: the fabric maps
// an op of two streams as a join kernel and an op of one stream and
// constants as a column kernel. Generics of one tensor (expressions) and of
// two tensors in one op (joins already) are left alone.
//
//===----------------------------------------------------------------------===//

#include "weft/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/DebugLog.h"

#define DEBUG_TYPE "weft-split-joins"

namespace weft {
#define GEN_PASS_DEF_SPLITJOINS
#include "weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace {

struct SplitJoin : OpRewritePattern<linalg::GenericOp> {
  SplitJoin(MLIRContext *ctx, int64_t &count)
      : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(linalg::GenericOp g,
                                PatternRewriter &rewriter) const override {
    if (g->getNumResults() != 1 || g.getNumDpsInits() != 1 ||
        !llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }) ||
        !llvm::all_of(g.getIteratorTypesArray(), [](utils::IteratorType t) {
          return t == utils::IteratorType::parallel;
        }))
      return rewriter.notifyMatchFailure(g, "not elementwise");
    SmallVector<Value> streams;
    for (Value in : g.getDpsInputs())
      if (!matchPattern(in, m_Constant()) && !llvm::is_contained(streams, in))
        streams.push_back(in);
    Block &body = g.getRegion().front();
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      if (!isa<arith::ConstantOp>(op))
        ops.push_back(&op);
    if (streams.size() < 2 || ops.size() < 2)
      return rewriter.notifyMatchFailure(g, "no join of several ops");
    auto outType = cast<RankedTensorType>(g->getResult(0).getType());
    for (Operation *op : ops)
      if (op->getNumResults() != 1 ||
          op->getResult(0).getType() != outType.getElementType())
        return rewriter.notifyMatchFailure(g, "an op of another type");

    // Each body value as a tensor: the generic's inputs for its block
    // arguments, a new generic for each op.
    Location loc = g.getLoc();
    DenseMap<Value, Value> tensorOf;
    for (auto [arg, in] : llvm::zip(body.getArguments(), g.getDpsInputs()))
      tensorOf[arg] = in;
    AffineMap id = rewriter.getMultiDimIdentityMap(unsigned(outType.getRank()));
    SmallVector<utils::IteratorType> iters(size_t(outType.getRank()),
                                           utils::IteratorType::parallel);
    for (Operation *op : ops) {
      SmallVector<Value> ins, scalars;
      for (Value v : op->getOperands())
        if (tensorOf.count(v) && !llvm::is_contained(scalars, v)) {
          scalars.push_back(v);
          ins.push_back(tensorOf[v]);
        }
      Value empty = tensor::EmptyOp::create(rewriter, loc, outType.getShape(),
                                            outType.getElementType());
      SmallVector<AffineMap> maps(ins.size() + 1, id);
      auto piece = linalg::GenericOp::create(
          rewriter, loc, TypeRange{outType}, ins, ValueRange{empty}, maps,
          iters, [&](OpBuilder &b, Location l, ValueRange args) {
            IRMapping map;
            for (auto [s, a] : llvm::zip(scalars, args))
              map.map(s, a);
            // Constants of the body are cloned next to their use.
            for (Value v : op->getOperands())
              if (auto c = v.getDefiningOp<arith::ConstantOp>();
                  c && c->getBlock() == &body)
                map.map(v, b.clone(*c)->getResult(0));
            Operation *copy = b.clone(*op, map);
            linalg::YieldOp::create(b, l, copy->getResult(0));
          });
      tensorOf[op->getResult(0)] = piece.getResult(0);
    }
    Value result = tensorOf.lookup(body.getTerminator()->getOperand(0));
    if (!result)
      return rewriter.notifyMatchFailure(g, "yields no op's result");
    rewriter.replaceOp(g, result);
    ++count;
    LDBG() << "split a generic of " << streams.size() << " streams into "
           << ops.size() << " ops";
    return success();
  }

  int64_t &count;
};

struct SplitJoins : weft::impl::SplitJoinsBase<SplitJoins> {
  void runOnOperation() override {
    int64_t count = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitJoin>(&getContext(), count);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numSplit += count;
  }
};

} // namespace
