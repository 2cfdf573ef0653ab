//===- Numerics.h - IEEE fp16/fp32 helpers shared by all stages -*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The machine computes in IEEE-754 binary32 and binary16, round to nearest
// even, with subnormals, infinities on overflow and quiet NaNs (see
// docs/architecture.md, "Numerics"). These helpers are exact software
// conversions so the compiler and the simulator agree bit for bit on every
// host.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_MACHINE_NUMERICS_H
#define WEFT_MACHINE_NUMERICS_H

#include <cstdint>
#include <cstring>

namespace weft::machine {

/// The canonical quiet NaNs the machine produces.
constexpr uint32_t kCanonicalNaN32 = 0x7fc00000u;
constexpr uint16_t kCanonicalNaN16 = 0x7e00u;

inline float bitsToF32(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint32_t f32ToBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// binary32 -> binary16, round to nearest even; NaN becomes the canonical NaN.
uint16_t f32ToF16(float f);
/// binary16 -> binary32, exact.
float f16ToF32(uint16_t h);
/// fp32 -> int16: round to nearest even, saturating; NaN becomes 0.
int16_t f32ToI16(float f);

} // namespace weft::machine

#endif // WEFT_MACHINE_NUMERICS_H
