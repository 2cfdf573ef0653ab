//===- RunCommand.cpp - weftc run -----------------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// weftc run model.onnx --input NAME=FILE ... [--output-dir DIR] [--check]
//           [--stats FILE] [--samples N] [--grid WxH] [--precision P]
//           [--constant NAME=FILE ...] [--rtol R] [--atol A]
//           [--only-kernels FIRST..LAST] [--progress|--no-progress]
//           [--trace FILE] [--report FILE.html]
//
// Compiles the model to a temporary .wfb, runs a separate `weft-sim` process
// (the one next to this executable) on that file alone, and reads the
// outputs back. Batch rows are samples: an [N, K] input is streamed as N
// samples. Prints the predicted and simulated cycles per sample, the latency
// and the utilization (docs/performance.md, "Definitions"); `--check` runs
// the host reference on the same inputs and fails on a mismatch. With
// --only-kernels, runs that slice of the placed network alone, its host
// inputs given by port name or filled with seeded values (docs/weftc.md,
// "Slices"). --trace keeps the simulator's Chrome trace; --report writes the
// run's report page (docs/report.md).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "weft/Binary/File.h"
#include "weft/Driver/Driver.h"
#include "weft/Driver/Report.h"
#include "weft/Kernels/Replicas.h"
#include "weft/Machine/ISA.h"
#include "weft/Machine/Numerics.h"
#include "weft/Pipeline/Pipeline.h"
#include "weft/Reference/Compare.h"
#include "weft/Reference/Reference.h"

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
#include <cstring>
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

namespace {

/// The options of `weftc run`, registered with the command line while the
/// object lives.
struct RunOptions {
  cl::OptionCategory category{"weftc run options"};
  cl::opt<std::string> modelPath{cl::Positional, cl::Required,
                                 cl::desc("<model.onnx or imported .mlir>"),
                                 cl::cat(category)};
  cl::list<std::string> inputSpecs{
      "input",
      cl::desc("The graph input: NAME=FILE, or FILE (.npy or ONNX "
               "TensorProto .pb); an [N, K] tensor is N samples"),
      cl::value_desc("NAME=FILE"), cl::cat(category)};
  cl::list<std::string> constants{
      "constant",
      cl::desc("Freeze graph input NAME to the tensor in FILE (weights the "
               "model takes as inputs); the reference gets it as an input"),
      cl::value_desc("NAME=FILE"), cl::cat(category)};
  cl::opt<std::string> outputDir{
      "output-dir", cl::desc("Write the outputs to DIR/<name>.npy"),
      cl::value_desc("DIR"), cl::cat(category)};
  cl::opt<bool> check{"check",
                      cl::desc("Compare with the host reference; exit 1 on a "
                               "mismatch"),
                      cl::cat(category)};
  // `--stats FILE` (weft-sim's spelling) is rewritten to --stats-file
  // before parsing: LLVM owns a boolean `-stats` option.
  cl::opt<std::string> statsPath{
      "stats-file",
      cl::desc("Keep the simulator's statistics JSON in FILE (also --stats)"),
      cl::value_desc("FILE"), cl::cat(category)};
  cl::opt<int64_t> samples{
      "samples", cl::init(0),
      cl::desc("Samples to stream: the size bound to a symbolic batch "
               "dimension (default: the model's batch)"),
      cl::cat(category)};
  FabricFlags fabric{category};
  ProgressFlags progress{category};
  cl::opt<int64_t> maxCycles{
      "max-cycles", cl::init(0),
      cl::desc("Stop the simulation after N cycles (weft-sim's --max-cycles; "
               "default: the simulator's)"),
      cl::value_desc("N"), cl::cat(category)};
  cl::opt<double> rtol{"rtol", cl::init(-1),
                       cl::desc("Relative tolerance of --check (default: "
                                "1e-3 fp32, 1e-2 mixed)"),
                       cl::cat(category)};
  cl::opt<double> atol{"atol", cl::init(-1),
                       cl::desc("Absolute tolerance of --check (default: "
                                "1e-4 fp32, 1e-2 mixed)"),
                       cl::cat(category)};
  cl::opt<std::string> simPath{
      "weft-sim", cl::desc("The simulator (default: weft-sim next to weftc)"),
      cl::value_desc("PATH"), cl::cat(category)};
  cl::opt<std::string> tracePath{
      "trace",
      cl::desc("Keep the simulator's Chrome trace (tasks per PE, wavelets "
               "per link) in FILE"),
      cl::value_desc("FILE"), cl::cat(category)};
  cl::opt<std::string> reportPath{
      "report",
      cl::desc("Write the run's report page (the fabric, heatmaps, per-layer "
               "cycles; docs/report.md) to FILE.html"),
      cl::value_desc("FILE"), cl::cat(category)};
  cl::opt<bool> keepTemps{"keep-temps",
                          cl::desc("Keep the temporary directory (.wfb, "
                                   "outputs, simulator log)"),
                          cl::cat(category)};

