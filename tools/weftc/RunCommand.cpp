//===- RunCommand.cpp - weftc run -----------------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// weftc run model.onnx --input NAME=FILE ... [--output-dir DIR] [--check]
//           [--stats FILE] [--samples N] [--grid WxH] [--precision P]
//           [--constant NAME=FILE ...] [--rtol R] [--atol A]
//
// Compiles the model to a temporary .wfb, runs a separate `weft-sim` process
// (the one next to this executable) on that file alone, and reads the
// outputs back. Batch rows are samples: an [N, K] input is streamed as N
// samples. Prints the predicted and simulated cycles per sample, the latency
// and the utilization (../shared/metrics.md); `--check` runs the host
// reference on the same inputs and fails on a mismatch.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "weft/Binary/File.h"
#include "weft/Reference/Compare.h"
#include "weft/Reference/Reference.h"
#include "weft/Target/ISA.h"
#include "weft/Pipeline/Pipeline.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace llvm;
using namespace weft;
using namespace weftc;

/// weft-sim's output file stem for a stream name (tools/weft-sim).
static std::string simFileStem(StringRef name) {
  std::string s;
  for (char c : name)
    s += isAlnum(c) || c == '_' || c == '-' || c == '.' ? c : '_';
  return s;
}

static std::string readText(const Twine &path) {
  auto buffer = MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

namespace {
/// Removes a directory tree when it goes out of scope.
struct TempDir {
  SmallString<128> path;
  bool keep = false;
  ~TempDir() {
    if (!path.empty() && !keep)
      (void)sys::fs::remove_directories(path);
  }
};
} // namespace

/// Compares one simulated output with the reference and says so; false on
/// a mismatch (a NaN where the reference has a number is one).
static bool checkOutput(const reference::TensorSignature &outSig,
                        const tensorio::HostTensor &got,
                        const tensorio::HostTensor &want,
                        reference::Tolerance tolerance) {
  reference::Comparison cmp = reference::compareTensors(got, want, tolerance);
  // The largest error over all elements, also when everything agrees.
  double maxErr = 0;
  int64_t worst = 0;
  if (got.bytes.size() == want.bytes.size()) {
    const float *g = reinterpret_cast<const float *>(got.bytes.data());
    const float *w = reinterpret_cast<const float *>(want.bytes.data());
    for (size_t i = 0; i < got.bytes.size() / 4; ++i)
      if (double e = std::abs(double(g[i]) - double(w[i])); e > maxErr) {
        maxErr = e;
        worst = int64_t(i);
      }
  }
  std::string where;
  if (int64_t cols = outSig.shape.empty() ? 1 : outSig.shape.back(); cols > 0)
    where = "[" + std::to_string(worst / cols) + ", " +
            std::to_string(worst % cols) + "]";
  if (!cmp.equal) {
    outs() << "weftc: check '" << outSig.name << "': MISMATCH: " << cmp.message
           << " (rtol " << format("%g", tolerance.rtol) << ", atol "
           << format("%g", tolerance.atol) << ")\n";
    return false;
  }
  outs() << "weftc: check '" << outSig.name << "': matches the host reference"
         << " (max abs error " << format("%.3g", maxErr) << " at " << where
         << "; rtol " << format("%g", tolerance.rtol) << ", atol "
         << format("%g", tolerance.atol) << ")\n";
  return true;
}

int weftc::runMain(int argc, char **argv) {
  cl::OptionCategory category("weftc run options");
  cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                                 cl::desc("<model.onnx or imported .mlir>"),
                                 cl::cat(category));
  cl::list<std::string> inputSpecs(
      "input",
      cl::desc("The graph input: NAME=FILE, or FILE (.npy or ONNX "
               "TensorProto .pb); an [N, K] tensor is N samples"),
      cl::value_desc("NAME=FILE"), cl::cat(category));
  cl::list<std::string> constants(
      "constant",
      cl::desc("Freeze graph input NAME to the tensor in FILE (weights the "
               "model takes as inputs); the reference gets it as an input"),
      cl::value_desc("NAME=FILE"), cl::cat(category));
  cl::opt<std::string> outputDir(
      "output-dir", cl::desc("Write the outputs to DIR/<name>.npy"),
      cl::value_desc("DIR"), cl::cat(category));
  cl::opt<bool> check("check",
                      cl::desc("Compare with the host reference; exit 1 on a "
                               "mismatch"),
                      cl::cat(category));
  // `--stats FILE` (weft-sim's spelling) is rewritten to --stats-file
  // below: LLVM owns a boolean `-stats` option.
  cl::opt<std::string> statsPath(
      "stats-file",
      cl::desc("Keep the simulator's statistics JSON in FILE (also --stats)"),
      cl::value_desc("FILE"), cl::cat(category));
  cl::opt<int64_t> samples(
      "samples", cl::init(0),
      cl::desc("Samples to stream: the size bound to a symbolic batch "
               "dimension (default: the model's batch)"),
      cl::cat(category));
  FabricFlags fabric(category);
  cl::opt<double> rtol("rtol", cl::init(-1),
                       cl::desc("Relative tolerance of --check (default: "
                                "1e-3 fp32, 1e-2 mixed)"),
                       cl::cat(category));
  cl::opt<double> atol("atol", cl::init(-1),
                       cl::desc("Absolute tolerance of --check (default: "
                                "1e-4 fp32, 1e-2 mixed)"),
                       cl::cat(category));
  cl::opt<std::string> simPath(
      "weft-sim", cl::desc("The simulator (default: weft-sim next to weftc)"),
      cl::value_desc("PATH"), cl::cat(category));
  cl::opt<bool> keepTemps("keep-temps",
                          cl::desc("Keep the temporary directory (.wfb, "
                                   "outputs, simulator log)"),
                          cl::cat(category));
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  mlir::registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions(category);
  std::vector<std::string> rewritten;
  for (int i = 0; i < argc; ++i) {
    StringRef a = argv[i];
    if ((a == "--stats" || a == "-stats") && i + 1 < argc)
      rewritten.push_back(std::string("--stats-file=") + argv[++i]);
    else if (a.consume_front("--stats=") || a.consume_front("-stats="))
      rewritten.push_back(("--stats-file=" + a).str());
    else
      rewritten.push_back(argv[i]);
  }
  std::vector<char *> cliArgs;
  for (std::string &a : rewritten)
    cliArgs.push_back(a.data());
  cl::ParseCommandLineOptions(
      int(cliArgs.size()), cliArgs.data(),
      "compile an ONNX model and run it on the simulated fabric\n");

  auto fail = [&](const Twine &message, int code = 1) {
    errs() << argv[0] << ": error: " << message << "\n";
    return code;
  };
  const std::string &precision = fabric.precision;
  if (precision != "fp32" && precision != "mixed")
    return fail("--precision must be fp32 or mixed, not '" + precision + "'");
  bool mixed = precision == "mixed";
  reference::Tolerance tolerance{rtol >= 0 ? rtol : (mixed ? 1e-2 : 1e-3),
                                 atol >= 0 ? atol : (mixed ? 1e-2 : 1e-4)};

  // Read the inputs first: a bad file should not cost a compile.
  struct Input {
    std::string name, file;
    tensorio::HostTensor tensor;
  };
  std::vector<Input> inputs;
  for (const std::string &spec : inputSpecs) {
    auto [name, file] = StringRef(spec).split('=');
    if (!StringRef(spec).contains('=')) {
      file = name;
      name = "";
    }
    if (file.empty())
      return fail("--input " + spec + " names no file");
    std::string why;
    std::optional<tensorio::HostTensor> t =
        tensorio::readTensorFile(file.str(), &why);
    if (!t)
      return fail("cannot read input '" + file + "': " + why);
    inputs.push_back({name.str(), file.str(), std::move(*t)});
  }
  if (inputs.empty())
    return fail("give every streamed graph input with --input NAME=FILE "
                "(weights the model takes as inputs with --constant "
                "NAME=FILE)");

  // Compile to a temporary .wfb.
  std::string mainExe =
      sys::fs::getMainExecutable(argv[0], (void *)&weftc::runMain);
  std::string sim = simPath.empty()
                        ? (sys::path::parent_path(mainExe) + "/weft-sim").str()
                        : simPath.getValue();
  if (!sys::fs::can_execute(sim))
    return fail("cannot find the simulator at '" + sim + "'");

  weft::registerAllPasses();
  std::unique_ptr<mlir::MLIRContext> ctx = createContext();
  CompileOptions options;
  fabric.apply(options);
  options.batchSize = samples > 0 ? samples.getValue() : 1;
  options.constants.assign(constants.begin(), constants.end());
  CompiledModel compiled;
  std::string error;
  if (!compileModel(*ctx, modelPath, options, compiled, error))
    return fail(error);
  if (samples > 0 && compiled.batch != samples)
    return fail("the model's batch dimension is fixed at " +
                Twine(compiled.batch) + "; --samples " + Twine(samples) +
                " needs a symbolic batch dimension");
  int64_t numSamples = compiled.batch;

  // Which --input feeds which graph input: the graph's inputs less the
  // frozen ones, in order, are the fabric's host inputs.
  auto signature = reference::readGraphSignature(*compiled.imported);
  if (!signature)
    return fail(toString(signature.takeError()));
  auto frozen = [&](StringRef name) {
    return llvm::any_of(constants, [&](const std::string &c) {
      return StringRef(c).split('=').first == name;
    });
  };
  std::vector<std::string> streamed;
  for (const reference::TensorSignature &sig : signature->inputs)
    if (!frozen(sig.name))
      streamed.push_back(sig.name);
  if (streamed.size() != compiled.inputNames.size())
    return fail("the fabric program has " +
                Twine(compiled.inputNames.size()) + " host inputs for " +
                Twine(streamed.size()) + " streamed graph inputs");
  if (inputs.size() == 1 && inputs[0].name.empty() && streamed.size() == 1)
    inputs[0].name = streamed[0];
  for (const Input &in : inputs) {
    if (in.name.empty())
      return fail("--input " + in.file + " needs a NAME= (the graph has " +
                  Twine(streamed.size()) + " streamed inputs)");
    if (frozen(in.name))
      return fail("--input " + in.name + " is frozen by --constant");
    if (!llvm::is_contained(streamed, in.name))
      return fail("--input " + in.name + ": the graph has no input '" +
                  in.name + "'");
  }
  for (const std::string &name : streamed)
    if (llvm::none_of(inputs, [&](const Input &in) { return in.name == name; }))
      return fail("graph input '" + name + "' needs --input " + name +
                  "=FILE");

  TempDir temp;
  temp.keep = keepTemps;
  if (std::error_code ec =
          sys::fs::createUniqueDirectory("weftc-run", temp.path))
    return fail("cannot create a temporary directory: " + ec.message());
  if (keepTemps)
    outs() << "weftc: temporaries in " << temp.path << "\n";
  std::string wfb = (temp.path + "/model.wfb").str();
  if (!binary::writeFile(wfb, *compiled.binary, &error))
    return fail("cannot write '" + wfb + "': " + error);

  // The simulator: a separate process on the .wfb alone.
  std::string simOut = (temp.path + "/out").str();
  std::string stats = statsPath.empty() ? (temp.path + "/stats.json").str()
                                        : statsPath.getValue();
  std::string logOut = (temp.path + "/sim.stdout").str();
  std::vector<std::string> args = {sim, wfb};
  for (auto [name, port] : llvm::zip(streamed, compiled.inputNames)) {
    const Input &in = *llvm::find_if(
        inputs, [&, &name = name](const Input &i) { return i.name == name; });
    args.insert(args.end(), {"--input", port + "=" + in.file});
  }
  args.insert(args.end(), {"--output-dir", simOut, "--stats", stats,
                           "--samples", std::to_string(numSamples),
                           "--progress"});
  std::vector<StringRef> argRefs(args.begin(), args.end());
  // The simulator's stderr (its progress every ~2 s of a long run, its
  // diagnostics) goes straight to ours.
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logOut),
                                          std::nullopt};
  outs().flush();
  std::string execError;
  int rc = sys::ExecuteAndWait(sim, argRefs, std::nullopt, redirects, 0, 0,
                               &execError);
  std::string simStdout = readText(logOut);
  for (StringRef line : split(StringRef(simStdout).trim(), '\n'))
    if (line.starts_with("weft-sim: done") ||
        line.starts_with("weft-sim: warning"))
      outs() << line << "\n";
  if (rc != 0) {
    return fail("weft-sim failed (exit status " + Twine(rc) + ")" +
                    (execError.empty() ? "" : ": " + execError),
                2);
  }

  // The outputs, reshaped from samples x [1, M] to the graph's [N, M].
  std::string why;
  if (signature->outputs.size() != compiled.outputNames.size())
    return fail("the fabric program has " +
                Twine(compiled.outputNames.size()) + " host outputs for " +
                Twine(signature->outputs.size()) + " graph outputs");
  std::vector<tensorio::HostTensor> gots;
  for (auto [outSig, port] :
       llvm::zip(signature->outputs, compiled.outputNames)) {
    std::optional<tensorio::HostTensor> got = tensorio::readTensorFile(
        simOut + "/" + simFileStem(port) + ".npy", &why);
    if (!got)
      return fail("cannot read the simulator's output: " + why);
    got->shape = outSig.shape;
    if (std::string bad = got->validate(); !bad.empty())
      return fail("the simulator's output does not have the graph's shape: " +
                  bad);
    if (!outputDir.empty()) {
      if (std::error_code ec = sys::fs::create_directories(outputDir))
        return fail("cannot create '" + outputDir + "': " + ec.message());
      std::string path =
          outputDir + "/" +
          simFileStem(outSig.name.empty() ? "output" : outSig.name) + ".npy";
      if (!tensorio::writeTensorFile(path, *got, &why))
        return fail("cannot write '" + path + "': " + why);
      outs() << "wrote " << path << "\n";
    }
    gots.push_back(std::move(*got));
  }

  // Figures (../shared/metrics.md).
  auto json = json::parse(readText(stats));
  if (!json)
    return fail("cannot parse the simulator's statistics: " +
                toString(json.takeError()));
  // The compiler's MAC counts beside the simulator's (which counts what
  // the PEs executed, `macs`): the model's and the executed MACs per
  // sample, which differ when weft writes a transpose, pad or reduction as
  // a 0/1 matrix.
  if (json::Object *obj = json->getAsObject(); obj && !statsPath.empty()) {
    obj->try_emplace("model_macs_per_sample", compiled.macsPerSample);
    obj->try_emplace("executed_macs_per_sample",
                     compiled.executedMacsPerSample);
    {
      std::error_code ec;
      raw_fd_ostream os(stats, ec);
      if (ec)
        return fail("cannot write '" + stats + "': " + ec.message());
      os << formatv("{0:2}", json::Value(std::move(*obj))) << "\n";
    }
    json = json::parse(readText(stats));
    if (!json)
      return fail("cannot parse the statistics: " + toString(json.takeError()));
  }
  const json::Object *st = json->getAsObject();
  int64_t cycles = st ? st->getInteger("cycles").value_or(0) : 0;
  int64_t latency = st ? st->getInteger("latency").value_or(0) : 0;
  int64_t simMacs = st ? st->getInteger("macs").value_or(0) : 0;
  std::vector<int64_t> done;
  if (const json::Array *a = st ? st->getArray("sample_done") : nullptr)
    for (const json::Value &v : *a)
      done.push_back(v.getAsInteger().value_or(0));
  // Per kernel: the CE-busy cycles of its busiest PE, per sample (the
  // kernel's own pace; the slowest kernel's is the pipeline's).
  std::map<std::string, int64_t> busiest;
  if (const json::Array *pes = st ? st->getArray("pes") : nullptr) {
    const std::vector<std::string> &names = compiled.binary->layers;
    for (const json::Value &v : *pes) {
      const json::Object *pe = v.getAsObject();
      if (!pe)
        continue;
      int64_t layer = pe->getInteger("layer").value_or(-1);
      if (layer < 0 || size_t(layer) >= names.size())
        continue;
      int64_t &b = busiest[names[size_t(layer)]];
      b = std::max(b, pe->getInteger("ce_busy_cycles").value_or(0));
    }
  }
  int64_t macsPerSample = compiled.macsPerSample;
  unsigned peak = target::peakMacsPerCycle(compiled.mixed);
  int64_t inK = compiled.kernels.empty() ? 0 : compiled.kernels.front().K;
  int64_t outM = compiled.kernels.empty() ? 0 : compiled.kernels.back().M;
  outs() << "weftc: @" << compiled.programName << ": " << inK << " -> " << outM
         << ", " << compiled.kernels.size()
         << (compiled.kernels.size() == 1 ? " kernel" : " kernels")
         << " on the " << compiled.gridWidth << "x" << compiled.gridHeight
         << " fabric (" << (compiled.mixed ? "mixed" : "fp32") << "), "
         << numSamples << (numSamples == 1 ? " sample" : " samples") << ", "
         << compiled.colorsUsed << " of " << compiled.routableColors
         << " colors\n";
  if (!compiled.gridAuto.empty())
    outs() << "weftc: grid auto: " << compiled.gridAuto << "\n";
  for (const KernelFigures &k : compiled.kernels) {
    outs() << "weftc: @" << k.name << ": " << k.what << " on " << k.width << "x"
           << k.rows << " PEs at column " << k.x0
           << ": cycles per sample predicted " << k.predictedCycles;
    auto it = busiest.find(k.name);
    if (it != busiest.end() && numSamples > 0) {
      double sim = double(it->second) / double(numSamples);
      outs() << ", simulated " << format("%.1f", sim) << " (busiest PE; error "
             << format("%.1f%%",
                       100 * std::abs(double(k.predictedCycles) - sim) / sim)
             << ")";
    }
    outs() << "\n";
  }
  // Latency of one sample (architecture §5.4): from the first injection
  // to the arrival of the first sample's last output wavelet.
  int64_t firstInjection =
      st ? st->getInteger("first_injection").value_or(0) : 0;
  if (!done.empty())
    latency = done.front() - firstInjection;
  outs() << "weftc: simulated " << cycles << " cycles, latency " << latency
         << " cycles (first sample), " << simMacs
         << " MACs (network: " << macsPerSample << " per sample)\n";
  double steady = 0;
  if (done.size() >= 2) {
    // The median interval between consecutive samples: the pipeline's
    // steady state, robust to the fill (first) and drain (last) intervals.
    std::vector<int64_t> gaps;
    for (size_t i = 1; i < done.size(); ++i)
      gaps.push_back(done[i] - done[i - 1]);
    std::sort(gaps.begin(), gaps.end());
    size_t n = gaps.size();
    steady = n % 2 ? double(gaps[n / 2])
                   : 0.5 * double(gaps[n / 2 - 1] + gaps[n / 2]);
    double err = std::abs(double(compiled.predictedCycles) - steady) / steady;
    outs() << "weftc: cycles per sample: predicted " << compiled.predictedCycles
           << ", simulated " << format("%.1f", steady) << " (median of "
           << done.size() - 1 << " intervals; model error "
           << format("%.1f%%", 100 * err) << ")\n";
  } else {
    outs() << "weftc: cycles per sample: predicted " << compiled.predictedCycles
           << ", simulated: needs 2 or more samples (latency " << latency
           << ")\n";
  }
  double t = steady > 0 ? steady : double(latency);
  if (t > 0)
    outs() << "weftc: utilization "
           << format("%.2f%%", 100.0 * double(macsPerSample) /
                                   (double(compiled.gridPEs) * peak * t))
           << " (" << macsPerSample << " MACs of the model / ("
           << compiled.gridPEs << " PEs x " << peak << " MAC/cycle x "
           << format("%.1f", t)
           << (steady > 0 ? " cycles per sample))" : " cycles of latency))")
           << "\n";
  if (t > 0 && compiled.executedMacsPerSample != macsPerSample)
    outs() << "weftc: executed MACs "
           << format("%.2f%%",
                     100.0 * double(compiled.executedMacsPerSample) /
                         (double(compiled.gridPEs) * peak * t))
           << " of the fabric's peak (" << compiled.executedMacsPerSample
           << " MACs per sample executed, " << macsPerSample
           << " of them the model's; the rest are transposes, pads or "
              "reductions done as 0/1 matrices)\n";

  if (!check)
    return 0;
  auto exe = reference::ReferenceExecutable::compile(*compiled.imported);
  if (!exe)
    return fail("the host reference: " + toString(exe.takeError()));
  std::vector<reference::NamedTensor> refInputs;
  for (const Input &in : inputs)
    refInputs.push_back({in.name, in.tensor});
  for (const std::string &spec : constants) {
    auto [name, file] = StringRef(spec).split('=');
    std::optional<tensorio::HostTensor> c =
        tensorio::readTensorFile(file.str(), &why);
    if (!c)
      return fail("cannot read '" + file + "': " + why);
    refInputs.push_back({name.str(), std::move(*c)});
  }
  auto want = (*exe)->run(refInputs);
  if (!want)
    return fail("the host reference: " + toString(want.takeError()));
  int rcCheck = 0;
  for (auto [outSig, got, ref] : llvm::zip(signature->outputs, gots, *want))
    if (!checkOutput(outSig, got, ref, tolerance))
      rcCheck = 3;
  return rcCheck;
}

