//===- SimSlicedTest.cpp - Sliced memory vectors in the simulator ---------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Weight-memory sparsity (docs/architecture.md §8.3, "Sliced vectors"): an
// FMAC or FMACHS over a sliced source executes only its non-zero lanes, a
// word of zeros issues no group, the read energy is that of the slices
// enabled, and the results are those of the dense vector. Every program
// runs in the reference mode and the fast mode on 1 and 2 threads, which
// must agree exactly.
//
//===----------------------------------------------------------------------===//

#include "SimBuilder.h"

#include "weft/Machine/Energy.h"
#include "weft/Machine/Numerics.h"
#include "weft/Machine/Sliced.h"
#include "weft/Sim/Simulator.h"

#include <gtest/gtest.h>

using namespace weft;
using namespace weft::test;

namespace {

struct SimRun {
  sim::Status status = sim::Status::Error;
  std::string message;
  uint64_t cycles = 0;
  std::vector<uint8_t> out;
  sim::Stats stats;
};

SimRun runMode(const binary::Program &p, sim::Mode mode, unsigned threads) {
  sim::Options o;
  o.mode = mode;
  o.threads = threads;
  std::string err;
  auto s = sim::Simulator::create(p, o, &err);
  EXPECT_TRUE(s) << err;
  SimRun r;
  if (!s)
    return r;
  r.status = s->run();
  r.message = s->message();
  r.cycles = s->cycle();
  r.out = s->output("out");
  r.stats = s->stats();
  return r;
}

/// The reference run, after checking the fast mode agrees with it.
SimRun runAll(const binary::Program &p) {
  SimRun ref = runMode(p, sim::Mode::Reference, 1);
  for (unsigned t : {1u, 2u}) {
    SimRun fast = runMode(p, sim::Mode::Fast, t);
    EXPECT_EQ(ref.status, fast.status) << fast.message;
    EXPECT_EQ(ref.message, fast.message);
    EXPECT_EQ(ref.cycles, fast.cycles);
    EXPECT_EQ(ref.out, fast.out);
    EXPECT_EQ(ref.stats.macs, fast.stats.macs);
    EXPECT_EQ(ref.stats.memoryEnergyFj, fast.stats.memoryEnergyFj);
  }
  return ref;
}

constexpr unsigned kW = 4096, kAcc = 8192, kDsdW = 1024, kDsdAcc = 1028,
                   kDsdOut = 1032;

/// One PE: acc (n fp32, preset to 1 + i) += w * x with x = 2 in GPR 6/7
/// by `op` (FMAC over fp32 w, FMACHS over fp16 w), then acc out to the
/// east. `w` is stored sliced or dense; with `ix` > 0, `ix` words after
/// kW and read through an indexed DSD with GPR 4 = `ix`.
binary::Program macProgram(const std::vector<float> &w, Opcode op,
                           bool sliced, unsigned ix = 0) {
  const unsigned n = unsigned(w.size());
  const bool half = op == Opcode::FMACHS;
  const unsigned ew = half ? 1 : 2;
  ImageBuilder b;
  std::vector<uint32_t> bits;
  for (float v : w)
    bits.push_back(half ? uint32_t(machine::f32ToF16(v))
                        : machine::f32ToBits(v));
  if (sliced) {
    std::vector<uint16_t> words = machine::packSliced(bits, ew);
    for (size_t i = 0; i < words.size(); ++i)
      b.word(kW + ix + unsigned(i), words[i]);
  } else {
    for (unsigned i = 0; i < n; ++i) {
      b.word(kW + ix + ew * i, uint16_t(bits[i]));
      if (ew == 2)
        b.word(kW + ix + 2 * i + 1, uint16_t(bits[i] >> 16));
    }
  }
  for (unsigned i = 0; i < n; ++i)
    b.f32(kAcc + 2 * i, 1.0f + float(i));
  Dsd wd = mem1d(kW, n);
  wd.sliced = sliced;
  wd.indexed = ix > 0;
  b.dsd(kDsdW, wd);
  b.dsd(kDsdAcc, mem1d(kAcc, n));
  b.dsd(kDsdOut, fabout(2, n));
  std::vector<Instruction> code = {
      Instruction::immOp(Opcode::MOVI, 4, uint16_t(ix)), lds0(0, kDsdW),
      ldd(0, kDsdAcc),
      // x = 2.0 (0x40000000) in GPR 6/7; fp16 2.0 (0x4000) in GPR 6.
      Instruction::immOp(Opcode::MOVI, 6, half ? 0x4000 : 0),
      Instruction::immOp(Opcode::MOVI, 7, half ? 0 : 0x4000),
      Instruction::vec(op, dsr(0), gpr(6)), lds0(1, kDsdAcc), ldd(1, kDsdOut),
      Instruction::un(Opcode::MOV32, ddsr(1), s0(1), true)};
  b.route(2, {Dir::Ramp}, {Dir::East});
  b.task(32, std::move(code), false, true);
  binary::Program p = onePe(b);
  p.io.push_back(stream("out", true, Dir::East, 0, 1, 2, {int64_t(n)}));
  return p;
}

/// 22 weights in 6 words: all zero, one lane, two lanes (slice 1 only),
/// three lanes, all four, and a last word of two lanes with one non-zero.
std::vector<float> pattern() {
  return {0, 0, 0, 0,           //
          0, 0.5f, 0, 0,        //
          -1.5f, 0, 0, 2.25f,   //
          1, -2, 0, 3,          //
          0.25f, -0.75f, 4, -8, //
          0, 6};
}

} // namespace