  /// Registers the MLIR options weftc run honours and parses the command
  /// line, with `--stats FILE` rewritten to `--stats-file=FILE`.
  void parse(int argc, char **argv);
};

/// One input given with --input, read before the compile.
struct Input {
  std::string name, file;
  tensorio::HostTensor tensor;
};

/// One `weftc run`: its steps in order, each returning false (with the exit
/// status in `exitCode`) when the run ends there.
class RunSession {
public:
  RunSession(const RunOptions &opts, const char *argv0)
      : opts(opts), argv0(argv0) {}

  /// Runs every step; returns the command's exit status.
  int run();

private:
  bool fail(const Twine &message, int code = 1) {
    errs() << argv0 << ": error: " << message << "\n";
    exitCode = code;
    return false;
  }
  bool validateOptions();
  bool checkReportPath();
  bool readInputs();
  bool findSimulator();
  bool compile();
  bool isFrozen(StringRef name) const;
  bool mapInputs();
  bool synthesizeSliceInputs();
  bool writeBinary();
  bool runSimulator();
  bool addInputArgs(const Input &in, const std::string &port,
                    std::vector<std::string> &args);
  std::optional<tensorio::HostTensor> readPortOutput(const std::string &port);
  bool readOutputs();
  bool readStatistics(driver::RunFigures &figures);
  void printKernels(const driver::RunFigures &figures) const;
  void printFigures(const driver::RunFigures &figures) const;
  bool writeReport(const driver::RunFigures &figures);
  bool checkWithReference();
  bool calibrate(CompileOptions &options);
  bool referenceInputs(std::vector<reference::NamedTensor> &out);

  const RunOptions &opts;
  const char *argv0;
  int exitCode = 0;
  reference::Tolerance tolerance;
  std::vector<Input> inputs;
  /// The simulator's per-PE statistics (readStatistics).
  std::vector<sim::PeStats> peStats;
  std::string sim;
  std::unique_ptr<mlir::MLIRContext> ctx;
  CompiledModel compiled;
  int64_t numSamples = 0;
  /// The graph's streamed inputs and its outputs beside the host ports.
  std::optional<driver::HostPorts> ports;
  /// The graph inputs the host streams (those not frozen), in order.
  std::vector<std::string> streamed;
  TempDir temp, sliceDir;
  std::string wfb, simOut, stats;
  /// The simulated outputs, shaped as the graph's.
  std::vector<tensorio::HostTensor> gots;
};

} // namespace

void weftc::parseWithStatsFile(int argc, char **argv,
                               cl::OptionCategory &category,
                               StringRef overview) {
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
  cl::ParseCommandLineOptions(int(cliArgs.size()), cliArgs.data(), overview);
}

void RunOptions::parse(int argc, char **argv) {
  parseWithStatsFile(
      argc, argv, category,
      "compile an ONNX model and run it on the simulated fabric\n");
}

bool RunSession::validateOptions() {
  const std::string &precision = opts.fabric.precision;
  if (precision != "fp32" && precision != "mixed")
    return fail("--precision must be fp32 or mixed, not '" + precision + "'");
  bool mixed = precision == "mixed";
  // Given flags mean what they say: a count or a tolerance out of range is
  // an error, never a silent default.
  if (opts.samples.getNumOccurrences() && opts.samples <= 0)
    return fail("--samples must be a positive number of samples, not " +
                Twine(opts.samples.getValue()));
  if (opts.maxCycles.getNumOccurrences() && opts.maxCycles <= 0)
    return fail("--max-cycles must be a positive number of cycles, not " +
                Twine(opts.maxCycles.getValue()));
  for (const cl::opt<double> *t : {&opts.rtol, &opts.atol}) {
    if (!t->getNumOccurrences() || t->getValue() >= 0)
      continue;
    std::string value;
    raw_string_ostream(value) << format("%g", t->getValue());
    return fail("--" + t->ArgStr + " must be a tolerance of 0 or more, not " +
                value);
  }
  tolerance = {opts.rtol.getNumOccurrences() ? opts.rtol.getValue()
                                             : (mixed ? 1e-2 : 1e-3),
               opts.atol.getNumOccurrences() ? opts.atol.getValue()
                                             : (mixed ? 1e-2 : 1e-4)};
  // The output directory is made (or found unwritable) before a compile
  // that may take a while.
  if (!opts.outputDir.empty()) {
    const std::string &dir = opts.outputDir;
    if (std::error_code ec = sys::fs::create_directories(dir))
      return fail("cannot create the output directory '" + dir +
                  "': " + ec.message());
    if (!sys::fs::is_directory(dir))
      return fail("the output directory '" + dir + "' is not a directory");
    if (sys::fs::access(dir, sys::fs::AccessMode::Write))
      return fail("the output directory '" + dir + "' is not writable");
  }
  return true;
}

