//===- SimTest.cpp - Simulator unit tests ---------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "SimBuilder.h"

#include "weft/Machine/Energy.h"
#include "weft/Sim/Simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

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

/// The statistics of a reference-mode run of `p` (no inputs).
sim::Stats statsOf(const binary::Program &p) {
  std::string err;
  sim::Options o;
  o.mode = Mode::Reference;
  auto s = sim::Simulator::create(p, o, &err);
  EXPECT_TRUE(s) << err;
  if (!s)
    return {};
  EXPECT_EQ(s->run(), Status::Done) << s->message();
  return s->stats();
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

/// Feature-map host streams (architecture §5.2): rows 0..rows-1 of a
/// `w`-wide fabric pass color 1 east, so each row's chunk goes from the west
/// input straight to the east output. `x` is a feature-map input; `y` is a
/// feature-map output when `fmapOut`, else a row-major one, which then
/// holds the elements in stream order.
binary::Program fmapPass(unsigned w, unsigned rows, std::vector<int64_t> shape,
                         bool fmapOut, ElemType t = ElemType::F32,
                         PayloadFormat f = PayloadFormat::Dense32) {
  binary::Program p = makeProgram(w, rows);
  ImageBuilder b;
  b.route(1, {Dir::West}, {Dir::East});
  p.images.push_back(b.build());
  p.groups.push_back(group("rows", 0, 0, 0, w, rows));
  binary::IoStream x = stream("x", false, Dir::West, 0, rows, 1, shape, t, f);
  x.order = binary::IoOrder::FeatureMap;
  binary::IoStream y = stream("y", true, Dir::East, 0, rows, 1, shape, t, f);
  if (fmapOut)
    y.order = binary::IoOrder::FeatureMap;
  p.io = {x, y};
  EXPECT_EQ(binary::verify(p), "");
  return p;
}

TEST(Sim, FeatureMapStreamRoundTrips) {
  // [1, C = 4, 2 x 3] on two rows: out in row-major order again.
  for (uint64_t samples : {1u, 2u}) {
    std::vector<float> in = iota(unsigned(24 * samples), 1.0f);
    RunResult r = runAll(fmapPass(3, 2, {1, 4, 2, 3}, true),
                         {{"x", f32Bytes(in)}}, samples);
    ASSERT_EQ(r.status, Status::Done) << r.message;
    EXPECT_EQ(bytesF32(r.outputs["y"]), in);
  }
  // [1, C] (one pixel) and a single row.
  RunResult r = runAll(fmapPass(1, 3, {1, 6}, true), {{"x", f32Bytes(iota(6))}});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  EXPECT_EQ(bytesF32(r.outputs["y"]), iota(6));
  r = runAll(fmapPass(2, 1, {1, 3, 5}, true), {{"x", f32Bytes(iota(15))}});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  EXPECT_EQ(bytesF32(r.outputs["y"]), iota(15));
}

TEST(Sim, FeatureMapInputArrivesPixelMajor) {
  // Forwarded to a row-major output, the wavelets show the stream order:
  // row r carries channels 2r, 2r + 1 pixel by pixel (Lc = 2, P = 6), so
  // position r*12 + p*2 + cc holds x[(2r + cc)*6 + p].
  binary::Program p = fmapPass(2, 2, {1, 4, 2, 3}, false);
  std::vector<float> x = iota(24), want(24);
  for (unsigned r = 0; r < 2; ++r)
    for (unsigned px = 0; px < 6; ++px)
      for (unsigned cc = 0; cc < 2; ++cc)
        want[r * 12 + px * 2 + cc] = x[(2 * r + cc) * 6 + px];
  RunResult res = runAll(p, {{"x", f32Bytes(x)}});
  ASSERT_EQ(res.status, Status::Done) << res.message;
  EXPECT_EQ(bytesF32(res.outputs["y"]), want);
  EXPECT_EQ(want[1], 6.0f); // channel 1 of pixel 0 follows channel 0's
  EXPECT_EQ(want[12], 12.0f);
  // Per sample: the second sample is permuted the same way on its own.
  std::vector<float> two = iota(48), want2(48);
  for (unsigned s = 0; s < 2; ++s)
    for (unsigned i = 0; i < 24; ++i)
      want2[s * 24 + i] = two[s * 24 + p.io[0].elementAt(i)];
  res = runAll(p, {{"x", f32Bytes(two)}}, /*samples=*/2);
  ASSERT_EQ(res.status, Status::Done) << res.message;
  EXPECT_EQ(bytesF32(res.outputs["y"]), want2);
}

TEST(Sim, FeatureMapStreamPacksHalvesAfterPermuting) {
  // i16 in dense16x2: [1, 2, 3] on two rows gives chunks of one channel,
  // three pixels, packed two to a wavelet (the last high half padded).
  std::vector<uint8_t> in;
  for (uint16_t v : {11, 12, 13, 21, 22, 23}) {
    in.push_back(uint8_t(v));
    in.push_back(uint8_t(v >> 8));
  }
  RunResult r = runAll(fmapPass(1, 2, {1, 2, 3}, true, ElemType::I16,
                                PayloadFormat::Dense16x2),
                       {{"x", in}});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  EXPECT_EQ(r.outputs["y"], in);
  // [1, 4, 3] on two rows: chunk 0 is channels 0, 1 pixel by pixel.
  std::vector<uint8_t> in2;
  for (uint16_t v = 0; v < 12; ++v) {
    in2.push_back(uint8_t(v));
    in2.push_back(0);
  }
  r = runAll(fmapPass(1, 2, {1, 4, 3}, false, ElemType::I16,
                      PayloadFormat::Sparse16),
             {{"x", in2}});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  std::vector<uint8_t> want;
  for (uint16_t v : {0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11}) {
    want.push_back(uint8_t(v));
    want.push_back(0);
  }
  EXPECT_EQ(r.outputs["y"], want);
}

} // namespace

//===----------------------------------------------------------------------===//
// Datapath values (architecture §11)
//===----------------------------------------------------------------------===//

#include "Arith.h"
#include "weft/Machine/Numerics.h"

