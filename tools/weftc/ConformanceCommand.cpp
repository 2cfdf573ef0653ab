//===- ConformanceCommand.cpp - weftc conformance -------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// weftc conformance DIR... [--expect FILE] [--update-expect FILE]
//                          [--filter REGEX] [--mode reference|fabric] [-j N]
//
// Runs ONNX backend tests (a directory holding model.onnx and
// test_data_set_*/{input,output}_*.pb, or a directory of such directories):
// imports each model, executes it in the chosen mode and compares every
// output with the expected one. Prints one line per test, in order:
//
//   PASS node/test_relu
//   FAIL node/test_foo: output 0 'y': 3 of 60 elements differ (max abs ...)
//   SKIP node/test_bar: unsupported: ...
//
// then per-set and total counts, ending with `N passed, N failed, N skipped`.
//
// Every test runs in a forked child with a time limit, so a crash or a hang
// in one test is that test's FAIL and the run goes on. The driver itself
// never creates an MLIRContext or a thread before forking.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "weft/Reference/Compare.h"
#include "weft/Reference/Reference.h"
#include "weft/Sim/Simulator.h"
#include "weft/Pipeline/Pipeline.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <sys/wait.h>
#include <unistd.h>

using namespace llvm;
using namespace weft;
using namespace weftc;

namespace {

/// Where the model runs: the host reference, or compiled for the fabric
/// and simulated in-process.
enum class Mode { Reference, Fabric };

/// How a test runs: where, and (fabric) whether the inputs after the first
/// are frozen into the program instead of streamed.
struct RunOptions {
  Mode mode = Mode::Reference;
  bool freezeInputs = false;
  int64_t batchSize = 1;
};

/// A backend error that makes the test a SKIP, not a FAIL: the fabric path
/// does not map the model.
constexpr const char *kUnsupported = "unsupported on the fabric: ";

enum class Status { Pass, Fail, Skip };

struct Outcome {
  Status status;
  std::string reason;
};

/// One test directory and the name it is reported under: "<set>/<test>".
struct TestCase {
  std::string name;
  std::string dir;
};

/// One test_data_set_N: input and output files in index order.
struct DataSet {
  std::string name;
  std::vector<std::string> inputs, outputs;
};

/// How a test is executed: compile once, then run each data set.
class Backend {
public:
  virtual ~Backend() = default;
  virtual llvm::Error prepare(mlir::ModuleOp module) = 0;
  virtual Expected<std::vector<tensorio::HostTensor>>
  run(ArrayRef<reference::NamedTensor> inputs) = 0;
};

class ReferenceBackend : public Backend {
public:
  llvm::Error prepare(mlir::ModuleOp module) override {
    auto compiled = reference::ReferenceExecutable::compile(module);
    if (!compiled)
      return compiled.takeError();
    exe = std::move(*compiled);
    return Error::success();
  }
  Expected<std::vector<tensorio::HostTensor>>
  run(ArrayRef<reference::NamedTensor> inputs) override {
    return exe->run(inputs);
  }

private:
  std::unique_ptr<reference::ReferenceExecutable> exe;
};

/// Compiles the model for the fabric (the weftc pipeline, --grid auto up to
/// 32x32) and simulates it in-process. The first graph input streams
/// through the fabric; the others (weights the node tests take as inputs)
/// are frozen into the program with their test data, so the model is
/// compiled once per data set. A model the fabric path refuses before the
/// lowering (an op it does not map, a non-f32 tensor) is a SKIP; a failure
/// later (lowering, simulation, wrong numbers) is a FAIL.
class FabricBackend : public Backend {
public:
  /// `streamAll`: every graph input is streamed; otherwise the inputs
  /// after the first are frozen as constants.
  FabricBackend(std::string modelPath, int64_t batchSize, bool streamAll)
      : modelPath(std::move(modelPath)), batchSize(batchSize),
        streamAll(streamAll) {}

  llvm::Error prepare(mlir::ModuleOp module) override {
    auto signature = reference::readGraphSignature(module);
    if (!signature)
      return signature.takeError();
    sig = std::move(*signature);
    return Error::success();
  }

