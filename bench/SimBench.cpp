//===- SimBench.cpp - Simulator speed benchmarks --------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The three workloads of docs/performance.md, "Simulator speed":
//   Streaming/64x64   every row streams a tensor from its west port through
//                     64 CEs, each adding a constant (fabin -> fadd -> fabout)
//   MacKernel/64x64   every PE runs a compute-bound FMAC loop on memory
//   Sparse/512x512    a 512x512 fabric where 8 PEs of one row stream data
//   Network           a compiled network: WEFT_SIM_BENCH_WFB (default: the
//                     checked-in 64-48-32-10 MLP of test/unit/Inputs) with
//                     WEFT_SIM_BENCH_SAMPLES samples (default 3) of seeded
//                     inputs, e.g. the 4096-4096-4096-1000 MLP of
//                     docs/performance.md
//   Scale/750x994     every PE of a 750x994 fabric streams 8 fp32 and holds
//                     a 2 KiB table: state per programmed PE (one run)
// Counters: busy PE-cycles per second, fabric PE-cycles per second, MACs
// per second, wavelet hops per second, simulated cycles, bytes of state per
// PE. Run: build/bin/weft-sim-bench [--benchmark_filter=...]
//
//===----------------------------------------------------------------------===//

#include "../test/unit/SimBuilder.h"

#include "weft/Binary/File.h"
#include "weft/Sim/Simulator.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>

using namespace weft;
using namespace weft::test;

namespace {

binary::Program fabric(unsigned w, unsigned h) {
  binary::Program p;
  p.target.width = w;
  p.target.height = h;
  return p;
}

/// Rows of `w` CEs on a `fw` x `fh` fabric (rows 0 .. h-1 used), each CE
/// adding 1 to a stream of n elements and passing it east.
binary::Program streaming(unsigned fw, unsigned fh, unsigned w, unsigned h,
                          unsigned n) {
  binary::Program p = fabric(fw, fh);
  for (unsigned parity = 0; parity < 2; ++parity) {
    ImageBuilder b;
    unsigned cin = 1 + parity, cout = 2 - parity;
    b.route(cin, {Dir::West}, {Dir::Ramp});
    b.route(cout, {Dir::Ramp}, {Dir::East});
    b.dsd(1024, fabin(cin, n));
    b.dsd(1028, fabout(cout, n));
    b.task(32, {lds0(0, 1024), ldd(0, 1028),
                Instruction::vec(Opcode::FADD, dsr(0), imm(SmallImm::One),
                                 true)},
           false, true);
    p.images.push_back(b.build());
  }
  for (unsigned x = 0; x < w; ++x)
    p.groups.push_back(group("col" + std::to_string(x), x % 2, x, 0, 1, h));
  for (unsigned y = 0; y < h; ++y) {
    p.io.push_back(stream("x" + std::to_string(y), false, Dir::West, y, y + 1,
                          1, {int64_t(n)}));
    if (w == fw)
      p.io.push_back(stream("y" + std::to_string(y), true, Dir::East, y,
                            y + 1, 1 + (w % 2), {int64_t(n)}));
  }
  return p;
}

/// A `fw` x `fh` fabric on which only a chain of `w` PEs of row 0 works:
/// they stream n elements from the west port, adding 1 each, and the last
/// one sums the stream into a register. Nothing else has code.
binary::Program sparse(unsigned fw, unsigned fh, unsigned w, unsigned n) {
  binary::Program p = streaming(fw, fh, w - 1, 1, n);
  ImageBuilder b;
  unsigned cin = 1 + ((w - 1) % 2);
  b.route(cin, {Dir::West}, {Dir::Ramp});
  b.dsd(1024, fabin(cin, n));
  b.task(32, {lds0(0, 1024), Instruction::un(Opcode::FSUM, gpr(6), s0(0),
                                             true)},
         false, true);
  p.images.push_back(b.build());
  p.groups.push_back(group("sink", unsigned(p.images.size() - 1), w - 1, 0));
  return p;
}

/// Every PE: `iters` times fmac over n-element memory vectors.
binary::Program macKernel(unsigned w, unsigned h, unsigned n, unsigned iters) {
  binary::Program p = fabric(w, h);
  ImageBuilder b;
  b.dsd(1024, mem1d(4096, n));
  b.dsd(1028, mem1d(8192, n));
  b.dsd(1032, mem1d(12288, n));
  for (unsigned i = 0; i < n; ++i) {
    b.f32(4096 + 2 * i, 0.0f);
    b.f32(8192 + 2 * i, 1.0f + float(i % 7));
    b.f32(12288 + 2 * i, 0.5f);
  }
  // gpr 2 counts iterations; gpr 3 holds the limit. Jump targets are
  // offsets in the body (the builder relocates them).
  b.task(32,
         {ldd(0, 1024), lds0(0, 1028), lds1(0, 1032),
          Instruction::immOp(Opcode::MOVI, 2, 0),
          Instruction::immOp(Opcode::MOVI, 3, uint16_t(iters)),
          /*5: loop*/ Instruction::vec(Opcode::FMAC, dsr(0), s1(0)),
          Instruction::vec(Opcode::ADD16, gpr(2), imm(SmallImm::One)),
          Instruction::cmp(Opcode::CLT16, 2, gpr(3)),
          Instruction::jump(Opcode::BRT, 5), nopTerm()},
         false, true);
  p.images.push_back(b.build());
  p.groups.push_back(group("all", 0, 0, 0, w, h));
  return p;
}

/// Seeded fp32 inputs of moderate magnitude, never zero (0x3f bytes for
/// other types).
std::map<std::string, std::vector<uint8_t>>
seededInputs(const binary::Program &p, uint64_t samples) {
  std::mt19937 rng(1);
  std::map<std::string, std::vector<uint8_t>> inputs;
  for (const binary::IoStream &io : p.io) {
    if (io.output)
      continue;
    std::vector<uint8_t> &b = inputs[io.name];
    b.assign(io.numBytes() * samples, 0x3f);
    if (io.dtype == machine::ElemType::F32)
      for (size_t i = 0; i + 4 <= b.size(); i += 4) {
        uint32_t v = (rng() & 0x807fffffu) | (uint32_t(125 + rng() % 3) << 23);
        for (unsigned k = 0; k < 4; ++k)
          b[i + k] = uint8_t(v >> (8 * k));
      }
  }
  return inputs;
}

void runProgram(benchmark::State &state, const binary::Program &p,
                unsigned threads, uint64_t samples = 1) {
  std::map<std::string, std::vector<uint8_t>> inputs = seededInputs(p, samples);
  uint64_t busy = 0, hops = 0, cycles = 0, fabricCycles = 0, bytesPerPE = 0,
           macs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    sim::Options o;
    o.mode = sim::Mode::Fast;
    o.threads = threads;
    o.samples = samples;
    std::string err;
    auto s = sim::Simulator::create(p, o, &err);
    if (!s) {
      state.SkipWithError(err.c_str());
      return;
    }
    for (auto &[name, bytes] : inputs)
      s->bindInput(name, bytes, &err);
    state.ResumeTiming();
    sim::Status st = s->run();
    state.PauseTiming();
    if (st != sim::Status::Done) {
      state.SkipWithError(s->message().c_str());
      return;
    }
    sim::Stats stats = s->stats();
    busy += stats.busyPeCycles;
    hops += stats.hops;
    macs += stats.macs;
    cycles = stats.cycles;
    fabricCycles += stats.cycles * p.target.width * p.target.height;
    bytesPerPE = stats.stateBytes / std::max<uint64_t>(1, stats.allocatedPEs);
    state.ResumeTiming();
  }
  state.counters["busy_pe_cycles_per_s"] =
      benchmark::Counter(double(busy), benchmark::Counter::kIsRate);
  state.counters["hops_per_s"] =
      benchmark::Counter(double(hops), benchmark::Counter::kIsRate);
  state.counters["fabric_pe_cycles_per_s"] =
      benchmark::Counter(double(fabricCycles), benchmark::Counter::kIsRate);
  state.counters["macs_per_s"] =
      benchmark::Counter(double(macs), benchmark::Counter::kIsRate);
  state.counters["cycles"] = double(cycles);
  state.counters["bytes_per_pe"] = double(bytesPerPE);
  state.counters["threads"] = threads;
}

