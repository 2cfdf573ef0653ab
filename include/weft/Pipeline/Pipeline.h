//===- Pipeline.h - weft's compile pipeline ---------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The pipeline from an imported network to per-PE wavelet programs, in
// stages (docs/pipeline.md): cleanup -> fabric (prepare, convert) ->
// partition -> route (routes, colors) -> wavelet (lowering). `weftc compile`
// runs it stage by stage; `weft-opt --weft-pipeline='...'` runs the same
// passes with the same options in one go.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_PIPELINE_PIPELINE_H
#define WEFT_PIPELINE_PIPELINE_H

#include "weft/Machine/Target.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace weft {

/// The stages of the pipeline, in order.
enum class PipelineStage { Cleanup, Fabric, Partition, Route, Wavelet };

/// The stage's name (`cleanup`, `fabric`, ...).
const char *stageName(PipelineStage stage);

/// The arithmetic of the dense layers.
enum class PipelinePrecision { FP32, Mixed };

/// The options of `--weft-pipeline` and of `weftc compile`.
struct PipelineOptions : mlir::PassPipelineOptions<PipelineOptions> {
  Option<std::string> grid{
      *this, "grid",
      llvm::cl::desc("The fabric: WxH[,mem=B,colors=N,rq=N,cq=N], or "
                     "auto[,...] (the default: the smallest grid up to "
                     "max-grid within 5% of the best predicted utilization)"),
      llvm::cl::init("auto")};
  Option<std::string> maxGrid{
      *this, "max-grid",
      llvm::cl::desc("The largest fabric grid=auto considers (default: the "
                     "whole machine)"),
      llvm::cl::init(weft::machine::kFullFabric)};
  Option<bool> mergeLanes{
      *this, "merge-lanes",
      llvm::cl::desc("Let a convolution merge several of its producer's row "
                     "lanes into one column"),
      llvm::cl::init(false)};
  Option<std::string> onlyKernels{
      *this, "only-kernels",
      llvm::cl::desc("After partitioning, keep only the kernels FIRST..LAST "
                     "(--weft-extract-kernels): a slice fed by the host"),
      llvm::cl::init("")};
  Option<std::string> replicas{
      *this, "replicas",
      llvm::cl::desc("Copies of the network on bands of the fabric's rows, "
                     "each fed its own samples: N, or auto (as many as "
                     "fit; --weft-replicate)"),
      llvm::cl::init("1")};
  Option<int64_t> maxReplicas{
      *this, "max-replicas",
      llvm::cl::desc("The most copies replicas=auto chooses (0: no limit; "
                     "-1: the samples of the program's batch)"),
      llvm::cl::init(0)};
  Option<int64_t> maxColumns{
      *this, "max-columns",
      llvm::cl::desc("The most copies replicas=auto puts side by side in a "
                     "band of rows (0: as many as the width allows)"),
      llvm::cl::init(0)};
  Option<std::string> frustum{
      *this, "frustum",
      llvm::cl::desc("off, auto (fuse chains of convolutions into frustum "
                     "groups where the cost model predicts them no slower; "
                     "--weft-frustum-tile, --weft-frustum-fuse; "
                     "docs/frustum.md) or on (fuse every group that can "
                     "run fused)"),
      llvm::cl::init("auto")};
  Option<std::string> objective{
      *this, "objective",
      llvm::cl::desc("What the partition minimises first: auto (latency "
                     "for SGD, else interval), interval (the slowest "
                     "kernel's cycles) or latency (the kernels' cycles "
                     "summed); --weft-partition-dense's objective"),
      llvm::cl::init("auto")};
  Option<int64_t> frustumMaxTile{
      *this, "frustum-max-tile",
      llvm::cl::desc("With frustum: the largest tile side recorded (0: the "
                     "largest that fits)"),
      llvm::cl::init(0)};
  Option<bool> fuseActivations{
      *this, "fuse-activations",
      llvm::cl::desc("Fuse an activation that is the only reader of a "
                     "convolution's result into it (its epilogue)"),
      llvm::cl::init(true)};
  Option<std::string> sparseActivations{
      *this, "sparse-activations",
      llvm::cl::desc("Send dense layers' ReLU results to the next dense "
                     "layer as sparse streams: off, auto or on"),
      llvm::cl::init("off")};
  Option<bool> sparsePlacement{
      *this, "sparse-placement",
      llvm::cl::desc("With sparse-activations: partition the layers whose "
                     "input will arrive sparse at their sparse cost (false: "
                     "as if dense)"),
      llvm::cl::init(true)};
  Option<double> density{
      *this, "density",
      llvm::cl::desc("The expected fraction of non-zero ReLU results "
                     "(sparse-activations=auto)"),
      llvm::cl::init(0.5)};
  ListOption<std::string> densities{
      *this, "densities",
      llvm::cl::desc("Measured densities of ONNX nodes' results, NODE=D or "
                     "NODE=D:P0:...:Pn-1 "
                     "(sparse-activations=auto; a calibration run)")};
  Option<double> inputDensity{
      *this, "input-density",
      llvm::cl::desc("The expected fraction of non-zero values of the host "
                     "inputs (sparse-activations=auto)"),
      llvm::cl::init(0.5)};
  ListOption<std::string> inputDensities{
      *this, "input-densities",
      llvm::cl::desc("Measured densities of the host inputs, NAME=D or "
                     "NAME=D:P0:...:Pn-1 (sparse-activations=auto)")};
  Option<std::string> sparseWeights{
      *this, "sparse-weights",
      llvm::cl::desc("Store dense layers' weights as sliced vectors (lane "
                     "masks and packed non-zeros): off, auto or on"),
      llvm::cl::init("auto")};
  Option<PipelinePrecision> precision{
      *this, "precision", llvm::cl::desc("The dense layers' arithmetic"),
      llvm::cl::init(PipelinePrecision::FP32),
      llvm::cl::values(
          clEnumValN(PipelinePrecision::FP32, "fp32", "fp32 throughout"),
          clEnumValN(PipelinePrecision::Mixed, "mixed",
                     "fp16 storage and multiply, fp32 accumulate"))};
  Option<PipelineStage> stopAfter{
      *this, "stop-after", llvm::cl::desc("The last stage to run"),
      llvm::cl::init(PipelineStage::Wavelet),
      llvm::cl::values(
          clEnumValN(PipelineStage::Cleanup, "cleanup",
                     "the imported network cleaned up"),
          clEnumValN(PipelineStage::Fabric, "fabric",
                     "the fabric.program, unplaced"),
          clEnumValN(PipelineStage::Partition, "partition",
                     "placed (rectangles, smear, precision, cycles)"),
          clEnumValN(PipelineStage::Route, "route",
                     "routed and colored"),
          clEnumValN(PipelineStage::Wavelet, "wavelet",
                     "the per-PE wavelet programs"))};
};

/// Adds the passes of one stage to `pm` (a module pass manager).
void addPipelineStage(mlir::OpPassManager &pm, PipelineStage stage,
                      const PipelineOptions &options);

/// Adds every stage up to options.stopAfter: what `--weft-pipeline` runs.
void buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// The clean-up of an imported network: drop identities, fold batch
/// normalization, fold constants, canonicalize, CSE.
void populateImportCleanupPipeline(mlir::OpPassManager &pm);

/// Rewrites that only the fabric path wants, run between the clean-up and
/// --weft-convert-to-fabric (docs/weftc.md).
void populateFabricPreparePipeline(mlir::OpPassManager &pm);

/// Registers every weft pass (linalg-level transforms, fabric transforms,
/// conversions) and the pipelines `weft-import-cleanup`,
/// `weft-fabric-prepare` and `weft-pipeline`: the one entry every tool
/// calls.
void registerAllPasses();

} // namespace weft

#endif // WEFT_PIPELINE_PIPELINE_H
