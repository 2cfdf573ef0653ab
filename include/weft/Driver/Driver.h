//===- Driver.h - Compile a model and run it on the fabric ------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// What `weftc compile`, `weftc run` and the `weft` Python package share:
// compiling an ONNX model through the pipeline (with the figures read off the
// partitioned program), mapping the graph's inputs and outputs to the fabric's
// host ports, and the figures of a run read from the simulator's statistics
// (docs/performance.md, "Definitions").
//
//   auto ctx = weft::driver::createContext();
//   weft::driver::CompiledModel compiled;
//   std::string error;
//   if (!weft::driver::compileModel(*ctx, "model.onnx", {}, compiled, error))
//     ...;
//   // compiled.binary runs on the simulator (include/weft/Sim/Simulator.h).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_DRIVER_DRIVER_H
#define WEFT_DRIVER_DRIVER_H

#include "weft/Binary/Binary.h"
#include "weft/Kernels/ConvMapping.h"
#include "weft/Kernels/DenseTraining.h"
#include "weft/Kernels/SparseActivations.h"
#include "weft/Machine/Target.h"
#include "weft/Reference/Reference.h"
#include "weft/Sim/Simulator.h"
#include "weft/TensorIO/TensorIO.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace weft::driver {

/// The stages of the fabric pipeline, in order (`--until-after`).
enum class Stage { Import, Cleanup, Fabric, Partition, Route, Wavelet, Binary };

/// How a model is compiled.
/// Training (docs/training.md): `weftc train`'s optimizer, learning rate
/// and mini-batch.
struct TrainingSpec {
  std::string optimizer = "sgd";
  double lr = 0.01;
  int64_t batch = 1;
  /// --weft-select-checkpoints: none, auto or every-K, and the bytes a PE
  /// may use (0: the target's memory).
  std::string checkpoints = "none";
  int64_t peMemory = 0;
  /// cpgd: the samples of the run (the PEs drain the pipeline after the
  /// last).
  int64_t samples = 0;
};

/// A trained dense kernel as placed: where its weights live on the fabric
/// (weft::conversion::trainedWeightPlace reads them back).
struct TrainedDense {
  std::string name;
  /// The initializers W and b are (#fabric.dense's sources); W's is M x K
  /// when `transposed`.
  std::string weightsSource, biasSource;
  bool transposed = false;
  int64_t K = 0, M = 0;
  bool bias = false, relu = false;
  /// A convolution (W is then OIHW, as its initializer).
  std::optional<weft::conversion::ConvShape> conv;
  /// A dense layer fed by a feature map: its pixels a channel (its input
  /// chunks are pixel-major; 0: not a feature map).
  int64_t inputPixels = 0;
  int64_t x0 = 0, y0 = 0, smear = 1, rows = 1;
  /// How it trains, as the IR records it (optimizer, rate, marks,
  /// checkpoint, CPGD's lag).
  weft::conversion::DenseTraining training;
  /// The recompute cycles per sample --weft-select-checkpoints predicts
  /// when it does not store its input.
  int64_t recomputeCycles = 0;
};

