//===- SimNetworkTest.cpp - Fast mode against reference on networks -------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Compiled networks (test/unit/Inputs/*.wfb, see the README there) run in
// the reference mode and the fast mode, which must agree byte for byte in
// status, message, cycles, outputs and statistics: at the end, when stopped
// by the cycle limit, and at every point of a run split into slices.
//
//===----------------------------------------------------------------------===//

#include "weft/Binary/Binary.h"
#include "weft/Binary/File.h"
#include "weft/Sim/Simulator.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <regex>
#include <sstream>

using namespace weft;
using sim::Mode;
using sim::Status;

namespace {

struct Network {
  const char *file;
  uint64_t samples;
};

void PrintTo(const Network &n, std::ostream *os) { *os << n.file; }

const Network kNetworks[] = {
    {"mlp-64-48-32-10-relu-softmax-10x8.wfb", 3},
    {"mlp-64-48-32-10-mixed-auto.wfb", 3},
    {"mlp-40-24-12-silu-gelu-8x4.wfb", 2},
    // The layout of the 4096-4096-4096-1000 MLP of docs/performance.md at
    // a small size: three dense layers side by side, inputs broadcast down
    // the columns, partial sums reduced along the rows; 192 PEs, so that
    // the threaded cycle (Schedule.cpp) runs.
    {"mlp-128-128-128-40-relu-24x8.wfb", 2},
    // 90 %-pruned weights stored sliced, a sparse host input and sparse
    // activations (docs/execution-model.md, "Sparse weights").
    {"mlp-64-48-32-10-pruned-sparse-10x8.wfb", 3},
    // Convolutions: windows walked by mem4d multiply-accumulates (the
    // batch path's strided loop), line buffers, a residual join, a strided
    // convolution into a dense layer.
    {"conv-basic-block-16x16.wfb", 2},
    {"conv-two-convs-16x16.wfb", 2},
    // The same block in mixed precision: rows converted to fp16 into the
    // line buffers (ff2h from the fabric), fmachs over mem4d operands of
    // two element widths, four elements a group.
    {"conv-basic-block-mixed-16x16.wfb", 2},
};

binary::Program load(const char *file) {
  std::string err;
  std::string path = std::string(WEFT_SIM_TEST_INPUTS) + "/" + file;
  std::optional<binary::Program> p = binary::readFile(path, &err);
  EXPECT_TRUE(p) << path << ": " << err;
  return p ? *p : binary::Program();
}

/// Seeded inputs of moderate magnitude, never NaN, never zero but on a
/// sparse input (which skips zeros).
std::map<std::string, std::vector<uint8_t>>
inputsFor(const binary::Program &p, uint64_t samples, unsigned seed) {
  std::mt19937 rng(seed);
  std::map<std::string, std::vector<uint8_t>> in;
  for (const binary::IoStream &io : p.io) {
    if (io.output)
      continue;
    std::vector<uint8_t> &b = in[io.name];
    bool wide = io.dtype == machine::ElemType::F32 ||
                io.dtype == machine::ElemType::I32;
    uint64_t n = io.numElements() * samples;
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t v;
      if (io.dtype == machine::ElemType::F32)
        v = (rng() & 0x807fffffu) | (uint32_t(125 + rng() % 3) << 23);
      else if (io.dtype == machine::ElemType::F16)
        v = (rng() & 0x83ffu) | (uint32_t(13 + rng() % 3) << 10);
      else
        v = rng() | 1;
      // (A sparse input skips zeros: give it some.)
      if (io.skipZeros && rng() % 3 == 0)
        v = 0;
      for (unsigned k = 0; k < (wide ? 4u : 2u); ++k)
        b.push_back(uint8_t(v >> (8 * k)));
    }
  }
  return in;
}

struct Snapshot {
  Status status;
  std::string message;
  uint64_t cycles;
  std::map<std::string, std::vector<uint8_t>> outputs;
  std::string stats;
};

Snapshot snap(const sim::Simulator &s, Status st) {
  Snapshot r{st, s.message(), s.cycle(), {}, s.statsJson()};
  for (const binary::IoStream &io : s.program().io)
    if (io.output)
      r.outputs[io.name] = s.output(io.name);
  return r;
}

