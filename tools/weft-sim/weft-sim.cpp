//===- weft-sim.cpp - Run a .wfb binary on the simulated fabric -----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
//   weft-sim prog.wfb --input NAME=FILE ... --output-dir DIR
//            [--stats FILE.json] [--trace FILE.json] [--max-cycles N]
//            [--threads N] [--mode reference|fast] [--samples N]
//            [--output-format npy|pb] [--quiet] [--progress|--no-progress]
//            [--heatmaps DIR]
//
// With --heatmaps, writes one PNG image per heatmap kind to DIR/<kind>.png
// (docs/report.md), also after a deadlock or at the cycle limit.
//
// Progress, on stderr when it is a terminal or with --progress (never with
// --no-progress): about every two seconds of a run and once at its end, the
// simulated cycle with the cycles per second, the samples done and an
// estimate of the time left from the samples' rate.
//
// Started by mpirun with several ranks (a build with MPI), it runs the
// fabric distributed over them, a band of rows each (docs/simulator.md,
// "Distributed simulation"); rank 0 writes the outputs, statistics and
// trace, identical to those of a single process.
//
// Input and output files are .npy or ONNX TensorProto .pb. Exit status: 0 on
// a complete run, 1 on bad usage or an unloadable binary, 2 on a deadlock,
// 3 at the cycle limit, 4 on a program error.
//
// Plain C++ on libweftsim; no MLIR.
//
//===----------------------------------------------------------------------===//

#include "weft/Binary/File.h"
#include "weft/Report/Png.h"
#include "weft/Sim/Exchange.h"
#include "weft/Sim/Simulator.h"
#include "weft/TensorIO/TensorIO.h"

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#ifdef WEFT_HAVE_MPI
#include "weft/Sim/MpiExchange.h"
#endif

using namespace weft;

namespace {

void usage(std::ostream &os) {
  os << "usage: weft-sim PROGRAM.wfb --input NAME=FILE ... [--output-dir DIR]\n"
        "         [--stats FILE.json] [--trace FILE.json] [--max-cycles N]\n"
        "         [--threads N] [--mode reference|fast] [--samples N]\n"
        "         [--output-format npy|pb] [--quiet] [--progress|--no-progress]\n"
        "         [--heatmaps DIR]\n"
        "Runs a weft binary on the cycle-level fabric simulator. Inputs and\n"
        "outputs are .npy or ONNX TensorProto (.pb) files. --heatmaps writes\n"
        "DIR/<kind>.png for every per-PE figure (busy, memory, hops, ...).\n";
}

/// In a distributed run only rank 0 reports; the others exit with the
/// same status (they reach the same errors in the same cycle).
bool reporting = true;

int die(const std::string &m, int code = 1) {
  if (reporting)
    std::cerr << "weft-sim: error: " << m << "\n";
  return code;
}

bool parseUInt(const std::string &s, uint64_t &v) {
  if (s.empty() || s.size() > 19)
    return false;
  v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + uint64_t(c - '0');
  }
  return true;
}

std::optional<tensorio::DType> toDType(machine::ElemType t) {
  switch (t) {
  case machine::ElemType::F32:
    return tensorio::DType::F32;
  case machine::ElemType::F16:
    return tensorio::DType::F16;
  case machine::ElemType::I16:
    return tensorio::DType::I16;
  case machine::ElemType::I32:
    return tensorio::DType::I32;
  default:
    return std::nullopt;
  }
}