TEST(SimSliced, FmacExecutesOnlyTheNonZeroLanes) {
  std::vector<float> w = pattern();
  SimRun dense = runAll(macProgram(w, Opcode::FMAC, false));
  SimRun sliced = runAll(macProgram(w, Opcode::FMAC, true));
  ASSERT_EQ(dense.status, sim::Status::Done) << dense.message;
  ASSERT_EQ(sliced.status, sim::Status::Done) << sliced.message;
  // Same results, bit for bit.
  EXPECT_EQ(dense.out, sliced.out);
  unsigned nnz = 0;
  for (float v : w)
    nnz += v != 0;
  ASSERT_EQ(nnz, 11u);
  // FMAC is SIMD 1: one cycle per non-zero lane instead of per element.
  EXPECT_EQ(dense.cycles - sliced.cycles, w.size() - nnz);
  EXPECT_EQ(dense.stats.macs, w.size());
  EXPECT_EQ(sliced.stats.macs, nnz);
  // Sliced reads: one all-zero word (mask only), three of at most two
  // lanes (mask + slice 1), two of more (all three slices).
  const sim::PeStats &pe = sliced.stats.pes.at(0);
  EXPECT_EQ(pe.slicedReads[1][0], 1u);
  EXPECT_EQ(pe.slicedReads[1][1], 3u);
  EXPECT_EQ(pe.slicedReads[1][2], 2u);
  EXPECT_EQ(pe.slicedReads[0][0] + pe.slicedReads[0][1] +
                pe.slicedReads[0][2],
            0u);
  EXPECT_EQ(sliced.stats.memorySlicedReads, 6u);
  EXPECT_EQ(sliced.stats.memorySlicedZeroReads, 1u);
  // Energy: the dense run reads 22 weights and 22 + 22 (MOV32 out)
  // accumulators and writes 22; the sliced run reads the 6 words, and the
  // accumulator only for the 11 lanes it executes.
  machine::SlicedWord word = machine::SlicedLayout{0, 2}.word();
  uint64_t acc = (11 + 22) * machine::readEnergyFj(4) +
                 11 * machine::writeEnergyFj(4);
  uint64_t words = machine::slicedReadEnergyFj(word, 0) +
                   3 * machine::slicedReadEnergyFj(word, 1) +
                   2 * machine::slicedReadEnergyFj(word, 4);
  EXPECT_EQ(sliced.stats.memoryEnergyFj, acc + words);
  EXPECT_LT(sliced.stats.memoryEnergyFj, dense.stats.memoryEnergyFj);
  EXPECT_EQ(sliced.stats.memoryReads, 6u + 11u + 22u);
}

