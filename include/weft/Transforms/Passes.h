//===- Passes.h - weft's passes ---------------------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TRANSFORMS_PASSES_H
#define WEFT_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace weft {

#define GEN_PASS_DECL
#include "weft/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "weft/Transforms/Passes.h.inc"

/// The clean-up of an imported network: drop identities, fold batch
/// normalization, fold constants, canonicalize, CSE.
void populateImportCleanupPipeline(mlir::OpPassManager &pm);

/// Rewrites that only the fabric path wants, run by weftc between the
/// clean-up and --weft-convert-to-fabric (docs/weftc.md).
void populateFabricPreparePipeline(mlir::OpPassManager &pm);

/// Registers the passes and the `weft-import-cleanup` and
/// `weft-fabric-prepare` pipelines.
void registerTransformsPassesAndPipelines();

} // namespace weft

#endif // WEFT_TRANSFORMS_PASSES_H
