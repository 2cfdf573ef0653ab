//===- DropIdentity.cpp - Remove ops that return their input --------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#define DEBUG_TYPE "weft-drop-identity"

namespace weft {
#define GEN_PASS_DEF_DROPIDENTITY
#include "weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace {

/// The value `op` forwards unchanged, or null.
static Value forwardedValue(Operation *op) {
  if (op->getNumResults() != 1)
    return nullptr;
  Type resultType = op->getResult(0).getType();
  auto same = [&](Value v) { return v.getType() == resultType ? v : Value(); };
  if (auto copy = dyn_cast<linalg::CopyOp>(op))
    return copy.getInputs().size() == 1 ? same(copy.getInputs()[0]) : nullptr;
  if (auto t = dyn_cast<linalg::TransposeOp>(op)) {
    for (auto [i, p] : llvm::enumerate(t.getPermutation()))
      if (int64_t(i) != p)
        return nullptr;
    return same(t.getInput());
  }
  if (isa<tensor::CastOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op))
    return same(op->getOperand(0));
  if (auto g = dyn_cast<linalg::GenericOp>(op)) {
    if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
        g.getNumReductionLoops() != 0)
      return nullptr;
    for (AffineMap m : g.getIndexingMapsArray())
      if (!m.isIdentity())
        return nullptr;
    Block &body = g.getRegion().front();
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    if (&body.front() != yield.getOperation() ||
        yield.getOperand(0) != body.getArgument(0))
      return nullptr;
    return same(g.getDpsInputs()[0]);
  }
  return nullptr;
}

struct DropIdentity : weft::impl::DropIdentityBase<DropIdentity> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<Operation *> dead;
    getOperation().walk([&](Operation *op) {
      if (Value v = forwardedValue(op)) {
        op->getResult(0).replaceAllUsesWith(v);
        dead.push_back(op);
      }
    });
    for (Operation *op : dead) {
      SmallVector<Value> operands(op->getOperands());
      op->erase();
      ++numDropped;
      // The destination tensor of a dropped copy is dead too.
      for (Value v : operands)
        if (auto e = v.getDefiningOp<tensor::EmptyOp>(); e && e->use_empty())
          e->erase();
    }
  }
};

} // namespace
