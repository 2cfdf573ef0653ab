//===- Energy.h - The memory access energy model ----------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// What a PE memory access costs in energy (docs/architecture.md §7.3). One
// place for the simulator's statistics and the compiler's cost models.
//
// An access of w bytes enables w bytes of SRAM columns behind one address
// decode: E(w) = fixed + perByte · w. A word stored as a bitmask and packed
// non-zero slices (a sliced word) is read or written through its mask slice
// and only the data slices its non-zero lanes need:
//   E = E(mask) + [pc > 0] · E(slice 1) + [pc > lanes of slice 1] · E(slice 2)
// with pc the word's count of non-zero lanes.
//
// Energies are integers in femtojoules, so sums are exact and identical
// whatever the order they are added in.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_MACHINE_ENERGY_H
#define WEFT_MACHINE_ENERGY_H

#include <cstdint>

namespace weft::machine {

/// The per-access energy constants (weft decision, §7.3).
struct AccessEnergy {
  static constexpr uint64_t kReadFixedFj = 1000;
  static constexpr uint64_t kReadPerByteFj = 500;
  static constexpr uint64_t kWriteFixedFj = 1200;
  static constexpr uint64_t kWritePerByteFj = 600;
};

/// The energy of one read / write of `bytes` bytes, in femtojoules (0 for 0
/// bytes: nothing enabled).
uint64_t readEnergyFj(unsigned bytes);
uint64_t writeEnergyFj(unsigned bytes);

/// A word of `lanes` lanes of `laneBytes` bytes each, stored as a bitmask
/// (one bit per lane, `maskBytes` = ceil(lanes / 8) bytes) and two data
/// slices: the first `slice1Lanes` lanes' worth and the rest.
struct SlicedWord {
  unsigned lanes = 4;
  unsigned laneBytes = 2;
  unsigned slice1Lanes = 2;

  unsigned maskBytes() const { return (lanes + 7) / 8; }
  unsigned slice1Bytes() const { return slice1Lanes * laneBytes; }
  unsigned slice2Bytes() const { return (lanes - slice1Lanes) * laneBytes; }
  /// 0 < slice1Lanes < lanes, lanes ≤ 64, laneBytes ≥ 1.
  bool valid() const;
};

/// Reading / writing a sliced word with `nonZeroLanes` non-zero lanes.
uint64_t slicedReadEnergyFj(const SlicedWord &w, unsigned nonZeroLanes);
uint64_t slicedWriteEnergyFj(const SlicedWord &w, unsigned nonZeroLanes);

} // namespace weft::machine

#endif // WEFT_MACHINE_ENERGY_H
