//===- SimScaleTest.cpp - Fabric size and state per PE --------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Nothing in the simulator is dense in the fabric's size: a program on a
// few PEs of the largest fabric the binary format allows loads and runs,
// and a PE's memory is allocated in pages as the program writes it.
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

/// One PE at the east edge that adds 1 to a stream from its east host port
/// and sends it back there.
binary::CodeImage addOneEast(unsigned n) {
  ImageBuilder b;
  b.route(1, {Dir::East}, {Dir::Ramp});
  b.route(2, {Dir::Ramp}, {Dir::East});
  b.dsd(1024, fabin(1, n));
  b.dsd(1028, fabout(2, n));
  b.task(32,
         {lds0(0, 1024), ldd(0, 1028),
          Instruction::vec(Opcode::FADD, dsr(0), imm(SmallImm::One), true)},
         false, true);
  return b.build();
}

TEST(SimScale, LargestFabricWithFewProgrammedPEs) {
  const unsigned side = 65535, n = 40;
  binary::Program p;
  p.target.width = side;
  p.target.height = side;
  p.images.push_back(addOneEast(n));
  std::vector<unsigned> rows = {0, 31000, side - 1};
  std::map<std::string, std::vector<uint8_t>> in;
  std::map<std::string, std::vector<float>> x;
  for (unsigned r : rows) {
    std::string k = std::to_string(r);
    p.groups.push_back(group("pe" + k, 0, side - 1, r));
    p.io.push_back(stream("x" + k, false, Dir::East, r, r + 1, 1,
                          {int64_t(n)}));
    p.io.push_back(stream("y" + k, true, Dir::East, r, r + 1, 2,
                          {int64_t(n)}));
    for (unsigned i = 0; i < n; ++i)
      x[k].push_back(float(r) + 0.25f * float(i));
    in["x" + k] = f32Bytes(x[k]);
  }
  ASSERT_EQ(binary::verify(p), "");
  std::string first;
  for (Mode mode : {Mode::Reference, Mode::Fast}) {
    sim::Options o;
    o.mode = mode;
    std::string err;
    auto s = sim::Simulator::create(p, o, &err);
    ASSERT_TRUE(s) << err;
    for (auto &[name, bytes] : in)
      ASSERT_TRUE(s->bindInput(name, bytes, &err)) << err;
    ASSERT_EQ(s->run(), Status::Done) << s->message();
    for (unsigned r : rows) {
      std::string k = std::to_string(r);
      std::vector<float> y = bytesF32(s->output("y" + k));
      ASSERT_EQ(y.size(), n);
      for (unsigned i = 0; i < n; ++i)
        EXPECT_EQ(y[i], x[k][i] + 1.0f) << "row " << r << " element " << i;
    }
    sim::Stats st = s->stats();
    EXPECT_EQ(st.allocatedPEs, rows.size());
    // State for three PEs, not for 4.3 billion.
    EXPECT_LT(st.stateBytes, 3u * 64 * 1024);
    if (first.empty())
      first = s->statsJson();
    else
      EXPECT_EQ(first, s->statsJson());
  }
}

/// Every PE of a w x h fabric streams a short vector east (one row chain
/// per row) and keeps a 2 KiB table in memory: a few KiB used per PE.
binary::Program fullFabric(unsigned w, unsigned h, unsigned n) {
  binary::Program p;
  p.target.width = w;
  p.target.height = h;
  for (unsigned parity = 0; parity < 2; ++parity) {
    ImageBuilder b;
    unsigned cin = 1 + parity, cout = 2 - parity;
    b.route(cin, {Dir::West}, {Dir::Ramp});
    b.route(cout, {Dir::Ramp}, {Dir::East});
    b.dsd(1024, fabin(cin, n));
    b.dsd(1028, fabout(cout, n));
    for (unsigned i = 0; i < 512; ++i)
      b.f32(8192 + 2 * i, float(i));
    b.task(32,
           {lds0(0, 1024), ldd(0, 1028),
            Instruction::vec(Opcode::FADD, dsr(0), imm(SmallImm::One), true)},
           false, true);
    p.images.push_back(b.build());
  }
  for (unsigned x = 0; x < w; ++x)
    p.groups.push_back(group("col" + std::to_string(x), x % 2, x, 0, 1, h));
  for (unsigned y = 0; y < h; ++y) {
    p.io.push_back(stream("x" + std::to_string(y), false, Dir::West, y, y + 1,
                          1, {int64_t(n)}));
    p.io.push_back(stream("y" + std::to_string(y), true, Dir::East, y, y + 1,
                          1 + (w % 2), {int64_t(n)}));
  }
  return p;
}