/// Where --report writes is checked before the compile: an existing
/// directory to write into, a path that is not itself a directory.
bool RunSession::checkReportPath() {
  if (opts.reportPath.empty())
    return true;
  const std::string &path = opts.reportPath;
  StringRef dir = sys::path::parent_path(path);
  if (dir.empty())
    dir = ".";
  if (sys::fs::is_directory(path))
    return fail("the report '" + path + "' is a directory");
  if (!sys::fs::is_directory(dir))
    return fail("cannot write the report '" + path + "': '" + dir +
                "' is not a directory");
  if (sys::fs::access(dir, sys::fs::AccessMode::Write))
    return fail("cannot write the report '" + path + "': '" + dir +
                "' is not writable");
  return true;
}

/// Reads the inputs first: a bad file should not cost a compile.
bool RunSession::readInputs() {
  for (const std::string &spec : opts.inputSpecs) {
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
  if (inputs.empty() && opts.fabric.onlyKernels.empty())
    return fail("give every streamed graph input with --input NAME=FILE "
                "(weights the model takes as inputs with --constant "
                "NAME=FILE)");
  return true;
}

bool RunSession::findSimulator() {
  std::string mainExe =
      sys::fs::getMainExecutable(argv0, (void *)&weftc::runMain);
  sim = opts.simPath.empty()
            ? (sys::path::parent_path(mainExe) + "/weft-sim").str()
            : opts.simPath.getValue();
  if (!sys::fs::can_execute(sim))
    return fail("cannot find the simulator at '" + sim + "'");
  return true;
}

bool RunSession::compile() {
  weft::registerAllPasses();
  ctx = createContext();
  CompileOptions options;
  opts.fabric.apply(options);
  opts.progress.apply(options);
  options.batchSize = opts.samples > 0 ? opts.samples.getValue() : 1;
  // --replicas auto: no more copies than the run has samples.
  options.maxReplicas = -1;
  options.constants.assign(opts.constants.begin(), opts.constants.end());
  // The host inputs' density, unless given: measured on the run's own
  // inputs (the values the host would skip: zero once converted to fp16).
  if (options.sparseActivations != "off" &&
      !opts.fabric.inputDensity.getNumOccurrences()) {
    // Each input's, overall and per element (the samples along its first
    // dimension), and the inputs' together.
    double total = 0, nonZero = 0;
    for (const Input &in : inputs) {
      if (in.tensor.dtype != tensorio::DType::F32)
        continue;
      reference::NodeDensity d = reference::measureDensity(
          in.tensor, [](float v) { return machine::f32ToF16(v) != 0; });
      size_t n = in.tensor.bytes.size() / 4;
      total += double(n);
      nonZero += d.density * double(n);
      options.inputDensities[in.name] = {d.density, std::move(d.perElement)};
    }
    if (total > 0) {
      options.inputDensity = double(nonZero) / double(total);
      outs() << "weftc: input density "
             << format("%.3f", options.inputDensity)
             << " (non-zero values of the inputs, for --sparse-activations "
             << options.sparseActivations << ")\n";
    }
  }
  // (A slice's inputs are its own streams, not the graph's: it keeps
  // --density.)
  if (options.sparseActivations == "auto" &&
      !opts.fabric.density.getNumOccurrences() &&
      opts.fabric.onlyKernels.empty() && !calibrate(options))
    return false;
  std::string error;
  bool compiledOk = compileModel(*ctx, opts.modelPath, options, compiled, error);
  opts.fabric.printRemarks(argv0, compiled);
  if (!compiledOk)
    return fail(error);
  if (!compiled.slice.empty()) {
    // A slice streams what the host synthesizes: any number of samples.
    numSamples = opts.samples > 0 ? opts.samples.getValue() : compiled.batch;
    return true;
  }
  if (opts.samples > 0 && compiled.batch != opts.samples)
    return fail("the model's batch dimension is fixed at " +
                Twine(compiled.batch) + "; --samples " + Twine(opts.samples) +
                " needs a symbolic batch dimension");
  numSamples = compiled.batch;
  return true;
}

bool RunSession::isFrozen(StringRef name) const {
  return llvm::any_of(opts.constants, [&](const std::string &c) {
    return StringRef(c).split('=').first == name;
  });
}

/// Which --input feeds which graph input: the graph's inputs less the
/// frozen ones, in order, are the fabric's host inputs.
bool RunSession::mapInputs() {
  if (!compiled.slice.empty())
    return synthesizeSliceInputs();
  std::vector<std::string> frozen;
  for (const std::string &spec : opts.constants)
    frozen.push_back(StringRef(spec).split('=').first.str());
  std::string error;
  ports = driver::mapHostPorts(compiled, frozen, error);
  if (!ports)
    return fail(error);
  for (const reference::TensorSignature &s : ports->inputs)
    streamed.push_back(s.name);
  if (inputs.size() == 1 && inputs[0].name.empty() && streamed.size() == 1)
    inputs[0].name = streamed[0];
  for (const Input &in : inputs) {
    if (in.name.empty())
      return fail("--input " + in.file + " needs a NAME= (the graph has " +
                  Twine(streamed.size()) + " streamed inputs)");
    if (isFrozen(in.name))
      return fail("--input " + in.name + " is frozen by --constant");
    if (!llvm::is_contained(streamed, in.name))
      return fail("--input " + in.name + ": the graph has no input '" +
                  in.name + "'");
  }
  for (const std::string &name : streamed)
    if (llvm::none_of(inputs, [&](const Input &in) { return in.name == name; }))
      return fail("graph input '" + name + "' needs --input " + name + "=FILE");
  return true;
}

/// A slice's host inputs are the streams that entered it from kernels
/// outside it: each is given with --input PORT=FILE or filled with
/// seeded values in [-1, 1) (a kernel's pace does not depend on them).
bool RunSession::synthesizeSliceInputs() {
  if (opts.check)
    return fail("--check compares a whole network with its host reference; "
                "a slice (--only-kernels) has none");
  if (std::error_code ec =
          sys::fs::createUniqueDirectory("weftc-slice", sliceDir.path))
    return fail("cannot create a temporary directory: " + ec.message());
  sliceDir.keep = opts.keepTemps;
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (const binary::IoStream &io : compiled.binary->io) {
    if (io.output)
      continue;
    streamed.push_back(io.name);
    if (llvm::any_of(inputs,
                     [&](const Input &in) { return in.name == io.name; }))
      continue;
    tensorio::HostTensor t;
    t.shape = io.shape;
    if (t.shape.empty())
      t.shape.push_back(1);
    t.shape[0] *= numSamples;
    uint64_t n = io.numElements() * uint64_t(numSamples);
    std::vector<float> values(n);
    for (float &v : values) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      v = float(int64_t(state >> 40) - (int64_t(1) << 23)) /
          float(int64_t(1) << 23);
    }
    t.bytes.assign(reinterpret_cast<const uint8_t *>(values.data()),
                   reinterpret_cast<const uint8_t *>(values.data() + n));
    std::string file =
        (sliceDir.path + "/" + simFileStem(io.name) + ".npy").str();
    std::string why;
    if (!tensorio::writeTensorFile(file, t, &why))
      return fail("cannot write '" + file + "': " + why);
    inputs.push_back({io.name, file, std::move(t)});
  }
  for (const Input &in : inputs)
    if (!llvm::is_contained(streamed, in.name))
      return fail("--input " + in.name + ": the slice has no input '" +
                  in.name + "'");
  return true;
}

