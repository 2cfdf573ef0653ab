//===- Heatmap.h - Per-PE figures of a program and its run ------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The heatmaps of docs/report.md: one figure per PE, computed from a binary
// (where its groups sit, what their memories hold, which colors their routers
// route) and, for the kinds that need a run, the simulator's per-PE
// statistics. `weft-sim --heatmaps`, `weftc run --report` and the Python
// package's `Program.heatmap` all compute them here.
//
//   const report::HeatmapKind *kind = report::findHeatmapKind("busy");
//   report::Grid busy = report::computeHeatmap(*kind, program, &stats.pes);
//   int64_t v = busy.at(x, y);
//
// Plain C++: no MLIR, no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_REPORT_HEATMAP_H
#define WEFT_REPORT_HEATMAP_H

#include "weft/Binary/Binary.h"
#include "weft/Sim/Simulator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace weft::report {

/// One figure per PE of a `width` x `height` fabric, row-major (y, then x).
struct Grid {
  uint32_t width = 0, height = 0;
  std::vector<int64_t> values;

  Grid() = default;
  Grid(uint32_t width, uint32_t height, int64_t fill)
      : width(width), height(height), values(size_t(width) * height, fill) {}
  int64_t &at(uint32_t x, uint32_t y) { return values[size_t(y) * width + x]; }
  int64_t at(uint32_t x, uint32_t y) const {
    return values[size_t(y) * width + x];
  }
};

/// A kind of heatmap.
struct HeatmapKind {
  const char *name;
  /// What a PE's value counts, as a phrase.
  const char *description;
  /// Whether the value comes from a run's statistics (else from the binary).
  bool needsRun;
  /// Whether the values name things (kernel indices) rather than count:
  /// drawn with distinct colors from 0 up, negative values (none) in the
  /// zero color.
  bool categorical;
  /// The value of a PE that no group covers.
  int64_t unused;
};

/// Every kind, in the order the tools list them.
const std::vector<HeatmapKind> &heatmapKinds();
/// The kind named `name`, or nullptr.
const HeatmapKind *findHeatmapKind(const std::string &name);
/// "busy, ce_busy, ...": the kinds' names for messages.
std::string heatmapKindNames();

/// The heatmap of `kind` for `program`. Kinds that need a run read `pes`
/// (the simulator's Stats::pes; entries outside the grid are ignored) and
/// must get it; the others ignore it. PEs no group covers hold
/// `kind.unused`.
Grid computeHeatmap(const HeatmapKind &kind, const binary::Program &program,
                    const std::vector<sim::PeStats> *pes);

/// Per PE, the index in `program.groups` of the group that covers it, or -1.
Grid groupIndex(const binary::Program &program);

/// The distinct colors the routes of `image` set, in increasing order.
std::vector<uint8_t> routedColors(const binary::CodeImage &image);

/// One route as a phrase for a PE's hover text: "3: west -> east, ramp"
/// (a positioned route adds "(4 positions)").
std::string describeRoute(const binary::Route &route);

/// Bytes of PE memory a group's binary initialises on each of its PEs: its
/// image's segments and its share of the per-PE segments.
int64_t memoryBytes(const binary::Program &program, const binary::Group &group);

/// A kernel's place on the fabric: a connected set of PEs that run the same
/// layer, as its bounding rectangle.
struct KernelRect {
  int32_t layer = -1;
  uint32_t x = 0, y = 0, width = 0, height = 0;
};

/// The rectangles of every layer's kernels: the bounding boxes of the
/// 4-connected regions of PEs whose groups belong to one layer, ordered by
/// layer, then top-left corner. A layer laid out several times (replicas)
/// has one rectangle per copy.
std::vector<KernelRect> kernelRects(const binary::Program &program);

} // namespace weft::report

#endif // WEFT_REPORT_HEATMAP_H