// A valid binary may declare a stream of up to 2^48 elements: the host
// keeps every tensor whole, so the simulator refuses one it could not hold
// (found by the simulator fuzzer: the output was allocated when read, 17 GB
// and an abort) and says which stream and how large, for any sample count.
TEST(SimScale, HostTensorsTooLargeAreRefused) {
  binary::Program p;
  p.target.width = 4;
  p.target.height = 1;
  p.images.push_back(addOneEast(4));
  p.groups.push_back(group("pe", 0, 3, 0));
  p.io.push_back(stream("x", false, Dir::East, 0, 1, 1, {4}));
  p.io.push_back(stream("y", true, Dir::East, 0, 1, 2, {int64_t(1) << 31}));
  ASSERT_EQ(binary::verify(p), "");
  sim::Options o;
  std::string err;
  EXPECT_FALSE(sim::Simulator::create(p, o, &err));
  EXPECT_EQ(err, "output stream @y holds 8589934592 bytes a sample; 1 "
                 "samples of it exceed the simulator's 4 GiB for a host "
                 "tensor");
  // Within the limit for one sample, beyond it for a million.
  p.io[1].shape = {1 << 20};
  o.samples = 1'000'000;
  EXPECT_FALSE(sim::Simulator::create(p, o, &err));
  EXPECT_NE(err.find("1000000 samples"), std::string::npos) << err;
}

TEST(SimScale, MemoryIsAllocatedInPagesAsWritten) {
  const unsigned w = 64, h = 48, n = 8;
  binary::Program p = fullFabric(w, h, n);
  ASSERT_EQ(binary::verify(p), "");
  sim::Options o;
  std::string err;
  auto s = sim::Simulator::create(p, o, &err);
  ASSERT_TRUE(s) << err;
  for (unsigned y = 0; y < h; ++y) {
    std::vector<float> x(n, float(y));
    ASSERT_TRUE(s->bindInput("x" + std::to_string(y), f32Bytes(x), &err));
  }
  ASSERT_EQ(s->run(), Status::Done) << s->message();
  std::vector<float> y = bytesF32(s->output("y5"));
  ASSERT_EQ(y.size(), n);
  EXPECT_EQ(y[3], 5.0f + float(w));
  sim::Stats st = s->stats();
  ASSERT_EQ(st.allocatedPEs, uint64_t(w) * h);
  // The default memory is 48 KiB; this program writes code, descriptors
  // and a 2 KiB table. Pages, not whole memories, are allocated.
  uint64_t perPe = st.stateBytes / st.allocatedPEs;
  RecordProperty("bytes_per_pe", std::to_string(perPe));
  EXPECT_LT(perPe, 16u * 1024) << perPe << " bytes per PE";
  EXPECT_GT(perPe, 2u * 1024) << perPe << " bytes per PE";
}

/// Threads step ranges of the active PEs; what the east-edge PEs (the last
/// range) send to their host ports must be collected in every cycle, also
/// in the cycles in which a west host port injects. Once it was not, and
/// the next send found the latch full ("two wavelets on the east link").
TEST(SimScale, ThreadsCollectHostSendsWhileHostPortsInject) {
  const unsigned w = 64, h = 8, n = 200;
  binary::Program p = fullFabric(w, h, n);
  ASSERT_EQ(binary::verify(p), "");
  std::string refJson;
  std::vector<std::vector<uint8_t>> refOut;
  for (unsigned threads : {0u, 2u}) {
    sim::Options o;
    o.mode = threads ? Mode::Fast : Mode::Reference;
    o.threads = threads ? threads : 1;
    std::string err;
    auto s = sim::Simulator::create(p, o, &err);
    ASSERT_TRUE(s) << err;
    for (unsigned y = 0; y < h; ++y) {
      std::vector<float> x(n);
      for (unsigned i = 0; i < n; ++i)
        x[i] = float(y) + 0.5f * float(i);
      ASSERT_TRUE(s->bindInput("x" + std::to_string(y), f32Bytes(x), &err));
    }
    ASSERT_EQ(s->run(), Status::Done) << threads << " threads: "
                                      << s->message();
    std::vector<std::vector<uint8_t>> out;
    for (unsigned y = 0; y < h; ++y)
      out.push_back(s->output("y" + std::to_string(y)));
    EXPECT_EQ(bytesF32(out[3])[7], 3.0f + 3.5f + float(w));
    if (!threads) {
      refJson = s->statsJson();
      refOut = out;
      continue;
    }
    EXPECT_EQ(out, refOut) << threads << " threads";
    EXPECT_EQ(s->statsJson(), refJson) << threads << " threads";
  }
}

