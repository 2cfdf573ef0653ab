//===- Chunks.h - Vectors cut into row chunks -------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). How every kernel cuts a vector over PEs: n elements
// in `parts` chunks of ceil(n / parts), the last ones shorter (possibly
// empty, which the mappings refuse).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_CHUNKS_H
#define WEFT_KERNELS_CHUNKS_H

#include <cstdint>

namespace weft::conversion {

/// n elements cut into `rows` chunks of ceil(n / rows), chunk r on fabric
/// row y0 + r (the I/O map's and the dense layer's chunking).
struct RowChunks {
  int64_t n = 0, rows = 1, y0 = 0;
};

/// Chunk sizes: elements of chunk `i` when `n` elements are cut into
/// `parts` chunks of ceil(n / parts), and the index of its first element.
int64_t chunkSize(int64_t n, int64_t parts, int64_t i);
int64_t chunkBegin(int64_t n, int64_t parts, int64_t i);

/// A feature map of `pixels` pixels a channel cut into chunks of `lk`
/// elements of whole channels, each pixel-major (docs/execution-model.md,
/// "Feature-map streams"): the index in the model's channel-major sample
/// of element t of chunk c.
inline int64_t featureMapIndex(int64_t c, int64_t lk, int64_t pixels,
                               int64_t t) {
  int64_t lc = lk / pixels;
  return (c * lc + t % lc) * pixels + t / lc;
}

} // namespace weft::conversion

#endif // WEFT_KERNELS_CHUNKS_H
