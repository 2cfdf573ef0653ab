//===- Arith.h - Element operations of the datapath (internal) --*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The value semantics of every datapath opcode on raw bits, exactly as
// docs/architecture.md §9.2 and §11 specify (RNE, subnormals kept, canonical
// NaN, FMAC not fused). Used by the simulator and its unit tests.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SIM_ARITH_H
#define WEFT_LIB_SIM_ARITH_H

#include "weft/Machine/ISA.h"

#include <cstdint>

namespace weft::sim::detail {

/// d' = op(d, a, b) for Vec opcodes; d' = op(d, a) for Un opcodes (b
/// ignored); reductions return the new accumulator op(d, a). Values are raw
/// bits of the opcode's element types, 16-bit ones in the low half.
uint32_t compute(machine::Opcode op, uint32_t d, uint32_t a, uint32_t b);

/// The condition flag of a Cmp opcode for (g, s).
bool compare(machine::Opcode op, uint32_t g, uint32_t s);

/// Bits of small immediate `k` (not the PRNG) in element type `t`; false
/// when the entry does not exist in that type (0.5 as an integer).
bool smallImmBits(unsigned k, machine::ElemType t, uint32_t &bits);

/// Bits of a PRNG draw `r` in element type `t` (architecture §9.5).
uint32_t prngBits(uint32_t r, machine::ElemType t);

/// Advances an xorshift32 state and returns it.
inline uint32_t xorshift32(uint32_t &s) {
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  return s;
}

} // namespace weft::sim::detail

#endif // WEFT_LIB_SIM_ARITH_H