std::unique_ptr<sim::Simulator>
start(const binary::Program &p,
      const std::map<std::string, std::vector<uint8_t>> &in, Mode mode,
      unsigned threads, uint64_t samples, uint64_t maxCycles = 1'000'000'000) {
  sim::Options o;
  o.mode = mode;
  o.threads = threads;
  o.samples = samples;
  o.maxCycles = maxCycles;
  std::string err;
  auto s = sim::Simulator::create(p, o, &err);
  EXPECT_TRUE(s) << err;
  if (!s)
    return nullptr;
  for (auto &[name, bytes] : in)
    EXPECT_TRUE(s->bindInput(name, bytes, &err)) << err;
  return s;
}

void expectSame(const Snapshot &a, const Snapshot &b, const std::string &what) {
  EXPECT_EQ(a.status, b.status) << what << ": " << b.message;
  EXPECT_EQ(a.message, b.message) << what;
  EXPECT_EQ(a.cycles, b.cycles) << what;
  EXPECT_EQ(a.outputs, b.outputs) << what;
  // The statistics are long: report their first differing line.
  if (a.stats != b.stats) {
    std::istringstream sa(a.stats), sb(b.stats);
    std::string la, lb;
    while (std::getline(sa, la) && std::getline(sb, lb) && la == lb) {
    }
    ADD_FAILURE() << what << ": the statistics differ first at\n  " << la
                  << "\n  " << lb;
  }
}

class SimNetwork : public ::testing::TestWithParam<Network> {};

TEST_P(SimNetwork, FastModeMatchesReferenceMode) {
  const Network &net = GetParam();
  binary::Program p = load(net.file);
  ASSERT_FALSE(p.groups.empty());
  auto in = inputsFor(p, net.samples, 1);
  auto ref = start(p, in, Mode::Reference, 1, net.samples);
  ASSERT_TRUE(ref);
  Snapshot r = snap(*ref, ref->run());
  ASSERT_EQ(r.status, Status::Done) << r.message;
  // The network computes something: every output has a non-zero byte.
  for (auto &[name, bytes] : r.outputs) {
    bool any = false;
    for (uint8_t b : bytes)
      any |= b != 0;
    EXPECT_TRUE(any) << name;
  }
  for (unsigned t : {1u, 2u, 3u}) {
    auto f = start(p, in, Mode::Fast, t, net.samples);
    ASSERT_TRUE(f);
    expectSame(r, snap(*f, f->run()),
               std::string(net.file) + ", " + std::to_string(t) + " thread(s)");
  }
  // Different inputs, different outputs, still the same in both modes.
  auto in2 = inputsFor(p, net.samples, 2);
  auto ref2 = start(p, in2, Mode::Reference, 1, net.samples);
  auto f2 = start(p, in2, Mode::Fast, 1, net.samples);
  Snapshot r2 = snap(*ref2, ref2->run());
  EXPECT_NE(r.outputs, r2.outputs);
  expectSame(r2, snap(*f2, f2->run()), std::string(net.file) + ", inputs 2");
}

TEST_P(SimNetwork, SlicedRunsMatchAtEverySlice) {
  const Network &net = GetParam();
  binary::Program p = load(net.file);
  auto in = inputsFor(p, net.samples, 3);
  uint64_t total;
  {
    auto ref = start(p, in, Mode::Reference, 1, net.samples);
    ASSERT_TRUE(ref);
    ASSERT_EQ(ref->run(), Status::Done) << ref->message();
    total = ref->cycle();
  }
  // Slices of an odd length, so they end inside batched instructions and
  // sleeps; the statistics must agree after every one.
  for (uint64_t slice : {total / 7 + 3, uint64_t(97)}) {
    auto ref = start(p, in, Mode::Reference, 1, net.samples);
    auto fast = start(p, in, Mode::Fast, 2, net.samples);
    ASSERT_TRUE(ref && fast);
    for (unsigned k = 0;; ++k) {
      Status a = ref->run(slice), b = fast->run(slice);
      std::string what = std::string(net.file) + ", slice " +
                         std::to_string(slice) + " #" + std::to_string(k);
      expectSame(snap(*ref, a), snap(*fast, b), what);
      if (a != Status::Running || b != Status::Running || HasFailure())
        break;
    }
  }
}