/// Writes the binary to a temporary directory.
bool RunSession::writeBinary() {
  temp.keep = opts.keepTemps;
  if (std::error_code ec =
          sys::fs::createUniqueDirectory("weftc-run", temp.path))
    return fail("cannot create a temporary directory: " + ec.message());
  if (opts.keepTemps)
    outs() << "weftc: temporaries in " << temp.path << "\n";
  wfb = (temp.path + "/model.wfb").str();
  std::string error;
  if (!binary::writeFile(wfb, *compiled.binary, &error))
    return fail("cannot write '" + wfb + "': " + error);
  return true;
}

/// The simulator: a separate process on the .wfb alone.
bool RunSession::runSimulator() {
  simOut = (temp.path + "/out").str();
  stats = opts.statsPath.empty() ? (temp.path + "/stats.json").str()
                                 : opts.statsPath.getValue();
  std::string logOut = (temp.path + "/sim.stdout").str();
  std::vector<std::string> args = {sim, wfb};
  // (A slice's inputs are named after its host ports.)
  const std::vector<std::string> &portNames =
      compiled.slice.empty() ? compiled.inputNames : streamed;
  for (auto [name, port] : llvm::zip(streamed, portNames)) {
    const Input &in = *llvm::find_if(
        inputs, [&, &name = name](const Input &i) { return i.name == name; });
    if (!addInputArgs(in, port, args))
      return false;
  }
  // With copies, every port streams the first copy's share of the samples.
  int64_t perPort =
      conversion::samplesOfReplica(0, numSamples, compiled.replicas);
  args.insert(args.end(),
              {"--output-dir", simOut, "--stats", stats, "--samples",
               std::to_string(perPort),
               opts.progress.enabled() ? "--progress" : "--no-progress"});
  if (opts.maxCycles > 0)
    args.insert(args.end(),
                {"--max-cycles", std::to_string(opts.maxCycles.getValue())});
  if (!opts.tracePath.empty())
    args.insert(args.end(), {"--trace", opts.tracePath.getValue()});
  std::vector<StringRef> argRefs(args.begin(), args.end());
  // The simulator's stderr (its progress every ~2 s of a long run when
  // progress is on, its diagnostics) goes straight to ours.
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
  return true;
}