void Streaming64(benchmark::State &state) {
  runProgram(state, streaming(64, 64, 64, 64, 2000), unsigned(state.range(0)));
}
void MacKernel64(benchmark::State &state) {
  runProgram(state, macKernel(64, 64, 2048, 8), unsigned(state.range(0)));
}
void Sparse512(benchmark::State &state) {
  runProgram(state, sparse(512, 512, 8, 30000),
             unsigned(state.range(0)));
}

void Network(benchmark::State &state) {
  const char *env = std::getenv("WEFT_SIM_BENCH_WFB");
  std::string path = env ? env
                         : std::string(WEFT_SIM_BENCH_INPUTS) +
                               "/mlp-64-48-32-10-relu-softmax-10x8.wfb";
  const char *smp = std::getenv("WEFT_SIM_BENCH_SAMPLES");
  uint64_t samples = smp ? std::strtoull(smp, nullptr, 10) : 3;
  std::string err;
  std::optional<binary::Program> p = binary::readFile(path, &err);
  if (!p) {
    state.SkipWithError((path + ": " + err).c_str());
    return;
  }
  runProgram(state, *p, unsigned(state.range(0)), samples ? samples : 1);
}

/// Every PE of a w x h fabric streams n fp32 east (one chain per row) and
/// holds a 2 KiB table: a few KiB of memory written per PE.
binary::Program fullFabric(unsigned w, unsigned h, unsigned n) {
  binary::Program p = streaming(w, h, w, h, n);
  for (binary::CodeImage &img : p.images) {
    binary::Segment table;
    table.address = 8192;
    for (unsigned i = 0; i < 1024; ++i)
      table.words.push_back(uint16_t(0x3f00 + i));
    img.segments.push_back(table);
  }
  return p;
}

void Scale750x994(benchmark::State &state) {
  runProgram(state, fullFabric(750, 994, 8), 1);
}

BENCHMARK(Streaming64)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(MacKernel64)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(Sparse512)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(Network)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(Scale750x994)->Iterations(1)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

} // namespace

BENCHMARK_MAIN();