std::string shapeStr(const std::vector<int64_t> &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

/// File-system-safe form of a tensor name.
std::string fileName(const std::string &name) {
  std::string r;
  for (char c : name)
    r += (isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.') ? c
                                                                         : '_';
  return r.empty() ? "output" : r;
}

bool writeText(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return bool(f);
}

/// The command line.
struct Args {
  std::string programPath, outDir, statsPath, tracePath, outFormat = "npy";
  std::string heatmapsDir;
  std::vector<std::pair<std::string, std::string>> inputs;
  sim::Options opts;
  bool quiet = false;
  /// --progress or --no-progress; by default, whether stderr is a terminal.
  std::optional<bool> progress;
};

/// Parses the command line into `args`; returns the exit status when the
/// command ends here (--help, a bad option).
std::optional<int> parseArgs(int argc, char **argv, Args &args) {
  sim::Options &opts = args.opts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string &v) {
      size_t eq = a.find('=');
      if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
        v = a.substr(eq + 1);
        return true;
      }
      if (i + 1 >= argc)
        return false;
      v = argv[++i];
      return true;
    };
    std::string key = a.substr(0, a.find('='));
    std::string v;
    uint64_t n;
    if (key == "-h" || key == "--help") {
      usage(std::cout);
      return 0;
    } else if (key == "--input") {
      if (!value(v))
        return die("--input needs NAME=FILE");
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0)
        return die("--input takes NAME=FILE, got '" + v + "'");
      args.inputs.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (key == "--output-dir") {
      if (!value(args.outDir))
        return die("--output-dir needs a directory");
    } else if (key == "--stats") {
      if (!value(args.statsPath))
        return die("--stats needs a file");
    } else if (key == "--trace") {
      if (!value(args.tracePath))
        return die("--trace needs a file");
      opts.trace = true;
    } else if (key == "--heatmaps") {
      if (!value(args.heatmapsDir) || args.heatmapsDir.empty())
        return die("--heatmaps needs a directory");
    } else if (key == "--max-cycles") {
      if (!value(v) || !parseUInt(v, n) || n == 0)
        return die("--max-cycles needs a positive integer");
      opts.maxCycles = n;
    } else if (key == "--threads") {
      if (!value(v) || !parseUInt(v, n) || n == 0 || n > 256)
        return die("--threads needs an integer from 1 to 256");
      opts.threads = unsigned(n);
    } else if (key == "--samples") {
      if (!value(v) || !parseUInt(v, n) || n == 0)
        return die("--samples needs a positive integer");
      opts.samples = n;
    } else if (key == "--mode") {
      if (!value(v) || (v != "reference" && v != "fast"))
        return die("--mode is 'reference' or 'fast'");
      opts.mode = v == "fast" ? sim::Mode::Fast : sim::Mode::Reference;
    } else if (key == "--output-format") {
      if (!value(args.outFormat) ||
          (args.outFormat != "npy" && args.outFormat != "pb"))
        return die("--output-format is 'npy' or 'pb'");
    } else if (key == "--quiet") {
      args.quiet = true;
    } else if (key == "--progress") {
      args.progress = true;
    } else if (key == "--no-progress") {
      args.progress = false;
    } else if (!a.empty() && a[0] == '-') {
      usage(std::cerr);
      return die("unknown option '" + a + "'");
    } else if (args.programPath.empty()) {
      args.programPath = a;
    } else {
      return die("more than one program given ('" + args.programPath +
                 "', '" + a + "')");
    }
  }
  if (args.programPath.empty()) {
    usage(std::cerr);
    return die("no program given");
  }
  return std::nullopt;
}

/// Whether a tensor of `shape` holds `samples` samples of `perSample`:
/// stacked on a new leading dimension, or along the first one.
bool holdsSamples(const std::vector<int64_t> &shape,
                  const std::vector<int64_t> &perSample, uint64_t samples) {
  std::vector<int64_t> batched = perSample;
  batched.insert(batched.begin(), int64_t(samples));
  bool ok = (samples == 1 && shape == perSample) || shape == batched;
  if (!ok && !perSample.empty() && shape.size() == perSample.size() &&
      shape[0] == perSample[0] * int64_t(samples)) {
    ok = true;
    for (size_t d = 1; d < shape.size(); ++d)
      ok &= shape[d] == perSample[d];
  }
  return ok;
}

/// Reads the file of each --input and binds it to the program's input of
/// that name; every input of the program must be given. Returns the exit
/// status on an error.
std::optional<int> bindInputs(const Args &args, sim::Simulator &simulator) {
  const binary::Program &program = simulator.program();
  uint64_t samples = args.opts.samples;
  std::string err;
  std::map<std::string, bool> bound;
  for (auto &[name, path] : args.inputs) {
    const binary::IoStream *io = nullptr;
    for (const binary::IoStream &s : program.io)
      if (s.name == name && !s.output)
        io = &s;
    if (!io) {
      std::string names;
      for (const binary::IoStream &s : program.io)
        if (!s.output)
          names += " '" + s.name + "'";
      return die("the program has no input '" + name + "'; its inputs are:" +
                 names);
    }
    std::optional<tensorio::HostTensor> t =
        tensorio::readTensorFile(path, &err);
    if (!t)
      return die(path + ": " + err);
    std::optional<tensorio::DType> want = toDType(io->dtype);
    if (!want || t->dtype != *want)
      return die("input '" + name + "' is " + machine::elemTypeName(io->dtype) +
                 " but " + path + " holds " + tensorio::dtypeName(t->dtype));
    if (!holdsSamples(t->shape, io->shape, samples))
      return die("input '" + name + "' has shape " + shapeStr(io->shape) +
                 (samples > 1 ? " per sample (" + std::to_string(samples) +
                                    " samples)"
                              : std::string()) +
                 " but " + path + " holds " + shapeStr(t->shape));
    if (!simulator.bindInput(name, t->bytes, &err))
      return die(err);
    bound[name] = true;
  }
  for (const binary::IoStream &s : program.io)
    if (!s.output && !bound.count(s.name))
      return die("input '" + s.name + "' is not given (use --input " +
                 s.name + "=FILE)");
  return std::nullopt;
}

