//===- weft-sim.cpp - Run a .wfb binary on the simulated fabric -----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
//   weft-sim prog.wfb --input NAME=FILE ... --output-dir DIR
//            [--stats FILE.json] [--trace FILE.json] [--max-cycles N]
//            [--threads N] [--mode reference|fast] [--samples N]
//            [--output-format npy|pb] [--quiet] [--progress]
//
// --progress prints the simulated cycle and the samples done to stderr
// about every two seconds of a long run.
//
// Input and output files are .npy or ONNX TensorProto .pb. Exit status: 0 on
// a complete run, 1 on bad usage or an unloadable binary, 2 on a deadlock,
// 3 at the cycle limit, 4 on a program error.
//
// Plain C++ on libweftsim; no MLIR.
//
//===----------------------------------------------------------------------===//

#include "weft/Binary/File.h"
#include "weft/Sim/Simulator.h"
#include "weft/TensorIO/TensorIO.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sys/stat.h>

using namespace weft;

namespace {

void usage(std::ostream &os) {
  os << "usage: weft-sim PROGRAM.wfb --input NAME=FILE ... [--output-dir DIR]\n"
        "         [--stats FILE.json] [--trace FILE.json] [--max-cycles N]\n"
        "         [--threads N] [--mode reference|fast] [--samples N]\n"
        "         [--output-format npy|pb] [--quiet] [--progress]\n"
        "Runs a weft binary on the cycle-level fabric simulator. Inputs and\n"
        "outputs are .npy or ONNX TensorProto (.pb) files.\n";
}

int die(const std::string &m, int code = 1) {
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

std::optional<tensorio::DType> toDType(target::ElemType t) {
  switch (t) {
  case target::ElemType::F32:
    return tensorio::DType::F32;
  case target::ElemType::F16:
    return tensorio::DType::F16;
  case target::ElemType::I16:
    return tensorio::DType::I16;
  case target::ElemType::I32:
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

} // namespace

int main(int argc, char **argv) {
  std::string programPath, outDir, statsPath, tracePath,
      outFormat = "npy";
  std::vector<std::pair<std::string, std::string>> inputs;
  sim::Options opts;
  bool quiet = false, progress = false;
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
      inputs.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (key == "--output-dir") {
      if (!value(outDir))
        return die("--output-dir needs a directory");
    } else if (key == "--stats") {
      if (!value(statsPath))
        return die("--stats needs a file");
    } else if (key == "--trace") {
      if (!value(tracePath))
        return die("--trace needs a file");
      opts.trace = true;
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
      if (!value(outFormat) || (outFormat != "npy" && outFormat != "pb"))
        return die("--output-format is 'npy' or 'pb'");
    } else if (key == "--quiet") {
      quiet = true;
    } else if (key == "--progress") {
      progress = true;
    } else if (!a.empty() && a[0] == '-') {
      usage(std::cerr);
      return die("unknown option '" + a + "'");
    } else if (programPath.empty()) {
      programPath = a;
    } else {
      return die("more than one program given ('" + programPath + "', '" + a +
                 "')");
    }
  }
  if (programPath.empty()) {
    usage(std::cerr);
    return die("no program given");
  }

  std::string err;
  std::optional<binary::Program> prog = binary::readFile(programPath, &err);
  if (!prog)
    return die(programPath + ": " + err);
  auto simulator = sim::Simulator::create(std::move(*prog), opts, &err);
  if (!simulator)
    return die(programPath + ": " + err);
  const binary::Program &program = simulator->program();

  // Bind inputs.
  std::map<std::string, bool> bound;
  for (auto &[name, path] : inputs) {
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
      return die("input '" + name + "' is " + target::elemTypeName(io->dtype) +
                 " but " + path + " holds " + tensorio::dtypeName(t->dtype));
    std::vector<int64_t> batched = io->shape;
    batched.insert(batched.begin(), int64_t(opts.samples));
    bool ok = (opts.samples == 1 && t->shape == io->shape) ||
              t->shape == batched;
    if (!ok && !io->shape.empty() && t->shape.size() == io->shape.size() &&
        t->shape[0] == io->shape[0] * int64_t(opts.samples)) {
      ok = true;
      for (size_t d = 1; d < t->shape.size(); ++d)
        ok &= t->shape[d] == io->shape[d];
    }
    if (!ok)
      return die("input '" + name + "' has shape " + shapeStr(io->shape) +
                 (opts.samples > 1 ? " per sample (" +
                                         std::to_string(opts.samples) +
                                         " samples)"
                                   : std::string()) +
                 " but " + path + " holds " + shapeStr(t->shape));
    if (!simulator->bindInput(name, t->bytes, &err))
      return die(err);
    bound[name] = true;
  }
  for (const binary::IoStream &s : program.io)
    if (!s.output && !bound.count(s.name))
      return die("input '" + s.name + "' is not given (use --input " +
                 s.name + "=FILE)");

  auto start = std::chrono::steady_clock::now();
  sim::Status status;
  if (!progress) {
    status = simulator->run();
  } else {
    // In slices of cycles, reporting about every two seconds.
    auto last = start;
    while ((status = simulator->run(4096)) == sim::Status::Running) {
      auto now = std::chrono::steady_clock::now();
      if (std::chrono::duration<double>(now - last).count() < 2.0)
        continue;
      last = now;
      sim::Stats s = simulator->stats();
      uint64_t done = 0;
      for (uint64_t t : s.sampleDone)
        done += t != 0;
      std::fprintf(stderr,
                   "weft-sim: cycle %llu, %llu of %llu samples done, %.0f s\n",
                   (unsigned long long)s.cycles, (unsigned long long)done,
                   (unsigned long long)opts.samples,
                   std::chrono::duration<double>(now - start).count());
    }
  }
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  sim::Stats st = simulator->stats();

  if (!statsPath.empty() && !writeText(statsPath, simulator->statsJson()))
    return die("cannot write " + statsPath);
  if (!tracePath.empty() && !writeText(tracePath, simulator->traceJson()))
    return die("cannot write " + tracePath);

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

  if (!outDir.empty()) {
    mkdir(outDir.c_str(), 0777);
    for (const binary::IoStream &s : program.io) {
      if (!s.output)
        continue;
      tensorio::HostTensor t;
      t.dtype = *toDType(s.dtype);
      t.shape = s.shape;
      if (opts.samples > 1)
        t.shape.insert(t.shape.begin(), int64_t(opts.samples));
      t.bytes = simulator->output(s.name);
      std::string path = outDir + "/" + fileName(s.name) + "." + outFormat;
      if (!tensorio::writeTensorFile(path, t, &err))
        return die(path + ": " + err);
    }
  }
  if (!quiet) {
    std::cout << "weft-sim: done in " << st.cycles << " cycles";
    std::cout << ", latency " << (st.lastArrival - st.firstInjection)
              << " cycles";
    std::cout << ", " << st.busyPeCycles << " busy PE-cycles, " << st.macs
              << " MACs, " << st.hops << " wavelet hops\n";
    if (!simulator->message().empty())
      std::cout << "weft-sim: " << simulator->message() << "\n";
    std::fprintf(stdout,
                 "weft-sim: simulated in %.3f s (%.3g busy PE-cycles/s, "
                 "%.3g PE steps, %llu PEs with state, %.0f bytes each)\n",
                 seconds, seconds > 0 ? double(st.busyPeCycles) / seconds : 0,
                 double(st.peSteps), (unsigned long long)st.allocatedPEs,
                 st.allocatedPEs ? double(st.stateBytes) / st.allocatedPEs
                                 : 0.0);
  }
  return 0;
}
