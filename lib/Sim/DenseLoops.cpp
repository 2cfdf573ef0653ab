//===- DenseLoops.cpp - The simulator's vectorized fp32 loops -------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The hot loops of Step.cpp's batch path (DenseLoops.h): FMAC, FADD, FSUB
// and FMUL over contiguous fp32 vectors in PE memory, written so that the
// host compiler vectorizes them with the machine's rounding, and the same,
// MOV32 and FMACHS over mem4d walks (a convolution's window) in issue
// order.
//
//===----------------------------------------------------------------------===//

#include "DenseLoops.h"

#include "weft/Machine/Numerics.h"

#include <algorithm>
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

namespace {

/// A StridedVec's position: its address and index in each dimension.
struct Cursor {
  int64_t addr;
  uint32_t idx[4] = {0, 0, 0, 0};
  /// Moves `k` elements on, within dimension 0 (the caller keeps k within
  /// what is left of it), then carries into the outer dimensions.
  void advance(const StridedVec &v, uint32_t k) {
    addr += int64_t(k) * v.stride[0];
    idx[0] += k;
    for (unsigned d = 0; d < 3 && idx[d] == v.len[d]; ++d) {
      addr -= int64_t(v.len[d]) * v.stride[d];
      idx[d] = 0;
      addr += v.stride[d + 1];
      ++idx[d + 1];
    }
  }
};

float loadF32(const uint16_t *m, int64_t addr) {
  uint32_t v = uint32_t(m[addr]) | (uint32_t(m[addr + 1]) << 16);
  float f;
  std::memcpy(&f, &v, 4);
  return f;
}

void storeF32(uint16_t *m, int64_t addr, float f) {
  uint32_t v;
  std::memcpy(&v, &f, 4);
  if (f != f)
    v = kCanonicalNaN32;
  m[addr] = uint16_t(v);
  m[addr + 1] = uint16_t(v >> 16);
}

/// An fp16 element as f16ToF32 converts it, normal numbers inline.
inline float loadF16(const uint16_t *m, int64_t addr) {
  uint32_t h = m[addr], exp = (h >> 10) & 0x1fu;
  if (exp == 0 || exp == 0x1f)
    return f16ToF32(uint16_t(h));
  uint32_t v = ((h & 0x8000u) << 16) | ((exp + 112) << 23) | ((h & 0x3ffu) << 13);
  float f;
  std::memcpy(&f, &v, 4);
  return f;
}

/// `run` elements along dimension 0 of every operand from the given
/// addresses, one by one through memory.
template <Opcode Op, bool MA, bool MB>
__attribute__((hot)) void stridedRun(uint16_t *m, int64_t ad, int64_t sd,
                                     int64_t aa, int64_t sa, float ca,
                                     int64_t ab, int64_t sb, float cb,
                                     uint32_t run) {
  for (uint32_t i = 0; i < run; ++i, ad += sd, aa += sa, ab += sb) {
    if (Op == Opcode::MOV32) {
      // A bit copy: no canonicalisation.
      uint32_t v;
      if (MA) {
        v = uint32_t(m[aa]) | (uint32_t(m[aa + 1]) << 16);
      } else {
        std::memcpy(&v, &ca, 4);
      }
      m[ad] = uint16_t(v);
      m[ad + 1] = uint16_t(v >> 16);
      continue;
    }
    if (Op == Opcode::FMACHS) {
      // fp16 sources (one word each), exact product, fp32 accumulator.
      float x = MA ? loadF16(m, aa) : ca, y = MB ? loadF16(m, ab) : cb;
      storeF32(m, ad, loadF32(m, ad) + x * y);
      continue;
    }
    float x = MA ? loadF32(m, aa) : ca, y = MB ? loadF32(m, ab) : cb, r;
    if (Op == Opcode::FMAC) {
      float p = x * y;
      r = loadF32(m, ad) + p;
    } else if (Op == Opcode::FADD) {
      r = x + y;
    } else if (Op == Opcode::FSUB) {
      r = x - y;
    } else {
      r = x * y;
    }
    storeF32(m, ad, r);
  }
}

template <Opcode Op, bool MA, bool MB>
void stridedLoopOf(uint16_t *m, const StridedVec &d, const StridedVec &a,
                   const StridedVec &b, uint32_t n) {
  Cursor cd{d.addr}, ca{a.addr}, cb{b.addr};
  for (uint32_t i = 0; i < n;) {
    // As far as every operand stays in its dimension 0.
    uint32_t run = std::min(n - i, d.len[0] - cd.idx[0]);
    if (MA)
      run = std::min(run, a.len[0] - ca.idx[0]);
    if (MB)
      run = std::min(run, b.len[0] - cb.idx[0]);
    stridedRun<Op, MA, MB>(m, cd.addr, d.stride[0], ca.addr, a.stride[0],
                           a.value, cb.addr, b.stride[0], b.value, run);
    cd.advance(d, run);
    if (MA)
      ca.advance(a, run);
    if (MB)
      cb.advance(b, run);
    i += run;
  }
}

template <Opcode Op>
void stridedLoopOf(uint16_t *m, const StridedVec &d, const StridedVec &a,
                   const StridedVec &b, uint32_t n) {
  if (a.mem && b.mem)
    stridedLoopOf<Op, true, true>(m, d, a, b, n);
  else if (a.mem)
    stridedLoopOf<Op, true, false>(m, d, a, b, n);
  else if (b.mem)
    stridedLoopOf<Op, false, true>(m, d, a, b, n);
  else
    stridedLoopOf<Op, false, false>(m, d, a, b, n);
}

} // namespace

bool stridedLoop(Opcode op, uint16_t *m, const StridedVec &d,
                 const StridedVec &a, const StridedVec &b, uint32_t n) {
  switch (op) {
  case Opcode::FMAC:
    stridedLoopOf<Opcode::FMAC>(m, d, a, b, n);
    return true;
  case Opcode::FMACHS:
    stridedLoopOf<Opcode::FMACHS>(m, d, a, b, n);
    return true;
  case Opcode::FADD:
    stridedLoopOf<Opcode::FADD>(m, d, a, b, n);
    return true;
  case Opcode::FSUB:
    stridedLoopOf<Opcode::FSUB>(m, d, a, b, n);
    return true;
  case Opcode::FMUL:
    stridedLoopOf<Opcode::FMUL>(m, d, a, b, n);
    return true;
  case Opcode::MOV32:
    stridedLoopOf<Opcode::MOV32>(m, d, a, b, n);
    return true;
  default:
    return false;
  }
}

} // namespace weft::sim::detail