/// PEs that only route wavelets (no code, nothing in memory) carry the
/// fixed state alone: DSR records, 4-D and FIFO state, microthreads and
/// memory pages come only with a program that uses them. The fixed state
/// was 3.9 KB per PE before DSR records moved out of line (1.6 KB since).
TEST(SimScale, RoutingPEsCarryOnlyTheFixedState) {
  const unsigned w = 48, h = 32, n = 16;
  binary::Program p;
  p.target.width = w;
  p.target.height = h;
  ImageBuilder b;
  b.route(1, {Dir::West}, {Dir::East});
  p.images.push_back(b.build());
  p.groups.push_back(group("all", 0, 0, 0, w, h));
  p.io.push_back(stream("x", false, Dir::West, 0, 1, 1, {int64_t(n)}));
  p.io.push_back(stream("y", true, Dir::East, 0, 1, 1, {int64_t(n)}));
  ASSERT_EQ(binary::verify(p), "");
  std::vector<float> x(n);
  for (unsigned i = 0; i < n; ++i)
    x[i] = 0.5f * float(i) - 3.0f;
  for (Mode mode : {Mode::Reference, Mode::Fast}) {
    sim::Options o;
    o.mode = mode;
    std::string err;
    auto s = sim::Simulator::create(p, o, &err);
    ASSERT_TRUE(s) << err;
    ASSERT_TRUE(s->bindInput("x", f32Bytes(x), &err)) << err;
    ASSERT_EQ(s->run(), Status::Done) << s->message();
    EXPECT_EQ(bytesF32(s->output("y")), x);
    sim::Stats st = s->stats();
    ASSERT_EQ(st.allocatedPEs, uint64_t(w) * h);
    uint64_t perPe = st.stateBytes / st.allocatedPEs;
    RecordProperty("bytes_per_pe", std::to_string(perPe));
    EXPECT_LT(perPe, 2048u) << perPe << " bytes per routing PE";
  }
}

/// A PE that loads all 36 DSRs: the records move as their array grows
/// (4, 12, 36 entries), and a reload reuses its register's entry, so the
/// fabric input and output loaded first are still the ones the FADD uses.
TEST(SimScale, DsrRecordsSurviveTheirArrayGrowing) {
  const unsigned n = 12;
  ImageBuilder b;
  b.route(1, {Dir::East}, {Dir::Ramp});
  b.route(2, {Dir::Ramp}, {Dir::East});
  b.dsd(1024, fabin(1, n));
  b.dsd(1028, fabout(2, n));
  b.dsd(1032, mem1d(2048, n));
  std::vector<Instruction> code = {lds0(0, 1024), ldd(0, 1028)};
  for (unsigned r = 1; r < 12; ++r)
    code.push_back(lds0(r, 1032));
  for (unsigned r = 0; r < 12; ++r)
    code.push_back(lds1(r, 1032));
  for (unsigned r = 1; r < 12; ++r)
    code.push_back(ldd(r, 1032));
  code.push_back(ldd(0, 1028));
  code.push_back(
      Instruction::vec(Opcode::FADD, dsr(0), imm(SmallImm::One), true));
  b.task(32, code, false, true);
  binary::Program p;
  p.target.width = 1;
  p.target.height = 1;
  p.images.push_back(b.build());
  p.groups.push_back(group("pe", 0, 0, 0));
  p.io.push_back(stream("x", false, Dir::East, 0, 1, 1, {int64_t(n)}));
  p.io.push_back(stream("y", true, Dir::East, 0, 1, 2, {int64_t(n)}));
  ASSERT_EQ(binary::verify(p), "");
  std::vector<float> x(n), want(n);
  for (unsigned i = 0; i < n; ++i) {
    x[i] = 1.5f * float(i);
    want[i] = x[i] + 1.0f;
  }
  for (Mode mode : {Mode::Reference, Mode::Fast}) {
    sim::Options o;
    o.mode = mode;
    std::string err;
    auto s = sim::Simulator::create(p, o, &err);
    ASSERT_TRUE(s) << err;
    ASSERT_TRUE(s->bindInput("x", f32Bytes(x), &err)) << err;
    ASSERT_EQ(s->run(), Status::Done) << s->message();
    EXPECT_EQ(bytesF32(s->output("y")), want);
  }
}

} // namespace
