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

void weft::populateFabricPreparePipeline(OpPassManager &pm) {
  // Rewrites that only the fabric path wants (the host reference runs the
  // network as imported): they turn ops the fabric has no kernel for into
  // ops it has one for. Ends with a canonicalization so that
  // --weft-convert-to-fabric sees one canonical form.
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(createFoldElementwiseConstants());
  fn.addPass(createLinearToMatmul());
  // Expressions that read x more than once become one generic (after the
  // folds, which see the importer's one-op generics).
  fn.addPass(createFuseElementwise());
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
  PassPipelineRegistration<>(
      "weft-fabric-prepare",
      "Rewrite a cleaned-up network into the forms the fabric has kernels "
      "for (run by weftc before --weft-convert-to-fabric)",
      populateFabricPreparePipeline);
}