  Expected<std::vector<tensorio::HostTensor>>
  run(ArrayRef<reference::NamedTensor> inputs) override {
    if (inputs.empty())
      return createStringError(Twine(kUnsupported) +
                               "the graph has no input to stream");
    if (inputs.size() != sig.inputs.size())
      return createStringError("the test gives " + Twine(inputs.size()) +
                               " inputs, the graph takes " +
                               Twine(sig.inputs.size()));
    SmallString<128> dir;
    if (std::error_code ec =
            sys::fs::createUniqueDirectory("weftc-conformance", dir))
      return createStringError("cannot create a temporary directory: " +
                               ec.message());
    CompileOptions options;
    options.grid = "auto";
    options.maxGrid = "32x32";
    options.batchSize = batchSize;
    std::string why;
    size_t numStreamed = streamAll ? inputs.size() : 1;
    for (size_t i = numStreamed; i < inputs.size(); ++i) {
      std::string file = (dir + "/input_" + Twine(i) + ".npy").str();
      if (!tensorio::writeTensorFile(file, inputs[i].tensor, &why))
        return createStringError("cannot write " + file + ": " + why);
      options.constants.push_back(sig.inputs[i].name + "=" + file);
    }
    std::unique_ptr<mlir::MLIRContext> ctx = createContext();
    CompiledModel compiled;
    bool ok = compileModel(*ctx, modelPath, options, compiled, why);
    (void)sys::fs::remove_directories(dir);
    if (!ok) {
      bool mapped =
          compiled.failedStage && *compiled.failedStage >= Stage::Route;
      return createStringError((mapped ? "" : kUnsupported) + oneLineOf(why));
    }
    sim::Options opts;
    opts.samples = uint64_t(std::max<int64_t>(1, compiled.batch));
    auto simulator = sim::Simulator::create(*compiled.binary, opts, &why);
    if (!simulator)
      return createStringError("weft-sim: " + why);
    if (compiled.inputNames.size() != numStreamed ||
        compiled.outputNames.size() != sig.outputs.size())
      return createStringError("the fabric program has " +
                               Twine(compiled.inputNames.size()) +
                               " host inputs and " +
                               Twine(compiled.outputNames.size()) +
                               " outputs for the graph's " +
                               Twine(numStreamed) + " and " +
                               Twine(sig.outputs.size()));
    for (size_t i = 0; i < numStreamed; ++i)
      if (!simulator->bindInput(compiled.inputNames[i], inputs[i].tensor.bytes,
                                &why))
        return createStringError("weft-sim: " + why);
    sim::Status status = simulator->run();
    if (status != sim::Status::Done)
      return createStringError(
          "weft-sim: " + std::string(sim::statusName(status)) + ": " +
          simulator->message());
    std::vector<tensorio::HostTensor> outputs;
    for (auto [outSig, port] : llvm::zip(sig.outputs, compiled.outputNames)) {
      tensorio::HostTensor out;
      out.dtype = tensorio::DType::F32;
      out.shape = outSig.shape;
      out.bytes = simulator->output(port);
      outputs.push_back(std::move(out));
    }
    return outputs;
  }

private:
  static std::string oneLineOf(StringRef text) {
    std::string s;
    for (char c : text.trim())
      s += c == '\n' ? ' ' : c;
    return s;
  }

  std::string modelPath;
  int64_t batchSize;
  bool streamAll;
  reference::GraphSignature sig;
};

} // namespace

static const char *statusName(Status s) {
  switch (s) {
  case Status::Pass:
    return "PASS";
  case Status::Fail:
    return "FAIL";
  case Status::Skip:
    return "SKIP";
  }
  return "?";
}

static std::optional<Status> parseStatus(StringRef s) {
  if (s == "PASS")
    return Status::Pass;
  if (s == "FAIL")
    return Status::Fail;
  if (s == "SKIP")
    return Status::Skip;
  return std::nullopt;
}

/// Reasons are printed on one line.
static std::string oneLine(StringRef text) {
  std::string s;
  for (char c : text.trim())
    s += c == '\n' || c == '\r' ? ' ' : c;
  return s;
}

//===----------------------------------------------------------------------===//
// Discovery
//===----------------------------------------------------------------------===//

static bool isTestDir(const Twine &dir) {
  return sys::fs::exists(dir + "/model.onnx");
}

/// The sorted entries of `dir` whose names start with `prefix`.
static std::vector<std::string> listDir(StringRef dir, StringRef prefix) {
  std::vector<std::string> names;
  std::error_code ec;
  for (sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef name = sys::path::filename(it->path());
    if (name.starts_with(prefix))
      names.push_back(name.str());
  }
  llvm::sort(names);
  return names;
}

