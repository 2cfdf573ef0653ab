//===- Reseal.h - Fuzz inputs made to pass the .wfb integrity checks --------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Shared by the .wfb fuzzers: so that mutations reach the structural checks
// (and the simulator) instead of stopping at the checksum, an input gets its
// total-size field and checksum rewritten to match. The unit tests cover the
// checksum and size checks themselves.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TEST_FUZZ_RESEAL_H
#define WEFT_TEST_FUZZ_RESEAL_H

#include "weft/Binary/File.h"

#include <cstdint>
#include <vector>

inline std::vector<uint8_t> reseal(const uint8_t *data, size_t size) {
  std::vector<uint8_t> buf(data, data + size);
  if (buf.size() >= 56) {
    uint64_t total = buf.size();
    for (unsigned i = 0; i < 8; ++i)
      buf[40 + i] = uint8_t(total >> (8 * i));
    uint64_t h = weft::binary::fnv1a64(buf.data(), buf.size() - 8);
    for (unsigned i = 0; i < 8; ++i)
      buf[buf.size() - 8 + i] = uint8_t(h >> (8 * i));
  }
  return buf;
}

#endif // WEFT_TEST_FUZZ_RESEAL_H
