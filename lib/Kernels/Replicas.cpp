//===- Replicas.cpp - Copies of a pipeline on one fabric ------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/Replicas.h"

#include <algorithm>

using namespace weft::conversion;
using weft::machine::Target;

/// The rows a layout uses: its rectangles' footprints and its streams'
/// rows (the host ports among them).
static int64_t rowsUsed(const ChainMapping &m) {
  int64_t rows = std::max<int64_t>(1, m.height);
  for (int64_t r : m.streamRows)
    rows = std::max(rows, r);
  return std::max({rows, m.inputRows, m.outputRows});
}

/// `target` with `rows` rows.
static std::optional<Target> withRows(const Target &target, int64_t rows) {
  weft::machine::TargetConfig c = target.config();
  c.height = unsigned(rows);
  return Target::create(c);
}

std::optional<ReplicaChoice> weft::conversion::chooseReplicas(
    const NetworkShape &net, Precision precision, const Target &target,
    std::optional<int64_t> copies, std::string &why, int64_t maxCopies,
    int64_t maxColumns) {
  const int64_t H = int64_t(target.height());
  if (copies) {
    if (*copies < 1) {
      why = "the number of copies must be at least 1, not " +
            std::to_string(*copies);
      return std::nullopt;
    }
    ReplicaChoice c;
    c.copies = *copies;
    c.bandRows = H / *copies;
    if (c.bandRows < 1) {
      why = std::to_string(*copies) +
            " copies need at least one row each, "
            "but the fabric has " +
            std::to_string(H) + " rows";
      return std::nullopt;
    }
    std::optional<Target> band = withRows(target, c.bandRows);
    std::string reason;
    std::optional<ChainMapping> m =
        band ? partitionNetwork(net, precision, *band, reason) : std::nullopt;
    if (!m) {
      why = std::to_string(*copies) + " copies get " +
            std::to_string(c.bandRows) + " of the fabric's " +
            std::to_string(H) + " rows each, and one copy does not fit " +
            std::to_string(target.width()) + "x" + std::to_string(c.bandRows) +
            (reason.empty() ? std::string() : ": " + reason);
      return std::nullopt;
    }
    c.mapping = std::move(*m);
    c.copyRows = rowsUsed(c.mapping);
    c.copyColumns = std::max<int64_t>(1, c.mapping.width);
    return c;
  }

  // Auto: every count N of copies, on bands of floor(H / N) rows (each
  // distinct band once, tallest first).
  std::optional<ReplicaChoice> best;
  std::string firstWhy;
  int64_t tried = 0, fitting = 0, single = 0;
  // At most `most` copies in all, so at most that many bands.
  const int64_t most = maxCopies > 0 ? maxCopies : INT64_MAX;
  for (int64_t n = 1, last = 0; n <= std::min(H, most); ++n) {
    int64_t b = H / n;
    if (b == last)
      continue;
    last = b;
    ++tried;
    std::optional<Target> band = withRows(target, b);
    std::string reason;
    std::optional<ChainMapping> m =
        band ? partitionNetwork(net, precision, *band, reason) : std::nullopt;
    if (!m) {
      if (firstWhy.empty())
        firstWhy = reason;
      continue;
    }
    ++fitting;
    if (n == 1)
      single = m->bottleneckCycles;
    ReplicaChoice c;
    c.bandRows = b;
    c.copyRows = rowsUsed(*m);
    c.copyColumns = std::max<int64_t>(1, m->width);
    // Side by side as the width allows (and the colors: maxColumns), then
    // as many bands of rows as fit, within `most` copies in all.
    c.columns = std::min(int64_t(target.width()) / c.copyColumns, most);
    if (maxColumns > 0)
      c.columns = std::min(c.columns, maxColumns);
    c.columns = std::max<int64_t>(1, c.columns);
    c.copies = c.columns * std::min(H / c.copyRows, most / c.columns);
    c.mapping = std::move(*m);
    // More samples per cycle: copies / bottleneck, compared exactly.
    int64_t t = std::max<int64_t>(1, c.mapping.bottleneckCycles);
    if (!best ||
        c.copies * std::max<int64_t>(1, best->mapping.bottleneckCycles) >
            best->copies * t)
      best = std::move(c);
  }
  if (!best) {
    why = "the network fits no band of the " + std::to_string(target.width()) +
          "x" + std::to_string(H) + " fabric" +
          (firstWhy.empty() ? std::string() : ": " + firstWhy);
    return std::nullopt;
  }
  best->singleBottleneck = single;
  best->bandsTried = tried;
  best->bandsFitting = fitting;
  return best;
}

std::optional<std::vector<int64_t>>
weft::conversion::stackReplicas(int64_t copyRows, int64_t gridRows,
                                int64_t copies, std::string &why) {
  if (copies < 1) {
    why = "the number of copies must be at least 1, not " +
          std::to_string(copies);
    return std::nullopt;
  }
  if (copyRows < 1 || copies > gridRows / copyRows) {
    why = std::to_string(copies) + " copies of " + std::to_string(copyRows) +
          (copyRows == 1 ? " row" : " rows") + " need " +
          (copyRows > 0 && copies > INT64_MAX / copyRows
               ? std::string("more")
               : std::to_string(copies * copyRows)) +
          " rows, but the fabric has " + std::to_string(gridRows);
    return std::nullopt;
  }
  std::vector<int64_t> rows;
  for (int64_t k = 0; k < copies; ++k)
    rows.push_back(k * copyRows);
  return rows;
}
