//===- SimTest.cpp - Simulator unit tests ---------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "SimBuilder.h"

#include "weft/Sim/Simulator.h"

#include <gtest/gtest.h>

using namespace weft;
using namespace weft::test;
using sim::Mode;
using sim::Status;

namespace {

binary::Program makeProgram(unsigned w, unsigned h) {
  binary::Program p;
  p.target.width = w;
  p.target.height = h;
  return p;
}

struct RunResult {
  Status status;
  std::string message;
  uint64_t cycles;
  std::map<std::string, std::vector<uint8_t>> outputs;
  std::string stats;
};

RunResult run(const binary::Program &p,
              const std::map<std::string, std::vector<uint8_t>> &inputs,
              Mode mode = Mode::Reference, unsigned threads = 1,
              uint64_t samples = 1, uint64_t maxCycles = 1000000) {
  sim::Options o;
  o.mode = mode;
  o.threads = threads;
  o.samples = samples;
  o.maxCycles = maxCycles;
  std::string err;
  auto s = sim::Simulator::create(p, o, &err);
  EXPECT_TRUE(s) << err;
  if (!s)
    return {Status::Error, err, 0, {}, ""};
  for (auto &[n, b] : inputs)
    EXPECT_TRUE(s->bindInput(n, b, &err)) << err;
  RunResult r;
  r.status = s->run();
  r.message = s->message();
  r.cycles = s->cycle();
  for (const binary::IoStream &io : p.io)
    if (io.output)
      r.outputs[io.name] = s->output(io.name);
  r.stats = s->statsJson();
  return r;
}

/// Runs in both modes (fast with 1 and 2 threads) and checks they agree
/// exactly; returns the reference result.
RunResult runAll(const binary::Program &p,
                 const std::map<std::string, std::vector<uint8_t>> &inputs,
                 uint64_t samples = 1) {
  RunResult ref = run(p, inputs, Mode::Reference, 1, samples);
  for (unsigned t : {1u, 2u}) {
    RunResult fast = run(p, inputs, Mode::Fast, t, samples);
    EXPECT_EQ(ref.status, fast.status) << fast.message;
    EXPECT_EQ(ref.cycles, fast.cycles);
    EXPECT_EQ(ref.message, fast.message);
    EXPECT_EQ(ref.outputs, fast.outputs);
    // Statistics agree except the fast mode's active-set figures, which the
    // JSON does not contain.
    EXPECT_EQ(ref.stats, fast.stats);
  }
  return ref;
}

std::vector<float> iota(unsigned n, float start = 0, float step = 1) {
  std::vector<float> v(n);
  for (unsigned i = 0; i < n; ++i)
    v[i] = start + step * float(i);
  return v;
}

/// The vector add of examples/vector-add.mlir, built in C++.
binary::Program vectorAdd(unsigned n) {
  binary::Program p = makeProgram(1, 1);
  ImageBuilder b;
  b.route(1, {Dir::West}, {Dir::Ramp});
  b.route(2, {Dir::West}, {Dir::Ramp});
  b.route(3, {Dir::Ramp}, {Dir::East});
  b.dsd(1024, fabin(1, n));
  b.dsd(1028, fabin(2, n));
  b.dsd(1032, mem1d(2048, n));
  b.dsd(1036, fabout(3, n));
  b.task(32,
         {lds0(0, 1024), ldd(0, 1032),
          Instruction::un(Opcode::MOV32, ddsr(0), s0(0)), lds0(1, 1032),
          lds1(1, 1028), ldd(1, 1036),
          Instruction::vec(Opcode::FADD, dsr(1), s1(1), true)},
         false, /*active=*/true);
  p.images.push_back(b.build());
  p.groups.push_back(group("pe", 0, 0, 0));
  p.io.push_back(stream("a", false, Dir::West, 0, 1, 1, {int64_t(n)}));
  p.io.push_back(stream("b", false, Dir::West, 0, 1, 2, {int64_t(n)}));
  p.io.push_back(stream("sum", true, Dir::East, 0, 1, 3, {int64_t(n)}));
  return p;
}

TEST(Sim, VectorAdd) {
  auto a = iota(64, 1.0f, 0.5f), b = iota(64, -3.0f, 0.25f);
  RunResult r = runAll(vectorAdd(64), {{"a", f32Bytes(a)}, {"b", f32Bytes(b)}});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  std::vector<float> sum = bytesF32(r.outputs["sum"]);
  ASSERT_EQ(sum.size(), 64u);
  for (unsigned i = 0; i < 64; ++i)
    EXPECT_EQ(sum[i], a[i] + b[i]) << i;
  EXPECT_GT(r.cycles, 128u);
}

TEST(Sim, MissingInputIsAnError) {
  sim::Options o;
  std::string err;
  auto s = sim::Simulator::create(vectorAdd(4), o, &err);
  ASSERT_TRUE(s) << err;
  EXPECT_FALSE(s->bindInput("c", {}, &err));
  EXPECT_NE(err.find("no input named 'c'"), std::string::npos) << err;
  EXPECT_FALSE(s->bindInput("a", {1, 2, 3}, &err));
  EXPECT_NE(err.find("needs 16 bytes"), std::string::npos) << err;
  EXPECT_EQ(s->run(), Status::Error);
  EXPECT_NE(s->message().find("not bound"), std::string::npos);
}

/// A row of `w` PEs whose routers pass color 1 east; no CE involved.
binary::Program passEast(unsigned w, unsigned rq = 2) {
  binary::Program p = makeProgram(w, 1);
  p.target.routerQueueDepth = rq;
  ImageBuilder b;
  b.route(1, {Dir::West}, {Dir::East});
  p.images.push_back(b.build());
  p.groups.push_back(group("row", 0, 0, 0, w, 1));
  p.io.push_back(stream("x", false, Dir::West, 0, 1, 1, {32}));
  p.io.push_back(stream("y", true, Dir::East, 0, 1, 1, {32}));
  return p;
}

TEST(Sim, RowPassEastTiming) {
  auto x = iota(32);
  for (unsigned w : {1u, 4u, 9u}) {
    RunResult r = runAll(passEast(w), {{"x", f32Bytes(x)}});
    ASSERT_EQ(r.status, Status::Done) << r.message;
    EXPECT_EQ(bytesF32(r.outputs["y"]), x);
    // One wavelet per cycle: injected in cycles 0..31, each hop one cycle;
    // the last leaves the east PE in cycle 31 + w and arrives in 32 + w.
    EXPECT_EQ(r.cycles, 32u + w) << "width " << w;
  }
}

TEST(Sim, ShallowQueuesHalveThroughput) {
  auto x = iota(32);
  RunResult r = runAll(passEast(3, /*rq=*/1), {{"x", f32Bytes(x)}});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  EXPECT_EQ(bytesF32(r.outputs["y"]), x);
  // With rq = 1 a stream moves one wavelet every two cycles (§4.2).
  EXPECT_GE(r.cycles, 2u * 32u);
}

/// Column multicast: the west port of row 0 feeds PE (0,0), whose router
/// sends color 1 to its CE and south; every PE adds its row number + 1 and
/// sends the result east on its own row.
binary::Program columnMulticast(unsigned h, unsigned n) {
  binary::Program p = makeProgram(1, h);
  for (unsigned y = 0; y < h; ++y) {
    ImageBuilder b;
    if (y == 0)
      b.route(1, {Dir::West}, y + 1 < h ? std::initializer_list<Dir>{Dir::Ramp, Dir::South}
                                        : std::initializer_list<Dir>{Dir::Ramp});
    else if (y + 1 < h)
      b.route(1, {Dir::North}, {Dir::Ramp, Dir::South});
    else
      b.route(1, {Dir::North}, {Dir::Ramp});
    b.route(2, {Dir::Ramp}, {Dir::East});
    b.dsd(1024, fabin(1, n));
    b.dsd(1028, fabout(2, n));
    b.dsd(1032, mem1d(2048, n));
    for (unsigned i = 0; i < n; ++i)
      b.f32(2048 + 2 * i, float(y + 1));
    b.task(32, {lds0(0, 1024), lds1(0, 1032), ldd(0, 1028),
                Instruction::vec(Opcode::FADD, dsr(0), s1(0), true)},
           false, true);
    p.images.push_back(b.build());
    p.groups.push_back(group("pe" + std::to_string(y), y, 0, y));
    p.io.push_back(stream("y" + std::to_string(y), true, Dir::East, y, y + 1, 2,
                          {int64_t(n)}));
  }
  p.io.push_back(stream("x", false, Dir::West, 0, 1, 1, {int64_t(n)}));
  return p;
}

TEST(Sim, ColumnMulticast) {
  auto x = iota(16, 10.0f);
  RunResult r = runAll(columnMulticast(4, 16), {{"x", f32Bytes(x)}});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  for (unsigned y = 0; y < 4; ++y) {
    std::vector<float> out = bytesF32(r.outputs["y" + std::to_string(y)]);
    for (unsigned i = 0; i < 16; ++i)
      EXPECT_EQ(out[i], x[i] + float(y + 1));
  }
}

TEST(Sim, DeadlockIsReported) {
  // The CE waits for 8 elements but the host sends only 4.
  binary::Program p = vectorAdd(8);
  p.io[0].shape = {4};
  p.io[1].shape = {4};
  RunResult r = runAll(p, {{"a", f32Bytes(iota(4))}, {"b", f32Bytes(iota(4))}});
  ASSERT_EQ(r.status, Status::Deadlock);
  EXPECT_NE(r.message.find("output 'sum' row 0"), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("received 0 of 8"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("PE (0, 0)"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("fabric input empty (color 1)"), std::string::npos)
      << r.message;
}

TEST(Sim, CycleLimit) {
  RunResult r = run(passEast(4), {{"x", f32Bytes(iota(32))}}, Mode::Fast, 1,
                    1, /*maxCycles=*/10);
  EXPECT_EQ(r.status, Status::CycleLimit);
  EXPECT_NE(r.message.find("cycle limit of 10"), std::string::npos);
}

TEST(Sim, WrongPortIsAnError) {
  binary::Program p = passEast(2);
  // The second PE expects color 1 from the north only.
  ImageBuilder b;
  b.route(1, {Dir::South}, {Dir::East});
  p.images.push_back(b.build());
  p.groups[0].width = 1;
  p.groups.push_back(group("second", 1, 1, 0));
  p.target.height = 2;
  RunResult r = run(p, {{"x", f32Bytes(iota(32))}});
  ASSERT_EQ(r.status, Status::Error);
  EXPECT_NE(r.message.find("PE (1, 0)"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("arrives on port west"), std::string::npos)
      << r.message;
}

TEST(Sim, Samples) {
  auto x = iota(64);
  RunResult r = runAll(passEast(3), {{"x", f32Bytes(x)}}, /*samples=*/2);
  ASSERT_EQ(r.status, Status::Done) << r.message;
  EXPECT_EQ(bytesF32(r.outputs["y"]), x);
}

} // namespace
