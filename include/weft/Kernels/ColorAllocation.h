//===- ColorAllocation.h - Colors for streams -------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). A router has one route per color, so two streams
// that pass through one PE need different colors. Streams are given with the
// PEs they pass through; the allocator colors the conflict graph within the
// routable colors minus reserved ones, deterministically, and when that is
// impossible says which streams meet where and how many colors it would
// need.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_COLORALLOCATION_H
#define WEFT_KERNELS_COLORALLOCATION_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace weft::conversion {

struct StreamRequest {
  std::string name;
  /// PEs (x, y) whose router carries the stream.
  std::vector<std::pair<int64_t, int64_t>> pes;
  /// A color the stream must have (e.g. fixed by a host port), or -1.
  int64_t fixed = -1;
};

/// Colors for `streams` (one per stream, in order) from [0, routable)
/// without `reserved`. On failure returns std::nullopt and sets `why` to a
/// sentence naming two streams that meet, the PE where they meet, and the
/// number of colors the streams would need.
std::optional<std::vector<int64_t>>
allocateColors(const std::vector<StreamRequest> &streams, unsigned routable,
               const std::vector<int64_t> &reserved, std::string &why);

} // namespace weft::conversion

#endif // WEFT_KERNELS_COLORALLOCATION_H
