//===- Sliced.h - Sliced memory vectors (weight-memory sparsity) -*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A sliced memory vector (docs/architecture.md §8.3, "Sliced vectors"; weft
// decision 46): `len` elements of `ew` 16-bit words each, grouped in words
// of kSlicedLanes lanes. Word w holds elements 4w .. 4w + 3; its slot of
// 4·ew memory words holds its non-zero lanes packed from the slot's start
// in lane order (slice 1 = the first kSlice1Lanes positions, slice 2 the
// rest), zeros after them. The 4-bit lane masks (bit l = lane l is not
// all-zero bits) follow the slots, four to a memory word: word w's mask is
// bits [4(w mod 4) + 3 : 4(w mod 4)] of memory word
// base + 4·W·ew + floor(w / 4), W = ceil(len / 4).
//
// The compiler packs weights with packSliced; the simulator reads them
// with the same layout functions. Plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_MACHINE_SLICED_H
#define WEFT_MACHINE_SLICED_H

#include "weft/Machine/Energy.h"

#include <cstdint>
#include <vector>

namespace weft::machine {

constexpr unsigned kSlicedLanes = 4;
constexpr unsigned kSlice1Lanes = 2;

/// The layout of a sliced vector of `len` elements of `ew` words (1 or 2).
struct SlicedLayout {
  uint32_t len = 0;
  unsigned ew = 2;

  /// Sliced words (groups of kSlicedLanes lanes).
  uint32_t words() const { return (len + kSlicedLanes - 1) / kSlicedLanes; }
  /// Memory words of the slots, and offset of the first mask word.
  uint32_t slotWords() const { return words() * kSlicedLanes * ew; }
  uint32_t maskOffset() const { return slotWords(); }
  uint32_t maskWords() const { return (words() + 3) / 4; }
  /// Memory words the whole vector occupies.
  uint32_t footprintWords() const { return slotWords() + maskWords(); }
  /// The energy model's view of one word (Energy.h).
  SlicedWord word() const {
    return SlicedWord{kSlicedLanes, 2 * ew, kSlice1Lanes};
  }
};

/// Lane mask (4 bits) of word `w` given the vector's mask memory words.
inline unsigned slicedMask(const uint16_t *maskWords, uint32_t w) {
  return (maskWords[w / 4] >> (4 * (w % 4))) & 0xF;
}

/// Packs `elements` (raw bit patterns, `ew` words each: the low 16 bits
/// when ew = 1) into the sliced layout: slotWords() + maskWords() words.
std::vector<uint16_t> packSliced(const std::vector<uint32_t> &elements,
                                 unsigned ew);

/// Unpacks a sliced vector of `len` elements back to raw bit patterns.
std::vector<uint32_t> unpackSliced(const uint16_t *words, uint32_t len,
                                   unsigned ew);

/// Groups of `simd` lanes a vector instruction issues over the sliced
/// vector whose packed words are `words`: sum over words of
/// ceil(non-zero lanes / simd) (a word with none issues nothing).
uint64_t slicedGroups(const uint16_t *words, uint32_t len, unsigned ew,
                      unsigned simd);

} // namespace weft::machine

#endif // WEFT_MACHINE_SLICED_H