/// The simulator's --input arguments for one graph input: its file, or with
/// copies (--replicas) the samples dealt round robin to each copy's port.
bool RunSession::addInputArgs(const Input &in, const std::string &port,
                              std::vector<std::string> &args) {
  // A sparse host input takes fp16 values: the host converts (as the
  // layer would) before it skips the zeros.
  const binary::IoStream *stream = nullptr;
  for (const binary::IoStream &io : compiled.binary->io)
    if (io.name == port && !io.output)
      stream = &io;
  bool convert = stream && stream->dtype == machine::ElemType::F16 &&
                 in.tensor.dtype == tensorio::DType::F32;
  if (compiled.replicas == 1) {
    std::string file = in.file;
    if (convert) {
      std::string error;
      file = (temp.path + "/" + simFileStem(port) + ".f16.npy").str();
      if (!tensorio::writeTensorFile(
              file, driver::toStreamType(*stream, in.tensor), &error))
        return fail("cannot write '" + file + "': " + error);
    }
    args.insert(args.end(), {"--input", port + "=" + file});
    return true;
  }
  for (int64_t k = 0; k < compiled.replicas; ++k) {
    std::string error, copyPort = driver::replicaPort(compiled, port, k);
    std::optional<tensorio::HostTensor> dealt =
        driver::dealSamples(in.tensor, numSamples, k, compiled.replicas, error);
    if (!dealt)
      return fail("--input " + in.name + ": " + error);
    if (convert)
      dealt = driver::toStreamType(*stream, *dealt);
    std::string file =
        (temp.path + "/" + simFileStem(copyPort) + ".in.npy").str();
    if (!tensorio::writeTensorFile(file, *dealt, &error))
      return fail("cannot write '" + file + "': " + error);
    args.insert(args.end(), {"--input", copyPort + "=" + file});
  }
  return true;
}

/// One output as the simulator wrote it, or with copies every copy's
/// output gathered back into sample order.
std::optional<tensorio::HostTensor>
RunSession::readPortOutput(const std::string &port) {
  std::string why;
  std::vector<tensorio::HostTensor> perCopy;
  for (int64_t k = 0; k < compiled.replicas; ++k) {
    std::optional<tensorio::HostTensor> got = tensorio::readTensorFile(
        simOut + "/" + simFileStem(driver::replicaPort(compiled, port, k)) +
            ".npy",
        &why);
    if (!got) {
      fail("cannot read the simulator's output: " + why);
      return std::nullopt;
    }
    perCopy.push_back(std::move(*got));
  }
  if (compiled.replicas == 1)
    return std::move(perCopy.front());
  std::optional<tensorio::HostTensor> all =
      driver::gatherSamples(perCopy, numSamples, why);
  if (!all)
    fail("cannot gather the copies' outputs of '" + port + "': " + why);
  return all;
}