/// `prefix_N.pb` for N = 0, 1, ... until one is missing.
static std::vector<std::string> numberedFiles(StringRef dir, StringRef prefix) {
  std::vector<std::string> files;
  for (unsigned i = 0;; ++i) {
    std::string path = (dir + "/" + prefix + "_" + Twine(i) + ".pb").str();
    if (!sys::fs::exists(path))
      return files;
    files.push_back(path);
  }
}

static std::vector<TestCase> discover(ArrayRef<std::string> roots,
                                      std::string &error) {
  std::vector<TestCase> tests;
  for (std::string root : roots) {
    while (root.size() > 1 && root.back() == '/')
      root.pop_back();
    if (isTestDir(root)) {
      StringRef parent = sys::path::filename(sys::path::parent_path(root));
      tests.push_back({(parent + "/" + sys::path::filename(root)).str(), root});
      continue;
    }
    if (!sys::fs::is_directory(root)) {
      error = "'" + root + "' is not a directory";
      return {};
    }
    for (const std::string &name : listDir(root, "")) {
      std::string dir = root + "/" + name;
      if (isTestDir(dir))
        tests.push_back({(sys::path::filename(root) + "/" + name).str(), dir});
    }
  }
  return tests;
}

//===----------------------------------------------------------------------===//
// Running one test (in the child)
//===----------------------------------------------------------------------===//

static Outcome runTest(const TestCase &test, const RunOptions &run,
                       const reference::Tolerance &tolerance) {
  std::vector<DataSet> dataSets;
  for (const std::string &name : listDir(test.dir, "test_data_set_")) {
    std::string dir = test.dir + "/" + name;
    dataSets.push_back(
        {name, numberedFiles(dir, "input"), numberedFiles(dir, "output")});
  }
  if (dataSets.empty())
    return {Status::Skip, "no test_data_set_* directory"};

  std::unique_ptr<mlir::MLIRContext> ctx = createContext();
  std::string why;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      loadModel(*ctx, test.dir + "/model.onnx", run.batchSize, why);
  if (!module)
    return {Status::Skip, "unsupported: " + why};

  // Graph inputs or outputs the host cannot exchange (bf16, strings, ...)
  // put the model outside what weft runs, like an unsupported op.
  if (auto signature = reference::readGraphSignature(*module); !signature)
    return {Status::Skip, "unsupported: " + toString(signature.takeError())};

  std::unique_ptr<Backend> backend;
  switch (run.mode) {
  case Mode::Reference:
    backend = std::make_unique<ReferenceBackend>();
    break;
  case Mode::Fabric:
    backend = std::make_unique<FabricBackend>(
        test.dir + "/model.onnx", run.batchSize, !run.freezeInputs);
    break;
  }
  // A backend that does not map the model says so with kUnsupported.
  auto failure = [](std::string prefix, Error err) -> Outcome {
    std::string message = toString(std::move(err));
    if (StringRef(message).starts_with(kUnsupported))
      return {Status::Skip, message};
    return {Status::Fail, prefix + message};
  };
  if (Error err = backend->prepare(*module))
    return failure("", std::move(err));

  for (const DataSet &data : dataSets) {
    std::vector<reference::NamedTensor> inputs;
    for (const std::string &file : data.inputs) {
      std::optional<tensorio::HostTensor> t =
          tensorio::readTensorFile(file, &why);
      if (!t)
        return {Status::Skip, "test data " + data.name + "/" +
                                  sys::path::filename(file).str() + ": " + why};
      inputs.push_back({"", std::move(*t)});
    }
    auto outputs = backend->run(inputs);
    if (!outputs)
      return failure(data.name + ": ", outputs.takeError());
    if (outputs->size() != data.outputs.size())
      return {Status::Fail, data.name + ": the model has " +
                                std::to_string(outputs->size()) +
                                " outputs, the test expects " +
                                std::to_string(data.outputs.size())};
    for (size_t i = 0; i < data.outputs.size(); ++i) {
      std::optional<tensorio::HostTensor> want =
          tensorio::readTensorFile(data.outputs[i], &why);
      if (!want)
        return {Status::Skip, "test data " + data.name + "/" +
                                  sys::path::filename(data.outputs[i]).str() +
                                  ": " + why};
      tensorio::HostTensor &got = (*outputs)[i];
      // The imported IR's integers are signless: an 8-bit output is i8 or
      // u8 as the test says.
      if ((got.dtype == tensorio::DType::I8 ||
           got.dtype == tensorio::DType::U8) &&
          (want->dtype == tensorio::DType::I8 ||
           want->dtype == tensorio::DType::U8))
        got.dtype = want->dtype;
      reference::Comparison cmp =
          reference::compareTensors(got, *want, tolerance);
      if (!cmp.equal)
        return {Status::Fail, data.name + " output " + std::to_string(i) +
                                  ": " + cmp.message};
    }
  }
  return {Status::Pass, ""};
}

