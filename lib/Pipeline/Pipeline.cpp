//===- Pipeline.cpp - weft's compile pipeline -----------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Pipeline/Pipeline.h"

#include "weft/Conversion/Passes.h"
#include "weft/FabricTransforms/Passes.h"
#include "weft/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringRef.h"

using namespace mlir;

const char *weft::stageName(PipelineStage stage) {
  switch (stage) {
  case PipelineStage::Cleanup:
    return "cleanup";
  case PipelineStage::Fabric:
    return "fabric";
  case PipelineStage::Partition:
    return "partition";
  case PipelineStage::Route:
    return "route";
  case PipelineStage::Wavelet:
    return "wavelet";
  }
  return "?";
}

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
  // Channel shuffles and splits: read the moved channels where they are
  // made (before --weft-linear-to-matmul, which would take a shuffle for an
  // affine map).
  fn.addPass(createResolveChannelMoves());
  fn.addPass(createFoldElementwiseConstants());
  fn.addPass(createLinearToMatmul());
  // Two towers joined by Concat in front of a dense layer: a dense layer per
  // tower and joins that add them.
  fn.addPass(createSplitConcatProducts());
  // Expressions that read x more than once become one generic (after the
  // folds, which see the importer's one-op generics).
  fn.addPass(createFuseElementwise());
  // What combines several different tensors in several ops (a variadic Max
  // of three inputs) becomes joins and column kernels, op by op.
  fn.addPass(createSplitJoins());
  fn.addPass(createCanonicalizerPass());
  fn.addPass(createCSEPass());
}

void weft::addPipelineStage(OpPassManager &pm, PipelineStage stage,
                            const PipelineOptions &options) {
  // grid=auto[,opts]: convert-to-fabric takes the largest grid (with the
  // options), and partitioning chooses within it.
  llvm::StringRef grid(options.grid);
  bool autoGrid = grid.consume_front("auto");
  std::string largest = options.maxGrid + grid.str();
  switch (stage) {
  case PipelineStage::Cleanup:
    populateImportCleanupPipeline(pm);
    return;
  case PipelineStage::Fabric: {
    populateFabricPreparePipeline(pm);
    ConvertToFabricOptions o;
    o.grid = autoGrid ? largest : options.grid.getValue();
    o.fuse = options.fuseActivations;
    pm.addPass(createConvertToFabric(o));
    return;
  }
  case PipelineStage::Partition: {
    if (options.frustum != "off") {
      FrustumTileOptions f;
      f.maxTile = options.frustumMaxTile;
      f.mergeLanes = options.mergeLanes;
      f.precision =
          options.precision == PipelinePrecision::Mixed ? "mixed" : "fp32";
      pm.addPass(createFrustumTile(f));
      FrustumFuseOptions fo;
      fo.always = options.frustum == "on";
      pm.addPass(createFrustumFuse(fo));
    }
    PartitionDenseOptions o;
    o.precision =
        options.precision == PipelinePrecision::Mixed ? "mixed" : "fp32";
    o.mergeLanes = options.mergeLanes;
    o.objective = options.objective;
    o.replicas = options.replicas;
    o.maxReplicas = options.maxReplicas;
    o.maxColumns = options.maxColumns;
    // The layers whose input will go sparse are placed at their sparse
    // cost (the same measurements as --weft-select-sparse-streams').
    o.sparseActivations =
        options.sparsePlacement ? options.sparseActivations.getValue() : "off";
    o.density = options.density;
    o.densities.assign(options.densities.begin(), options.densities.end());
    o.inputDensity = options.inputDensity;
    o.inputDensities.assign(options.inputDensities.begin(),
                            options.inputDensities.end());
    if (autoGrid) {
      o.grid = "auto";
      o.maxGrid = largest;
    }
    pm.addPass(createPartitionDense(o));
    if (!options.onlyKernels.empty()) {
      ExtractKernelsOptions e;
      e.kernels = options.onlyKernels;
      pm.addPass(createExtractKernels(e));
    }
    return;
  }
  case PipelineStage::Route: {
    pm.addPass(createRouteStreams());
    pm.addPass(createAllocateColors());
    SelectSparseStreamsOptions o;
    o.sparseActivations = options.sparseActivations;
    o.density = options.density;
    o.densities.assign(options.densities.begin(), options.densities.end());
    o.inputDensity = options.inputDensity;
    o.inputDensities.assign(options.inputDensities.begin(),
                            options.inputDensities.end());
    pm.addPass(createSelectSparseStreams(o));
    SelectSlicedWeightsOptions w;
    w.sparseWeights = options.sparseWeights;
    pm.addPass(createSelectSlicedWeights(w));
    return;
  }
  case PipelineStage::Wavelet: {
    pm.addPass(createLowerFabricToWavelet());
    pm.addPass(createReplicate());
    return;
  }
  }
}

void weft::buildPipeline(OpPassManager &pm, const PipelineOptions &options) {
  for (int s = 0; s <= int(options.stopAfter.getValue()); ++s)
    addPipelineStage(pm, PipelineStage(s), options);
}

void weft::registerAllPasses() {
  registerTransformsPasses();
  registerFabricTransformsPasses();
  registerConversionPasses();
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
  PassPipelineRegistration<PipelineOptions>(
      "weft-pipeline",
      "The whole compile pipeline of `weftc compile`, from an imported "
      "network to wavelet programs (stages cleanup, fabric, partition, "
      "route, wavelet; docs/pipeline.md)",
      buildPipeline);
}
