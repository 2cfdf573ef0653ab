//===- TrainCommand.cpp - weftc train -------------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// `weftc train MODEL --input x=X.npy --labels L.npy --optimizer
// sgd|mbgd|cpgd --lr LR --batch B --steps N -o trained.onnx`: compiles the model's
// training program (docs/training.md), streams the N x B samples and their
// labels through the simulated fabric, reads the trained weights back out
// of the PEs' memories and writes the model with its trained initializers
// replaced.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "weft/Driver/Train.h"
#include "weft/Kernels/Checkpoints.h"
#include "weft/Kernels/Chunks.h"
#include "weft/Kernels/ConvTraining.h"
#include "weft/Kernels/DenseTraining.h"
#include "weft/Sim/Simulator.h"

#include "mlir/IR/AsmState.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

using namespace llvm;
using namespace weft;
using namespace weftc;

namespace {

struct TrainOptions {
  cl::OptionCategory category{"weftc train options"};
  cl::opt<std::string> modelPath{cl::Positional, cl::Required,
                                 cl::desc("<model.onnx>"), cl::cat(category)};
  cl::opt<std::string> outPath{"o",
                               cl::desc("Write the trained model to FILE "
                                        "(required unless --until-after)"),
                               cl::value_desc("FILE"), cl::cat(category)};
  cl::opt<std::string> untilAfter{
      "until-after", cl::init(""),
      cl::desc("Stop after a stage (fabric, partition, route or wavelet) "
               "and print the training program there, without simulating"),
      cl::value_desc("STAGE"), cl::cat(category)};
  cl::opt<std::string> inputSpec{
      "input", cl::Required,
      cl::desc("The samples: NAME=FILE or FILE (.npy or .pb), steps x batch "
               "of them"),
      cl::value_desc("NAME=FILE"), cl::cat(category)};
  cl::opt<std::string> labelsPath{
      "labels", cl::Required,
      cl::desc("The samples' classes (int64), one per sample"),
      cl::value_desc("FILE"), cl::cat(category)};
  cl::opt<std::string> optimizer{"optimizer", cl::init("sgd"),
                                 cl::desc("sgd (batch 1), mbgd or cpgd "
                                          "(continuous propagation, batch "
                                          "1)"),
                                 cl::cat(category)};
  cl::opt<double> lr{"lr", cl::init(0.01), cl::desc("The learning rate"),
                     cl::cat(category)};
  cl::opt<int64_t> batch{"batch", cl::init(1),
                         cl::desc("Samples per update (the loss is their "
                                  "mean)"),
                         cl::cat(category)};
  cl::opt<int64_t> steps{"steps", cl::init(1),
                         cl::desc("Updates (steps x batch samples)"),
                         cl::cat(category)};
  cl::opt<std::string> grid{
      "grid", cl::init("16x16"),
      cl::desc("The fabric: WxH[,mem=B,colors=N,rq=N,cq=N] (default 16x16; "
               "the loss takes one column east of the network)"),
      cl::cat(category)};
  cl::opt<std::string> checkpoints{
      "checkpoints", cl::init("none"),
      cl::desc("Reverse checkpoints: none (every layer stores its input), "
               "auto (the least recompute within --pe-memory) or every-K"),
      cl::cat(category)};
  cl::opt<int64_t> peMemory{
      "pe-memory", cl::init(0),
      cl::desc("The bytes of memory a PE may use (default: the fabric's)"),
      cl::value_desc("BYTES"), cl::cat(category)};
  cl::opt<std::string> statsPath{
      "stats-file",
      cl::desc("Write the simulator's statistics JSON to FILE "
               "(also --stats)"),
      cl::value_desc("FILE"), cl::cat(category)};
  cl::opt<std::string> tracePath{
      "trace",
      cl::desc("Write the simulator's Chrome trace (tasks per PE, wavelets "
               "per link) to FILE"),
      cl::value_desc("FILE"), cl::cat(category)};
  cl::opt<std::string> objective{
      "partition-objective", cl::init("auto"),
      cl::desc("What the partition minimises first: auto (latency for "
               "sgd, which holds one sample in flight; interval for mbgd "
               "and cpgd), interval (the slowest layer's cycles per "
               "sample) or latency (the layers' cycles summed)"),
      cl::value_desc("auto|interval|latency"), cl::cat(category)};
  cl::opt<int64_t> maxCycles{"max-cycles", cl::init(2'000'000'000),
                             cl::desc("Stop the simulation after N cycles"),
                             cl::value_desc("N"), cl::cat(category)};
  ProgressFlags progress{category};

  void parse(int argc, char **argv) {
    parseWithStatsFile(
        argc, argv, category,
        "train an ONNX model's initializers on the simulated fabric\n");
  }
};

int fail(const char *argv0, const Twine &message) {
  errs() << argv0 << ": error: " << message << "\n";
  return 1;
}

} // namespace

int weftc::trainMain(int argc, char **argv) {
  TrainOptions opts;
  opts.parse(argc, argv);
  const char *argv0 = argv[0];
  if (opts.optimizer != "sgd" && opts.optimizer != "mbgd" &&
      opts.optimizer != "cpgd")
    return fail(argv0, "--optimizer must be sgd, mbgd or cpgd, not '" +
                           opts.optimizer + "'");
  if (opts.batch < 1 || opts.steps < 1)
    return fail(argv0, "--batch and --steps must be at least 1");
  if (opts.optimizer == "sgd" && opts.batch != 1)
    return fail(argv0, "sgd updates after every sample: --batch must be 1 "
                       "(mbgd averages over mini-batches)");
  if (opts.optimizer == "cpgd" && opts.batch != 1)
    return fail(argv0, "cpgd updates every layer after every sample: "
                       "--batch must be 1");
  if (!(opts.lr > 0) || !std::isfinite(opts.lr))
    return fail(argv0, "--lr must be positive and finite");
  const int64_t samples = opts.steps * opts.batch;
  StringMap<Stage> stages = {{"fabric", Stage::Fabric},
                             {"partition", Stage::Partition},
                             {"route", Stage::Route},
                             {"wavelet", Stage::Wavelet}};
  if (!opts.untilAfter.empty() && !stages.count(opts.untilAfter))
    return fail(argv0, "--until-after must be fabric, partition, route or "
                       "wavelet, not '" +
                           opts.untilAfter + "'");
  if (opts.untilAfter.empty() && opts.outPath.empty())
    return fail(argv0, "-o FILE names the trained model to write");

  // The samples and labels, before the compile.
  std::string inputName, inputFile = opts.inputSpec;
  if (size_t eq = inputFile.find('='); eq != std::string::npos) {
    inputName = inputFile.substr(0, eq);
    inputFile = inputFile.substr(eq + 1);
  }
  std::string err;
  std::optional<tensorio::HostTensor> xs =
      tensorio::readTensorFile(inputFile, &err);
  if (!xs)
    return fail(argv0, "cannot read '" + inputFile + "': " + err);
  if (xs->dtype != tensorio::DType::F32)
    return fail(argv0, "the samples in '" + inputFile + "' must be float32");
  std::optional<tensorio::HostTensor> labels =
      tensorio::readTensorFile(opts.labelsPath, &err);
  if (!labels)
    return fail(argv0, "cannot read '" + opts.labelsPath + "': " + err);

  std::unique_ptr<mlir::MLIRContext> ctx = createContext();
  CompileOptions co;
  co.grid = opts.grid;
  co.precision = "fp32";
  co.objective = opts.objective;
  if (opts.peMemory < 0)
    return fail(argv0, "--pe-memory must be positive");
  {
    conversion::CheckpointPolicy policy;
    std::string why;
    if (!conversion::CheckpointPolicy::parse(opts.checkpoints, policy, why))
      return fail(argv0, "--checkpoints: " + why);
  }
  // CPGD, and MBGD without reverse checkpoints, pipeline the samples (each
  // mini-batch's, for MBGD): the PEs need the samples of the run.
  const bool pipelined =
      opts.optimizer == "cpgd" ||
      (opts.optimizer == "mbgd" && opts.checkpoints == "none");
  co.training = driver::TrainingSpec{opts.optimizer, opts.lr, opts.batch,
                                     opts.checkpoints, opts.peMemory,
                                     pipelined ? samples : 0};
  opts.progress.apply(co);
  if (!opts.untilAfter.empty())
    co.untilAfter = stages.lookup(opts.untilAfter);
  CompiledModel compiled;
  if (!compileModel(*ctx, opts.modelPath, co, compiled, err))
    return fail(argv0, err);
  if (!opts.untilAfter.empty()) {
    compiled.module->print(outs());
    outs() << "\n";
    return 0;
  }
  if (compiled.inputNames.size() != 1 || compiled.outputNames.size() != 1)
    return fail(argv0, "weftc train takes a model of one input and one "
                       "output (the logits)");
  if (!inputName.empty() && inputName != compiled.inputNames[0])
    return fail(argv0, "the model's input is '" + compiled.inputNames[0] +
                           "', not '" + inputName + "'");

  const binary::Program &bin = *compiled.binary;
  const binary::IoStream *xIo = nullptr, *pIo = nullptr;
  for (const binary::IoStream &io : bin.io) {
    if (io.name == compiled.inputNames[0])
      xIo = &io;
    if (io.name == "probabilities")
      pIo = &io;
  }
  if (!xIo || !pIo)
    return fail(argv0, "internal error: the training program lacks its "
                       "ports");
  const int64_t perSample = int64_t(xIo->numElements()),
                classes = int64_t(pIo->numElements());
  const int64_t given = int64_t(xs->bytes.size() / 4);
  if (given != samples * perSample)
    return fail(argv0,
                "'" + inputFile + "' holds " +
                    std::to_string(given / std::max<int64_t>(perSample, 1)) +
                    " samples of " + std::to_string(perSample) + " values (" +
                    std::to_string(given) + " values), but --steps " +
                    std::to_string(opts.steps) + " x --batch " +
                    std::to_string(opts.batch) + " train on " +
                    std::to_string(samples));
  std::vector<int16_t> classOf =
      driver::checkLabels(*labels, samples, classes, err);
  if (classOf.empty())
    return fail(argv0, "'" + opts.labelsPath + "': " + err);

  // Simulate.
  sim::Options so;
  so.mode = sim::Mode::Fast;
  so.samples = uint64_t(samples);
  so.maxCycles = uint64_t(opts.maxCycles);
  so.trace = !opts.tracePath.empty();
  auto simulator = sim::Simulator::create(bin, so, &err);
  if (!simulator)
    return fail(argv0, "the training program does not load: " + err);
  std::vector<uint8_t> labelBytes(classOf.size() * 2);
  std::memcpy(labelBytes.data(), classOf.data(), labelBytes.size());
  if (!simulator->bindInput(xIo->name, xs->bytes, &err) ||
      !simulator->bindInput("labels", labelBytes, &err))
    return fail(argv0, err);
  sim::Status status = simulator->run();
  if (status != sim::Status::Done)
    return fail(argv0, std::string("the training run ended: ") +
                           sim::statusName(status) + ": " +
                           simulator->message());
  uint64_t cycles = simulator->cycle();

  // Read the weights back.
  std::vector<driver::TrainedValues> trained;
  for (const driver::TrainedDense &t : compiled.trained) {
    conversion::DenseMapping m;
    m.x0 = t.x0;
    m.y0 = t.y0;
    m.smear = t.smear;
    m.rows = t.rows;
    const conversion::DenseTraining &dt = t.training;
    driver::TrainedValues v;
    v.kernel = t.name;
    v.weightsSource = t.weightsSource;
    v.biasSource = t.biasSource;
    v.transposed = t.transposed;
    v.K = t.K;
    v.M = t.M;
    auto read = [&](const conversion::WordPlace &p, float &f) {
      std::vector<uint16_t> words;
      if (!simulator->readMemory(uint32_t(p.x), uint32_t(p.y), uint32_t(p.word),
                                 2, words, &err))
        return false;
      uint32_t bits = uint32_t(words[0]) | (uint32_t(words[1]) << 16);
      std::memcpy(&f, &bits, 4);
      return true;
    };
    if (t.conv) {
      // W in its initializer's OIHW order, b on the first column.
      const conversion::ConvShape &cs = *t.conv;
      v.conv = true;
      v.w.resize(size_t(cs.cout * cs.cin * cs.kh * cs.kw));
      size_t at = 0;
      for (int64_t o = 0; o < cs.cout; ++o)
        for (int64_t ci = 0; ci < cs.cin; ++ci)
          for (int64_t i = 0; i < cs.kh; ++i)
            for (int64_t j = 0; j < cs.kw; ++j)
              if (!read(conversion::trainedConvWeightPlace(cs, m, dt, o, ci, i,
                                                           j),
                        v.w[at++]))
                return fail(argv0,
                            "reading the weights of @" + t.name + ": " + err);
      if (t.bias) {
        v.b.resize(size_t(cs.cout));
        for (int64_t o = 0; o < cs.cout; ++o)
          if (!read(conversion::trainedConvBiasPlace(cs, m, dt, o),
                    v.b[size_t(o)]))
            return fail(argv0, "reading the bias of @" + t.name + ": " + err);
      }
      trained.push_back(std::move(v));
      continue;
    }
    v.w.resize(size_t(t.K * t.M));
    // The fabric's input element k is the model's (a feature-map input:
    // pixel-major per chunk, chunks of whole channels).
    auto modelRow = [&](int64_t k) {
      if (!t.inputPixels)
        return k;
      int64_t lk = t.K / t.smear;
      return conversion::featureMapIndex(k / lk, lk, t.inputPixels, k % lk);
    };
    for (int64_t k = 0; k < t.K; ++k)
      for (int64_t n = 0; n < t.M; ++n)
        if (!read(conversion::trainedWeightPlace(t.K, t.M, t.bias, t.relu, m,
                                                 dt, k, n),
                  v.w[size_t(modelRow(k) * t.M + n)]))
          return fail(argv0, "reading the weights of @" + t.name + ": " + err);
    if (t.bias) {
      v.b.resize(size_t(t.M));
      for (int64_t n = 0; n < t.M; ++n)
        if (!read(conversion::trainedBiasPlace(t.K, t.M, t.relu, m, dt, n),
                  v.b[size_t(n)]))
          return fail(argv0, "reading the bias of @" + t.name + ": " + err);
    }
    trained.push_back(std::move(v));
  }
  auto modelBuffer = MemoryBuffer::getFile(opts.modelPath);
  if (!modelBuffer)
    return fail(argv0, "cannot read '" + opts.modelPath + "'");
  std::string outBytes;
  if (!driver::replaceInitializers((*modelBuffer)->getBuffer().str(), trained,
                                   outBytes, err))
    return fail(argv0, err);
  {
    std::ofstream out(opts.outPath, std::ios::binary);
    out.write(outBytes.data(), std::streamsize(outBytes.size()));
    if (!out)
      return fail(argv0, "cannot write '" + opts.outPath + "'");
  }
  if (!opts.tracePath.empty()) {
    std::ofstream tr(opts.tracePath);
    tr << simulator->traceJson();
    if (!tr)
      return fail(argv0, "cannot write '" + opts.tracePath + "'");
  }
  if (!opts.statsPath.empty()) {
    std::ofstream st(opts.statsPath);
    st << simulator->statsJson();
    if (!st)
      return fail(argv0, "cannot write '" + opts.statsPath + "'");
  }

  // The report: the loss of the first and the last step, from the
  // probabilities the loss column sent out (the host only reports).
  std::vector<uint8_t> pBytes = simulator->output("probabilities");
  std::vector<float> p(pBytes.size() / 4);
  std::memcpy(p.data(), pBytes.data(), pBytes.size());
  auto stepLoss = [&](int64_t step) {
    double sum = 0;
    for (int64_t s = step * opts.batch; s < (step + 1) * opts.batch; ++s)
      sum -= std::log(
          std::max(double(p[size_t(s * classes + classOf[size_t(s)])]), 1e-38));
    return sum / double(opts.batch);
  };
  int64_t convs = 0;
  for (const driver::TrainedDense &t : compiled.trained)
    convs += t.conv ? 1 : 0;
  outs() << "weftc: trained " << int64_t(trained.size()) - convs
         << " dense layer(s)"
         << (convs ? " and " + std::to_string(convs) + " convolution(s)"
                   : std::string())
         << " of @"
         << compiled.programName << " with " << opts.optimizer << " (lr "
         << format("%g", double(opts.lr)) << ", batch " << opts.batch << ", "
         << opts.steps << " steps) on the " << compiled.gridWidth << "x"
         << compiled.gridHeight << " fabric\n";
  int64_t recomputeCycles = 0;
  std::string recomputed;
  for (const driver::TrainedDense &t : compiled.trained)
    if (!t.training.storesInput) {
      recomputeCycles += t.recomputeCycles;
      recomputed += (recomputed.empty() ? "@" : ", @") + t.name;
    }
  outs() << "weftc: checkpoints " << opts.checkpoints << ": "
         << (recomputed.empty() ? std::string("every layer stores its input")
                                : recomputed + " recompute their input")
         << " (predicted " << recomputeCycles
         << " recompute cycles per sample, " << recomputeCycles * samples
         << " in all)\n";
  const bool lags = llvm::any_of(compiled.trained,
                                 [](const driver::TrainedDense &t) {
                                   return t.training.lag > 0;
                                 });
  if (opts.optimizer == "mbgd" && pipelined && lags) {
    outs() << "weftc: mbgd: each mini-batch pipelined:";
    for (const driver::TrainedDense &t : compiled.trained)
      outs() << " @" << t.name << " lag " << t.training.lag << ";";
    outs() << "\n";
  }
  if (opts.optimizer == "cpgd") {
    // Which weights each pass sees (docs/training.md, "CPGD"): a layer's
    // forward of sample i runs before its backward of sample i - lag.
    outs() << "weftc: cpgd:";
    for (const driver::TrainedDense &t : compiled.trained)
      outs() << " @" << t.name << " lag " << t.training.lag << " ("
             << t.weightsSource << (t.biasSource.empty() ? "" : ", ")
             << t.biasSource << ");";
    outs() << "\n";
  }
  outs() << "weftc: simulated " << cycles << " cycles for " << samples
         << " samples ("
         << format("%.1f", 1e6 * double(samples) /
                               double(std::max<uint64_t>(cycles, 1)))
         << " samples per million cycles)\n";
  // The training step's figures (docs/performance.md, "Definitions"): the
  // model's MACs of a sample's step (every layer's forward and weight
  // gradient, and the input gradient of every layer but the first), the
  // steady interval between the samples' outputs (the mean over the middle
  // half of them: a pipelined schedule may deliver them unevenly, e.g. in
  // pairs), and the utilization of the whole fabric at 1 MAC per PE and
  // cycle (fp32).
  int64_t stepMacs = 0;
  for (const driver::TrainedDense &t : compiled.trained)
    stepMacs += (t.training.inputGradient ? 3 : 2) *
                (t.conv ? t.conv->modelMacs() : t.K * t.M);
  const std::vector<uint64_t> &done = simulator->stats().sampleDone;
  if (done.size() >= 2 && stepMacs > 0) {
    size_t n = done.size(), a = n / 4, b = (3 * n) / 4;
    if (b <= a)
      a = 0, b = n - 1;
    double interval = double(done[b] - done[a]) / double(b - a);
    double u = double(stepMacs) /
               (double(compiled.gridPEs) * std::max(interval, 1.0));
    outs() << "weftc: training step: " << stepMacs
           << " MACs of the model per sample (forward, input and weight "
              "gradients), "
           << format("%.1f", interval) << " cycles per sample (mean interval "
           << (a == 0 && b == n - 1 ? "over the samples"
                                    : "over the middle half of the samples")
           << "), utilization " << format("%.2f%%", 100.0 * u) << " ("
           << stepMacs << " / (" << compiled.gridPEs << " PEs x 1 MAC/cycle x "
           << format("%.1f", interval) << ")), "
           << format("%.1f", 1e6 / std::max(interval, 1.0))
           << " samples per million cycles\n";
  }
  // Each trained layer's round against the cost model the partitioner
  // balanced it by (predictTrainedDenseCycles): the busiest PE of its
  // rectangle, CE cycles per sample (progress only: its waits are not the
  // layer's work).
  if (samples > 0) {
    const weft::sim::Stats stats = simulator->stats();
    std::vector<double> errors;
    for (const driver::TrainedDense &t : compiled.trained) {
      conversion::DenseMapping m;
      m.x0 = t.x0, m.y0 = t.y0, m.smear = t.smear, m.rows = t.rows;
      int64_t predicted =
          t.conv ? conversion::predictTrainedConvCycles(*t.conv, m, t.training)
                 : conversion::predictTrainedDenseCycles(t.K, t.M, t.bias,
                                                         t.relu, m,
                                                         t.training);
      uint64_t busiest = 0;
      for (const weft::sim::PeStats &pe : stats.pes)
        if (int64_t(pe.x) >= m.x0 && int64_t(pe.x) < m.x0 + m.smear &&
            int64_t(pe.y) >= m.y0 && int64_t(pe.y) < m.y0 + m.footprint())
          busiest = std::max(busiest, pe.ceBusyCycles);
      double simulated = double(busiest) / double(samples);
      double err = simulated > 0
                       ? std::abs(double(predicted) - simulated) / simulated
                       : 0.0;
      errors.push_back(err);
      std::string what =
          t.conv ? "conv " + std::to_string(t.conv->cin) + "x" +
                       std::to_string(t.conv->hin) + "x" +
                       std::to_string(t.conv->win) + " -> " +
                       std::to_string(t.conv->cout) + "x" +
                       std::to_string(t.conv->hout()) + "x" +
                       std::to_string(t.conv->wout())
                 : "dense " + std::to_string(t.K) + " -> " +
                       std::to_string(t.M);
      outs() << "weftc: @" << t.name << ": " << what << " trained on " << m.smear << "x" << m.rows
             << " PEs at column " << m.x0 << ": CE cycles per sample predicted "
             << predicted << ", simulated " << format("%.1f", simulated)
             << " (busiest PE; error " << format("%.1f%%", 100 * err)
             << ")\n";
    }
    if (!errors.empty()) {
      std::vector<double> sorted = errors;
      std::sort(sorted.begin(), sorted.end());
      outs() << "weftc: training cost model: error max "
             << format("%.1f%%", 100 * sorted.back()) << ", median "
             << format("%.1f%%", 100 * sorted[sorted.size() / 2]) << " over "
             << sorted.size() << " trained layers\n";
    }
  }
  outs() << "weftc: memory high-water mark "
         << simulator->stats().memoryHighWaterBytes
         << " bytes (the fullest PE)\n";
  outs() << "weftc: loss " << format("%.6f", stepLoss(0)) << " at step 1, "
         << format("%.6f", stepLoss(opts.steps - 1)) << " at step "
         << opts.steps << " (before each step's update)\n";
  outs() << "weftc: wrote " << opts.outPath << "\n";
  return 0;
}
