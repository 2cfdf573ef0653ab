//===- DenseLoops.h - The simulator's vectorized fp32 loops -----*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SIM_DENSELOOPS_H
#define WEFT_LIB_SIM_DENSELOOPS_H

#include "weft/Machine/ISA.h"

#include <cstdint>

namespace weft::sim::detail {

/// Runs `op` (FMAC, FADD, FSUB or FMUL) over n fp32 elements of PE memory
/// `m` (16-bit words) when every memory operand is a contiguous fp32 vector
/// (word strides `sd`, `sa`, `sb` of 2) and the sources do not overlap the
/// destination at word `ad`; a source not in memory (`ma`, `mb` false) is
/// the broadcast `ca`, `cb`. The same IEEE operations one by one as the
/// element path, the product rounded before the add, NaN results canonical.
/// Returns false, doing nothing, for anything else.
bool contiguousLoop(machine::Opcode op, uint16_t *m, int64_t ad, int64_t sd,
                    bool ma, int64_t aa, int64_t sa, float ca, bool mb,
                    int64_t ab, int64_t sb, float cb, uint32_t n);

} // namespace weft::sim::detail

#endif // WEFT_LIB_SIM_DENSELOOPS_H
