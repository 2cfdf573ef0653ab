//===- Pipelines.cpp - Pass pipelines ------------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void weft::populateImportCleanupPipeline(OpPassManager &pm) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(createDropIdentity());
  fn.addPass(createFoldBatchNorm());
  fn.addPass(createFoldConstants());
  fn.addPass(createCanonicalizerPass());
  fn.addPass(createCSEPass());
}

void weft::registerTransformsPassesAndPipelines() {
  registerWeftPasses();
  PassPipelineRegistration<>(
      "weft-import-cleanup",
      "Clean up an imported network: drop identities, fold batch "
      "normalization and constants, canonicalize, CSE",
      populateImportCleanupPipeline);
}
