//===- Html.h - The report page of a run ------------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// One self-contained HTML page about a program and its run (docs/report.md):
// the fabric drawn to scale on a canvas with each kernel's rectangle labelled,
// a heatmap of any kind of include/weft/Report/Heatmap.h chosen from a list,
// a PE's figures, routes and colors on hover, the per-layer table of
// predicted and simulated cycles per sample, the run's figures and a link to
// its Chrome trace. The data is embedded as JSON; the page loads nothing
// from the network. `weftc run --report` and the Python package's
// `Program.report` write it.
//
// The bytes depend only on the inputs.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_REPORT_HTML_H
#define WEFT_REPORT_HTML_H

#include "weft/Binary/Binary.h"
#include "weft/Sim/Simulator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace weft::report {

/// One row of the per-layer table.
struct KernelRow {
  std::string name;
  /// What the kernel computes ("dense 64 -> 48"), or empty.
  std::string what;
  /// PEs the layer's groups cover.
  int64_t pes = 0;
  /// Cycles per sample: the cost model's prediction and the simulated pace
  /// of the layer's busiest PE (driver::RunFigures::busiest), and that PE's
  /// CE-busy cycles; negative when unknown.
  double predicted = -1, simulated = -1, ceBusy = -1;
};

/// The run's figures (docs/performance.md, "Definitions"); negative when
/// unknown.
struct RunSummary {
  int64_t samples = 0, cycles = 0, latency = 0;
  /// The median interval between samples (0 with fewer than two), and the
  /// cycles one sample takes (that interval, else the latency).
  double steadyCycles = 0, cyclesPerSample = 0;
  int64_t predictedCycles = -1;
  int64_t macsPerSample = -1, executedMacsPerSample = -1;
  double utilization = -1, executedUtilization = -1;
  /// "fp32" or "mixed", or empty.
  std::string precision;
};

/// What the page shows.
struct ReportInput {
  const binary::Program *program = nullptr;
  /// The run's per-PE statistics (sim::Stats::pes).
  const std::vector<sim::PeStats> *pes = nullptr;
  RunSummary summary;
  std::vector<KernelRow> kernels;
  /// Where the Chrome trace of the run is, as the page should link it
  /// (relative to the page, or absolute); empty for none.
  std::string traceLink;
};

/// The page.
std::string renderReport(const ReportInput &input);

/// `target` as a link from a page written at `page`: the path from the
/// page's directory to it (both made absolute first), percent-encoded.
std::string linkFrom(const std::string &page, const std::string &target);

} // namespace weft::report

#endif // WEFT_REPORT_HTML_H
