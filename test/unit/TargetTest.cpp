//===- TargetTest.cpp - Machine model: target, wavelets, numerics ---------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Machine/DSD.h"
#include "weft/Machine/Numerics.h"
#include "weft/Machine/Target.h"
#include "weft/Machine/Wavelet.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace weft::machine;

TEST(Target, DefaultsAreValid) {
  std::string err;
  auto t = Target::create(TargetConfig{}, &err);
  ASSERT_TRUE(t) << err;
  EXPECT_EQ(t->memoryWords(), 24576u);
  EXPECT_EQ(t->routableColors(), 24u);
  EXPECT_EQ(t->numHostPorts(), 2u * 16);
}

TEST(Target, RejectsImpossibleConfigs) {
  std::string err;
  TargetConfig c;
  c.routableColors = 33;
  EXPECT_FALSE(Target::create(c, &err));
  EXPECT_NE(err.find("5-bit"), std::string::npos) << err;
  c = TargetConfig{};
  c.memoryBytes = 128 * 1024; // 15-bit word addresses reach 64 KiB.
  EXPECT_FALSE(Target::create(c, &err));
  EXPECT_NE(err.find("131072"), std::string::npos) << err;
  c = TargetConfig{};
  c.width = 0;
  EXPECT_FALSE(Target::create(c, &err));
  c = TargetConfig{};
  c.routerQueueDepth = 0;
  EXPECT_FALSE(Target::create(c, &err));
}

TEST(Target, ParseRoundTrip) {
  std::string err;
  auto t = Target::parse("64x32,mem=32768,colors=16,rq=4,cq=3", &err);
  ASSERT_TRUE(t) << err;
  EXPECT_EQ(t->width(), 64u);
  EXPECT_EQ(t->height(), 32u);
  EXPECT_EQ(t->memoryBytes(), 32768u);
  EXPECT_EQ(t->routableColors(), 16u);
  EXPECT_EQ(t->config().routerQueueDepth, 4u);
  EXPECT_EQ(t->config().ceQueueDepth, 3u);
  auto again = Target::parse(t->config().str(), &err);
  ASSERT_TRUE(again) << err;
  EXPECT_EQ(again->config().str(), t->config().str());
  EXPECT_FALSE(Target::parse("64", &err));
  EXPECT_FALSE(Target::parse("4x4,foo=1", &err));
  EXPECT_NE(err.find("foo"), std::string::npos);
  EXPECT_FALSE(Target::parse("4x4,mem=abc", &err));
}

TEST(Target, LinksAndHostPorts) {
  auto t = *Target::create(TargetConfig{4, 3});
  EXPECT_FALSE(t.hasLink(0, 0, Dir::North));
  EXPECT_TRUE(t.hasLink(0, 0, Dir::South));
  EXPECT_FALSE(t.hasLink(0, 2, Dir::South));
  EXPECT_TRUE(t.hasLink(0, 0, Dir::West));
  EXPECT_TRUE(t.isHostPort(0, 1, Dir::West));
  EXPECT_TRUE(t.isHostPort(3, 1, Dir::East));
  EXPECT_FALSE(t.isHostPort(1, 1, Dir::East));
  EXPECT_FALSE(t.hasLink(4, 0, Dir::Ramp));
  for (unsigned d = 0; d < kNumDirs; ++d)
    EXPECT_EQ(opposite(opposite(Dir(d))), Dir(d));
  EXPECT_EQ(parseDir("west"), Dir::West);
  EXPECT_FALSE(parseDir("up"));
}

TEST(Wavelet, EncodeDecodeAllForms) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) {
    Wavelet w{uint8_t(rng() % 32), bool(rng() & 1), uint32_t(rng())};
    uint64_t bits = w.encode();
    EXPECT_EQ(bits >> Wavelet::kBits, 0u);
    auto back = Wavelet::decode(bits);
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, w);
  }
  Wavelet s = Wavelet::sparse16(5, 0x3c00, 0x1234);
  EXPECT_EQ(s.encode(), (uint64_t(5) << 33) | 0x12343c00u);
  EXPECT_EQ(s.index(), 0x1234);
  EXPECT_EQ(s.low(), 0x3c00);
  Wavelet c = Wavelet::controlWavelet(31, 0xffc5);
  EXPECT_TRUE(c.control);
  EXPECT_EQ(c.controlEntry(), 5u);
  EXPECT_EQ(c.encode() >> 32, (31u << 1) | 1u);
  EXPECT_FALSE(Wavelet::decode(1ull << 38));
  EXPECT_EQ(elementsPerWavelet(PayloadFormat::Dense16x2), 2u);
}

