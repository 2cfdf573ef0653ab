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

} // namespace