/// The outputs, reshaped from samples x [1, M] to the graph's [N, M], and
/// written to --output-dir.
bool RunSession::readOutputs() {
  std::string why;
  if (!compiled.slice.empty()) {
    // A slice's outputs are its host ports, shaped per sample x samples.
    for (const binary::IoStream &io : compiled.binary->io) {
      if (!io.output)
        continue;
      std::optional<tensorio::HostTensor> got = tensorio::readTensorFile(
          simOut + "/" + simFileStem(io.name) + ".npy", &why);
      if (!got)
        return fail("cannot read the simulator's output: " + why);
      // Samples along the first dimension, as the inputs.
      std::vector<int64_t> shape =
          io.shape.empty() ? std::vector<int64_t>{1} : io.shape;
      shape[0] *= numSamples;
      got->shape = shape;
      if (std::string bad = got->validate(); !bad.empty())
        return fail("the simulator's output '" + io.name +
                    "' does not have the port's shape: " + bad);
      if (!opts.outputDir.empty()) {
        if (std::error_code ec = sys::fs::create_directories(opts.outputDir))
          return fail("cannot create '" + opts.outputDir +
                      "': " + ec.message());
        std::string path = opts.outputDir + "/" + simFileStem(io.name) + ".npy";
        if (!tensorio::writeTensorFile(path, *got, &why))
          return fail("cannot write '" + path + "': " + why);
        outs() << "wrote " << path << "\n";
      }
      gots.push_back(std::move(*got));
    }
    return true;
  }
  const std::string &outputDir = opts.outputDir;
  for (auto [outSig, port] : llvm::zip(ports->outputs, compiled.outputNames)) {
    std::optional<tensorio::HostTensor> got = readPortOutput(port);
    if (!got)
      return false;
    if (std::string bad =
            driver::shapeOutput(*got, outSig.shape, numSamples, compiled.batch);
        !bad.empty())
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
  return true;
}

/// Reads the simulator's statistics; with --stats, first adds the
/// compiler's MAC counts to the kept file.
bool RunSession::readStatistics(driver::RunFigures &figures) {
  // The per-PE entries, most of a large fabric's file, are parsed one at a
  // time (docs/performance.md, "Wafer scale").
  std::string text = readText(stats);
  auto split = driver::splitStatistics(text);
  if (!split)
    return fail("cannot parse the simulator's statistics: " +
                toString(split.takeError()));
  auto pes = driver::readPeStats(*split);
  if (!pes)
    return fail("cannot parse the simulator's statistics: " +
                toString(pes.takeError()));
  peStats = std::move(*pes);
  // The compiler's MAC counts beside the simulator's (which counts what
  // the PEs executed, `macs`): the model's and the executed MACs per
  // sample, which differ when weft writes a transpose, pad or reduction as
  // a 0/1 matrix.
  figures = driver::readRunFigures(&split->top, peStats, *compiled.binary,
                                   compiled, numSamples);
  if (!opts.statsPath.empty()) {
    driver::addCompilerFigures(split->top, compiled);
    driver::addRunFigures(split->top, figures, compiled, numSamples);
    std::error_code ec;
    raw_fd_ostream os(stats, ec);
    if (ec)
      return fail("cannot write '" + stats + "': " + ec.message());
    if (Error err = driver::writeStatistics(os, *split))
      return fail("cannot parse the simulator's statistics: " +
                  toString(std::move(err)));
    os << "\n";
  }
  return true;
}

/// The program's line and one line per kernel: its predicted and simulated
/// cycles per sample.
void RunSession::printKernels(const driver::RunFigures &figures) const {
  int64_t inK = compiled.kernels.empty() ? 0 : compiled.kernels.front().K;
  int64_t outM = compiled.kernels.empty() ? 0 : compiled.kernels.back().M;
  outs() << "weftc: @" << compiled.programName << ": " << inK << " -> " << outM
         << ", " << compiled.kernels.size()
         << (compiled.kernels.size() == 1 ? " kernel" : " kernels")
         << " on the " << compiled.gridWidth << "x" << compiled.gridHeight
         << compiled.fabricExtras << " fabric ("
         << (compiled.mixed ? "mixed" : "fp32") << "), " << numSamples
         << (numSamples == 1 ? " sample" : " samples") << ", "
         << compiled.colorsUsed << " of " << compiled.routableColors
         << " colors\n";
  if (!compiled.gridAuto.empty())
    outs() << "weftc: grid auto: " << compiled.gridAuto << "\n";
  if (!compiled.slice.empty())
    outs() << "weftc: slice: " << compiled.slice << "\n";
  if (!compiled.replicaPlan.empty())
    outs() << "weftc: replicas: " << compiled.replicaPlan << "\n";
  else if (compiled.slice.empty() && compiled.rowsUsed > 0 &&
           2 * compiled.rowsUsed <= int64_t(compiled.gridHeight))
    outs() << "weftc: the network uses " << compiled.rowsUsed << " of the "
           << compiled.gridHeight
           << " rows: --replicas auto runs copies on the others\n";
  for (const KernelFigures &k : compiled.kernels) {
    outs() << "weftc: @" << k.name << ": " << k.what << " on " << k.width << "x"
           << k.rows << " PEs at column " << k.x0
           << ": cycles per sample predicted " << k.predictedCycles;
    // A banded kernel's busiest PE is compared with its predicted work,
    // without the bands' wait on their shared lanes.
    int64_t work = k.predictedCycles - k.laneWaitCycles;
    if (k.laneWaitCycles)
      outs() << " (" << work << " of work, " << k.laneWaitCycles
             << " waiting on the lanes)";
    auto it = figures.busiest.find(k.name);
    // (With copies, the samples of the first copy, whose kernels these are.)
    int64_t ran =
        conversion::samplesOfReplica(0, numSamples, compiled.replicas);
    if (it != figures.busiest.end() && ran > 0) {
      double sim = double(it->second.first) / double(ran);
      double ce = double(it->second.second) / double(ran);
      outs() << ", simulated " << format("%.1f", sim) << " (busiest PE; error "
             << format("%.1f%%", 100 * std::abs(double(work) - sim) / sim)
             << "; CE-busy " << format("%.1f", ce) << ")";
    }
    outs() << "\n";
  }
}

/// The figures of docs/performance.md ("Definitions"): latency, cycles per
/// sample, utilization and executed MACs.
void RunSession::printFigures(const driver::RunFigures &figures) const {
  const std::vector<int64_t> &done = figures.done;
  int64_t macsPerSample = compiled.macsPerSample;
  unsigned peak = machine::peakMacsPerCycle(compiled.mixed);
  int64_t latency = figures.latency;
  outs() << "weftc: simulated " << figures.cycles << " cycles, latency "
         << latency << " cycles (first sample), " << figures.macs
         << " MACs (network: " << macsPerSample << " per sample)\n";
  double steady = figures.steadyCycles;
  if (done.size() >= 2) {
    // The model predicts one copy's pace; copies run side by side.
    double copy = figures.copyCyclesPerSample;
    double err = std::abs(double(compiled.predictedCycles) - copy) / copy;
    outs() << "weftc: cycles per sample: predicted " << compiled.predictedCycles
           << ", simulated " << format("%.1f", copy) << " (median of "
           << done.size() - 1 << " intervals; model error "
           << format("%.1f%%", 100 * err) << ")";
    if (compiled.replicas > 1)
      outs() << " per copy, " << format(steady < 10 ? "%.3f" : "%.1f", steady)
             << " over the " << compiled.replicas << " copies";
    outs() << "\n";
  } else {
    outs() << "weftc: cycles per sample: predicted " << compiled.predictedCycles
           << ", simulated: needs 2 or more samples (latency " << latency
           << ")\n";
  }
  double t = figures.cyclesPerSample;
  // Zeros skipped (sparse activations, sliced weights): utilization is
  // measured without skipping (docs/performance.md, "Sparse weights"), so
  // say what was executed instead.
  double executed =
      numSamples > 0 ? double(figures.macs) / double(numSamples) : 0.0;
  // (Only a kernel with MACs of the model counts: skipping the zeros of a
  // matrix weft made for a transpose or a pad is weft's own saving.)
  bool skipped = compiled.skipsModelZeros && numSamples > 0 &&
                 macsPerSample > 0 &&
                 figures.macs < compiled.executedMacsPerSample * numSamples;
  if (t > 0 && skipped) {
    // (Against what the kernels execute without skipping, weft's own
    // matrices included, which `executed` counts too.)
    double dense = double(compiled.executedMacsPerSample);
    outs() << "weftc: executed " << format("%.1f", executed)
           << " MACs per sample of the " << compiled.executedMacsPerSample
           << " the kernels execute without skipping ("
           << format("%.1f%%", 100.0 * (1.0 - executed / dense))
           << " skipped: zero activations or weights; the model's: "
           << macsPerSample
           << "); utilization is measured without skipping "
              "(--sparse-weights off --sparse-activations off)\n";
  }
  else if (t > 0)
    outs() << "weftc: utilization "
           << format("%.2f%%", 100.0 * figures.utilization) << " ("
           << macsPerSample << " MACs of the model / (" << compiled.gridPEs
           << " PEs x " << peak << " MAC/cycle x "
           << format(t < 10 ? "%.3f" : "%.1f", t)
           << (steady > 0 ? " cycles per sample))" : " cycles of latency))")
           << "\n";
  if (t > 0)
    outs() << "weftc: throughput "
           << format("%.1f", figures.samplesPerMillionCycles)
           << " samples per million cycles on the " << compiled.gridWidth << "x"
           << compiled.gridHeight << " fabric\n";
  if (compiled.replicas > 1 && figures.copyCyclesPerSample > 0)
    outs() << "weftc: replicas " << compiled.replicas << " (" << numSamples
           << " samples dealt round robin); each copy: " << compiled.gridWidth
           << "x" << compiled.replicaRows << " PEs"
           << (compiled.replicaColumns > 1
                   ? (" shared by " + Twine(compiled.replicaColumns) +
                      " side by side (" + Twine(figures.copyPEs) + " each)")
                         .str()
                   : std::string())
           << ", " << format("%.1f", figures.copyCyclesPerSample)
           << " cycles per sample, utilization "
           << format("%.2f%%", 100.0 * figures.copyUtilization)
           << " of its own PEs\n";
  if (t > 0 && compiled.executedMacsPerSample != macsPerSample)
    outs() << "weftc: executed MACs "
           << format("%.2f%%", 100.0 * figures.executedUtilization)
           << " of the fabric's peak (" << compiled.executedMacsPerSample
           << " MACs per sample executed, " << macsPerSample
           << " of them the model's; the rest are transposes, pads or "
              "reductions done as 0/1 matrices)\n";
}

/// The report page (docs/report.md), from the statistics just read.
bool RunSession::writeReport(const driver::RunFigures &figures) {
  report::ReportInput input = driver::reportInput(
      *compiled.binary, compiled, true, figures, peStats, numSamples);
  if (!opts.tracePath.empty())
    input.traceLink = report::linkFrom(opts.reportPath, opts.tracePath);
  std::error_code ec;
  raw_fd_ostream os(opts.reportPath, ec);
  if (!ec) {
    os << report::renderReport(input);
    os.close();
    if (os.has_error()) {
      ec = os.error();
      os.clear_error();
    }
  }
  if (ec)
    return fail("cannot write the report '" + opts.reportPath +
                "': " + ec.message());
  outs() << "wrote " << opts.reportPath << "\n";
  return true;
}

/// The calibration run of --sparse-activations auto (without --density):
/// the host reference computes every ONNX node's result on the run's
/// inputs, and the streams expect the densities measured there. When it
/// cannot run, the streams expect --density (said on stderr); the compile
/// reports what it finds wrong with the model itself. False only when a
/// constant cannot be read.
bool RunSession::calibrate(CompileOptions &options) {
  auto skip = [&](const std::string &why) {
    errs() << "weftc: note: no calibration run (" << why
           << "); sparse streams expect --density "
           << llvm::formatv("{0:f3}", options.density).str() << "\n";
    return true;
  };
  std::string why;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      loadModel(*ctx, opts.modelPath, options.batchSize, why);
  if (!module)
    return skip("the model does not import");
  std::vector<reference::NamedTensor> refInputs;
  if (!referenceInputs(refInputs))
    return false;
  auto densities = reference::measureNodeDensities(*module, refInputs);
  if (!densities)
    return skip(toString(densities.takeError()));
  for (auto &[node, d] : *densities)
    options.nodeDensities[node] = {d.density, std::move(d.perElement)};
  // The results with zeros (a ReLU's), which sparse streams may carry.
  std::string list;
  unsigned shown = 0, withZeros = 0;
  for (const auto &[node, nd] : options.nodeDensities) {
    double d = nd.mean;
    if (d >= 1.0)
      continue;
    ++withZeros;
    if (shown == 6)
      continue;
    ++shown;
    list += (list.empty() ? "" : ", ") + node + " " +
            llvm::formatv("{0:f3}", d).str();
  }
  outs() << "weftc: calibration run: " << options.nodeDensities.size()
         << " node results measured on the inputs, " << withZeros
         << " with zeros";
  if (withZeros)
    outs() << " (" << list << (withZeros > shown ? ", ..." : "") << ")";
  outs() << "; sparse streams expect these densities\n";
  return true;
}

/// The run's inputs and constants, as the host reference takes them.
bool RunSession::referenceInputs(std::vector<reference::NamedTensor> &out) {
  for (const Input &in : inputs)
    out.push_back({in.name, in.tensor});
  for (const std::string &spec : opts.constants) {
    auto [name, file] = StringRef(spec).split('=');
    std::string why;
    std::optional<tensorio::HostTensor> c =
        tensorio::readTensorFile(file.str(), &why);
    if (!c)
      return fail("cannot read '" + file + "': " + why);
    out.push_back({name.str(), std::move(*c)});
  }
  return true;
}

/// Runs the host reference on the same inputs (and constants) and compares
/// every output; exit status 3 on a mismatch.
bool RunSession::checkWithReference() {
  auto exe = reference::ReferenceExecutable::compile(*compiled.imported);
  if (!exe)
    return fail("the host reference: " + toString(exe.takeError()));
  std::vector<reference::NamedTensor> refInputs;
  if (!referenceInputs(refInputs))
    return false;
  auto want = (*exe)->run(refInputs);
  if (!want)
    return fail("the host reference: " + toString(want.takeError()));
  for (auto [outSig, got, ref] : llvm::zip(ports->outputs, gots, *want))
    if (!checkOutput(outSig, got, ref, tolerance))
      exitCode = 3;
  return exitCode == 0;
}

int RunSession::run() {
  if (!validateOptions() || !checkReportPath() || !readInputs() ||
      !findSimulator() || !compile() || !mapInputs() || !writeBinary() ||
      !runSimulator() || !readOutputs())
    return exitCode;
  driver::RunFigures figures;
  if (!readStatistics(figures))
    return exitCode;
  printKernels(figures);
  printFigures(figures);
  if (!opts.reportPath.empty() && !writeReport(figures))
    return exitCode;
  if (opts.check)
    checkWithReference();
  return exitCode;
}

int weftc::runMain(int argc, char **argv) {
  RunOptions opts;
  opts.parse(argc, argv);
  return RunSession(opts, argv[0]).run();
}