struct CompileOptions {
  /// WxH[,options], or auto[,options]: the smallest fabric up to `maxGrid`
  /// within 5% of the best predicted utilization (--weft-partition-dense).
  /// By default auto, up to the whole machine (weft::machine::kFullFabric).
  std::string grid = "auto";
  std::string maxGrid = weft::machine::kFullFabric;
  std::string precision = "fp32";
  /// --weft-partition-dense's merge-lanes.
  bool mergeLanes = true;
  /// FIRST..LAST: keep only these kernels after partitioning
  /// (--weft-extract-kernels); empty keeps them all.
  std::string onlyKernels;
  /// Copies of the network on bands of rows (--weft-replicate): N or
  /// auto.
  std::string replicas = "1";
  /// The most copies `auto` chooses: 0 no limit, -1 the samples of the
  /// program's batch (`weftc run`: more copies than samples only idle).
  int64_t maxReplicas = 0;
  /// --weft-convert-to-fabric's fuse-activations.
  bool fuseActivations = true;
  /// --weft-select-sparse-streams' sparse-activations (off, auto, on)
  /// and density.
  std::string sparseActivations = "off";
  double density = 0.5;
  /// --weft-partition-dense costs the layers whose input will go sparse at
  /// their sparse cost (else as if dense).
  bool sparsePlacement = true;
  /// Keep the passes' remarks (why a frustum group runs per layer, …) in
  /// CompiledModel::remarks.
  bool remarks = false;
  /// --weft-partition-dense's objective: auto, interval or latency
  /// (docs/training.md, "Partitioning for one sample in flight").
  std::string objective = "auto";
  /// Measured densities of ONNX nodes' results, by node name (a
  /// calibration run: reference::measureNodeDensities), overall and per
  /// element; a stream whose producer ends with a measured node expects
  /// them instead of `density`.
  std::map<std::string, conversion::ExpectedDensity> nodeDensities;
  /// The host inputs' expected fraction of non-zero values (what `auto`
  /// assumes for a host input into a dense layer), and the measured ones
  /// by input name, which replace it.
  double inputDensity = 0.5;
  std::map<std::string, conversion::ExpectedDensity> inputDensities;
  /// --weft-select-sliced-weights' sparse-weights (off, auto, on).
  std::string sparseWeights = "auto";
  /// Frustum groups (docs/frustum.md): off, auto (--weft-frustum-tile and
  /// --weft-frustum-fuse before partitioning, where no slower) or on.
  std::string frustum = "auto";
  /// The largest frustum tile side (0: the largest that fits).
  int64_t frustumMaxTile = 0;
  int64_t batchSize = 1;
  /// Graph inputs frozen into the program as constants (weights the model
  /// takes as inputs, as the ONNX node tests do): NAME=FILE.
  std::vector<std::string> constants;
  /// The last stage to run.
  Stage untilAfter = Stage::Binary;
  /// Compile a training program: --weft-prepare-training after the fabric
  /// stage, --weft-lower-training-to-wavelet after partitioning (no route
  /// stage; docs/training.md).
  std::optional<TrainingSpec> training;
  /// The serialized ONNX model, when it comes from memory rather than from
  /// the file at the path compileModel is given (the path then only names
  /// the model in messages; external data is refused).
  std::string modelBytes;
  /// Apply the pass-manager and timing command-line options (a tool that
  /// registered them); a library caller without a command line says false.
  bool commandLineOptions = true;
  /// Called as each stage ends, with its name ("import", "cleanup",
  /// "fabric", "partition", "route", "wavelet", "emit-wfb") and the seconds
  /// it took: what `weftc --progress` prints.
  std::function<void(llvm::StringRef stage, double seconds)> onStage;
};

/// One kernel of the partitioned program, as `weftc run` reports it.
struct KernelFigures {
  std::string name;
  /// "dense 784 -> 256" or "Softmax of 10".
  std::string what;
  bool dense = true;
  /// Multiply-accumulates per sample: the model's (0 for a matrix weft
  /// made) and the executed ones.
  int64_t modelMacs = 0, executedMacs = 0;
  int64_t K = 0, M = 0, x0 = 0, width = 0, rows = 0, predictedCycles = 0;
  /// Of predictedCycles, the cycles a banded kernel's bands wait on their
  /// shared lanes (`lane_wait_cycles`); the rest is its busiest band's work.
  int64_t laneWaitCycles = 0;
  /// The kernel skips zeros: its weights are sliced or its input arrives
  /// as a sparse stream (docs/execution-model.md, "Sparse weights").
  bool skipsZeros = false;
};