//===----------------------------------------------------------------------===//
// The driver: children, time limits, ordered output
//===----------------------------------------------------------------------===//

namespace {
struct Child {
  size_t test;
  pid_t pid;
  int pipe;
  std::string output;
  std::chrono::steady_clock::time_point start;
  bool timedOut = false;
};
} // namespace

/// Forks a child that runs `test` and writes "<status char><reason>" to a
/// pipe. The child never returns.
static std::optional<Child> spawn(size_t index, const TestCase &test,
                                  const RunOptions &run,
                                  const reference::Tolerance &tolerance,
                                  bool quiet) {
  int fds[2];
  if (::pipe(fds) != 0)
    return std::nullopt;
  outs().flush();
  errs().flush();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    ::close(fds[0]);
    // A crash is reported by the parent from the signal; LLVM's stack
    // printer would only slow it down and clutter the log.
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
      ::signal(sig, SIG_DFL);
    if (quiet) {
      int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) {
        ::dup2(null, STDOUT_FILENO);
        ::dup2(null, STDERR_FILENO);
      }
    }
    Outcome outcome = runTest(test, run, tolerance);
    // Keep the message well under the pipe's capacity so the write never
    // blocks on a parent that waits for us to exit.
    std::string message = std::string(1, statusName(outcome.status)[0]) +
                          oneLine(outcome.reason).substr(0, 2000);
    size_t done = 0;
    while (done < message.size()) {
      ssize_t n = ::write(fds[1], message.data() + done, message.size() - done);
      if (n <= 0)
        break;
      done += n;
    }
    ::close(fds[1]);
    ::_exit(0); // No static destructors: they belong to the parent.
  }
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  return Child{index, pid, fds[0], "", std::chrono::steady_clock::now()};
}

static void drain(Child &child) {
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(child.pipe, buffer, sizeof(buffer))) > 0)
    child.output.append(buffer, n);
}

static Outcome outcomeOf(const Child &child, int status, unsigned timeout) {
  if (child.timedOut)
    return {Status::Fail, "timed out after " + std::to_string(timeout) + " s"};
  if (WIFSIGNALED(status))
    return {Status::Fail,
            std::string("crashed: ") + strsignal(WTERMSIG(status))};
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    return {Status::Fail,
            "exited with status " + std::to_string(WEXITSTATUS(status))};
  if (child.output.empty())
    return {Status::Fail, "exited without a result"};
  std::optional<Status> s;
  switch (child.output[0]) {
  case 'P':
    s = Status::Pass;
    break;
  case 'F':
    s = Status::Fail;
    break;
  case 'S':
    s = Status::Skip;
    break;
  }
  if (!s)
    return {Status::Fail, "garbled result from the test process"};
  return {*s, child.output.substr(1)};
}

/// Runs every test with up to `jobs` children at once and prints each
/// result in test order as soon as all results before it are known.
static std::vector<Outcome> runAll(const std::vector<TestCase> &tests,
                                   const RunOptions &run,
                                   const reference::Tolerance &tolerance,
                                   unsigned jobs, unsigned timeout,
                                   bool quiet) {
  std::vector<std::optional<Outcome>> results(tests.size());
  std::vector<Child> running;
  size_t next = 0, printed = 0;
  auto printReady = [&] {
    for (; printed < tests.size() && results[printed]; ++printed) {
      const Outcome &o = *results[printed];
      outs() << statusName(o.status) << " " << tests[printed].name;
      if (!o.reason.empty())
        outs() << ": " << o.reason;
      outs() << "\n";
      outs().flush();
    }
  };
  while (printed < tests.size()) {
    while (running.size() < jobs && next < tests.size()) {
      std::optional<Child> child =
          spawn(next, tests[next], run, tolerance, quiet);
      if (!child) {
        results[next] = Outcome{Status::Fail, "cannot start a test process"};
        ++next;
        continue;
      }
      running.push_back(std::move(*child));
      ++next;
    }
    bool progressed = false;
    auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < running.size();) {
      Child &child = running[i];
      drain(child);
      int status = 0;
      pid_t done = ::waitpid(child.pid, &status, WNOHANG);
      if (done == child.pid) {
        drain(child);
        ::close(child.pipe);
        results[child.test] = outcomeOf(child, status, timeout);
        running.erase(running.begin() + i);
        progressed = true;
        continue;
      }
      if (!child.timedOut && timeout &&
          now - child.start > std::chrono::seconds(timeout)) {
        child.timedOut = true;
        ::kill(child.pid, SIGKILL);
      }
      ++i;
    }
    printReady();
    if (!progressed && !running.empty())
      ::usleep(2000);
  }
  std::vector<Outcome> outcomes;
  for (std::optional<Outcome> &r : results)
    outcomes.push_back(std::move(*r));
  return outcomes;
}

