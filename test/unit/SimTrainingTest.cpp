//===- SimTrainingTest.cpp - The matrix instructions training relies on ---===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// docs/training.md computes a trained dense layer's three passes on one PE
// as three FMACs over mem4d operands of the Lk x Lm weight block (column t
// at W + t*Lm*2): the forward acc[n] += W[t, n] x[t], the delta
// dx[t] += W[t, n] d[n] (a destination of stride 0 along n, accumulating
// group by group) and the SGD update W[t, n] += x[t] (-lr d[n]). This test
// runs them on the simulator, in both dimension orders and in reference and
// fast mode, and compares every bit with the same operations on the host.
//
//===----------------------------------------------------------------------===//

#include "SimBuilder.h"

#include "weft/Sim/Simulator.h"

#include <gtest/gtest.h>

using namespace weft;
using namespace weft::test;

namespace {

constexpr unsigned kW = 8192, kX = 4096, kD = 4352, kDlr = 4608, kDx = 4864,
                   kAcc = 5120;

Dsd mem4d(unsigned base, unsigned xdsr) {
  Dsd d;
  d.kind = DsdKind::Mem4D;
  d.base = base;
  d.xdsr = uint8_t(xdsr);
  return d;
}

/// lengths (Lm, Lk) with dimension 0 over the neurons n, or (Lk, Lm) with
/// dimension 0 over the inputs t (nFirst = false); `n` and `t` give each
/// dimension's stride select.
Xdsd box(unsigned lk, unsigned lm, bool nFirst, uint8_t n, uint8_t t) {
  Xdsd x;
  x.len[0] = uint16_t(nFirst ? lm : lk);
  x.len[1] = uint16_t(nFirst ? lk : lm);
  x.strideSel[0] = nFirst ? n : t;
  x.strideSel[1] = nFirst ? t : n;
  return x;
}

float bitsToF32(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

struct Result {
  sim::Status status;
  std::string message;
  uint64_t cycles;
  std::vector<float> out;
  /// The weight block as the PE's memory holds it after the run.
  std::vector<float> w;
};

Result run(const binary::Program &p, sim::Mode mode, unsigned threads,
           unsigned wWords) {
  sim::Options o;
  o.mode = mode;
  o.threads = threads;
  std::string err;
  auto s = sim::Simulator::create(p, o, &err);
  EXPECT_TRUE(s) << err;
  if (!s)
    return {sim::Status::Error, err, 0, {}, {}};
  Result r;
  r.status = s->run();
  r.message = s->message();
  r.cycles = s->cycle();
  r.out = bytesF32(s->output("out"));
  std::vector<uint16_t> words;
  EXPECT_TRUE(s->readMemory(0, 0, kW, wWords, words, &err)) << err;
  r.w.resize(words.size() / 2);
  std::memcpy(r.w.data(), words.data(), r.w.size() * 4);
  return r;
}

void checkPasses(unsigned lk, unsigned lm, bool nFirst) {
  SCOPED_TRACE("Lk " + std::to_string(lk) + ", Lm " + std::to_string(lm) +
               (nFirst ? ", neurons first" : ", inputs first"));
  std::vector<float> w(lk * lm), x(lk), d(lm);
  for (unsigned i = 0; i < lk * lm; ++i)
    w[i] = 0.01f * float(int(i * 37 % 101) - 50);
  for (unsigned t = 0; t < lk; ++t)
    x[t] = 0.1f * float(int(t * 13 % 17) - 8);
  for (unsigned n = 0; n < lm; ++n)
    d[n] = 0.03f * float(int(n * 7 % 11) - 5);
  const float negLr = -0.5f;

  ImageBuilder b;
  for (unsigned i = 0; i < lk * lm; ++i)
    b.f32(kW + 2 * i, w[i]);
  for (unsigned t = 0; t < lk; ++t)
    b.f32(kX + 2 * t, x[t]);
  for (unsigned n = 0; n < lm; ++n)
    b.f32(kD + 2 * n, d[n]);
  // Stride selects: 6 = the constant 1, 7 = the constant 0, 0 = stride
  // register 0 (Lm elements, one weight column).
  b.xdsd(1024, box(lk, lm, nFirst, 6, 7)); // XDSR 0: a vector over n
  b.xdsd(1028, box(lk, lm, nFirst, 7, 6)); // XDSR 1: a vector over t
  b.xdsd(1032, box(lk, lm, nFirst, 6, 0)); // XDSR 2: the block W[t, n]
  b.word(1036, uint16_t(lm));
  b.dsd(1040, mem4d(kAcc, 0));
  b.dsd(1044, mem4d(kW, 2));
  b.dsd(1048, mem4d(kX, 1));
  b.dsd(1052, mem4d(kDx, 1));
  b.dsd(1056, mem4d(kD, 0));
  b.dsd(1060, mem4d(kDlr, 0));
  b.dsd(1064, mem1d(kD, lm));
  b.dsd(1068, mem1d(kDlr, lm));
  b.dsd(1072, mem1d(kAcc, lm));
  b.dsd(1076, mem1d(kDx, lk));
  b.dsd(1080, mem1d(kW, lk * lm));
  b.dsd(1084, fabout(2, lm));
  b.dsd(1088, fabout(2, lk));
  b.dsd(1092, fabout(2, lk * lm));
  uint32_t lrBits;
  std::memcpy(&lrBits, &negLr, 4);
  using I = Instruction;
  std::vector<Instruction> code = {
      I::immOp(Opcode::LDX, 0, 1024 / 4), I::immOp(Opcode::LDX, 1, 1028 / 4),
      I::immOp(Opcode::LDX, 2, 1032 / 4), I::immOp(Opcode::LDSR, 0, 1036 / 4),
      // -lr in GPRs 6/7: MOVI sets the low byte (sign-extended, so only
      // 8 bits of it), MOVH then the high byte.
      I::immOp(Opcode::MOVI, 6, uint16_t(lrBits & 0xff)),
      I::immOp(Opcode::MOVH, 6, uint16_t((lrBits >> 8) & 0xff)),
      I::immOp(Opcode::MOVI, 7, uint16_t((lrBits >> 16) & 0xff)),
      I::immOp(Opcode::MOVH, 7, uint16_t(lrBits >> 24)),
      // Clear acc and dx.
      ldd(0, 1072), I::un(Opcode::MOV32, ddsr(0), imm(SmallImm::Zero)),
      ldd(0, 1076), I::un(Opcode::MOV32, ddsr(0), imm(SmallImm::Zero)),
      // Forward: acc[n] += W[t, n] * x[t].
      ldd(0, 1040), lds0(0, 1044), lds1(0, 1048),
      I::vec(Opcode::FMAC, dsr(0), s1(0)),
      // Delta: dx[t] += W[t, n] * d[n] (before the update).
      ldd(1, 1052), lds0(1, 1044), lds1(1, 1056),
      I::vec(Opcode::FMAC, dsr(1), s1(1)),
      // Update: dlr = d * (-lr); W[t, n] += x[t] * dlr[n].
      ldd(2, 1068), lds0(2, 1064), I::vec(Opcode::FMUL, dsr(2), gpr(6)),
      ldd(3, 1044), lds0(3, 1048), lds1(3, 1060),
      I::vec(Opcode::FMAC, dsr(3), s1(3)),
      // Out: acc, dx, W.
      lds0(4, 1072), ldd(4, 1084), I::un(Opcode::MOV32, ddsr(4), s0(4)),
      lds0(5, 1076), ldd(5, 1088), I::un(Opcode::MOV32, ddsr(5), s0(5)),
      lds0(6, 1080), ldd(6, 1092), I::un(Opcode::MOV32, ddsr(6), s0(6), true)};

  b.route(2, {Dir::Ramp}, {Dir::East});
  b.task(32, std::move(code), false, true);
  binary::Program p = onePe(b);
  p.io.push_back(stream("out", true, Dir::East, 0, 1, 2,
                        {int64_t(lm + lk + lk * lm)}));

  // The host, one rounding per product and per sum, in the order the
  // instructions walk the elements (FMAC is not fused).
  std::vector<float> acc(lm, 0.f), dx(lk, 0.f), dlr(lm), wNew = w;
  auto mac = [](float &dst, float a, float c) {
    float prod = a * c;
    dst = dst + prod;
  };
  for (unsigned t = 0; t < lk; ++t)
    for (unsigned n = 0; n < lm; ++n) {
      mac(acc[n], w[t * lm + n], x[t]);
      mac(dx[t], w[t * lm + n], d[n]);
    }
  for (unsigned n = 0; n < lm; ++n)
    dlr[n] = d[n] * bitsToF32(lrBits);
  for (unsigned t = 0; t < lk; ++t)
    for (unsigned n = 0; n < lm; ++n)
      mac(wNew[t * lm + n], x[t], dlr[n]);
  std::vector<float> want = acc;
  want.insert(want.end(), dx.begin(), dx.end());
  want.insert(want.end(), wNew.begin(), wNew.end());

  Result ref = run(p, sim::Mode::Reference, 1, 2 * lk * lm);
  ASSERT_EQ(ref.status, sim::Status::Done) << ref.message;
  ASSERT_EQ(ref.out.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(ref.out[i], want[i]) << "element " << i;
  // The memory read back holds the updated block too.
  EXPECT_EQ(ref.w, wNew);
  for (unsigned threads : {1u, 2u}) {
    Result fast = run(p, sim::Mode::Fast, threads, 2 * lk * lm);
    EXPECT_EQ(fast.status, ref.status) << fast.message;
    EXPECT_EQ(fast.cycles, ref.cycles);
    EXPECT_EQ(fast.out, ref.out);
    EXPECT_EQ(fast.w, ref.w);
  }
}

TEST(SimTraining, ForwardDeltaAndUpdateAsOneFmacEach) {
  for (bool nFirst : {true, false}) {
    checkPasses(3, 4, nFirst);
    checkPasses(1, 7, nFirst);
    checkPasses(20, 37, nFirst);
    checkPasses(49, 16, nFirst);
  }
}

TEST(SimTraining, ReadMemoryNamesWhatItCannotRead) {
  ImageBuilder b;
  b.word(4096, 0x1234);
  b.task(32, {nopTerm()}, false, true);
  binary::Program p;
  p.target.width = 2;
  p.target.height = 1;
  p.images.push_back(b.build());
  p.groups.push_back(group("pe", 0, 0, 0));
  std::string err;
  auto s = sim::Simulator::create(p, sim::Options(), &err);
  ASSERT_TRUE(s) << err;
  s->run();
  std::vector<uint16_t> words;
  ASSERT_TRUE(s->readMemory(0, 0, 4095, 2, words, &err)) << err;
  EXPECT_EQ(words, (std::vector<uint16_t>{0, 0x1234}));
  EXPECT_FALSE(s->readMemory(1, 0, 0, 1, words, &err));
  EXPECT_EQ(err, "PE (1, 0) runs no program");
  EXPECT_FALSE(s->readMemory(0, 0, 24575, 2, words, &err));
  EXPECT_EQ(err, "words 24575 to 24577 are outside PE (0, 0)'s 24576 words");
}

TEST(SimTraining, MemoryHighWaterMark) {
  // The binary initialises up to word 4096; the program then clears three
  // fp32 elements at word 12000 (never initialised) and reads one at 13000:
  // the high-water mark is one past word 13001, in both modes.
  ImageBuilder b;
  b.word(4096, 0x1234);
  b.dsd(1024, mem1d(12000, 3));
  b.dsd(1028, mem1d(13000, 1));
  b.task(32,
         {ldd(0, 1024), Instruction::un(Opcode::MOV32, ddsr(0),
                                        imm(SmallImm::Zero)),
          lds0(1, 1028), Instruction::un(Opcode::MOV32, gpr(6), s0(1), true)},
         false, true);
  binary::Program p = onePe(b);
  for (sim::Mode mode : {sim::Mode::Reference, sim::Mode::Fast}) {
    sim::Options o;
    o.mode = mode;
    std::string err;
    auto s = sim::Simulator::create(p, o, &err);
    ASSERT_TRUE(s) << err;
    EXPECT_EQ(s->stats().pes[0].memoryHighWater, 4097u);
    s->run();
    EXPECT_EQ(s->stats().pes[0].memoryHighWater, 13002u);
    EXPECT_EQ(s->stats().memoryHighWaterBytes, 26004u);
    EXPECT_NE(s->statsJson().find("\"memory_high_water_bytes\": 26004"),
              std::string::npos);
  }
}

} // namespace