/// What a compile produced, and the figures `weftc run` reports.
struct CompiledModel {
  /// The module as imported (before constants are bound): what the host
  /// reference runs.
  mlir::OwningOpRef<mlir::ModuleOp> imported;
  /// The module after the last stage that ran.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// The binary, when the pipeline ran to the end.
  std::optional<weft::binary::Program> binary;
  /// From the partitioned fabric program (when it ran that far): the host
  /// ports, the kernels in chain order, the slowest kernel's predicted
  /// cycles per sample and the dense kernels' MACs per sample.
  std::string programName;
  /// The host ports' names (the graph's inputs and outputs, in order).
  std::vector<std::string> inputNames, outputNames;
  /// With CompileOptions::remarks: the passes' remarks, "LOCATION: text",
  /// in the order they were emitted.
  std::vector<std::string> remarks;
  std::vector<KernelFigures> kernels;
  /// macsPerSample counts the model's MACs (Gemm/MatMul of the graph),
  /// executedMacsPerSample every MAC the kernels execute.
  int64_t batch = 1, predictedCycles = 0, macsPerSample = 0,
          executedMacsPerSample = 0;
  /// Some kernel with MACs of the model skips zeros: its run executes fewer
  /// of them, and utilization is measured without skipping.
  bool skipsModelZeros = false;
  int64_t gridPEs = 0;
  /// The fabric's parameters beyond its size (",mem=B,colors=N,rq=N,cq=N"),
  /// or empty when they are the machine's defaults.
  std::string fabricExtras;
  unsigned gridWidth = 0, gridHeight = 0, routableColors = 0;
  /// How --grid auto chose the fabric (empty otherwise).
  std::string gridAuto;
  /// Where a slice (--only-kernels) came from (empty otherwise).
  std::string slice;
  /// Copies of the network (--replicas), each on `replicaRows` rows, and
  /// per copy k >= 1 its host ports beside inputNames and outputNames
  /// (replicaInputs[k - 1][i] is copy k's port of inputNames[i]).
  int64_t replicas = 1, replicaRows = 0;
  /// Copies side by side in each band of rows (a copy's PEs: its band's
  /// over them).
  int64_t replicaColumns = 1;
  /// The rows the placed network (one copy) uses: its rectangles and host
  /// ports.
  int64_t rowsUsed = 0;
  /// What --replicas decided and why (empty with one copy asked for).
  std::string replicaPlan;
  std::vector<std::vector<std::string>> replicaInputs, replicaOutputs;
  /// Distinct colors the routes of the lowered program use.
  int64_t colorsUsed = 0;
  /// Training: the trained dense kernels, in chain order.
  std::vector<TrainedDense> trained;
  /// The stage that failed, when compileModel returned false.
  std::optional<Stage> failedStage;
  bool mixed = false;
};

/// Runs the pipeline on the model at `path` (or in `options.modelBytes`) up
/// to `options.untilAfter`. With `options.commandLineOptions`, the
/// pass-manager and timing command-line options apply (they must have been
/// registered). On failure returns false with `error` set to the diagnostics.
bool compileModel(mlir::MLIRContext &ctx, llvm::StringRef path,
                  const CompileOptions &options, CompiledModel &out,
                  std::string &error);

/// A context with every dialect import and the host reference need.
/// Single-threaded: conformance forks children from the driver, and runs
/// must not depend on scheduling.
std::unique_ptr<mlir::MLIRContext> createContext();

/// Imports the ONNX model in `path` (or in `bytes` when they are given; the
/// path then names the model in messages), or parses it when it is a `.mlir`
/// file already in the imported form (func @main_graph on tensors). On
/// failure returns nullptr and sets `error` to the diagnostics, one per line.
mlir::OwningOpRef<mlir::ModuleOp>
loadModel(mlir::MLIRContext &ctx, llvm::StringRef path, int64_t batchSize,
          std::string &error, llvm::StringRef bytes = {});

/// How the graph meets the fabric: the graph inputs the host streams (those
/// not frozen by a constant) beside the program's input ports, and the graph
/// outputs beside its output ports, all in order.
struct HostPorts {
  std::vector<reference::TensorSignature> inputs, outputs;
  std::vector<std::string> inputPorts, outputPorts;
};

/// Pairs the imported graph's inputs and outputs with the compiled program's
/// host ports; `frozen` names the inputs bound as constants. On failure (a
/// signature the reference rejects, or port counts that differ) returns
/// std::nullopt with `error` set.
std::optional<HostPorts> mapHostPorts(const CompiledModel &compiled,
                                      const std::vector<std::string> &frozen,
                                      std::string &error);

/// Gives an output read from the simulator its shape: the graph's `shape`
/// when the run streamed as many samples as the program was compiled for
/// (`batch`), else that shape with its batch dimension (or a new first one)
/// counting `samples`. An empty string, or the mismatch with the bytes.
std::string shapeOutput(tensorio::HostTensor &output,
                        const std::vector<int64_t> &shape, int64_t samples,
                        int64_t batch);

/// The host port of copy `copy` (0 the original) beside `port`, one of
/// compiled.inputNames or compiled.outputNames.
std::string replicaPort(const CompiledModel &compiled, llvm::StringRef port,
                        int64_t copy);

