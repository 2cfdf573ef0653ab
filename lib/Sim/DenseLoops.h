//===- DenseLoops.h - The simulator's fast fp32 loops -----------*- C++ -*-===//
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

/// One operand of stridedLoop: a vector in memory whose element i lies at
/// word addr + sum(i_k * stride[k]) with i = i_0 + len[0] * (i_1 + len[1] *
/// (i_2 + len[2] * i_3)) (a mem4d walk; a mem1d vector is one dimension
/// that never wraps), or, when `mem` is false, the broadcast `value`.
struct StridedVec {
  bool mem = false;
  int64_t addr = 0;
  int64_t stride[4] = {0, 0, 0, 0};
  uint32_t len[4] = {~0u, 1, 1, 1};
  float value = 0.0f;
};

/// Runs `op` (FMAC, FADD, FSUB, FMUL or MOV32) over the first n elements of
/// fp32 vectors `d`, `a`, `b` in PE memory `m`, whose every address the
/// caller has checked, in issue order and element by element through
/// memory, so operands that overlap (a destination that accumulates over
/// stride-0 dimensions, a source reading what an earlier element wrote)
/// see what group-by-group issue sees. The same IEEE operations as the
/// element path: the product rounded before the add, NaN results
/// canonical, MOV32 a bit copy. FMACHS reads fp16 sources (one word an
/// element; a broadcast `value` already converted) into an fp32
/// destination, the product exact. Returns false, doing nothing, for
/// another opcode.
bool stridedLoop(machine::Opcode op, uint16_t *m, const StridedVec &d,
                 const StridedVec &a, const StridedVec &b, uint32_t n);

} // namespace weft::sim::detail

#endif // WEFT_LIB_SIM_DENSELOOPS_H