TEST_P(SimNetwork, CycleLimitStopsBothModesAlike) {
  const Network &net = GetParam();
  binary::Program p = load(net.file);
  auto in = inputsFor(p, net.samples, 4);
  auto ref = start(p, in, Mode::Reference, 1, net.samples);
  ASSERT_TRUE(ref);
  ASSERT_EQ(ref->run(), Status::Done);
  for (uint64_t limit : {ref->cycle() / 3, ref->cycle() / 2 + 1,
                         ref->cycle() - 1}) {
    auto a = start(p, in, Mode::Reference, 1, net.samples, limit);
    auto b = start(p, in, Mode::Fast, 1, net.samples, limit);
    Snapshot sa = snap(*a, a->run());
    EXPECT_EQ(sa.status, Status::CycleLimit);
    expectSame(sa, snap(*b, b->run()),
               std::string(net.file) + ", limit " + std::to_string(limit));
  }
}

INSTANTIATE_TEST_SUITE_P(Compiled, SimNetwork, ::testing::ValuesIn(kNetworks),
                         [](const ::testing::TestParamInfo<Network> &i) {
                           std::string n = i.param.file;
                           n = n.substr(0, n.find('.'));
                           for (char &c : n)
                             if (!isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return n;
                         });

/// Broken routes (an input or output of one route flipped at random) on the
/// 192-PE network make deadlocks, wrong-port errors, overflows and stray
/// host-port wavelets while most PEs are active: the threaded cycle
/// (Schedule.cpp) must stop exactly where the reference mode does, with
/// the same message, cycles, outputs and statistics.
TEST(SimNetworkErrors, BrokenRoutesFailAlikeOnThreads) {
  binary::Program base = load("mlp-128-128-128-40-relu-24x8.wfb");
  ASSERT_FALSE(base.images.empty());
  auto in = inputsFor(base, 2, 6);
  std::mt19937 rng(16);
  std::map<Status, unsigned> seen;
  for (unsigned iter = 0; iter < 30; ++iter) {
    binary::Program p = base;
    binary::CodeImage &img = p.images[rng() % p.images.size()];
    if (img.routes.empty())
      continue;
    binary::Route &r = img.routes[rng() % img.routes.size()];
    if (rng() % 2)
      r.inputs ^= uint8_t(1u << (rng() % 5));
    else
      r.outputs ^= uint8_t(1u << (rng() % 5));
    std::string err;
    sim::Options o;
    o.samples = 2;
    o.maxCycles = 20000;
    o.mode = Mode::Reference;
    if (!sim::Simulator::create(p, o, &err))
      continue; // refused at load: nothing runs
    auto ref = start(p, in, Mode::Reference, 1, 2, 20000);
    ASSERT_TRUE(ref);
    const Snapshot ref0 = snap(*ref, ref->run());
    ++seen[ref0.status];
    for (unsigned t : {1u, 2u, 3u}) {
      auto f = start(p, in, Mode::Fast, t, 2, 20000);
      ASSERT_TRUE(f);
      Snapshot want = ref0, got = snap(*f, f->run());
      std::string what = "iteration " + std::to_string(iter) + ", " +
                         std::to_string(t) + " thread(s)";
      if (want.status != Status::Error) {
        expectSame(want, got, what);
        continue;
      }
      // A batched instruction counts its elements, flops, MACs and memory
      // accesses and raises the memory high-water mark when it issues
      // (docs/simulator.md, "Fast mode"), so a run stopped by a program
      // error in the middle of one reports them early: everything else must
      // agree, the other statistics (busy cycles, instructions, hops,
      // queues) included.
      std::regex issued(
          "\"(elements|flops|macs|memory_high_water_bytes|memory_reads|"
          "memory_writes|memory_read_bytes|memory_write_bytes|"
          "memory_energy_pj)\": [0-9.]+");
      want.stats = std::regex_replace(want.stats, issued, "");
      got.stats = std::regex_replace(got.stats, issued, "");
      expectSame(want, got, what);
    }
  }
  // The mutations fail in several ways, not only at load.
  EXPECT_GT(seen[Status::Deadlock] + seen[Status::Error], 5u);
}

} // namespace
