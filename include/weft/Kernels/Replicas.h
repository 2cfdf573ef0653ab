//===- Replicas.h - Copies of a pipeline on one fabric ----------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). A network on a fabric taller than it needs can run
// several copies of itself, each on its own band of rows and fed its own
// samples through its own host ports (docs/execution-model.md,
// "Replicas"). This header decides how many copies there are and how each
// is partitioned (chooseReplicas), where they go (stackReplicas), and how
// samples are dealt to them: sample i goes to copy i mod N and comes back
// in that order.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_REPLICAS_H
#define WEFT_KERNELS_REPLICAS_H

#include "weft/Kernels/ChainPartition.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::conversion {

/// How many copies of a network share a fabric, and one copy's layout.
struct ReplicaChoice {
  /// Copies in all: `columns` side by side in each of copies / columns
  /// bands of rows.
  int64_t copies = 1, columns = 1;
  /// The columns one copy's layout uses (copy k of a band starts at
  /// column k * copyColumns).
  int64_t copyColumns = 1;
  /// The rows each copy was partitioned for (floor(H / copies) when the
  /// count was given), and the rows its layout uses (at most bandRows).
  int64_t bandRows = 1, copyRows = 1;
  /// One copy's layout, on a fabric of bandRows rows.
  ChainMapping mapping;
  /// The same for one copy on the whole fabric (auto only, for the
  /// comparison `weftc` prints): its bottleneck, 0 when it does not fit.
  int64_t singleBottleneck = 0;
  /// Bands considered (auto) and bands on which the network fits.
  int64_t bandsTried = 0, bandsFitting = 0;
};

/// The copies of `net` on `target`: with `copies` given, that many, each
/// partitioned (partitionNetwork) for floor(H / copies) of the H rows;
/// without (auto), for every count N of copies the band of floor(H / N)
/// rows, the layout there, and floor(H / rows it uses) copies of it: the
/// choice with the most predicted samples per cycle (copies / bottleneck),
/// ties broken by fewer copies; `maxCopies` (0: no limit) bounds auto's
/// count (more copies than a run has samples only idle). Auto also puts
/// copies side by side in a band, as many as the columns one copy's layout
/// uses fit, at most `maxColumns` (0: no limit; the colors bound it: a PE
/// carries the host streams of the band's other copies too). Fails, setting
/// `why` to a sentence with the numbers, when a count is below 1, when the
/// bands are thinner than a row, or when the network fits no band.
std::optional<ReplicaChoice>
chooseReplicas(const NetworkShape &net, Precision precision,
               const machine::Target &target, std::optional<int64_t> copies,
               std::string &why, int64_t maxCopies = 0, int64_t maxColumns = 0);

/// The first rows of `copies` copies of `copyRows` rows each stacked from
/// row 0 of a fabric of `gridRows` rows (copy k at k * copyRows). Fails,
/// setting `why` to a sentence with the numbers, when they do not fit or a
/// count is below 1.
std::optional<std::vector<int64_t>> stackReplicas(int64_t copyRows,
                                                  int64_t gridRows,
                                                  int64_t copies,
                                                  std::string &why);

/// The copy that runs sample `sample` of a run dealt round robin to
/// `copies` copies.
inline int64_t replicaOfSample(int64_t sample, int64_t copies) {
  return sample % copies;
}

/// The samples copy `copy` runs when `samples` are dealt round robin to
/// `copies` copies: ceil((samples - copy) / copies), 0 when copy >= samples.
inline int64_t samplesOfReplica(int64_t copy, int64_t samples, int64_t copies) {
  return copy >= samples ? 0 : (samples - copy + copies - 1) / copies;
}

} // namespace weft::conversion

#endif // WEFT_KERNELS_REPLICAS_H