TEST(Numerics, F16ConversionsAreExactAndRoundToNearestEven) {
  // Every half converts to float and back unchanged (NaNs to the canonical
  // NaN).
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = f16ToF32(uint16_t(h));
    uint16_t back = f32ToF16(f);
    bool nan = ((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff);
    if (nan)
      EXPECT_EQ(back, kCanonicalNaN16) << std::hex << h;
    else
      EXPECT_EQ(back, h) << std::hex << h;
  }
  EXPECT_EQ(f32ToF16(1.0f), 0x3c00);
  EXPECT_EQ(f32ToF16(65504.0f), 0x7bff);
  EXPECT_EQ(f32ToF16(65520.0f), 0x7c00); // Rounds up to infinity.
  EXPECT_EQ(f32ToF16(-1e9f), 0xfc00);
  // 1 + 2^-11 is halfway between 1 and the next half: ties to even (1).
  EXPECT_EQ(f32ToF16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 ties to even upward.
  EXPECT_EQ(f32ToF16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Smallest subnormal and the halfway case below it.
  EXPECT_EQ(f32ToF16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(f32ToF16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(f32ToF16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(f32ToI16(2.5f), 2);
  EXPECT_EQ(f32ToI16(3.5f), 4);
  EXPECT_EQ(f32ToI16(1e9f), 32767);
  EXPECT_EQ(f32ToI16(-1e9f), -32768);
  EXPECT_EQ(f32ToI16(std::nanf("")), 0);
}

TEST(Dsd, EveryKindRoundTrips) {
  auto t = *Target::create(TargetConfig{});
  std::mt19937 rng(3);
  for (int i = 0; i < 5000; ++i) {
    Dsd d;
    d.kind = DsdKind(rng() % kNumDsdKinds);
    switch (d.kind) {
    case DsdKind::FabricIn:
    case DsdKind::FabricOut:
      d.length = rng() % 32768;
      d.color = rng() % 24;
      d.format = PayloadFormat(rng() % 3);
      d.onDone = {bool(rng() & 1), uint8_t(rng() % 64)};
      d.microthread = rng() & 1;
      d.utid = rng() % 8;
      if (d.kind == DsdKind::FabricIn)
        d.terminateOnControl = rng() & 1;
      else {
        d.control = rng() & 1;
        d.index6 = rng() % 64;
        d.indexFromGpr4 = rng() & 1;
        d.skipZeros = d.format == PayloadFormat::Sparse16 && !d.control &&
                      (rng() & 1);
      }
      break;
    case DsdKind::Mem1D:
      d.length = rng() % 32768;
      d.base = rng() % 24576;
      d.stride = int32_t(rng() % 512) - 256;
      d.indexed = rng() & 1;
      break;
    case DsdKind::Mem4D:
      d.base = rng() % 24576;
      d.xdsr = rng() % 6;
      d.indexed = rng() & 1;
      break;
    case DsdKind::Fifo:
      d.length = 1 + rng() % 32767;
      d.base = rng() % 24576;
      d.onPush = {bool(rng() & 1), uint8_t(rng() % 64)};
      d.onPop = {bool(rng() & 1), uint8_t(rng() % 64)};
      break;
    }
    ASSERT_EQ(d.validate(t), "") << d.str();
    uint64_t bits = d.encode();
    ASSERT_EQ(bits >> Dsd::kBits, 0u) << d.str();
    std::string err;
    auto back = Dsd::decode(bits, &err);
    ASSERT_TRUE(back) << err;
    EXPECT_EQ(back->encode(), bits) << d.str();
    EXPECT_EQ(back->str(), d.str());
  }
}

TEST(Dsd, RejectsWhatTheEncodingCannotHold) {
  auto t = *Target::create(TargetConfig{});
  Dsd d;
  d.kind = DsdKind::Mem1D;
  d.length = 40000;
  EXPECT_NE(d.validate(t).find("15-bit"), std::string::npos);
  d.length = 4;
  d.base = 30000; // Beyond 48 KiB = 24576 words.
  EXPECT_NE(d.validate(t).find("24576"), std::string::npos);
  d.base = 0;
  d.stride = 300;
  EXPECT_NE(d.validate(t).find("9-bit"), std::string::npos);
  Dsd f;
  f.kind = DsdKind::FabricIn;
  f.color = 24;
  EXPECT_NE(f.validate(t).find("not routable"), std::string::npos);
  std::string err;
  EXPECT_FALSE(Dsd::decode(uint64_t(7) << 45, &err));
  EXPECT_NE(err.find("reserved"), std::string::npos);
  EXPECT_FALSE(Dsd::decode(1ull << 50, &err));
  // Payload format 3 is reserved.
  EXPECT_FALSE(Dsd::decode(uint64_t(3) << 20, &err));
  // A sparse send needs sparse16 and no ctrl.
  Dsd nz;
  nz.kind = DsdKind::FabricOut;
  nz.skipZeros = true;
  EXPECT_NE(nz.validate(t).find("sparse16"), std::string::npos);
  nz.format = PayloadFormat::Sparse16;
  EXPECT_EQ(nz.validate(t), "");
  EXPECT_EQ(nz.encode() >> 41 & 1, 1u);
  EXPECT_NE(nz.str().find(" nz"), std::string::npos);
  nz.control = true;
  EXPECT_NE(nz.validate(t).find("no ctrl"), std::string::npos);
}

TEST(Xdsd, RoundTripAndLimits) {
  Xdsd x;
  x.len[0] = 4095;
  x.len[1] = 3;
  x.len[2] = 255;
  x.len[3] = 2;
  x.strideSel[0] = 6;
  x.strideSel[1] = 0;
  x.strideSel[2] = 5;
  x.strideSel[3] = 7;
  ASSERT_EQ(x.validate(), "");
  auto back = Xdsd::decode(x.encode());
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, x);
  EXPECT_EQ(back->numElements(), 4095ull * 3 * 255 * 2);
  x.len[1] = 0;
  EXPECT_NE(x.validate(), "");
  EXPECT_FALSE(Xdsd::decode(1ull << 51));
  EXPECT_FALSE(Xdsd::decode(1ull << 49)); // Reserved bits [50:48].
  x.strideSel[1] = 8;
  x.len[1] = 1;
  EXPECT_NE(x.validate(), "");
}

TEST(Numerics, NaNsAreCanonical) {
  EXPECT_EQ(f32ToBits(f16ToF32(0xfe01)), kCanonicalNaN32);
  EXPECT_EQ(f32ToF16(bitsToF32(0xffc00001u)), kCanonicalNaN16);
}
