//===- SimBandTest.cpp - Distributed runs against one process -------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A distributed run (docs/simulator.md, "Distributed simulation") must give
// the single-process run's status, message, cycles, outputs, statistics and
// trace byte for byte. These tests run the ranks as threads of one process
// over the in-process BandExchange (include/weft/Sim/LocalExchange.h), so
// they need no MPI; test/mpi runs weft-sim under mpirun.
//
//===----------------------------------------------------------------------===//

#include "SimBuilder.h"

#include "weft/Binary/Binary.h"
#include "weft/Binary/File.h"
#include "weft/Sim/Exchange.h"
#include "weft/Sim/LocalExchange.h"
#include "weft/Sim/Simulator.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <thread>

using namespace weft;
using sim::Mode;
using sim::Status;

namespace {

using Inputs = std::map<std::string, std::vector<uint8_t>>;

struct Result {
  bool loaded = false;
  std::string loadError;
  Status status = Status::Running;
  std::string message, stats, trace;
  uint64_t cycles = 0;
  std::map<std::string, std::vector<uint8_t>> outputs;
};

bool operator==(const Result &a, const Result &b) {
  return a.loaded == b.loaded && a.loadError == b.loadError &&
         a.status == b.status && a.message == b.message &&
         a.stats == b.stats && a.trace == b.trace && a.cycles == b.cycles &&
         a.outputs == b.outputs;
}

void PrintTo(const Result &r, std::ostream *os) {
  *os << "{status " << sim::statusName(r.status) << ", cycles " << r.cycles
      << ", message '" << r.message << r.loadError << "'}";
}

/// One rank's run (the whole run without an exchange). `slice` > 0 runs in
/// slices of that many cycles.
Result runRank(const binary::Program &p, const Inputs &in, sim::Options o,
               sim::BandExchange *ex, uint64_t slice = 0) {
  Result r;
  o.exchange = ex;
  auto s = sim::Simulator::create(p, o, &r.loadError);
  if (!s)
    return r;
  r.loaded = true;
  std::string err;
  for (auto &[name, bytes] : in)
    EXPECT_TRUE(s->bindInput(name, bytes, &err)) << err;
  if (slice)
    while ((r.status = s->run(slice)) == Status::Running) {
    }
  else
    r.status = s->run();
  if (ex && ex->rank() != 0)
    return r;
  r.message = s->message();
  r.cycles = s->cycle();
  r.stats = s->statsJson();
  r.trace = s->traceJson();
  for (const binary::IoStream &io : p.io)
    if (io.output)
      r.outputs[io.name] = s->output(io.name);
  return r;
}

/// Rank 0's result of a run over `ranks` threads.
Result runBands(const binary::Program &p, const Inputs &in,
                const sim::Options &o, unsigned ranks, uint64_t slice = 0) {
  std::vector<std::unique_ptr<sim::BandExchange>> ex =
      sim::createLocalExchanges(ranks);
  std::vector<Result> results(ranks);
  std::vector<std::thread> threads;
  for (unsigned k = 0; k < ranks; ++k)
    threads.emplace_back(
        [&, k] { results[k] = runRank(p, in, o, ex[k].get(), slice); });
  for (std::thread &t : threads)
    t.join();
  for (unsigned k = 1; k < ranks; ++k) {
    EXPECT_EQ(results[k].status, results[0].status) << "rank " << k;
    EXPECT_EQ(results[k].loadError, results[0].loadError) << "rank " << k;
  }
  return results[0];
}

binary::Program load(const char *file) {
  std::string err;
  std::string path = std::string(WEFT_SIM_TEST_INPUTS) + "/" + file;
  std::optional<binary::Program> p = binary::readFile(path, &err);
  EXPECT_TRUE(p) << path << ": " << err;
  return p ? *p : binary::Program();
}

Inputs inputsFor(const binary::Program &p, uint64_t samples, unsigned seed) {
  std::mt19937 rng(seed);
  Inputs in;
  for (const binary::IoStream &io : p.io) {
    if (io.output)
      continue;
    std::vector<uint8_t> &b = in[io.name];
    bool wide = io.dtype == machine::ElemType::F32 ||
                io.dtype == machine::ElemType::I32;
    for (uint64_t i = 0; i < io.numElements() * samples; ++i) {
      uint32_t v = io.dtype == machine::ElemType::F32
                       ? (rng() & 0x807fffffu) | (uint32_t(125 + rng() % 3) << 23)
                       : (rng() & 0x83ffu) | (uint32_t(13 + rng() % 3) << 10);
      for (unsigned k = 0; k < (wide ? 4u : 2u); ++k)
        b.push_back(uint8_t(v >> (8 * k)));
    }
  }
  return in;
}

struct Network {
  const char *file;
  uint64_t samples;
};

void PrintTo(const Network &n, std::ostream *os) { *os << n.file; }

class SimBand : public ::testing::TestWithParam<Network> {};

TEST_P(SimBand, BandsMatchOneProcess) {
  const Network &net = GetParam();
  binary::Program p = load(net.file);
  ASSERT_FALSE(p.groups.empty());
  Inputs in = inputsFor(p, net.samples, 3);
  for (Mode mode : {Mode::Fast, Mode::Reference}) {
    sim::Options o;
    o.mode = mode;
    o.samples = net.samples;
    o.trace = true;
    Result one = runRank(p, in, o, nullptr);
    ASSERT_EQ(one.status, Status::Done) << one.message;
    for (unsigned ranks = 2; ranks <= 4; ++ranks) {
      Result many = runBands(p, in, o, ranks);
      if (ranks > p.target.height) {
        EXPECT_FALSE(many.loaded);
        EXPECT_NE(many.loadError.find("at least one row per rank"),
                  std::string::npos)
            << many.loadError;
        continue;
      }
      EXPECT_EQ(one, many) << ranks << " ranks";
      // Stopped half-way by the cycle limit, and run in slices.
      sim::Options half = o;
      half.maxCycles = one.cycles / 2 + ranks;
      EXPECT_EQ(runRank(p, in, half, nullptr), runBands(p, in, half, ranks))
          << ranks << " ranks, cycle limit";
      EXPECT_EQ(one, runBands(p, in, o, ranks, 97))
          << ranks << " ranks, slices";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Networks, SimBand,
    ::testing::Values(Network{"mlp-64-48-32-10-relu-softmax-10x8.wfb", 3},
                      Network{"mlp-64-48-32-10-mixed-auto.wfb", 2},
                      Network{"mlp-40-24-12-silu-gelu-8x4.wfb", 2}));

/// Broken routes (inputs or outputs changed at random in one image) make
/// deadlocks, wrong-port errors and stray host-port wavelets, many of them
/// across band edges: the ranks must fail exactly as one process does.
TEST(SimBand, BrokenRoutesFailLikeOneProcess) {
  binary::Program base = load("mlp-64-48-32-10-relu-softmax-10x8.wfb");
  ASSERT_FALSE(base.images.empty());
  Inputs in = inputsFor(base, 2, 5);
  std::mt19937 rng(15);
  std::map<Status, unsigned> seen;
  for (unsigned iter = 0; iter < 40; ++iter) {
    binary::Program p = base;
    binary::CodeImage &img = p.images[rng() % p.images.size()];
    if (img.routes.empty())
      continue;
    binary::Route &r = img.routes[rng() % img.routes.size()];
    if (rng() % 2)
      r.inputs ^= uint8_t(1u << (rng() % 5));
    else
      r.outputs ^= uint8_t(1u << (rng() % 5));
    sim::Options o;
    o.samples = 2;
    o.mode = iter % 4 == 3 ? Mode::Reference : Mode::Fast;
    o.maxCycles = 20000;
    Result one = runRank(p, in, o, nullptr);
    for (unsigned ranks : {2u, 3u})
      EXPECT_EQ(one, runBands(p, in, o, ranks))
          << "iteration " << iter << ", " << ranks << " ranks: "
          << one.message;
    seen[one.status] += one.loaded;
  }
  // The mutations produce failures of several kinds, not only loads that
  // fail.
  EXPECT_GT(seen[Status::Deadlock] + seen[Status::Error], 5u);
}

/// Positioned routes (docs/architecture.md §4.4) across a band edge: PE
/// (0, 0) merges 3 wavelets from the south (row 1, the other rank) with 2
/// from the west, in rounds; PE (1, 0) passes the merged stream east and
/// also hands the last of every 5 to its CE, which sends it east on color
/// 2. With `shortInput` the south input is one wavelet short, so the run
/// hangs with the merge waiting in its first position.
binary::Program positionedAcrossBands(bool shortInput) {
  using test::ImageBuilder;
  binary::Program p;
  p.target.width = 2;
  p.target.height = 2;
  ImageBuilder merge, lift, tap;
  merge.route(1, {{{machine::Dir::South}, {machine::Dir::East}, 3},
                  {{machine::Dir::West}, {machine::Dir::East}, 2}});
  lift.route(1, {machine::Dir::West}, {machine::Dir::North});
  tap.route(
      1, {{{machine::Dir::West}, {machine::Dir::East}, 4},
          {{machine::Dir::West}, {machine::Dir::East, machine::Dir::Ramp}, 1}});
  tap.route(2, {machine::Dir::Ramp}, {machine::Dir::East});
  tap.dsd(1024, test::fabin(1, 4));
  tap.dsd(1028, test::fabout(2, 4));
  tap.task(32,
           {test::lds0(0, 1024), test::ldd(0, 1028),
            machine::Instruction::un(machine::Opcode::MOV32, test::ddsr(0),
                                     test::s0(0), true)},
           false, true);
  p.images = {merge.build(), lift.build(), tap.build()};
  p.groups = {test::group("merge", 0, 0, 0), test::group("lift", 1, 0, 1),
              test::group("tap", 2, 1, 0)};
  p.io = {test::stream("a", false, machine::Dir::West, 0, 1, 1, {8}),
          test::stream("b", false, machine::Dir::West, 1, 2, 1,
                       {shortInput ? 11 : 12}),
          test::stream("y", true, machine::Dir::East, 0, 1, 1, {20}),
          test::stream("t", true, machine::Dir::East, 0, 1, 2, {4})};
  return p;
}

TEST(SimBand, PositionedRoutesMatchOneProcess) {
  for (bool shortInput : {false, true}) {
    binary::Program p = positionedAcrossBands(shortInput);
    ASSERT_EQ(binary::verify(p), "");
    Inputs in = inputsFor(p, 1, 9);
    for (Mode mode : {Mode::Fast, Mode::Reference}) {
      sim::Options o;
      o.mode = mode;
      o.trace = true;
      Result one = runRank(p, in, o, nullptr);
      ASSERT_EQ(one.status, shortInput ? Status::Deadlock : Status::Done)
          << one.message;
      if (shortInput) {
        EXPECT_NE(one.message.find("waiting: color 1 is at position 1 of 2, "
                                   "taking from south, 1 left"),
                  std::string::npos)
            << one.message;
      }
      EXPECT_EQ(one, runBands(p, in, o, 2));
    }
  }
}

} // namespace