//===----------------------------------------------------------------------===//
// Expectations
//===----------------------------------------------------------------------===//

/// Reads "STATUS name" lines ('#' starts a comment).
static bool readExpectations(StringRef path, std::map<std::string, Status> &out,
                             std::string &error) {
  auto buffer = MemoryBuffer::getFile(path);
  if (!buffer) {
    error = "cannot read '" + path.str() + "': " + buffer.getError().message();
    return false;
  }
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    StringRef line = lines[i].split('#').first.trim();
    if (line.empty())
      continue;
    auto [status, name] = line.split(' ');
    std::optional<Status> s = parseStatus(status);
    if (!s || name.trim().empty()) {
      error = path.str() + ":" + std::to_string(i + 1) +
              ": expected 'PASS|FAIL|SKIP <test>', got '" + line.str() + "'";
      return false;
    }
    out[name.trim().str()] = *s;
  }
  return true;
}

static bool writeExpectations(StringRef path,
                              const std::map<std::string, Status> &statuses,
                              std::string &error) {
  std::error_code ec;
  raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    return false;
  }
  os << "# Expected status of every ONNX backend test under `weftc "
        "conformance`.\n"
        "# A test listed PASS must keep passing. Refresh with --update-expect\n"
        "# (see docs/conformance.md).\n";
  for (const auto &[name, status] : statuses)
    os << statusName(status) << " " << name << "\n";
  return true;
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

