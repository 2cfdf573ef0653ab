//===- ChannelOps.cpp - Ops that work channel by channel ------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Transforms/ChannelOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

bool weft::isChannelwiseLinalgOp(Operation *op, int &weight) {
  weight = -1;
  if (isa<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp,
          linalg::PoolingNcwMaxOp, linalg::PoolingNcwSumOp>(op))
    return true;
  if (isa<linalg::DepthwiseConv2DNchwChwOp, linalg::DepthwiseConv1DNcwCwOp>(
          op)) {
    weight = 1;
    return true;
  }
  auto g = dyn_cast<linalg::GenericOp>(op);
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumReductionLoops() != 0)
    return false;
  return llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }) &&
         !g.hasIndexSemantics() &&
         g.getMatchingBlockArgument(g.getDpsInitOperand(0)).use_empty();
}