TEST(SimSliced, FmachsIssuesOneGroupPerNonZeroWord) {
  std::vector<float> w = pattern();
  SimRun dense = runAll(macProgram(w, Opcode::FMACHS, false));
  SimRun sliced = runAll(macProgram(w, Opcode::FMACHS, true));
  ASSERT_EQ(dense.status, sim::Status::Done) << dense.message;
  ASSERT_EQ(sliced.status, sim::Status::Done) << sliced.message;
  EXPECT_EQ(dense.out, sliced.out);
  // SIMD 4: 6 groups dense, 5 sliced (the all-zero word issues none).
  EXPECT_EQ(dense.cycles - sliced.cycles, 1u);
  EXPECT_EQ(sliced.stats.macs, 11u);
  const sim::PeStats &pe = sliced.stats.pes.at(0);
  EXPECT_EQ(pe.slicedReads[0][0], 1u);
  EXPECT_EQ(pe.slicedReads[0][1], 3u);
  EXPECT_EQ(pe.slicedReads[0][2], 2u);
  // The group count the compiler predicts from the packed words.
  std::vector<uint32_t> bits;
  for (float v : w)
    bits.push_back(machine::f32ToF16(v));
  std::vector<uint16_t> words = machine::packSliced(bits, 1);
  EXPECT_EQ(machine::slicedGroups(words.data(), uint32_t(w.size()), 1, 4),
            5u);
  EXPECT_EQ(machine::slicedGroups(words.data(), uint32_t(w.size()), 1, 1),
            11u);
}

TEST(SimSliced, AllZeroVectorRetiresAfterStartup) {
  std::vector<float> w(9, 0.0f);
  SimRun dense = runAll(macProgram(w, Opcode::FMAC, false));
  SimRun sliced = runAll(macProgram(w, Opcode::FMAC, true));
  ASSERT_EQ(sliced.status, sim::Status::Done) << sliced.message;
  EXPECT_EQ(dense.out, sliced.out);
  EXPECT_EQ(dense.cycles - sliced.cycles, 9u);
  EXPECT_EQ(sliced.stats.macs, 0u);
  EXPECT_EQ(sliced.stats.memorySlicedZeroReads, 3u);
}

TEST(SimSliced, MisuseIsAProgramError) {
  // A sliced vector as a destination, or read by an opcode that is no MAC.
  for (bool asDst : {true, false}) {
    ImageBuilder b;
    Dsd s = mem1d(kW, 4);
    s.sliced = true;
    b.dsd(kDsdW, s);
    b.dsd(kDsdAcc, mem1d(kAcc, 4));
    std::vector<Instruction> code =
        asDst ? std::vector<Instruction>{lds0(0, kDsdAcc), ldd(0, kDsdW),
                                         Instruction::vec(Opcode::FADD, dsr(0),
                                                          gpr(6), true)}
              : std::vector<Instruction>{lds0(0, kDsdW), ldd(0, kDsdAcc),
                                         Instruction::vec(Opcode::FADD, dsr(0),
                                                          gpr(6), true)};
    b.task(32, std::move(code), false, true);
    SimRun r = runAll(onePe(b));
    EXPECT_EQ(r.status, sim::Status::Error);
    EXPECT_NE(r.message.find(asDst ? "as its destination"
                                   : "only the vector forms of fmac"),
              std::string::npos)
        << r.message;
  }
  // The hardware walks the words in order: a sliced DSD needs stride 1.
  Dsd s = mem1d(kW, 4, 2);
  s.sliced = true;
  machine::Target t = *machine::Target::create(machine::TargetConfig{});
  EXPECT_NE(s.validate(t).find("needs stride 1"), std::string::npos);
  // The bit round-trips through the record.
  Dsd ok = mem1d(kW, 4);
  ok.sliced = true;
  ok.indexed = true;
  EXPECT_EQ(*Dsd::decode(ok.encode()), ok);
  EXPECT_EQ(ok.str(), "mem1d len=4 base=4096 stride=1 ix sl");
}