namespace {
using namespace weft::sim::detail;

uint32_t fb(float f) { return f32ToBits(f); }

TEST(SimArith, KnownValues) {
  EXPECT_EQ(compute(Opcode::FADD, 0, fb(1.5f), fb(2.25f)), fb(3.75f));
  EXPECT_EQ(compute(Opcode::FSUB, 0, fb(1.0f), fb(4.0f)), fb(-3.0f));
  // FMAC is not fused: d + r32(a*b).
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 rounds (tie to even) to 1 + 2^-11;
  // a fused MAC would give 2^-11 + 2^-24.
  float a = 1.0f + 0x1p-12f;
  EXPECT_EQ(compute(Opcode::FMAC, fb(-1.0f), fb(a), fb(a)), fb(0x1p-11f));
  // maxNum/minNum: NaN loses, -0 < +0.
  EXPECT_EQ(compute(Opcode::FMAX, 0, fb(-0.0f), fb(0.0f)), fb(0.0f));
  EXPECT_EQ(compute(Opcode::FMIN, 0, fb(0.0f), fb(-0.0f)), fb(-0.0f));
  EXPECT_EQ(compute(Opcode::FMAX, 0, 0x7fc00001u, fb(2.0f)), fb(2.0f));
  EXPECT_EQ(compute(Opcode::FMAX, 0, 0x7fc00001u, 0xffc00000u),
            kCanonicalNaN32);
  // Arithmetic NaNs are canonical.
  EXPECT_EQ(compute(Opcode::FSQRT, 0, fb(-1.0f), 0), kCanonicalNaN32);
  EXPECT_EQ(compute(Opcode::FSQRT, 0, fb(-0.0f), 0), fb(-0.0f));
  EXPECT_EQ(compute(Opcode::FADD, 0, 0xff800000u, 0x7f800000u),
            kCanonicalNaN32);
  // Subnormals are kept.
  EXPECT_EQ(compute(Opcode::FMUL, 0, fb(0x1p-140f), fb(0.5f)), fb(0x1p-141f));
  // Sign-bit operations copy NaN payloads.
  EXPECT_EQ(compute(Opcode::FNEG, 0, 0x7fc00123u, 0), 0xffc00123u);
  EXPECT_EQ(compute(Opcode::FABSH, 0, 0xbc00u, 0), 0x3c00u);
  // fp16: 1 + 2^-11 rounds to even (1.0); FMACHS keeps the exact product.
  EXPECT_EQ(compute(Opcode::FADDH, 0, 0x3c00u, 0x1000u), 0x3c00u);
  EXPECT_EQ(compute(Opcode::FMACHS, fb(0.0f), 0x3c01u, 0x3c01u),
            fb((1.0f + 0x1p-10f) * (1.0f + 0x1p-10f)));
  EXPECT_EQ(compute(Opcode::FMACH, 0x3c00u, 0x3c00u, 0x3c00u), 0x4000u);
  // Integers wrap and shift by the low 4 bits.
  EXPECT_EQ(compute(Opcode::ADD16, 0, 0xffffu, 2u), 1u);
  EXPECT_EQ(compute(Opcode::SHL16, 0, 1u, 17u), 2u);
  EXPECT_EQ(compute(Opcode::SAR16, 0, 0x8000u, 15u), 0xffffu);
  EXPECT_EQ(compute(Opcode::SHR16, 0, 0x8000u, 15u), 1u);
  EXPECT_EQ(compute(Opcode::MUL16, 0, 300u, 300u), (300u * 300u) & 0xffff);
  // Conversions.
  EXPECT_EQ(compute(Opcode::FF2I, 0, fb(2.5f), 0), 2u);
  EXPECT_EQ(compute(Opcode::FF2I, 0, fb(-1e9f), 0), 0x8000u);
  EXPECT_EQ(compute(Opcode::FI2F, 0, 0xffffu, 0), fb(-1.0f));
  EXPECT_EQ(compute(Opcode::FH2F, 0, 0x3555u, 0), fb(f16ToF32(0x3555u)));
  // Selects and compares.
  EXPECT_EQ(compute(Opcode::SEL32, 1, 7u, 9u), 7u);
  EXPECT_EQ(compute(Opcode::SEL32, 0, 7u, 9u), 9u);
  EXPECT_EQ(compute(Opcode::FCLT, 0, fb(1.0f), fb(2.0f)), 1u);
  EXPECT_EQ(compute(Opcode::FCEQ, 0, fb(0.0f), fb(-0.0f)), 1u);
  EXPECT_TRUE(weft::sim::detail::compare(Opcode::CLT16, 0xffffu, 1u));
  EXPECT_FALSE(weft::sim::detail::compare(Opcode::CLTU16, 0xffffu, 1u));
  EXPECT_FALSE(weft::sim::detail::compare(Opcode::FCLTS, kCanonicalNaN32,
                                          fb(1.0f)));
  // Reductions accumulate.
  EXPECT_EQ(compute(Opcode::FSUM, fb(1.0f), fb(2.0f), 0), fb(3.0f));
  EXPECT_EQ(compute(Opcode::FSUMHS, fb(1.0f), 0x3c00u, 0), fb(2.0f));
  // Small immediates by type, and the PRNG mapping.
  uint32_t bits;
  EXPECT_TRUE(smallImmBits(4, ElemType::F16, bits));
  EXPECT_EQ(bits, 0x3800u);
  EXPECT_FALSE(smallImmBits(4, ElemType::I16, bits));
  EXPECT_EQ(prngBits(0xffffffffu, ElemType::F32), fb(1.0f - 0x1p-24f));
  uint32_t s = 1;
  EXPECT_EQ(xorshift32(s), 270369u);
}

//===----------------------------------------------------------------------===//
// Every vector opcode against the cost table
//===----------------------------------------------------------------------===//

unsigned ew(ElemType t) {
  return (t == ElemType::F32 || t == ElemType::I32) ? 2 : 1;
}

TEST(Sim, EveryOpcodeMatchesTheCostTable) {
  for (const OpcodeInfo &oi : opcodeTable()) {
    if (oi.family != Family::Vec && oi.family != Family::Un)
      continue;
    bool reduction = oi.opcode == Opcode::FSUM || oi.opcode == Opcode::FMAXR ||
                     oi.opcode == Opcode::FSUMHS;
    for (unsigned n : {1u, 7u, 13u}) {
      binary::Program p = makeProgram(1, 1);
      ImageBuilder b;
      b.dsd(1024, mem1d(4096, reduction ? 1 : n));
      b.dsd(1028, mem1d(8192, n));
      b.dsd(1032, mem1d(12288, n));
      // Operands with small exact values so nothing is NaN.
      for (unsigned i = 0; i < n; ++i) {
        for (unsigned base : {4096u, 8192u, 12288u}) {
          if (ew(oi.srcType) == 2 || (base == 4096 && ew(oi.dstType) == 2))
            b.f32(base + 2 * i, float(i % 5) * 0.5f);
          else
            b.word(base + i, uint16_t(0x3c00 + i));
        }
      }
      std::vector<Instruction> code = {ldd(0, 1024), lds0(0, 1028),
                                       lds1(0, 1032)};
      if (oi.family == Family::Vec)
        code.push_back(Instruction::vec(oi.opcode, dsr(0), s1(0)));
      else
        code.push_back(Instruction::un(oi.opcode, ddsr(0), s0(0)));
      code.push_back(nopTerm());
      b.task(32, code, false, true);
      p.images.push_back(b.build());
      p.groups.push_back(group("pe", 0, 0, 0));
      sim::Options o;
      std::string err;
      auto s = sim::Simulator::create(p, o, &err);
      ASSERT_TRUE(s) << err;
      ASSERT_EQ(s->run(), Status::Done) << oi.mnemonic << ": " << s->message();
      // pick + the entry's jump to the body + 3 DSR loads + the
      // instruction + nop.
      uint64_t expect = 1 + 1 + 3 + instructionCycles(oi.opcode, n, true) + 1;
      EXPECT_EQ(s->cycle(), expect) << oi.mnemonic << " n=" << n;
      sim::Stats st = s->stats();
      EXPECT_EQ(st.macs, uint64_t(n) * oi.macsPerElem) << oi.mnemonic;
      EXPECT_EQ(st.flops, uint64_t(n) * oi.flopsPerElem) << oi.mnemonic;
      EXPECT_EQ(st.instructions, 6u) << oi.mnemonic;
    }
  }
}

TEST(Sim, ScalarFormsCostCyclesPerGroup) {
  for (Opcode op : {Opcode::FADD, Opcode::FEXP, Opcode::FRCP}) {
    binary::Program p = makeProgram(1, 1);
    ImageBuilder b;
    const OpcodeInfo &oi = info(op);
    std::vector<Instruction> code;
    if (oi.family == Family::Vec)
      code.push_back(Instruction::vec(op, gpr(2), imm(SmallImm::One)));
    else
      code.push_back(Instruction::un(op, gpr(2), imm(SmallImm::Two)));
    code.push_back(nopTerm());
    b.task(32, code, false, true);
    p.images.push_back(b.build());
    p.groups.push_back(group("pe", 0, 0, 0));
    RunResult r = runAll(p, {});
    ASSERT_EQ(r.status, Status::Done) << r.message;
    EXPECT_EQ(r.cycles, 1 + instructionCycles(op, 1, false) + 1u)
        << oi.mnemonic;
  }
}

//===----------------------------------------------------------------------===//
// Router arbitration and backpressure
//===----------------------------------------------------------------------===//

TEST(Sim, MergeArbitrationInterleaves) {
  // PE (0,0) merges color 1 from its west host port and from the PE below
  // (which relays row 1's west port) into one stream to the east.
  binary::Program p = makeProgram(1, 2);
  ImageBuilder top, bottom;
  top.route(1, {Dir::West, Dir::South}, {Dir::East});
  bottom.route(1, {Dir::West}, {Dir::North});
  p.images.push_back(top.build());
  p.images.push_back(bottom.build());
  p.groups.push_back(group("top", 0, 0, 0));
  p.groups.push_back(group("bottom", 1, 0, 1));
  p.io.push_back(stream("a", false, Dir::West, 0, 1, 1, {8}));
  p.io.push_back(stream("b", false, Dir::West, 1, 2, 1, {8}));
  p.io.push_back(stream("y", true, Dir::East, 0, 1, 1, {16}));
  auto a = iota(8, 100), b = iota(8, 200);
  RunResult r = runAll(p, {{"a", f32Bytes(a)}, {"b", f32Bytes(b)}});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  std::vector<float> y = bytesF32(r.outputs["y"]);
  // Round robin over (color, port) pairs: south (port 2) and west (port 3)
  // alternate once both have wavelets; each stream stays in order.
  std::vector<float> fromA, fromB;
  for (float v : y)
    (v < 200 ? fromA : fromB).push_back(v);
  EXPECT_EQ(fromA, a);
  EXPECT_EQ(fromB, b);
  EXPECT_EQ(y[0], 100.0f); // a arrives first: b has one more hop
  for (unsigned i = 1; i + 2 < y.size(); ++i)
    EXPECT_NE(y[i] < 200, y[i + 1] < 200) << "not interleaved at " << i;
  // a's first wavelet leaves the east port in cycle 1, then one per cycle.
  EXPECT_EQ(r.cycles, 1u + 16u);
}

TEST(Sim, BackpressureFromASlowConsumer) {
  // The CE applies fexp (8 cycles per element) to a fabric input; the host
  // can only inject as fast as the queues drain, and nothing is lost.
  binary::Program p = makeProgram(2, 1);
  ImageBuilder relay, pe;
  relay.route(1, {Dir::West}, {Dir::East});
  pe.route(1, {Dir::West}, {Dir::Ramp});
  pe.route(2, {Dir::Ramp}, {Dir::East});
  pe.dsd(1024, fabin(1, 40));
  pe.dsd(1028, fabout(2, 40));
  pe.task(32, {lds0(0, 1024), ldd(0, 1028),
               Instruction::un(Opcode::FEXP, ddsr(0), s0(0), true)},
          false, true);
  p.images.push_back(relay.build());
  p.images.push_back(pe.build());
  p.groups.push_back(group("relay", 0, 0, 0));
  p.groups.push_back(group("exp", 1, 1, 0));
  p.io.push_back(stream("x", false, Dir::West, 0, 1, 1, {40}));
  p.io.push_back(stream("y", true, Dir::East, 0, 1, 2, {40}));
  auto x = iota(40, -2.0f, 0.1f);
  RunResult r = runAll(p, {{"x", f32Bytes(x)}});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  std::vector<float> y = bytesF32(r.outputs["y"]);
  for (unsigned i = 0; i < 40; ++i)
    EXPECT_EQ(y[i], std::exp(x[i]));
  EXPECT_GE(r.cycles, 40u * 8u);
  EXPECT_LE(r.cycles, 40u * 8u + 10u);
  // The queues filled up: router queues to their depth, the CE queue to 8.
  EXPECT_NE(r.stats.find("\"ce_queue_high\": 8"), std::string::npos);
  EXPECT_NE(r.stats.find("\"router_queue_high\": 2"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Picker, activation, blocking, microthreads
//===----------------------------------------------------------------------===//

TEST(Sim, PickerIsRoundRobinOverReadyColors) {
  // Data tasks on colors 1 and 2 each forward their wavelet's payload (the
  // GPR pair 0/1) east on color 3; both queues are full, so the picker
  // alternates 1, 2, 1, 2 ...
  binary::Program p = makeProgram(1, 1);
  ImageBuilder b;
  b.route(1, {Dir::West}, {Dir::Ramp});
  b.route(2, {Dir::West}, {Dir::Ramp});
  b.route(3, {Dir::Ramp}, {Dir::East});
  b.dsd(1024, fabout(3, 1));
  b.task(1, {ldd(0, 1024), Instruction::un(Opcode::MOV32, ddsr(0), gpr(0),
                                           true)});
  b.task(2, {ldd(0, 1024), Instruction::un(Opcode::MOV32, ddsr(0), gpr(0),
                                           true)});
  b.activeColor(1);
  b.activeColor(2);
  p.images.push_back(b.build());
  p.groups.push_back(group("pe", 0, 0, 0));
  p.io.push_back(stream("a", false, Dir::West, 0, 1, 1, {6}));
  p.io.push_back(stream("b", false, Dir::West, 0, 1, 2, {6}));
  p.io.push_back(stream("y", true, Dir::East, 0, 1, 3, {12}));
  RunResult r = runAll(p, {{"a", f32Bytes(iota(6, 10))},
                           {"b", f32Bytes(iota(6, 20))}});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  std::vector<float> y = bytesF32(r.outputs["y"]);
  std::vector<float> want = {10, 20, 11, 21, 12, 22, 13, 23, 14, 24, 15, 25};
  EXPECT_EQ(y, want);
}

TEST(Sim, BlockUnblockActivate) {
  // Task 33 is blocked at load and activated; task 32 sends 1.0, then
  // unblocks 33, which sends 2.0 and activates 34, which sends 3.0.
  binary::Program p = makeProgram(1, 1);
  ImageBuilder b;
  b.route(3, {Dir::Ramp}, {Dir::East});
  b.dsd(1024, fabout(3, 1));
  auto send = [&](SmallImm k, std::vector<Instruction> tail) {
    std::vector<Instruction> c = {ldd(0, 1024),
                                  Instruction::un(Opcode::MOV32, ddsr(0),
                                                  imm(k))};
    c.insert(c.end(), tail.begin(), tail.end());
    return c;
  };
  b.task(32, send(SmallImm::One, {Instruction::ctl(Opcode::UNBLOCK,
                                                   CtlMode::ImmColor, 33,
                                                   true)}),
         false, true);
  b.task(33, send(SmallImm::Two, {Instruction::ctl(Opcode::ACTIVATE,
                                                   CtlMode::ImmColor, 34,
                                                   true)}),
         false, true, /*blocked=*/true);
  b.task(34, send(SmallImm::MinusOne, {nopTerm()}));
  p.images.push_back(b.build());
  p.groups.push_back(group("pe", 0, 0, 0));
  p.io.push_back(stream("y", true, Dir::East, 0, 1, 3, {3}));
  RunResult r = runAll(p, {});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  // MOV32 moves 32-bit integers: the immediates are i32 1, 2 and -1.
  EXPECT_EQ(r.outputs["y"],
            (std::vector<uint8_t>{1, 0, 0, 0, 2, 0, 0, 0, 255, 255, 255, 255}));
}

TEST(Sim, MicrothreadLetsTheMainThreadGoOn) {
  // The main task launches a fabric-input copy on microthread 3 and then
  // sends 64 values of its own; both streams reach the east edge.
  binary::Program p = makeProgram(1, 1);
  ImageBuilder b;
  b.route(1, {Dir::West}, {Dir::Ramp});
  b.route(2, {Dir::Ramp}, {Dir::East});
  b.route(4, {Dir::Ramp}, {Dir::East});
  Dsd in = fabin(1, 16);
  in.microthread = true;
  in.utid = 3;
  in.onDone = {true, 40};
  b.dsd(1024, in);
  b.dsd(1028, fabout(2, 16));
  b.dsd(1032, fabout(4, 64));
  b.task(32, {lds0(0, 1024), ldd(0, 1028),
              Instruction::un(Opcode::MOV32, ddsr(0), s0(0)), ldd(1, 1032),
              Instruction::un(Opcode::MOV32, ddsr(1), imm(SmallImm::Two),
                              true)},
         false, true);
  // Task 40 runs when the microthread's input completes.
  b.dsd(1036, fabout(4, 1));
  b.task(40, {ldd(2, 1036),
              Instruction::un(Opcode::MOV32, ddsr(2), imm(SmallImm::One),
                              true)});
  p.images.push_back(b.build());
  p.groups.push_back(group("pe", 0, 0, 0));
  p.io.push_back(stream("x", false, Dir::West, 0, 1, 1, {16}));
  p.io.push_back(stream("copy", true, Dir::East, 0, 1, 2, {16}));
  p.io.push_back(stream("own", true, Dir::East, 0, 1, 4, {65}));
  auto x = iota(16, 5);
  RunResult r = runAll(p, {{"x", f32Bytes(x)}});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  EXPECT_EQ(bytesF32(r.outputs["copy"]), x);
  std::vector<uint8_t> own = r.outputs["own"];
  EXPECT_EQ(own[4 * 64], 1u); // the completion task ran last (i32 1)
  for (unsigned i = 0; i < 64; ++i)
    EXPECT_EQ(own[4 * i], 2u); // i32 2
  // The two streams overlap in time: far fewer cycles than one after the
  // other (16 + 64 + 1 on the shared on-ramp is the floor).
  EXPECT_LT(r.cycles, 16u + 64u + 30u);
}

/// The `key` figure of the one PE in a stats JSON.
uint64_t peFigure(const std::string &stats, const std::string &key) {
  size_t at = stats.find("\"" + key + "\": ", stats.find("\"pes\""));
  EXPECT_NE(at, std::string::npos) << key;
  return at == std::string::npos
             ? 0
             : std::stoull(stats.substr(at + key.size() + 4));
}

TEST(Sim, SendsWhileTheMainThreadWaitsAndFreeCycles) {
  // The main task launches a send of 32 values from memory on microthread 3
  // (mov32 out <- buf), then, with `work`, copies 40 words in memory, and
  // ends. The send takes the datapath only when the main thread leaves it
  // free: during the copy, its startup cycle; after the task, every cycle,
  // with the main thread waiting for input (no task).
  for (bool work : {false, true}) {
    binary::Program p = makeProgram(1, 1);
    ImageBuilder b;
    b.route(2, {Dir::Ramp}, {Dir::East});
    b.dsd(1024, mem1d(2048, 32));
    Dsd out = fabout(2, 32);
    out.microthread = true;
    out.utid = 3;
    b.dsd(1028, out);
    b.dsd(1032, mem1d(3000, 40));
    b.dsd(1036, mem1d(3100, 40));
    std::vector<Instruction> code = {
        lds0(0, 1024), ldd(0, 1028),
        Instruction::un(Opcode::MOV32, ddsr(0), s0(0), !work)};
    if (work) {
      code.push_back(lds0(1, 1032));
      code.push_back(ldd(1, 1036));
      code.push_back(Instruction::un(Opcode::MOV32, ddsr(1), s0(1), true));
    }
    b.task(32, code, false, true);
    p.images.push_back(b.build());
    p.groups.push_back(group("pe", 0, 0, 0));
    p.io.push_back(stream("y", true, Dir::East, 0, 1, 2, {32}));
    RunResult r = runAll(p, {});
    ASSERT_EQ(r.status, Status::Done) << r.message;
    uint64_t sendWait = peFigure(r.stats, "send_wait_cycles");
    uint64_t free = peFigure(r.stats, "free_cycles");
    uint64_t busy = peFigure(r.stats, "ce_busy_cycles");
    if (!work) {
      // The pick and the two record loads are free cycles no send uses
      // (the launch's is not free); then the send alone.
      EXPECT_EQ(sendWait, 32u);
      EXPECT_EQ(free, 3u);
      EXPECT_EQ(busy, 1u + 2u + 1u + 32u);
      continue;
    }
    // Free before the launch: the pick, two record loads and the jump from
    // the task table to the longer code. After it, the two record loads and
    // the copy's startup carry three of the send's wavelets (not free); the
    // copy's 40 cycles none; the last 29 go out after the task, while the
    // main thread waits.
    EXPECT_EQ(sendWait, 29u);
    EXPECT_EQ(free, 4u);
    EXPECT_EQ(busy, 1u + 2u + 1u + 1u + 2u + 41u + 29u);
  }
}

//===----------------------------------------------------------------------===//
// A partial-sum chain ended by a closeout control wavelet
//===----------------------------------------------------------------------===//

/// Each PE of a row adds its weight vector to the partial sums that arrive
/// from the west and sends them on east; a closeout control wavelet after
/// the data starts the control task (index 5) that sends the sums and the
/// closeout onward. PE 0 starts from its own weights. The last PE sends only
/// the sums to the east host port.
binary::Program psumChain(unsigned w, unsigned n) {
  binary::Program p = makeProgram(w, 1);
  for (unsigned x = 0; x < w; ++x) {
    ImageBuilder b;
    unsigned in = 1 + (x % 2), out = 1 + ((x + 1) % 2);
    bool last = x + 1 == w;
    if (x > 0)
      b.route(in, {Dir::West}, {Dir::Ramp});
    b.route(out, {Dir::Ramp}, {Dir::East});
    b.dsd(1024, mem1d(2048, n)); // weights
    for (unsigned i = 0; i < n; ++i)
      b.f32(2048 + 2 * i, float(x + 1) * (i + 1));
    b.dsd(1028, fabin(in, n));
    b.dsd(1032, fabout(out, n));
    Dsd close = fabout(out, 1, PayloadFormat::Sparse16);
    close.control = true;
    close.index6 = 5;
    b.dsd(1036, close);
    b.dsd(1040, mem1d(3000, n)); // accumulator
    std::vector<Instruction> sendOn = {
        lds0(2, 1040), ldd(2, 1032),
        Instruction::un(Opcode::MOV32, ddsr(2), s0(2), last)};
    if (!last) {
      sendOn.push_back(ldd(3, 1036));
      sendOn.push_back(Instruction::un(Opcode::MOV16, ddsr(3),
                                       imm(SmallImm::Zero), true));
    }
    if (x == 0) {
      std::vector<Instruction> code = {lds0(2, 1024), ldd(2, 1032),
                                       Instruction::un(Opcode::MOV32, ddsr(2),
                                                       s0(2)),
                                       ldd(3, 1036),
                                       Instruction::un(Opcode::MOV16, ddsr(3),
                                                       imm(SmallImm::Zero),
                                                       true)};
      b.task(32, code, false, true);
    } else {
      // acc = weights + incoming; the closeout then sends acc on.
      b.task(32,
             {lds0(0, 1024), lds1(0, 1028), ldd(0, 1040),
              Instruction::vec(Opcode::FADD, dsr(0), s1(0), true)},
             false, true);
      b.task(5, sendOn, /*control=*/true);
      b.activeColor(in);
    }
    p.images.push_back(b.build());
    p.groups.push_back(group("pe" + std::to_string(x), x, x, 0));
  }
  p.io.push_back(stream("sum", true, Dir::East, 0, 1, 1 + (w % 2),
                        {int64_t(n)}));
  return p;
}

TEST(Sim, PartialSumChainWithCloseout) {
  const unsigned n = 8;
  for (unsigned w : {2u, 5u}) {
    RunResult r = runAll(psumChain(w, n), {});
    ASSERT_EQ(r.status, Status::Done) << r.message;
    std::vector<float> sum = bytesF32(r.outputs["sum"]);
    for (unsigned i = 0; i < n; ++i)
      EXPECT_EQ(sum[i], float(w * (w + 1) / 2) * (i + 1));
    EXPECT_TRUE(r.message.empty()) << r.message;
  }
}

TEST(Sim, ControlWaveletEndsAFabricVectorEarly) {
  // PE 0 sends 5 values then a control wavelet; PE 1 sums a fabin of
  // length 100 with term: the control wavelet ends it after 5 elements.
  binary::Program p = makeProgram(2, 1);
  ImageBuilder s, r;
  s.route(1, {Dir::Ramp}, {Dir::East});
  s.dsd(1024, mem1d(2048, 5));
  for (unsigned i = 0; i < 5; ++i)
    s.f32(2048 + 2 * i, float(i + 1));
  s.dsd(1028, fabout(1, 5));
  Dsd close = fabout(1, 1, PayloadFormat::Sparse16);
  close.control = true;
  s.dsd(1032, close);
  s.task(32, {lds0(0, 1024), ldd(0, 1028),
              Instruction::un(Opcode::MOV32, ddsr(0), s0(0)), ldd(1, 1032),
              Instruction::un(Opcode::MOV16, ddsr(1), imm(SmallImm::Zero),
                              true)},
         false, true);
  r.route(1, {Dir::West}, {Dir::Ramp});
  r.route(2, {Dir::Ramp}, {Dir::East});
  Dsd in = fabin(1, 100);
  in.terminateOnControl = true;
  r.dsd(1024, in);
  r.dsd(1028, fabout(2, 1));
  r.task(32, {lds0(0, 1024), ldd(0, 1028),
              Instruction::immOp(Opcode::MOVI, 6, 0),
              Instruction::immOp(Opcode::MOVI, 7, 0),
              Instruction::un(Opcode::FSUM, gpr(6), s0(0)),
              Instruction::un(Opcode::MOV32, ddsr(0), gpr(6), true)},
         false, true);
  p.images.push_back(s.build());
  p.images.push_back(r.build());
  p.groups.push_back(group("send", 0, 0, 0));
  p.groups.push_back(group("sum", 1, 1, 0));
  p.io.push_back(stream("total", true, Dir::East, 0, 1, 2, {1}));
  RunResult res = runAll(p, {});
  ASSERT_EQ(res.status, Status::Done) << res.message;
  EXPECT_EQ(bytesF32(res.outputs["total"]), std::vector<float>{15.0f});
  EXPECT_TRUE(res.message.empty()) << res.message; // the closeout was consumed
}

// A sparse send (fabout nz, architecture §8.6): PE 0 sends a vector of
// 16-bit values with zeros as sparse16 wavelets, zeros dropped, then a
// control wavelet; PE 1 copies the stream on a microthread through another
// sparse send, which keeps each wavelet's index (and leaves GPR 1 alone),
// until the control wavelet ends it, and sends its own; PE 2 scatters every
// value to its index (index -> GPR 4 -> an ix store) and, on the control
// wavelet, sends the rebuilt vector east.
binary::Program sparseSendChain(const std::vector<uint16_t> &values) {
  const unsigned n = unsigned(values.size());
  binary::Program p = makeProgram(3, 1);
  ImageBuilder s, f, r;
  Dsd close = fabout(0, 1, PayloadFormat::Sparse16);
  close.control = true;
  close.index6 = 1;
  // PE 0: send.
  s.route(1, {Dir::Ramp}, {Dir::East});
  s.dsd(1024, mem1d(2048, n));
  for (unsigned i = 0; i < n; ++i)
    s.word(2048 + i, values[i]);
  Dsd out = fabout(1, n, PayloadFormat::Sparse16);
  out.skipZeros = true;
  s.dsd(1028, out);
  close.color = 1;
  s.dsd(1032, close);
  s.task(32, {lds0(0, 1024), ldd(0, 1028),
              Instruction::un(Opcode::MOV16, ddsr(0), s0(0)), ldd(1, 1032),
              Instruction::un(Opcode::MOV16, ddsr(1), imm(SmallImm::Zero),
                              true)},
         false, true);
  // PE 1: forward on microthread 2, then send the closeout from task 33.
  f.route(1, {Dir::West}, {Dir::Ramp});
  f.route(2, {Dir::Ramp}, {Dir::East});
  Dsd in = fabin(1, n + 1, PayloadFormat::Sparse16);
  in.terminateOnControl = true;
  f.dsd(1024, in);
  Dsd fwd = fabout(2, n + 1, PayloadFormat::Sparse16);
  fwd.skipZeros = true;
  fwd.microthread = true;
  fwd.utid = 2;
  fwd.onDone = {true, 33};
  f.dsd(1028, fwd);
  close.color = 2;
  f.dsd(1032, close);
  f.task(32, {lds0(0, 1024), ldd(0, 1028), ldd(1, 1032),
              Instruction::immOp(Opcode::MOVI, 1, 77),
              Instruction::un(Opcode::MOV16, ddsr(0), s0(0), true)},
         false, true);
  // Task 33 sends the closeout with GPR 1 as its data: still 77, since a
  // forwarded index does not go to GPR 1.
  f.task(33, {Instruction::un(Opcode::MOV16, ddsr(1), gpr(1), true)});
  // PE 2: scatter; control index 1 sends the result.
  r.route(2, {Dir::West}, {Dir::Ramp});
  r.route(3, {Dir::Ramp}, {Dir::East});
  Dsd slot = mem1d(4096, 1);
  slot.indexed = true;
  r.dsd(1024, slot);
  r.dsd(1028, mem1d(4096, n + 1));
  r.dsd(1032, fabout(3, n + 1, PayloadFormat::Dense16x2));
  r.dsd(1036, mem1d(4096 + n, 1));
  r.task(32, {ldd(0, 1024), lds0(1, 1028), ldd(1, 1032), ldd(2, 1036),
              nopTerm()},
         false, true);
  r.task(2, {Instruction::un(Opcode::MOV16, gpr(4), gpr(1)),
             Instruction::un(Opcode::MOV16, ddsr(0), gpr(0), true)});
  r.activeColor(2);
  // The closeout: its data after the vector, then the whole buffer east.
  r.task(1,
         {Instruction::un(Opcode::MOV16, ddsr(2), gpr(0)),
          Instruction::un(Opcode::MOV16, ddsr(1), s0(1), true)},
         true);
  p.images.push_back(s.build());
  p.images.push_back(f.build());
  p.images.push_back(r.build());
  p.groups.push_back(group("send", 0, 0, 0));
  p.groups.push_back(group("forward", 1, 1, 0));
  p.groups.push_back(group("scatter", 2, 2, 0));
  p.io.push_back(stream("out", true, Dir::East, 0, 1, 3, {int64_t(n + 1)},
                        ElemType::I16, PayloadFormat::Dense16x2));
  return p;
}

TEST(Sim, SparseSendDropsZerosAndForwardsIndices) {
  std::vector<uint16_t> v = {0, 5, 0, 0, 0x8000, 7, 0, 9, 0, 0, 11, 0};
  RunResult r = runAll(sparseSendChain(v), {});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  std::vector<uint8_t> want;
  for (uint16_t x : v) {
    want.push_back(uint8_t(x));
    want.push_back(uint8_t(x >> 8));
  }
  want.push_back(77);
  want.push_back(0);
  EXPECT_EQ(r.outputs["out"], want);
  EXPECT_TRUE(r.message.empty()) << r.message;
  // Five non-zero elements (-0 is sent) and a closeout per hop: 6 wavelets
  // leave PE 0 and PE 1 east, 7 dense16x2 wavelets PE 2.
  sim::Stats st = statsOf(sparseSendChain(v));
  ASSERT_EQ(st.pes.size(), 3u);
  EXPECT_EQ(st.pes[0].hops[1], 6u);
  EXPECT_EQ(st.pes[1].hops[1], 6u);
  EXPECT_EQ(st.pes[2].hops[1], 7u);
  // The scatter task ran once per non-zero element.
  EXPECT_EQ(st.pes[2].picks, 5u + 1u + 1u);
}

} // namespace

//===----------------------------------------------------------------------===//
// Reference and fast modes agree on random programs
//===----------------------------------------------------------------------===//

#include <random>

namespace {

/// A random pipeline: every row streams a tensor from its west port through
/// a chain of PEs, each applying a random operation (maybe through a memory
/// buffer, maybe on a microthread, maybe with extra local work) and passing
/// the result east on alternating colors. Random queue depths, widths,
/// lengths, element types, samples and multicast to idle neighbours below.
binary::Program randomProgram(std::mt19937 &rng, uint64_t &samples,
                              std::map<std::string, std::vector<uint8_t>> &in) {
  auto pickU = [&](unsigned lo, unsigned hi) {
    return std::uniform_int_distribution<unsigned>(lo, hi)(rng);
  };
  unsigned w = pickU(1, 5), h = pickU(1, 4);
  binary::Program p = makeProgram(w, h);
  p.target.routerQueueDepth = pickU(1, 3);
  p.target.ceQueueDepth = pickU(1, 6);
  samples = pickU(1, 3);
  for (unsigned y = 0; y < h; ++y) {
    bool half = pickU(0, 2) == 0; // f16 rows use dense16x2
    unsigned n = pickU(1, 24);
    ElemType t = half ? ElemType::F16 : ElemType::F32;
    PayloadFormat f = half ? PayloadFormat::Dense16x2 : PayloadFormat::Dense32;
    for (unsigned x = 0; x < w; ++x) {
      ImageBuilder b;
      unsigned cin = 1 + (x % 2), cout = 1 + ((x + 1) % 2);
      b.route(cin, {Dir::West}, {Dir::Ramp});
      b.route(cout, {Dir::Ramp}, {Dir::East});
      bool buffered = pickU(0, 2) == 0;
      Dsd din = fabin(cin, n, f);
      // A microthread runs the streaming op itself (a buffered copy on a
      // microthread would race with the op that reads the buffer).
      if (!buffered && pickU(0, 2) == 0) {
        din.microthread = true;
        din.utid = uint8_t(pickU(0, 7));
      }
      b.dsd(1024, din);
      b.dsd(1028, fabout(cout, n, f));
      b.dsd(1032, mem1d(2048, n)); // operand vector
      b.dsd(1036, mem1d(3072, n)); // buffer
      for (unsigned i = 0; i < 2 * n; ++i)
        b.word(2048 + i, uint16_t(half ? 0x3c00 + pickU(0, 0x3ff)
                                       : (i % 2 ? 0x3f80 + pickU(0, 0x3f)
                                                : pickU(0, 0xffff))));
      Opcode ops32[] = {Opcode::FADD, Opcode::FMUL, Opcode::FMAX,
                        Opcode::FSUB, Opcode::FEXP, Opcode::MOV32,
                        Opcode::FNEG, Opcode::FMIN};
      Opcode ops16[] = {Opcode::FADDH, Opcode::FMULH, Opcode::FMAXH,
                        Opcode::FNEGH, Opcode::MOV16, Opcode::FSUBH};
      Opcode op = half ? ops16[pickU(0, 5)] : ops32[pickU(0, 7)];
      const OpcodeInfo &oi = info(op);
      std::vector<Instruction> code = {ldd(0, 1028)};
      if (buffered) {
        // Copy the input into memory first, then stream from memory.
        code.push_back(ldd(1, 1036));
        code.push_back(lds0(1, 1024));
        code.push_back(Instruction::un(half ? Opcode::MOV16 : Opcode::MOV32,
                                       ddsr(1), s0(1)));
        code.push_back(lds0(0, 1036));
      } else {
        code.push_back(lds0(0, 1024));
      }
      code.push_back(lds1(0, 1032));
      if (oi.family == Family::Vec) {
        // The fabout destination shares DSR 0 with the source.
        code.push_back(Instruction::vec(op, dsr(0), pickU(0, 1)
                                                       ? s1(0)
                                                       : imm(SmallImm::Half)));
      } else {
        code.push_back(Instruction::un(op, ddsr(0), s0(0)));
      }
      // Extra local work in task 33 sometimes; always loop for the next
      // sample by re-activating 32.
      bool extra = pickU(0, 2) == 0;
      if (extra)
        code.push_back(
            Instruction::ctl(Opcode::ACTIVATE, CtlMode::ImmColor, 33));
      code.push_back(
          Instruction::ctl(Opcode::ACTIVATE, CtlMode::ImmColor, 32, true));
      b.task(32, code, false, true);
      if (extra) {
        b.dsd(1040, mem1d(3500, 1));
        b.task(33, {lds0(2, 1032), ldd(2, 1040),
                    Instruction::un(Opcode::FSUM, ddsr(2), s0(2), true)});
      }
      p.images.push_back(b.build());
      p.groups.push_back(group("pe_" + std::to_string(x) + "_" +
                                   std::to_string(y),
                               unsigned(p.images.size() - 1), x, y));
    }
    std::string iname = "x" + std::to_string(y);
    p.io.push_back(stream(iname, false, Dir::West, y, y + 1, 1, {int64_t(n)},
                          t, f));
    p.io.push_back(stream("y" + std::to_string(y), true, Dir::East, y, y + 1,
                          1 + (w % 2), {int64_t(n)}, t, f));
    std::vector<uint8_t> bytes(samples * n * (half ? 2 : 4));
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = uint8_t(pickU(0, 255));
    if (half) // keep fp16 inputs finite-ish: clear the top exponent bit
      for (size_t i = 1; i < bytes.size(); i += 2)
        bytes[i] &= 0x3f;
    in[iname] = bytes;
  }
  return p;
}

TEST(SimRandom, FastModeMatchesReferenceMode) {
  std::mt19937 rng(20261121);
  unsigned done = 0;
  for (unsigned iter = 0; iter < 150; ++iter) {
    uint64_t samples = 1;
    std::map<std::string, std::vector<uint8_t>> in;
    binary::Program p = randomProgram(rng, samples, in);
    ASSERT_EQ(binary::verify(p), "") << "program " << iter;
    RunResult ref = run(p, in, Mode::Reference, 1, samples);
    for (unsigned t : {1u, 2u, 3u}) {
      RunResult fast = run(p, in, Mode::Fast, t, samples);
      ASSERT_EQ(ref.status, fast.status) << "program " << iter;
      ASSERT_EQ(ref.cycles, fast.cycles) << "program " << iter;
      ASSERT_EQ(ref.message, fast.message) << "program " << iter;
      ASSERT_EQ(ref.outputs, fast.outputs) << "program " << iter;
      ASSERT_EQ(ref.stats, fast.stats) << "program " << iter;
    }
    // Stopping part-way (the cycle limit) leaves the same state too.
    if (ref.cycles > 4) {
      uint64_t limit = ref.cycles / 2 + iter % 3;
      RunResult a = run(p, in, Mode::Reference, 1, samples, limit);
      RunResult b = run(p, in, Mode::Fast, 2, samples, limit);
      ASSERT_EQ(a.status, b.status) << "program " << iter;
      ASSERT_EQ(a.stats, b.stats) << "program " << iter;
    }
    done += ref.status == Status::Done;
    if (getenv("WEFT_SIM_DEBUG") && ref.status != Status::Done)
      printf("program %u: %s\n", iter, ref.message.c_str());
  }
  // Most random pipelines complete; the rest must fail identically.
  EXPECT_GT(done, 100u);
}

} // namespace

namespace {

/// Batched instructions (fast mode) must leave memory exactly as element by
/// element issue does: every batched opcode, strides of both signs, GPR and
/// immediate broadcasts, NaN, infinities, signed zeros and subnormals.
TEST(Sim, BatchedInstructionsMatchElementByElement) {
  const unsigned n = 40;
  std::mt19937 rng(7);
  const uint32_t specials[] = {0x7fc00001u, 0xff800000u, 0x7f800000u,
                               0x80000000u, 0x00000001u, 0x3f800000u,
                               0xbf800000u, 0x7f7fffffu};
  Opcode ops[] = {Opcode::FMAC, Opcode::FADD, Opcode::FSUB, Opcode::FMUL,
                  Opcode::MOV32, Opcode::FMAX, Opcode::FMACHS, Opcode::FSUM,
                  Opcode::FEXP, Opcode::FMACH, Opcode::ADD16};
  for (Opcode op : ops) {
    for (unsigned variant = 0; variant < 4; ++variant) {
      const OpcodeInfo &oi = info(op);
      binary::Program p = makeProgram(1, 1);
      ImageBuilder b;
      bool reduction = op == Opcode::FSUM;
      unsigned dw = ew(oi.dstType);
      int stride = variant == 1 ? -1 : 1;
      unsigned dstBase = stride < 0 ? 4096 + (n - 1) * dw : 4096;
      Dsd dst = mem1d(dstBase, reduction ? 1 : n, reduction ? 1 : stride);
      b.dsd(1024, dst);
      b.dsd(1028, mem1d(8192, n));
      b.dsd(1032, mem1d(12288, n));
      for (unsigned i = 0; i < 2 * n; ++i) {
        uint32_t v = rng() % 4 == 0 ? specials[rng() % 8] : rng();
        b.word(4096 + i, uint16_t(v));
        b.word(8192 + i, uint16_t(v >> 16));
        b.word(12288 + i, uint16_t(rng()));
      }
      Operand src1 = variant == 2 ? gpr(6)
                     : variant == 3 ? imm(SmallImm::Half)
                                    : s1(0);
      if (variant == 3 && (oi.srcType == ElemType::I16))
        src1 = imm(SmallImm::Two);
      std::vector<Instruction> code = {
          ldd(0, 1024), lds0(0, 1028), lds1(0, 1032),
          Instruction::immOp(Opcode::MOVI, 6, 0x155),
          Instruction::immOp(Opcode::MOVH, 6, 0x3e),
          Instruction::immOp(Opcode::MOVI, 7, 0x3f)};
      if (oi.family == Family::Vec)
        code.push_back(Instruction::vec(op, dsr(0), src1));
      else
        code.push_back(Instruction::un(op, ddsr(0), s0(0)));
      // Send the destination vector out.
      b.route(2, {Dir::Ramp}, {Dir::East});
      unsigned outWords = (reduction ? 1 : n) * dw;
      b.dsd(1036, mem1d(4096, outWords));
      b.dsd(1040, fabout(2, outWords, PayloadFormat::Dense16x2));
      code.push_back(lds0(1, 1036));
      code.push_back(ldd(1, 1040));
      code.push_back(Instruction::un(Opcode::MOV16, ddsr(1), s0(1), true));
      b.task(32, code, false, true);
      p.images.push_back(b.build());
      p.groups.push_back(group("pe", 0, 0, 0));
      p.io.push_back(stream("out", true, Dir::East, 0, 1, 2,
                            {int64_t(outWords)}, ElemType::I16,
                            PayloadFormat::Dense16x2));
      RunResult r = runAll(p, {});
      ASSERT_EQ(r.status, Status::Done)
          << oi.mnemonic << " variant " << variant << ": " << r.message;
    }
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// The remaining DSD kinds and program errors
//===----------------------------------------------------------------------===//

namespace {

/// One PE, one local task `code`, an output stream of `outN` f32 on color 2.
binary::Program onePe(ImageBuilder &b, std::vector<Instruction> code,
                      unsigned outN, ElemType t = ElemType::F32,
                      PayloadFormat f = PayloadFormat::Dense32) {
  binary::Program p = makeProgram(1, 1);
  b.route(2, {Dir::Ramp}, {Dir::East});
  b.task(32, std::move(code), false, true);
  p.images.push_back(b.build());
  p.groups.push_back(group("pe", 0, 0, 0));
  if (outN)
    p.io.push_back(stream("out", true, Dir::East, 0, 1, 2, {int64_t(outN)}, t,
                          f));
  return p;
}

TEST(Sim, Mem4dWalksAllFourDimensions) {
  // A 3x2x2x1 box out of a row-major 4x5x3 array: dimension 0 is
  // contiguous (stride 1), dimension 1 uses stride register 0 (= 5
  // elements), dimension 2 stride register 1 (= 20 elements).
  ImageBuilder b;
  for (unsigned i = 0; i < 60; ++i)
    b.f32(4096 + 2 * i, float(i));
  Xdsd x;
  x.len[0] = 3;
  x.len[1] = 2;
  x.len[2] = 2;
  x.len[3] = 1;
  x.strideSel[0] = 6;
  x.strideSel[1] = 0;
  x.strideSel[2] = 1;
  x.strideSel[3] = 7;
  b.xdsd(1024, x);
  Dsd m4;
  m4.kind = DsdKind::Mem4D;
  m4.base = 4096 + 2 * 7; // element 7 (= x 2, y 1)
  m4.xdsr = 2;
  b.dsd(1028, m4);
  b.word(1032, 5);
  b.word(1036, 20);
  b.dsd(1040, fabout(2, 12));
  binary::Program p = onePe(
      b,
      {Instruction::immOp(Opcode::LDX, 2, 1024 / 4),
       Instruction::immOp(Opcode::LDSR, 0, 1032 / 4),
       Instruction::immOp(Opcode::LDSR, 1, 1036 / 4), lds0(0, 1028),
       ldd(0, 1040), Instruction::un(Opcode::MOV32, ddsr(0), s0(0), true)},
      12);
  RunResult r = runAll(p, {});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  std::vector<float> want;
  for (unsigned i2 = 0; i2 < 2; ++i2)
    for (unsigned i1 = 0; i1 < 2; ++i1)
      for (unsigned i0 = 0; i0 < 3; ++i0)
        want.push_back(float(7 + i0 + 5 * i1 + 20 * i2));
  EXPECT_EQ(bytesF32(r.outputs["out"]), want);
}

// The batch path walks mem4d operands without per-element address
// arithmetic (Step.cpp, stridedBatch): element by element in issue order,
// so a destination that accumulates over stride-0 dimensions, negative
// strides, a source that reads what earlier elements wrote, NaN
// canonicalisation and MOV32's bit copy all come out as group-by-group
// issue makes them (runAll compares the reference mode with the fast one).
TEST(Sim, Mem4dBatchMatchesElementByElement) {
  const unsigned kA = 4096, kX = 6144, kAcc = 8192, kY = 10240;
  std::vector<float> A(24), X(24), acc(12, 0.5f), Y(24);
  for (unsigned i = 0; i < 24; ++i) {
    A[i] = 0.25f * float(i) - 2.0f;
    X[i] = 1.0f + 0.125f * float(i);
  }
  uint32_t snan = 0x7fa00001u; // a signalling NaN with a payload
  std::memcpy(&X[9], &snan, 4);
  ImageBuilder b;
  for (unsigned i = 0; i < 24; ++i) {
    b.f32(kA + 2 * i, A[i]);
    b.f32(kX + 2 * i, X[i]);
  }
  for (unsigned i = 0; i < 12; ++i)
    b.f32(kAcc + 2 * i, acc[i]);
  // Stride registers (elements): 3, 6, -2, -1, -4, 4.
  const int16_t strides[6] = {3, 6, -2, -1, -4, 4};
  for (unsigned r = 0; r < 6; ++r)
    b.word(1200 + 4 * r, uint16_t(strides[r]) & 0x7fff);
  auto xd = [&](unsigned addr, std::array<unsigned, 4> len,
                std::array<unsigned, 4> sel) {
    Xdsd x;
    for (unsigned k = 0; k < 4; ++k) {
      x.len[k] = len[k];
      x.strideSel[k] = sel[k];
    }
    b.xdsd(addr, x);
  };
  // 6: stride 1, 7: stride 0, else a stride register.
  xd(1024, {3, 2, 2, 2}, {6, 0, 7, 7}); // acc[i0 + 3 i1]
  xd(1028, {3, 2, 2, 2}, {6, 7, 0, 1}); // A[i0 + 3 i2 + 6 i3]
  xd(1032, {3, 2, 2, 2}, {7, 2, 3, 4}); // X[23 - 2 i1 - i2 - 4 i3]
  xd(1036, {11, 1, 1, 1}, {6, 7, 7, 7}); // acc[1 + i0]
  xd(1040, {4, 3, 2, 1}, {3, 5, 1, 7}); // X[3 - i0 + 4 i1 + 6 i2]
  auto m4 = [&](unsigned addr, unsigned base, unsigned xdsr) {
    Dsd d;
    d.kind = DsdKind::Mem4D;
    d.base = base;
    d.xdsr = xdsr;
    b.dsd(addr, d);
  };
  m4(1100, kAcc, 1);
  m4(1104, kA, 2);
  m4(1108, kX + 2 * 23, 3);
  m4(1112, kAcc + 2, 4);
  m4(1116, kX + 2 * 3, 5);
  b.dsd(1120, mem1d(kAcc, 11));
  b.dsd(1124, mem1d(kX, 11));
  b.dsd(1128, mem1d(kY, 24));
  b.dsd(1132, mem1d(kAcc, 12));
  b.dsd(1136, mem1d(kY, 24));
  b.dsd(1140, fabout(2, 12));
  b.dsd(1144, fabout(2, 24));
  std::vector<Instruction> code;
  for (unsigned x = 1; x <= 5; ++x)
    code.push_back(Instruction::immOp(Opcode::LDX, uint8_t(x), (1020 + 4 * x) / 4));
  for (unsigned r = 0; r < 6; ++r)
    code.push_back(Instruction::immOp(Opcode::LDSR, uint8_t(r), (1200 + 4 * r) / 4));
  // acc[i0 + 3 i1] += A[i0 + 3 i2 + 6 i3] * X[23 - 2 i1 - i2 - 4 i3].
  code.push_back(ldd(0, 1100));
  code.push_back(lds0(0, 1104));
  code.push_back(lds1(0, 1108));
  code.push_back(Instruction::vec(Opcode::FMAC, dsr(0), s1(0)));
  // acc[1 + k] = acc[k] + X[k]: each element reads the one written before.
  code.push_back(ldd(1, 1112));
  code.push_back(lds0(1, 1120));
  code.push_back(lds1(1, 1124));
  code.push_back(Instruction::vec(Opcode::FADD, dsr(1), s1(1)));
  // Y = X walked backwards in dimension 0 (stride -1): a bit copy.
  code.push_back(ldd(2, 1128));
  code.push_back(lds0(2, 1116));
  code.push_back(Instruction::un(Opcode::MOV32, ddsr(2), s0(2)));
  code.push_back(lds0(3, 1132));
  code.push_back(ldd(3, 1140));
  code.push_back(Instruction::un(Opcode::MOV32, ddsr(3), s0(3)));
  code.push_back(lds0(4, 1136));
  code.push_back(ldd(4, 1144));
  code.push_back(Instruction::un(Opcode::MOV32, ddsr(4), s0(4), true));
  binary::Program p = onePe(b, code, 36);
  RunResult r = runAll(p, {});
  ASSERT_EQ(r.status, Status::Done) << r.message;

  // The same on the host, element by element.
  for (unsigned i3 = 0; i3 < 2; ++i3)
    for (unsigned i2 = 0; i2 < 2; ++i2)
      for (unsigned i1 = 0; i1 < 2; ++i1)
        for (unsigned i0 = 0; i0 < 3; ++i0) {
          float prod = A[i0 + 3 * i2 + 6 * i3] * X[23 - 2 * i1 - i2 - 4 * i3];
          acc[i0 + 3 * i1] = acc[i0 + 3 * i1] + prod;
        }
  for (unsigned k = 0; k < 11; ++k)
    acc[k + 1] = acc[k] + X[k];
  for (unsigned i2 = 0; i2 < 2; ++i2)
    for (unsigned i1 = 0; i1 < 3; ++i1)
      for (unsigned i0 = 0; i0 < 4; ++i0)
        Y[i0 + 4 * i1 + 12 * i2] = X[3 - i0 + 4 * i1 + 6 * i2];
  std::vector<uint32_t> want;
  for (float f : acc) {
    uint32_t v;
    std::memcpy(&v, &f, 4);
    want.push_back(f != f ? machine::kCanonicalNaN32 : v);
  }
  for (float f : Y) {
    uint32_t v;
    std::memcpy(&v, &f, 4);
    want.push_back(v); // MOV32 keeps a NaN's bits
  }
  std::vector<uint32_t> got(r.outputs["out"].size() / 4);
  std::memcpy(got.data(), r.outputs["out"].data(), got.size() * 4);
  EXPECT_EQ(got, want);
  // The NaN reached acc[10], acc[11] (canonical) and Y (as it was).
  EXPECT_EQ(got[10], machine::kCanonicalNaN32);
  EXPECT_NE(std::find(got.begin() + 12, got.end(), snan), got.end());
}

// Memory accesses are counted per element by what the instruction does:
// FMAC reads its memory source and its destination and writes the
// destination; a reduction writes its memory destination once; a send
// reads its source; fabric and GPR operands cost no access.
TEST(Sim, MemoryAccessesAndTheirEnergy) {
  const unsigned n = 40;
  ImageBuilder b;
  for (unsigned i = 0; i < n; ++i) {
    b.f32(4096 + 2 * i, float(i));
    b.f32(8192 + 2 * i, 0.5f);
  }
  b.dsd(1024, mem1d(4096, n));
  b.dsd(1028, mem1d(8192, n));
  b.dsd(1032, mem1d(12288, 1));
  b.dsd(1036, fabout(2, n));
  binary::Program p = onePe(
      b,
      {ldd(0, 1024), lds0(0, 1028),
       Instruction::immOp(Opcode::MOVI, 6, 0),
       Instruction::immOp(Opcode::MOVH, 6, 0x20), // 2.0f in GPR 6/7 (high)
       Instruction::immOp(Opcode::MOVI, 7, 0x400),
       Instruction::vec(Opcode::FMAC, dsr(0), gpr(6)), ldd(1, 1032),
       lds0(1, 1024), Instruction::un(Opcode::FSUM, ddsr(1), s0(1)),
       lds0(2, 1024), ldd(2, 1036),
       Instruction::un(Opcode::MOV32, ddsr(2), s0(2), true)},
      n);
  RunResult r = runAll(p, {});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  sim::Stats st = statsOf(p);
  ASSERT_EQ(st.pes.size(), 1u);
  const sim::PeStats &pe = st.pes[0];
  // FMAC: n source + n destination reads, n writes; FSUM: n reads, one
  // write; MOV32 to the fabric: n reads. All 32-bit.
  EXPECT_EQ(pe.memoryReads[0], 0u);
  EXPECT_EQ(pe.memoryReads[1], 4u * n);
  EXPECT_EQ(pe.memoryWrites[0], 0u);
  EXPECT_EQ(pe.memoryWrites[1], n + 1u);
  EXPECT_EQ(st.memoryReads, 4u * n);
  EXPECT_EQ(st.memoryWrites, n + 1u);
  EXPECT_EQ(st.memoryReadBytes, 16u * n);
  EXPECT_EQ(st.memoryWriteBytes, 4u * (n + 1));
  uint64_t fj = 4 * n * machine::readEnergyFj(4) +
                (n + 1) * machine::writeEnergyFj(4);
  EXPECT_EQ(pe.memoryEnergyFj(), fj);
  EXPECT_EQ(st.memoryEnergyFj, fj);
  // 160 reads of 3 pJ and 41 writes of 3.6 pJ.
  EXPECT_NE(r.stats.find("\"memory_energy_pj\": 627.600,"), std::string::npos)
      << r.stats;
  EXPECT_NE(r.stats.find("\"memory_reads\": 160,"), std::string::npos);
}

TEST(Sim, FifoBetweenTwoTasksWithActivations) {
  // Task 32 pushes 6 values into FIFO 0 (DDSR 0) in three pushes of 2; the
  // pushes activate task 34, which pops all 6 through S1DSR 0 (the same
  // FIFO) and sends them. With capacity 4 the third push finds the FIFO
  // full while task 34 cannot start: a deadlock, reported as such.
  for (unsigned cap : {8u, 4u}) {
    ImageBuilder b;
    for (unsigned i = 0; i < 6; ++i)
      b.f32(4096 + 2 * i, float(10 + i));
    Dsd fifo;
    fifo.kind = DsdKind::Fifo;
    fifo.base = 5000;
    fifo.length = cap;
    fifo.onPush = {true, 34};
    b.dsd(1024, fifo);
    b.dsd(1028, mem1d(4096, 2));
    b.dsd(1032, mem1d(4100, 2));
    b.dsd(1036, mem1d(4104, 2));
    b.dsd(1040, fabout(2, 6));
    b.task(34, {ldd(1, 1040),
                Instruction::un(Opcode::MOV32, ddsr(1), s1(0), true)});
    binary::Program p = onePe(
        b,
        {ldd(0, 1024), lds1(0, 1024), lds0(0, 1028),
         Instruction::un(Opcode::MOV32, ddsr(0), s0(0)), lds0(0, 1032),
         Instruction::un(Opcode::MOV32, ddsr(0), s0(0)), lds0(0, 1036),
         Instruction::un(Opcode::MOV32, ddsr(0), s0(0), true)},
        6);
    RunResult r = runAll(p, {});
    if (cap == 8) {
      ASSERT_EQ(r.status, Status::Done) << r.message;
      EXPECT_EQ(bytesF32(r.outputs["out"]),
                (std::vector<float>{10, 11, 12, 13, 14, 15}));
    } else {
      ASSERT_EQ(r.status, Status::Deadlock);
      EXPECT_NE(r.message.find("waiting: fifo full (fifo 0)"),
                std::string::npos)
          << r.message;
    }
  }
}

TEST(Sim, Sparse16AndDense16x2OnTheFabric) {
  // fp16 elements: a dense16x2 input of odd length 5 copied to a sparse16
  // output whose indices start at index6 = 3.
  binary::Program p = makeProgram(1, 1);
  ImageBuilder b;
  b.route(1, {Dir::West}, {Dir::Ramp});
  b.route(2, {Dir::Ramp}, {Dir::East});
  b.dsd(1024, fabin(1, 5, PayloadFormat::Dense16x2));
  Dsd out = fabout(2, 5, PayloadFormat::Sparse16);
  out.index6 = 0;
  b.dsd(1028, out);
  b.task(32, {lds0(0, 1024), ldd(0, 1028),
              Instruction::un(Opcode::FNEGH, ddsr(0), s0(0), true)},
         false, true);
  p.images.push_back(b.build());
  p.groups.push_back(group("pe", 0, 0, 0));
  p.io.push_back(stream("x", false, Dir::West, 0, 1, 1, {5}, ElemType::F16,
                        PayloadFormat::Dense16x2));
  p.io.push_back(stream("y", true, Dir::East, 0, 1, 2, {5}, ElemType::F16,
                        PayloadFormat::Sparse16));
  std::vector<uint8_t> x = {0x00, 0x3c, 0x00, 0x40, 0x00, 0x42,
                            0x00, 0x44, 0x00, 0xc5}; // 1 2 3 4 -5.0
  RunResult r = runAll(p, {{"x", x}});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  std::vector<uint8_t> want = {0x00, 0xbc, 0x00, 0xc0, 0x00, 0xc2,
                               0x00, 0xc4, 0x00, 0x45};
  EXPECT_EQ(r.outputs["y"], want);
  // Three dense16x2 wavelets carried five elements.
  EXPECT_NE(r.stats.find("\"host_wavelets_in\": 3"), std::string::npos);
}

TEST(Sim, ProgramErrorsNameThePeAndTheValues) {
  struct Case {
    std::vector<Instruction> code;
    std::string want;
  };
  ImageBuilder base;
  base.dsd(1024, mem1d(24570, 8)); // runs past the 24576-word memory
  base.dsd(1028, fabin(9, 4));     // color 9 has no route: never fed
  std::vector<Case> cases = {
      {{Instruction::un(Opcode::MOV32, ddsr(3), imm(SmallImm::One), true)},
       "DDSR 3 is used but was never loaded"},
      {{ldd(0, 1024), Instruction::un(Opcode::MOV32, ddsr(0),
                                      imm(SmallImm::One), true)},
       "memory access at word 24576 is outside the PE's 24576 words"},
      {{ldd(0, 1028), nopTerm()}, "DDSR 0"}, // placeholder, replaced below
      {{Instruction::ctl(Opcode::ACTIVATE, CtlMode::GprColor, 3, true)},
       "names task id 100 from gpr 3"},
      {{Instruction::jump(Opcode::JMP, 20000)},
       "jump to slot 20000 past the end of memory"},
  };
  cases[2] = {{ldd(0, 1028), lds0(0, 1028),
               Instruction::un(Opcode::MOV32, ddsr(0), s0(0), true)},
              "mov32 writes to a fabin DSD"};
  for (Case &c : cases) {
    ImageBuilder b = base;
    std::vector<Instruction> code = {Instruction::immOp(Opcode::MOVI, 3, 100)};
    code.insert(code.end(), c.code.begin(), c.code.end());
    binary::Program p = onePe(b, code, 0);
    RunResult r = runAll(p, {});
    EXPECT_EQ(r.status, Status::Error) << c.want;
    EXPECT_NE(r.message.find("PE (0, 0) at cycle"), std::string::npos)
        << r.message;
    EXPECT_NE(r.message.find(c.want), std::string::npos) << r.message;
  }
}

TEST(Sim, PrngIsSeededPerPe) {
  // imm prng in i16: each PE draws its own xorshift32 sequence.
  binary::Program p = makeProgram(2, 1);
  ImageBuilder b;
  b.route(2, {Dir::Ramp, Dir::West}, {Dir::East});
  b.dsd(1024, fabout(2, 2, PayloadFormat::Dense16x2));
  b.task(32, {ldd(0, 1024),
              Instruction::un(Opcode::MOV16, ddsr(0), imm(SmallImm::Prng),
                              true)},
         false, true);
  p.images.push_back(b.build());
  ImageBuilder relay;
  relay.route(2, {Dir::West}, {Dir::East});
  p.images.push_back(relay.build());
  p.groups.push_back(group("gen", 0, 0, 0));
  p.groups.push_back(group("relay", 1, 1, 0));
  p.io.push_back(stream("y", true, Dir::East, 0, 1, 2, {2}, ElemType::I16,
                        PayloadFormat::Dense16x2));
  RunResult r = runAll(p, {});
  ASSERT_EQ(r.status, Status::Done) << r.message;
  uint32_t s = 0x9E3779B9u ^ ((0u << 16) | 0u);
  uint16_t a = uint16_t(xorshift32(s)), c = uint16_t(xorshift32(s));
  std::vector<uint8_t> want = {uint8_t(a), uint8_t(a >> 8), uint8_t(c),
                               uint8_t(c >> 8)};
  EXPECT_EQ(r.outputs["y"], want);
}

} // namespace

//===----------------------------------------------------------------------===//
// The static route check before emission
//===----------------------------------------------------------------------===//

#include "weft/Binary/Routes.h"

namespace {

TEST(RouteCheck, CompleteProgramsPass) {
  EXPECT_TRUE(binary::checkRoutes(vectorAdd(8)).empty());
  EXPECT_TRUE(binary::checkRoutes(passEast(5)).empty());
  EXPECT_TRUE(binary::checkRoutes(columnMulticast(4, 8)).empty());
}

TEST(RouteCheck, NamesEveryBrokenLink) {
  // Row of 3: the middle PE does not take color 1 from the west.
  binary::Program p = passEast(3);
  p.groups[0].width = 1;
  ImageBuilder mid, last;
  mid.route(1, {Dir::North}, {Dir::East});
  last.route(1, {Dir::West}, {Dir::East});
  p.target.height = 2;
  p.images.push_back(mid.build());
  p.images.push_back(last.build());
  p.groups.push_back(group("mid", 1, 1, 1));
  p.groups.push_back(group("last", 2, 2, 0));
  std::vector<std::string> problems = binary::checkRoutes(p);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0], "PE (0, 0) sends color 1 east to PE (1, 0), whose "
                         "route does not take that color from the west");
  EXPECT_EQ(problems[1], "PE (1, 1) sends color 1 east to PE (2, 1), whose "
                         "route does not take that color from the west");
}

TEST(RouteCheck, HostPortsAndTaskColors) {
  binary::Program p = vectorAdd(8);
  p.io[2].color = 4;            // the output stream now has another color
  p.io[0].color = 5;            // and the first input arrives on color 5
  p.images[0].active |= 1u << 6; // a task color that never reaches the CE
  std::vector<std::string> problems = binary::checkRoutes(p);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_NE(problems[0].find("sends color 3 out of the east host port of row "
                             "0, where no output stream of that color leaves"),
            std::string::npos);
  EXPECT_NE(problems[1].find("starts tasks on color 6 but no route brings"),
            std::string::npos);
  EXPECT_NE(problems[2].find("the input on the west host port of row 0 "
                             "(color 5) enters PE (0, 0), whose route does not "
                             "take it"),
            std::string::npos);
}

} // namespace
