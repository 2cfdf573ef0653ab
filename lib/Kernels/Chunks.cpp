//===- Chunks.cpp - Vectors cut into row chunks ---------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/Chunks.h"

#include <algorithm>

namespace weft::conversion {

int64_t chunkBegin(int64_t n, int64_t parts, int64_t i) {
  int64_t l = (n + parts - 1) / parts;
  return std::min(n, i * l);
}

int64_t chunkSize(int64_t n, int64_t parts, int64_t i) {
  return chunkBegin(n, parts, i + 1) - chunkBegin(n, parts, i);
}

} // namespace weft::conversion