int weftc::conformanceMain(int argc, char **argv) {
  cl::OptionCategory category("weftc conformance options");
  cl::list<std::string> roots(cl::Positional, cl::OneOrMore,
                              cl::desc("<test dir or dir of test dirs>..."),
                              cl::cat(category));
  cl::opt<std::string> expectPath(
      "expect", cl::desc("Fail if a test listed PASS here does not pass"),
      cl::value_desc("FILE"), cl::cat(category));
  cl::opt<std::string> updatePath(
      "update-expect",
      cl::desc("Write every test's status to FILE (merged with what FILE "
               "already lists for tests not run)"),
      cl::value_desc("FILE"), cl::cat(category));
  cl::opt<std::string> filter("filter",
                              cl::desc("Only run tests whose name matches"),
                              cl::value_desc("REGEX"), cl::cat(category));
  cl::opt<Mode> mode("mode", cl::desc("Where the models run"),
                     cl::values(clEnumValN(Mode::Reference, "reference",
                                           "the host reference (JIT)"),
                                clEnumValN(Mode::Fabric, "fabric",
                                           "compiled for the fabric and "
                                           "simulated")),
                     cl::init(Mode::Reference), cl::cat(category));
  cl::opt<unsigned> jobs("j", cl::desc("Tests run at once"), cl::init(2),
                         cl::Prefix, cl::cat(category));
  cl::opt<unsigned> timeout("timeout", cl::init(120),
                            cl::desc("Seconds a test may take (0: no limit)"),
                            cl::cat(category));
  cl::opt<unsigned> minPass(
      "min-pass", cl::init(0),
      cl::desc("Fail unless at least this many tests pass"), cl::cat(category));
  cl::opt<double> rtol("rtol", cl::init(1e-3),
                       cl::desc("Relative tolerance for floats"),
                       cl::cat(category));
  cl::opt<double> atol("atol", cl::init(1e-7),
                       cl::desc("Absolute tolerance for floats"),
                       cl::cat(category));
  cl::opt<int64_t> batchSize(
      "batch-size", cl::init(1),
      cl::desc("Size bound to a symbolic batch dimension"), cl::cat(category));
  cl::opt<bool> freezeInputs(
      "freeze-inputs",
      cl::desc("Fabric mode: freeze the graph inputs after the first into "
               "the program with each data set's values (by default every "
               "input is streamed)"),
      cl::cat(category));
  cl::opt<bool> verbose("verbose",
                        cl::desc("Let test processes write to stderr"),
                        cl::cat(category));
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv, "run ONNX backend tests and compare with their outputs\n");

  auto error = [&](const Twine &message) {
    errs() << argv[0] << ": error: " << message << "\n";
    return 2;
  };

  std::string why;
  std::vector<TestCase> tests = discover(roots, why);
  if (!why.empty())
    return error(why);
  if (!filter.empty()) {
    Regex regex(filter);
    if (!regex.isValid(why))
      return error("bad --filter: " + why);
    llvm::erase_if(tests,
                   [&](const TestCase &t) { return !regex.match(t.name); });
  }
  std::map<std::string, Status> expected;
  if (!expectPath.empty() && !readExpectations(expectPath, expected, why))
    return error(why);

  reference::Tolerance tolerance{rtol, atol};
  if (mode == Mode::Fabric) {
    // Registries and default options only, no context: the children
    // compile (compileModel applies the pass-manager and timing options).
    weft::registerAllPasses();
    mlir::registerPassManagerCLOptions();
    mlir::registerDefaultTimingManagerCLOptions();
  }
  std::vector<Outcome> outcomes =
      runAll(tests, RunOptions{mode, freezeInputs, batchSize}, tolerance,
             std::max(1u, jobs.getValue()),
             timeout, !verbose);

  // Per-set and total counts.
  struct Counts {
    unsigned pass = 0, fail = 0, skip = 0;
    void add(Status s) {
      (s == Status::Pass ? pass : s == Status::Fail ? fail : skip)++;
    }
  };
  std::map<std::string, Counts> perSet;
  Counts total;
  for (size_t i = 0; i < tests.size(); ++i) {
    perSet[StringRef(tests[i].name).split('/').first.str()].add(
        outcomes[i].status);
    total.add(outcomes[i].status);
  }

  int exitCode = 0;
  if (!expectPath.empty()) {
    unsigned regressions = 0, newPasses = 0;
    for (size_t i = 0; i < tests.size(); ++i) {
      auto it = expected.find(tests[i].name);
      bool wasPass = it != expected.end() && it->second == Status::Pass;
      bool wasFail = it != expected.end() && it->second == Status::Fail;
      bool isPass = outcomes[i].status == Status::Pass;
      if (wasPass && !isPass) {
        outs() << "REGRESSION " << tests[i].name << ": expected PASS, got "
               << statusName(outcomes[i].status) << "\n";
        ++regressions;
      } else if (outcomes[i].status == Status::Fail && !wasFail) {
        // A test that used to be skipped now runs and gives wrong numbers
        // (a newly mapped op computing the wrong thing): as bad as a lost
        // PASS.
        outs() << "REGRESSION " << tests[i].name << ": expected "
               << (it == expected.end() ? "no entry"
                                        : statusName(it->second))
               << ", got FAIL: " << outcomes[i].reason << "\n";
        ++regressions;
      } else if (!wasPass && isPass) {
        outs() << "NEWLY PASSING " << tests[i].name << "\n";
        ++newPasses;
      }
    }
    if (newPasses)
      outs() << newPasses << " tests pass that " << expectPath
             << " does not expect to; refresh it with --update-expect\n";
    if (regressions) {
      outs() << regressions
             << " tests expected to pass did not, or newly fail\n";
      exitCode = 1;
    }
  } else if (total.fail) {
    exitCode = 1;
  }
  if (total.pass < minPass) {
    outs() << "only " << total.pass << " tests passed, at least " << minPass
           << " must\n";
    exitCode = 1;
  }

  if (!updatePath.empty()) {
    std::map<std::string, Status> statuses;
    if (sys::fs::exists(updatePath) &&
        !readExpectations(updatePath, statuses, why))
      return error(why);
    for (size_t i = 0; i < tests.size(); ++i)
      statuses[tests[i].name] = outcomes[i].status;
    if (!writeExpectations(updatePath, statuses, why))
      return error(why);
  }

  if (perSet.size() > 1)
    for (const auto &[set, c] : perSet)
      outs() << set << ": " << c.pass << " passed, " << c.fail << " failed, "
             << c.skip << " skipped\n";
  outs() << total.pass << " passed, " << total.fail << " failed, " << total.skip
         << " skipped\n";
  return exitCode;
}
