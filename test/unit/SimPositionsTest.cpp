//===- SimPositionsTest.cpp - Counted router positions in the simulator ---===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Positioned routes (docs/architecture.md §4.4): a fixed-order merge, a
// segment taken out of a passing stream, the one-grant-per-cycle rule and
// the hang report. Every run goes through the reference mode and the fast
// mode with one and two threads, which must agree exactly.
//
//===----------------------------------------------------------------------===//

#include "SimBuilder.h"

#include "weft/Sim/Simulator.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <sstream>

using namespace weft;
using namespace weft::test;
using sim::Mode;
using sim::Status;

namespace {

using Inputs = std::map<std::string, std::vector<uint8_t>>;

binary::Program makeProgram(unsigned w, unsigned h) {
  binary::Program p;
  p.target.width = w;
  p.target.height = h;
  return p;
}

struct RunResult {
  Status status = Status::Error;
  std::string message, stats, trace;
  uint64_t cycles = 0;
  std::map<std::string, std::vector<uint8_t>> outputs;
};

RunResult run(const binary::Program &p, const Inputs &inputs, Mode mode,
              unsigned threads, bool trace = false) {
  sim::Options o;
  o.mode = mode;
  o.threads = threads;
  o.maxCycles = 100000;
  o.trace = trace;
  RunResult r;
  auto s = sim::Simulator::create(p, o, &r.message);
  EXPECT_TRUE(s) << r.message;
  if (!s)
    return r;
  std::string err;
  for (auto &[n, b] : inputs)
    EXPECT_TRUE(s->bindInput(n, b, &err)) << err;
  r.status = s->run();
  r.message = s->message();
  r.cycles = s->cycle();
  r.stats = s->statsJson();
  r.trace = s->traceJson();
  for (const binary::IoStream &io : p.io)
    if (io.output)
      r.outputs[io.name] = s->output(io.name);
  return r;
}

/// The reference result, after checking that the fast mode (one and two
/// threads) gives the same status, message, cycles, outputs and statistics.
RunResult runAll(const binary::Program &p, const Inputs &inputs,
                 bool trace = false) {
  RunResult ref = run(p, inputs, Mode::Reference, 1, trace);
  for (unsigned t : {1u, 2u}) {
    RunResult fast = run(p, inputs, Mode::Fast, t, trace);
    EXPECT_EQ(ref.status, fast.status) << fast.message;
    EXPECT_EQ(ref.message, fast.message);
    EXPECT_EQ(ref.cycles, fast.cycles);
    EXPECT_EQ(ref.outputs, fast.outputs);
    EXPECT_EQ(ref.stats, fast.stats);
  }
  return ref;
}

std::vector<float> iota(unsigned n, float start) {
  std::vector<float> v(n);
  for (unsigned i = 0; i < n; ++i)
    v[i] = start + float(i);
  return v;
}

/// A CE that first copies `delay` words of memory (about `delay` cycles)
/// and then sends `values` on `color` through its on-ramp.
void sender(ImageBuilder &b, unsigned color, const std::vector<float> &values,
            unsigned delay) {
  unsigned n = unsigned(values.size());
  for (unsigned i = 0; i < n; ++i)
    b.f32(4096 + 2 * i, values[i]);
  b.dsd(1024, mem1d(4096, n));
  b.dsd(1028, fabout(color, n));
  std::vector<Instruction> code;
  if (delay) {
    b.dsd(1032, mem1d(8192, delay));
    b.dsd(1036, mem1d(12288, delay));
    code = {lds0(1, 1032), ldd(1, 1036),
            Instruction::un(Opcode::MOV32, ddsr(1), s0(1))};
  }
  code.insert(code.end(),
              {lds0(0, 1024), ldd(0, 1028),
               Instruction::un(Opcode::MOV32, ddsr(0), s0(0), true)});
  b.task(32, code, false, /*active=*/true);
}

/// A CE that copies `n` wavelets of color `in` to color `out`.
void forwarder(ImageBuilder &b, unsigned in, unsigned out, unsigned n) {
  b.dsd(1024, fabin(in, n));
  b.dsd(1028, fabout(out, n));
  b.task(32,
         {lds0(0, 1024), ldd(0, 1028),
          Instruction::un(Opcode::MOV32, ddsr(0), s0(0), true)},
         false, /*active=*/true);
}

/// Row 0 of a 3x1 fabric: the CE of PE (0, 0) sends `a` east on color 1,
/// the CE of PE (1, 0) sends `b`, and PE (1, 0) merges the two with the
/// positions [west x na, ramp x nb]; PE (2, 0) passes the result to the
/// east host port.
binary::Program orderedMerge(const std::vector<float> &a,
                             const std::vector<float> &b, unsigned na,
                             unsigned nb, unsigned delayA, unsigned delayB) {
  binary::Program p = makeProgram(3, 1);
  ImageBuilder west, merge, relay;
  west.route(1, {Dir::Ramp}, {Dir::East});
  sender(west, 1, a, delayA);
  merge.route(1,
              {{{Dir::West}, {Dir::East}, na}, {{Dir::Ramp}, {Dir::East}, nb}});
  sender(merge, 1, b, delayB);
  relay.route(1, {Dir::West}, {Dir::East});
  p.images = {west.build(), merge.build(), relay.build()};
  p.groups = {group("west", 0, 0, 0), group("merge", 1, 1, 0),
              group("relay", 2, 2, 0)};
  p.io.push_back(
      stream("y", true, Dir::East, 0, 1, 1, {int64_t(a.size() + b.size())}));
  return p;
}

TEST(SimPositions, OrderedMergeWhateverTheTiming) {
  for (auto [na, nb] : {std::pair(12u, 4u), std::pair(1u, 3u)}) {
    const unsigned rounds = 3;
    std::vector<float> a = iota(rounds * na, 1000), b = iota(rounds * nb, 2000);
    std::vector<float> want;
    for (unsigned r = 0; r < rounds; ++r) {
      want.insert(want.end(), a.begin() + r * na, a.begin() + (r + 1) * na);
      want.insert(want.end(), b.begin() + r * nb, b.begin() + (r + 1) * nb);
    }
    // The ramp sender starts long before the west one, the other way round,
    // and both at once: the merge order is the positions', always.
    for (auto [delayA, delayB] :
         {std::pair(80u, 0u), std::pair(0u, 80u), std::pair(0u, 0u)}) {
      RunResult r = runAll(orderedMerge(a, b, na, nb, delayA, delayB), {});
      ASSERT_EQ(r.status, Status::Done) << r.message;
      EXPECT_EQ(bytesF32(r.outputs["y"]), want)
          << na << " + " << nb << ", delays " << delayA << ", " << delayB;
    }
  }
}

TEST(SimPositions, PlainMergeDependsOnTheTiming) {
  // The same streams without positions interleave by arrival: with the west
  // sender late, the ramp's values come first. This is what positions fix.
  binary::Program p = orderedMerge(iota(12, 1000), iota(4, 2000), 12, 4, 80, 0);
  binary::Route &route = p.images[1].routes[0];
  route.positions.clear();
  RunResult r = runAll(p, {});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  EXPECT_EQ(bytesF32(r.outputs["y"])[0], 2000.0f);
}

TEST(SimPositions, SegmentFilterTakesTheMiddleOfEveryRound) {
  // x passes PE (0, 0) east; of every 36 wavelets, 10 go east, 6 east and
  // to the CE, 20 east. The CE forwards what it gets on color 2.
  const unsigned p0 = 10, q = 6, r0 = 20, rounds = 3, round = p0 + q + r0;
  binary::Program p = makeProgram(2, 1);
  ImageBuilder tap, relay;
  tap.route(1, {{{Dir::West}, {Dir::East}, p0},
                {{Dir::West}, {Dir::East, Dir::Ramp}, q},
                {{Dir::West}, {Dir::East}, r0}});
  tap.route(2, {Dir::Ramp}, {Dir::East});
  forwarder(tap, 1, 2, rounds * q);
  relay.route(1, {Dir::West}, {Dir::East});
  relay.route(2, {Dir::West}, {Dir::East});
  p.images = {tap.build(), relay.build()};
  p.groups = {group("tap", 0, 0, 0), group("relay", 1, 1, 0)};
  p.io.push_back(stream("x", false, Dir::West, 0, 1, 1, {rounds * round}));
  p.io.push_back(stream("y", true, Dir::East, 0, 1, 1, {rounds * round}));
  p.io.push_back(stream("t", true, Dir::East, 0, 1, 2, {rounds * q}));
  std::vector<float> x = iota(rounds * round, 0);
  RunResult r = runAll(p, {{"x", f32Bytes(x)}});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  EXPECT_EQ(bytesF32(r.outputs["y"]), x);
  std::vector<float> want;
  for (unsigned k = 0; k < rounds; ++k)
    for (unsigned i = 0; i < q; ++i)
      want.push_back(x[k * round + p0 + i]);
  EXPECT_EQ(bytesF32(r.outputs["t"]), want);
}

TEST(SimPositions, OneWaveletPerCyclePerPositionedColor) {
  // PE (0, 0) takes color 1 alternately from the south (to the east) and
  // from the west (to its CE). Both queues are full most of the time and
  // the outputs differ, so without the rule a scan that grants the south
  // wavelet would grant the west one too in the next position. The trace
  // shows at most one hop of color 1 per cycle at PE (0, 0).
  const unsigned n = 24;
  binary::Program p = makeProgram(1, 2);
  ImageBuilder merge, lift;
  merge.route(1,
              {{{Dir::South}, {Dir::East}, 1}, {{Dir::West}, {Dir::Ramp}, 1}});
  merge.route(2, {Dir::Ramp}, {Dir::East});
  forwarder(merge, 1, 2, n);
  lift.route(1, {Dir::West}, {Dir::North});
  p.images = {merge.build(), lift.build()};
  p.groups = {group("merge", 0, 0, 0), group("lift", 1, 0, 1)};
  p.io.push_back(stream("a", false, Dir::West, 0, 1, 1, {n}));
  p.io.push_back(stream("b", false, Dir::West, 1, 2, 1, {n}));
  p.io.push_back(stream("y", true, Dir::East, 0, 1, 1, {n}));
  p.io.push_back(stream("t", true, Dir::East, 0, 1, 2, {n}));
  std::vector<float> a = iota(n, 100), b = iota(n, 200);
  RunResult r = runAll(p, {{"a", f32Bytes(a)}, {"b", f32Bytes(b)}},
                       /*trace=*/true);
  ASSERT_EQ(r.status, Status::Done) << r.message;
  EXPECT_EQ(bytesF32(r.outputs["y"]), b);
  EXPECT_EQ(bytesF32(r.outputs["t"]), a);
  // Router events of PE 0 (the first group): "pid": 0, "tid": 1.
  std::map<uint64_t, unsigned> hops;
  std::istringstream lines(r.trace);
  std::string line;
  while (std::getline(lines, line)) {
    unsigned pid, tid;
    unsigned long long ts;
    char name[32];
    if (std::sscanf(line.c_str(),
                    "{\"ph\": \"X\", \"pid\": %u, \"tid\": %u, \"ts\": %llu, "
                    "\"dur\": 1, \"name\": \"%31[^\"]",
                    &pid, &tid, &ts, name) == 4 &&
        pid == 0 && tid == 1 && std::string(name).rfind("color 1 ", 0) == 0)
      ++hops[ts];
  }
  EXPECT_EQ(hops.size(), 2 * n);
  for (auto [ts, count] : hops)
    EXPECT_EQ(count, 1u) << "cycle " << ts;
}

TEST(SimPositions, HangReportNamesThePosition) {
  // PE (0, 0) takes 2 from the west, then 4 from its CE, which sends only
  // 2: the route waits in position 2 with 2 left while the west queue
  // fills.
  binary::Program p = makeProgram(1, 1);
  ImageBuilder b;
  b.route(1, {{{Dir::West}, {Dir::East}, 2}, {{Dir::Ramp}, {Dir::East}, 4}});
  sender(b, 1, iota(2, 50), 0);
  p.images = {b.build()};
  p.groups = {group("pe", 0, 0, 0)};
  p.io.push_back(stream("a", false, Dir::West, 0, 1, 1, {8}));
  p.io.push_back(stream("y", true, Dir::East, 0, 1, 1, {10}));
  RunResult r = runAll(p, {{"a", f32Bytes(iota(8, 0))}});
  ASSERT_EQ(r.status, Status::Deadlock) << r.message;
  EXPECT_NE(r.message.find("PE (0, 0): router queue (west, color 1) holds 2 "
                           "(full; waiting: color 1 is at position 2 of 2, "
                           "taking from ramp, 2 left)"),
            std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("received 4 of 10"), std::string::npos) << r.message;

  // Waiting in the first position: the west sender sends 1 of 3.
  r = runAll(orderedMerge(iota(1, 0), iota(4, 10), 3, 2, 0, 0), {});
  ASSERT_EQ(r.status, Status::Deadlock) << r.message;
  EXPECT_NE(r.message.find("router queue (ramp, color 1) holds 2 "
                           "(full; waiting: color 1 is at position 1 of 2, "
                           "taking from west, 2 left)"),
            std::string::npos)
      << r.message;
}

TEST(SimPositions, TheLoaderRejectsBadPositions) {
  binary::Program p = orderedMerge(iota(12, 0), iota(4, 10), 12, 4, 0, 0);
  p.images[1].routes[0].positions[1].count = 0;
  sim::Options o;
  std::string err;
  EXPECT_FALSE(sim::Simulator::create(p, o, &err));
  EXPECT_NE(err.find("image 1 (run by group 1 (@merge)): route of color 1: "
                     "position 2 of 2 has count 0"),
            std::string::npos)
      << err;
}

} // namespace
