//===- Energy.cpp - The memory access energy model ------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Machine/Energy.h"

namespace weft::machine {

uint64_t readEnergyFj(unsigned bytes) {
  return bytes ? AccessEnergy::kReadFixedFj +
                     AccessEnergy::kReadPerByteFj * uint64_t(bytes)
               : 0;
}

uint64_t writeEnergyFj(unsigned bytes) {
  return bytes ? AccessEnergy::kWriteFixedFj +
                     AccessEnergy::kWritePerByteFj * uint64_t(bytes)
               : 0;
}

bool SlicedWord::valid() const {
  return laneBytes >= 1 && lanes <= 64 && slice1Lanes > 0 &&
         slice1Lanes < lanes;
}

template <typename F>
static uint64_t sliced(const SlicedWord &w, unsigned nonZeroLanes, F energy) {
  uint64_t e = energy(w.maskBytes());
  if (nonZeroLanes > 0)
    e += energy(w.slice1Bytes());
  if (nonZeroLanes > w.slice1Lanes)
    e += energy(w.slice2Bytes());
  return e;
}

uint64_t slicedReadEnergyFj(const SlicedWord &w, unsigned nonZeroLanes) {
  return sliced(w, nonZeroLanes, readEnergyFj);
}

uint64_t slicedWriteEnergyFj(const SlicedWord &w, unsigned nonZeroLanes) {
  return sliced(w, nonZeroLanes, writeEnergyFj);
}

} // namespace weft::machine
