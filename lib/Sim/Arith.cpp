//===- Arith.cpp - Element operations of the datapath ---------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "Arith.h"

#include "weft/Machine/Numerics.h"

#include <cmath>

using namespace weft::machine;

namespace weft::sim::detail {

static float f(uint32_t bits) { return bitsToF32(bits); }
static float h(uint32_t bits) { return f16ToF32(uint16_t(bits)); }

/// fp32 result with NaNs canonicalised.
static uint32_t r32(float v) {
  return std::isnan(v) ? kCanonicalNaN32 : f32ToBits(v);
}
/// fp16 result (f32ToF16 already canonicalises NaN).
static uint32_t r16(float v) { return f32ToF16(v); }

static bool isNaN32(uint32_t b) { return std::isnan(f(b)); }
static bool isNaN16(uint32_t b) {
  return (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0;
}

/// IEEE maxNum/minNum with -0 < +0 on raw bits (`nan` tests, `lt` orders).
template <bool Max, typename IsNaN, typename Less>
static uint32_t maxMin(uint32_t a, uint32_t b, uint32_t canon, IsNaN isNaN,
                       Less less) {
  bool na = isNaN(a), nb = isNaN(b);
  if (na && nb)
    return canon;
  if (na)
    return b;
  if (nb)
    return a;
  bool aLess = less(a, b);
  bool bLess = less(b, a);
  if (!aLess && !bLess)
    return a; // equal and the same sign class
  return (aLess ^ Max) ? a : b;
}

/// Total order on non-NaN values in which -0 < +0.
static bool less32(uint32_t a, uint32_t b) {
  float x = f(a), y = f(b);
  if (x == y && x == 0.0f)
    return (a >> 31) && !(b >> 31);
  return x < y;
}
static bool less16(uint32_t a, uint32_t b) {
  float x = h(a), y = h(b);
  if (x == y && x == 0.0f)
    return ((a >> 15) & 1) && !((b >> 15) & 1);
  return x < y;
}

uint32_t compute(Opcode op, uint32_t d, uint32_t a, uint32_t b) {
  switch (op) {
  // Vec, fp32.
  case Opcode::FADD:
    return r32(f(a) + f(b));
  case Opcode::FSUB:
    return r32(f(a) - f(b));
  case Opcode::FMUL:
    return r32(f(a) * f(b));
  case Opcode::FMAC: {
    float p = f(a) * f(b);
    return r32(f(d) + p);
  }
  case Opcode::FMAX:
    return maxMin<true>(a, b, kCanonicalNaN32, isNaN32, less32);
  case Opcode::FMIN:
    return maxMin<false>(a, b, kCanonicalNaN32, isNaN32, less32);
  case Opcode::FCLT:
    return f(a) < f(b) ? 1u : 0u;
  case Opcode::FCEQ:
    return f(a) == f(b) ? 1u : 0u;
  case Opcode::SEL32:
    return d != 0 ? a : b;
  // Vec, fp16 (double rounding through binary32 is exact here, §11).
  case Opcode::FADDH:
    return r16(h(a) + h(b));
  case Opcode::FSUBH:
    return r16(h(a) - h(b));
  case Opcode::FMULH:
    return r16(h(a) * h(b));
  case Opcode::FMACH: {
    uint32_t p = r16(h(a) * h(b));
    return r16(h(d) + h(p));
  }
  case Opcode::FMACHS: {
    float p = h(a) * h(b); // exact: 22 significand bits
    return r32(f(d) + p);
  }
  case Opcode::FMAXH:
    return maxMin<true>(a & 0xffff, b & 0xffff, kCanonicalNaN16, isNaN16,
                        less16);
  case Opcode::FMINH:
    return maxMin<false>(a & 0xffff, b & 0xffff, kCanonicalNaN16, isNaN16,
                         less16);
  case Opcode::FCLTH:
    return h(a) < h(b) ? 1u : 0u;
  case Opcode::SEL16:
    return (d & 0xffff) != 0 ? (a & 0xffff) : (b & 0xffff);
  // Vec, i16.
  case Opcode::ADD16:
    return (a + b) & 0xffff;
  case Opcode::SUB16:
    return (a - b) & 0xffff;
  case Opcode::MUL16:
    return (uint32_t(uint16_t(a)) * uint32_t(uint16_t(b))) & 0xffff;
  case Opcode::AND16:
    return a & b & 0xffff;
  case Opcode::OR16:
    return (a | b) & 0xffff;
  case Opcode::XOR16:
    return (a ^ b) & 0xffff;
  case Opcode::SHL16:
    return (uint32_t(uint16_t(a)) << (b & 15)) & 0xffff;
  case Opcode::SHR16:
    return uint32_t(uint16_t(a)) >> (b & 15);
  case Opcode::SAR16:
    return uint32_t(uint16_t(int16_t(a) >> (b & 15)));
  // Un.
  case Opcode::MOV32:
    return a;
  case Opcode::MOV16:
    return a & 0xffff;
  case Opcode::FNEG:
    return a ^ 0x80000000u;
  case Opcode::FABS:
    return a & 0x7fffffffu;
  case Opcode::FNEGH:
    return (a ^ 0x8000u) & 0xffff;
  case Opcode::FABSH:
    return a & 0x7fffu;
  case Opcode::FH2F:
    return f32ToBits(h(a));
  case Opcode::FF2H:
    return f32ToF16(f(a));
  case Opcode::FF2I:
    return uint16_t(f32ToI16(f(a)));
  case Opcode::FI2F:
    return f32ToBits(float(int16_t(a)));
  case Opcode::FEXP:
    return r32(std::exp(f(a)));
  case Opcode::FLOG:
    return r32(std::log(f(a)));
  case Opcode::FRCP:
    return r32(1.0f / f(a));
  case Opcode::FSQRT:
    return r32(std::sqrt(f(a)));
  // Reductions: d is the accumulator.
  case Opcode::FSUM:
    return r32(f(d) + f(a));
  case Opcode::FMAXR:
    return maxMin<true>(d, a, kCanonicalNaN32, isNaN32, less32);
  case Opcode::FSUMHS:
    return r32(f(d) + h(a));
  default:
    return 0;
  }
}

bool compare(Opcode op, uint32_t g, uint32_t s) {
  switch (op) {
  case Opcode::CLT16:
    return int16_t(g) < int16_t(s);
  case Opcode::CEQ16:
    return uint16_t(g) == uint16_t(s);
  case Opcode::CLTU16:
    return uint16_t(g) < uint16_t(s);
  case Opcode::FCLTS:
    return f(g) < f(s);
  case Opcode::FCEQS:
    return f(g) == f(s);
  default:
    return false;
  }
}

bool smallImmBits(unsigned k, ElemType t, uint32_t &bits) {
  static const uint32_t f32v[] = {0x00000000u, 0x3f800000u, 0xbf800000u,
                                  0x40000000u, 0x3f000000u};
  static const uint32_t f16v[] = {0x0000u, 0x3c00u, 0xbc00u, 0x4000u, 0x3800u};
  static const uint32_t intv[] = {0u, 1u, 0xffffffffu, 2u};
  if (k > 4)
    return false;
  switch (t) {
  case ElemType::F32:
    bits = f32v[k];
    return true;
  case ElemType::F16:
    bits = f16v[k];
    return true;
  case ElemType::I16:
    if (k == 4)
      return false;
    bits = intv[k] & 0xffff;
    return true;
  case ElemType::I32:
    if (k == 4)
      return false;
    bits = intv[k];
    return true;
  case ElemType::None:
    return false;
  }
  return false;
}

uint32_t prngBits(uint32_t r, ElemType t) {
  switch (t) {
  case ElemType::F32:
    return f32ToBits(float(r >> 8) * 0x1p-24f);
  case ElemType::F16:
    return f32ToF16(float(r >> 21) * 0x1p-11f);
  case ElemType::I16:
    return r & 0xffff;
  default:
    return r;
  }
}

} // namespace weft::sim::detail
