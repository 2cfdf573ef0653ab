//===- Numerics.cpp - IEEE fp16/fp32 conversions --------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Machine/Numerics.h"

#include <cmath>

using namespace weft::machine;

uint16_t weft::machine::f32ToF16(float f) {
  uint32_t x = f32ToBits(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) // Inf or NaN.
    return man ? kCanonicalNaN16 : uint16_t(sign | 0x7c00u);
  int32_t e = int32_t(exp) - 127 + 15;
  if (e >= 0x1f) // Overflow to infinity.
    return uint16_t(sign | 0x7c00u);
  if (e <= 0) {
    // Subnormal half (or zero): shift the full significand right.
    if (e < -10)
      return sign; // Rounds to zero (even the halfway case: 2^-25 -> 0).
    uint32_t sig = man | 0x800000u;
    unsigned shift = unsigned(14 - e);
    uint32_t half = sig >> shift;
    uint32_t rem = sig & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1)))
      ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = (uint32_t(e) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1)))
    ++half; // May carry into the exponent, up to infinity: that is correct.
  return uint16_t(sign | half);
}

float weft::machine::f16ToF32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1f)
    return bitsToF32(man ? kCanonicalNaN32 : sign | 0x7f800000u);
  if (exp == 0) {
    if (man == 0)
      return bitsToF32(sign);
    // Subnormal: normalise.
    int e = -1;
    do {
      man <<= 1;
      ++e;
    } while (!(man & 0x400u));
    man &= 0x3ffu;
    return bitsToF32(sign | (uint32_t(127 - 15 - e) << 23) | (man << 13));
  }
  return bitsToF32(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

int16_t weft::machine::f32ToI16(float f) {
  if (std::isnan(f))
    return 0;
  if (f >= 32767.0f)
    return 32767;
  if (f <= -32768.0f)
    return -32768;
  return int16_t(std::nearbyint(f)); // Default rounding: nearest even.
}
