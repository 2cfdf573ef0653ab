//===- Sliced.cpp - Sliced memory vectors ---------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Machine/Sliced.h"


namespace weft::machine {

std::vector<uint16_t> packSliced(const std::vector<uint32_t> &elements,
                                 unsigned ew) {
  SlicedLayout l{uint32_t(elements.size()), ew};
  std::vector<uint16_t> out(l.footprintWords(), 0);
  uint32_t valueMask = ew == 2 ? 0xffffffffu : 0xffffu;
  for (uint32_t w = 0; w < l.words(); ++w) {
    unsigned mask = 0, packed = 0;
    for (unsigned lane = 0; lane < kSlicedLanes; ++lane) {
      uint32_t i = w * kSlicedLanes + lane;
      if (i >= elements.size())
        break;
      uint32_t v = elements[i] & valueMask;
      if (!v)
        continue;
      mask |= 1u << lane;
      uint32_t at = (w * kSlicedLanes + packed++) * ew;
      out[at] = uint16_t(v);
      if (ew == 2)
        out[at + 1] = uint16_t(v >> 16);
    }
    out[l.maskOffset() + w / 4] |= uint16_t(mask << (4 * (w % 4)));
  }
  return out;
}

std::vector<uint32_t> unpackSliced(const uint16_t *words, uint32_t len,
                                   unsigned ew) {
  SlicedLayout l{len, ew};
  std::vector<uint32_t> out(len, 0);
  const uint16_t *masks = words + l.maskOffset();
  for (uint32_t w = 0; w < l.words(); ++w) {
    unsigned mask = slicedMask(masks, w), packed = 0;
    for (unsigned lane = 0; lane < kSlicedLanes; ++lane) {
      if (!(mask & (1u << lane)))
        continue;
      uint32_t at = (w * kSlicedLanes + packed++) * ew;
      uint32_t v = words[at] | (ew == 2 ? uint32_t(words[at + 1]) << 16 : 0);
      uint32_t i = w * kSlicedLanes + lane;
      if (i < len)
        out[i] = v;
    }
  }
  return out;
}

uint64_t slicedGroups(const uint16_t *words, uint32_t len, unsigned ew,
                      unsigned simd) {
  SlicedLayout l{len, ew};
  const uint16_t *masks = words + l.maskOffset();
  uint64_t groups = 0;
  for (uint32_t w = 0; w < l.words(); ++w)
    groups += (unsigned(__builtin_popcount(slicedMask(masks, w))) + simd - 1) / simd;
  return groups;
}

} // namespace weft::machine