/// One progress line on stderr: the simulated cycle and the cycles per
/// second, the samples done (when known) and, once one is, an estimate of
/// the time left from the samples' rate.
void printProgress(uint64_t cycle, std::optional<uint64_t> done,
                   uint64_t samples, double seconds) {
  std::string line = "weft-sim: cycle " + std::to_string(cycle);
  char buf[160];
  std::snprintf(buf, sizeof buf, " (%.0f cycles/s)",
                seconds > 0 ? double(cycle) / seconds : 0.0);
  line += buf;
  if (done) {
    std::snprintf(buf, sizeof buf, ", %llu of %llu samples done",
                  (unsigned long long)*done, (unsigned long long)samples);
    line += buf;
  }
  std::snprintf(buf, sizeof buf, ", %.1f s elapsed", seconds);
  line += buf;
  if (done && *done >= samples) {
    line += ", 0 s left";
  } else if (done && *done > 0) {
    std::snprintf(buf, sizeof buf, ", about %.0f s left",
                  seconds * double(samples - *done) / double(*done));
    line += buf;
  } else {
    line += ", time left unknown";
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

/// Runs to the end; with progress, in slices of cycles, reporting the cycle
/// and the samples done about every two seconds and once at the end.
sim::Status runToEnd(sim::Simulator &simulator, bool progress,
                     uint64_t samples, bool distributed) {
  if (!progress)
    return simulator.run();
  auto start = std::chrono::steady_clock::now();
  auto last = start;
  auto samplesDone = [&]() -> std::optional<uint64_t> {
    // Distributed, the samples done are known only when the ranks' states
    // are gathered at the end.
    if (distributed)
      return std::nullopt;
    uint64_t done = 0;
    for (uint64_t t : simulator.stats().sampleDone)
      done += t != 0;
    return done;
  };
  // Distributed, the ranks advance in lockstep, so every rank stops after
  // the same slices; only rank 0 prints.
  sim::Status status;
  while ((status = simulator.run(4096)) == sim::Status::Running) {
    auto now = std::chrono::steady_clock::now();
    if (!reporting ||
        std::chrono::duration<double>(now - last).count() < 2.0)
      continue;
    last = now;
    printProgress(simulator.cycle(), samplesDone(), samples,
                  std::chrono::duration<double>(now - start).count());
  }
  if (reporting)
    printProgress(simulator.cycle(), samplesDone(), samples,
                  std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - start)
                      .count());
  return status;
}

/// Writes every output stream to DIR/<name>.<format>, samples stacked on a
/// leading dimension when there are several.
std::optional<int> writeOutputs(const Args &args,
                                const sim::Simulator &simulator) {
  mkdir(args.outDir.c_str(), 0777);
  std::string err;
  for (const binary::IoStream &s : simulator.program().io) {
    if (!s.output)
      continue;
    tensorio::HostTensor t;
    t.dtype = *toDType(s.dtype);
    t.shape = s.shape;
    if (args.opts.samples > 1)
      t.shape.insert(t.shape.begin(), int64_t(args.opts.samples));
    t.bytes = simulator.output(s.name);
    std::string path =
        args.outDir + "/" + fileName(s.name) + "." + args.outFormat;
    if (!tensorio::writeTensorFile(path, t, &err))
      return die(path + ": " + err);
  }
  return std::nullopt;
}

/// CPU time of the whole process (every thread) so far: on a shared machine
/// the steadier measure of the simulator's own work.
double processCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

/// The summary on stdout: cycles, latency, work, and the simulator's speed.
void printSummary(const sim::Simulator &simulator, const sim::Stats &st,
                  double seconds, double cpuSeconds) {
  std::cout << "weft-sim: done in " << st.cycles << " cycles";
  std::cout << ", latency " << (st.lastArrival - st.firstInjection)
            << " cycles";
  std::cout << ", " << st.busyPeCycles << " busy PE-cycles, " << st.macs
            << " MACs, " << st.hops << " wavelet hops\n";
  std::fprintf(stdout,
               "weft-sim: memory: %llu reads (%llu bytes), %llu writes "
               "(%llu bytes), %.3f nJ access energy\n",
               (unsigned long long)st.memoryReads,
               (unsigned long long)st.memoryReadBytes,
               (unsigned long long)st.memoryWrites,
               (unsigned long long)st.memoryWriteBytes,
               double(st.memoryEnergyFj) / 1e6);
  if (!simulator.message().empty())
    std::cout << "weft-sim: " << simulator.message() << "\n";
  std::fprintf(stdout,
               "weft-sim: simulated in %.3f s, %.3f s CPU (%.3g busy "
               "PE-cycles/s, %.3g PE steps, %llu PEs with state, %.0f bytes "
               "each)\n",
               seconds, cpuSeconds,
               seconds > 0 ? double(st.busyPeCycles) / seconds : 0,
               double(st.peSteps), (unsigned long long)st.allocatedPEs,
               st.allocatedPEs ? double(st.stateBytes) / st.allocatedPEs
                               : 0.0);
}

} // namespace