/// The host tensor `t` as the binary's input stream `io` takes it: an f32
/// tensor for an f16 stream (a sparse host input, docs/execution-model.md,
/// "Sparse activations") converted with round to nearest even, as the
/// layer's own conversion would; anything else unchanged.
tensorio::HostTensor toStreamType(const binary::IoStream &io,
                                  const tensorio::HostTensor &t);

/// The samples copy `copy` of compiled.replicas runs, dealt round robin
/// from `all` (`samples` samples back to back, its first dimension counting
/// them unless there is one sample): ceil(samples / copies) of them, the
/// last repeated when the copy gets one sample fewer than the first copy
/// (every port streams as many samples; the repeats' outputs are dropped).
/// On a shape whose first dimension the samples do not divide returns
/// std::nullopt with `error` set.
std::optional<tensorio::HostTensor> dealSamples(const tensorio::HostTensor &all,
                                                int64_t samples, int64_t copy,
                                                int64_t copies,
                                                std::string &error);

/// The outputs of `samples` samples in order, from every copy's output
/// (perCopy[k], ceil(samples / copies) samples back to back each, repeats
/// included): sample i is copy i mod copies' sample i / copies.
std::optional<tensorio::HostTensor>
gatherSamples(const std::vector<tensorio::HostTensor> &perCopy, int64_t samples,
              std::string &error);

/// Adds the compiler's MAC counts to the simulator's statistics (which count
/// what the PEs executed, `macs`): the model's and the executed MACs per
/// sample, which differ when weft writes a transpose, pad or reduction as a
/// 0/1 matrix.
void addCompilerFigures(llvm::json::Object &stats,
                        const CompiledModel &compiled);

/// What the simulator's statistics and the compiler's figures say about a
/// run (docs/performance.md, "Definitions").
struct RunFigures {
  int64_t cycles = 0, macs = 0, firstInjection = 0;
  /// From the first injection to the arrival of the first sample's last
  /// output wavelet (the simulator's `latency` when no sample finished).
  int64_t latency = 0;
  /// Per sample: the cycle its last output arrived.
  std::vector<int64_t> done;
  /// The median interval between consecutive samples (the pipeline's
  /// steady state), or 0 with fewer than two samples.
  double steadyCycles = 0;
  /// The cycles one sample takes: the steady state, else the latency.
  double cyclesPerSample = 0;
  /// The model's and the executed MACs per cycle over the fabric's peak
  /// (0 when cyclesPerSample is 0).
  double utilization = 0, executedUtilization = 0;
  /// Copies of the network that ran side by side; samples per million
  /// cycles (1e6 / cyclesPerSample) over the whole fabric, and per copy
  /// its cycles per sample and utilization over its own rows.
  int64_t replicas = 1;
  double samplesPerMillionCycles = 0, copyCyclesPerSample = 0,
         copyUtilization = 0;
  int64_t copyPEs = 0;
  /// Per kernel: the cycles of work of its busiest PE (CE-busy cycles with
  /// the sends that ran while the main thread waited for input moved into
  /// its free cycles), and that PE's CE-busy cycles.
  std::map<std::string, std::pair<int64_t, int64_t>> busiest;
};

/// Adds a run's figures to the simulator's statistics: the copies, the
/// samples dealt, samples per million cycles and the utilization over the
/// whole fabric and per copy.
void addRunFigures(llvm::json::Object &stats, const RunFigures &figures,
                   const CompiledModel &compiled, int64_t samples);

/// Reads the figures of a run from the simulator's statistics `stats` of
/// `program` (its layers name the kernels), with `compiled`'s MAC counts and
/// fabric size; `samples` is the number of samples dealt to the copies (0:
/// the simulator's count, which is right for one copy).
RunFigures readRunFigures(const llvm::json::Object *stats,
                          const binary::Program &program,
                          const CompiledModel &compiled, int64_t samples = 0);

/// The same with the per-PE statistics `pes` read already (the "pes" array
/// of `stats` is then not looked at).
RunFigures readRunFigures(const llvm::json::Object *stats,
                          const std::vector<sim::PeStats> &pes,
                          const binary::Program &program,
                          const CompiledModel &compiled, int64_t samples = 0);

} // namespace weft::driver

#endif // WEFT_DRIVER_DRIVER_H