namespace {

/// One PE running `code` over a sliced 4-element vector at kDsdW, an fp32
/// accumulator at kDsdAcc, and the plain vector `extra` at kDsdOut.
binary::Program oneTask(std::vector<Instruction> code, Dsd extra) {
  ImageBuilder b;
  Dsd s = mem1d(kW, 4);
  s.sliced = true;
  b.dsd(kDsdW, s);
  b.dsd(kDsdAcc, mem1d(kAcc, 4));
  b.dsd(kDsdOut, extra);
  b.task(32, std::move(code), false, true);
  return onePe(b);
}

} // namespace

TEST(SimSliced, OnlyTheFirstSourceOfAMacToMemoryMayBeSliced) {
  struct Case {
    std::vector<Instruction> code;
    Dsd extra;
    const char *message;
  };
  std::vector<Case> cases = {
      // The sliced vector as the second source of an FMAC.
      {{lds0(0, kDsdAcc), ldd(0, kDsdAcc), lds1(1, kDsdW),
        Instruction::vec(Opcode::FMAC, dsr(0), s1(1), true)},
       mem1d(kAcc, 4),
       "fmac uses a sliced vector (sl) as its second source"},
      // A sliced first source with a second source in memory.
      {{lds0(0, kDsdW), ldd(0, kDsdAcc), lds1(1, kDsdOut),
        Instruction::vec(Opcode::FMAC, dsr(0), s1(1), true)},
       mem1d(kAcc + 64, 4),
       "with a second source that is not a GPR or an immediate"},
      // A sliced first source into the fabric: a MAC reads its
      // destination, so the fabric is no destination of any MAC.
      {{lds0(0, kDsdW), ldd(0, kDsdOut),
        Instruction::vec(Opcode::FMAC, dsr(0), gpr(6), true)},
       fabout(2, 4), "fmac reads its destination, which must be memory"},
  };
  for (Case &c : cases) {
    SimRun r = runAll(oneTask(c.code, c.extra));
    EXPECT_EQ(r.status, sim::Status::Error);
    EXPECT_NE(r.message.find(c.message), std::string::npos) << r.message;
  }
}

TEST(SimSliced, IndexedSlicedVectorIsOffsetByGpr4) {
  // The packed words stored 40 words further on, read through an indexed
  // sliced DSD with GPR 4 = 40: the dense results, from the non-zeros only.
  std::vector<float> w = pattern();
  SimRun dense = runAll(macProgram(w, Opcode::FMAC, false));
  SimRun r = runAll(macProgram(w, Opcode::FMAC, true, 40));
  ASSERT_EQ(r.status, sim::Status::Done) << r.message;
  EXPECT_EQ(r.out, dense.out);
  // (Were the index ignored, the DSD would read the zeros at kW: no MAC.)
  EXPECT_EQ(r.stats.macs, 11u);
}

TEST(SimSliced, MaskOutsideMemoryIsAProgramError) {
  // A sliced vector whose mask words would lie past the PE's memory.
  machine::Target t = *machine::Target::create(machine::TargetConfig{});
  unsigned words = unsigned(t.memoryWords());
  ImageBuilder b;
  Dsd s = mem1d(words - 4, 16);
  s.sliced = true;
  b.dsd(kDsdW, s);
  b.dsd(kDsdAcc, mem1d(kAcc, 16));
  b.task(32,
         {lds0(0, kDsdW), ldd(0, kDsdAcc),
          Instruction::vec(Opcode::FMAC, dsr(0), gpr(6), true)},
         false, true);
  SimRun r = runAll(onePe(b));
  EXPECT_EQ(r.status, sim::Status::Error);
  EXPECT_NE(r.message.find("is outside the PE's"), std::string::npos)
      << r.message;
}
