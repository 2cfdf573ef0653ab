//===- DenseLoops.cpp - The simulator's vectorized fp32 loops -------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The hot loops of Step.cpp's batch path (DenseLoops.h): FMAC, FADD, FSUB
// and FMUL over contiguous fp32 vectors in PE memory, written so that the
// host compiler vectorizes them with the machine's rounding.
//
//===----------------------------------------------------------------------===//

#include "DenseLoops.h"

#include "weft/Machine/Numerics.h"

#include <cstring>

using namespace weft::machine;

namespace weft::sim::detail {

/// An fp32 element of PE memory: two 16-bit words, low first (the host is
/// little-endian like the machine), aligned to a word and aliasing them.
typedef float MemF32 __attribute__((aligned(2), may_alias));

/// FMAC, FADD, FSUB or FMUL over n elements of contiguous fp32 vectors in
/// memory that do not overlap (or GPR/immediate broadcasts `ca`, `cb`),
/// written so that the compiler vectorizes it: the same IEEE operations one
/// by one, the product rounded before the add, NaN results canonical.
/// Out of line and hot: inlined into the batch path, which GCC guesses is
/// cold, the loop would be compiled for size and not vectorized.
template <Opcode Op, bool MA, bool MB>
__attribute__((noinline, hot)) static void
denseKernel(uint16_t *dw, const uint16_t *aw, const uint16_t *bw,
                        float ca, float cb, uint32_t n) {
  static_assert(sizeof(float) == 4, "fp32 host floats");
  MemF32 *__restrict d = reinterpret_cast<MemF32 *>(dw);
  const MemF32 *__restrict a = reinterpret_cast<const MemF32 *>(aw);
  const MemF32 *__restrict b = reinterpret_cast<const MemF32 *>(bw);
  float canon;
  uint32_t bits = kCanonicalNaN32;
  std::memcpy(&canon, &bits, 4);
  for (uint32_t i = 0; i < n; ++i) {
    float x = MA ? a[i] : ca, y = MB ? b[i] : cb, r;
    if (Op == Opcode::FMAC) {
      float p = x * y;
      r = d[i] + p;
    } else if (Op == Opcode::FADD) {
      r = x + y;
    } else if (Op == Opcode::FSUB) {
      r = x - y;
    } else {
      r = x * y;
    }
    d[i] = r != r ? canon : r;
  }
}

template <Opcode Op>
static void denseKernel(bool ma, bool mb, uint16_t *d, const uint16_t *a,
                        const uint16_t *b, float ca, float cb, uint32_t n) {
  if (ma && mb)
    denseKernel<Op, true, true>(d, a, b, ca, cb, n);
  else if (ma)
    denseKernel<Op, true, false>(d, a, b, ca, cb, n);
  else if (mb)
    denseKernel<Op, false, true>(d, a, b, ca, cb, n);
  else
    denseKernel<Op, false, false>(d, a, b, ca, cb, n);
}

/// Runs denseKernel when every memory operand is a contiguous fp32 vector
/// (stride one element) and the sources do not overlap the destination.
bool contiguousLoop(Opcode op, uint16_t *m, int64_t ad, int64_t sd,
                           bool ma, int64_t aa, int64_t sa, float ca, bool mb,
                           int64_t ab, int64_t sb, float cb, uint32_t n) {
  if (sd != 2 || (ma && sa != 2) || (mb && sb != 2))
    return false;
  int64_t words = 2 * int64_t(n);
  auto apart = [&](bool mem, int64_t at) {
    return !mem || at + words <= ad || ad + words <= at;
  };
  if (!apart(ma, aa) || !apart(mb, ab))
    return false;
  uint16_t *d = m + ad;
  const uint16_t *a = m + (ma ? aa : 0), *b = m + (mb ? ab : 0);
  switch (op) {
  case Opcode::FMAC:
    denseKernel<Opcode::FMAC>(ma, mb, d, a, b, ca, cb, n);
    return true;
  case Opcode::FADD:
    denseKernel<Opcode::FADD>(ma, mb, d, a, b, ca, cb, n);
    return true;
  case Opcode::FSUB:
    denseKernel<Opcode::FSUB>(ma, mb, d, a, b, ca, cb, n);
    return true;
  case Opcode::FMUL:
    denseKernel<Opcode::FMUL>(ma, mb, d, a, b, ca, cb, n);
    return true;
  default:
    return false;
  }
}

} // namespace weft::sim::detail