int main(int argc, char **argv) {
  std::unique_ptr<sim::BandExchange> exchange;
#ifdef WEFT_HAVE_MPI
  if (sim::launchedWithSeveralRanks()) {
    std::string e;
    exchange = sim::createMpiExchange(&argc, &argv, &e);
    if (!exchange)
      return die(e);
    reporting = exchange->rank() == 0;
  }
#endif
  Args args;
  std::string err;
  if (std::optional<int> rc = parseArgs(argc, argv, args))
    return *rc;
  // An unwritable heatmap directory is found before a long run.
  if (reporting && !args.heatmapsDir.empty() &&
      !report::checkOutputDirectory(args.heatmapsDir, &err))
    return die("--heatmaps: " + err);
  args.opts.exchange = exchange.get();
  bool distributed = exchange && exchange->size() > 1;
  if (distributed && args.opts.threads > 1 && reporting)
    std::fprintf(stderr, "weft-sim: note: --threads %u is for one process; "
                         "each of the %u ranks runs one thread (start more "
                         "ranks instead)\n",
                 args.opts.threads, exchange->size());

  std::optional<binary::Program> prog =
      binary::readFile(args.programPath, &err);
  if (!prog)
    return die(args.programPath + ": " + err);
  auto simulator = sim::Simulator::create(std::move(*prog), args.opts, &err);
  if (!simulator)
    return die(args.programPath + ": " + err);
  if (std::optional<int> rc = bindInputs(args, *simulator))
    return *rc;

  auto start = std::chrono::steady_clock::now();
  double cpuStart = processCpuSeconds();
  sim::Status status =
      runToEnd(*simulator, args.progress.value_or(isatty(STDERR_FILENO) != 0),
               args.opts.samples, distributed);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  double cpuSeconds = processCpuSeconds() - cpuStart;
  sim::Stats st = simulator->stats();
  if (!reporting) {
    // Rank 0 writes the results; the others exit with the same status.
    switch (status) {
    case sim::Status::Done:
      return 0;
    case sim::Status::Deadlock:
      return 2;
    case sim::Status::CycleLimit:
      return 3;
    default:
      return 4;
    }
  }

  if (!args.statsPath.empty() &&
      !writeText(args.statsPath, simulator->statsJson()))
    return die("cannot write " + args.statsPath);
  if (!args.tracePath.empty() &&
      !writeText(args.tracePath, simulator->traceJson()))
    return die("cannot write " + args.tracePath);
  if (!args.heatmapsDir.empty() &&
      !report::writeHeatmapPngs(args.heatmapsDir, simulator->program(),
                                &st.pes, &err))
    return die("--heatmaps: " + err);

  switch (status) {
  case sim::Status::Done:
    break;
  case sim::Status::Deadlock:
    return die(simulator->message(), 2);
  case sim::Status::CycleLimit:
    return die(simulator->message(), 3);
  default:
    return die(simulator->message(), 4);
  }

  if (!args.outDir.empty())
    if (std::optional<int> rc = writeOutputs(args, *simulator))
      return *rc;
  if (!args.quiet)
    printSummary(*simulator, st, seconds, cpuSeconds);
  if (!args.quiet && !args.heatmapsDir.empty())
    std::cout << "weft-sim: wrote " << report::heatmapKinds().size()
              << " heatmaps to " << args.heatmapsDir << "/<kind>.png\n";
  if (distributed && !args.quiet)
    std::fprintf(stdout,
                 "weft-sim: %u ranks; rank 0 sent %llu bytes across its "
                 "band edge (%.2f per cycle)\n",
                 exchange->size(),
                 (unsigned long long)exchange->edgeBytesSent,
                 st.cycles ? double(exchange->edgeBytesSent) / st.cycles : 0.0);
  return 0;
}
