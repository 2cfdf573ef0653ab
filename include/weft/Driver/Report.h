//===- Report.h - The report page of a compiled model's run -----*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// What `weftc run --report` and the Python package's `Program.report` share:
// the simulator's per-PE statistics read back from its JSON, and the inputs
// of the report page (include/weft/Report/Html.h) from a compile's figures
// and a run's.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_DRIVER_REPORT_H
#define WEFT_DRIVER_REPORT_H

#include "weft/Driver/Driver.h"
#include "weft/Report/Html.h"
#include "weft/Sim/Simulator.h"

#include "llvm/Support/JSON.h"

#include <vector>

namespace weft::driver {

/// The per-PE statistics of the simulator's statistics JSON (its "pes"
/// array, docs/simulator.md, "Statistics"); entries that are not objects are
/// skipped.
std::vector<sim::PeStats> readPeStats(const llvm::json::Object *stats);

/// One entry of the "pes" array.
sim::PeStats readPeStat(const llvm::json::Object &pe);

/// The simulator's statistics JSON split at its "pes" array, so that the
/// per-PE entries (most of a large fabric's file) are parsed one at a time
/// rather than held as one tree: the top-level object without "pes", and
/// the text of each entry of "pes" (views into the text given).
struct SplitStatistics {
  llvm::json::Object top;
  bool hasPes = false;
  std::vector<llvm::StringRef> pes;
};

/// Splits the statistics `text`, which must outlive the result; fails on
/// text that is not one JSON object (the entries are checked when parsed).
llvm::Expected<SplitStatistics> splitStatistics(llvm::StringRef text);

/// Parses each entry of `split.pes` in turn: the per-PE statistics, entries
/// that are not objects skipped.
llvm::Expected<std::vector<sim::PeStats>>
readPeStats(const SplitStatistics &split);

/// Writes `split` as `llvm::json` prints the whole object with an indent
/// of 2 (keys sorted), parsing the entries of "pes" one at a time.
llvm::Error writeStatistics(llvm::raw_ostream &os,
                            const SplitStatistics &split);

/// The report page's inputs for a run of `program` with `samples` samples:
/// the run's figures, one table row per layer (its predicted cycles from
/// `compiled` when `fromCompile`, its simulated pace from
/// `figures.busiest`) and the per-PE statistics `pes`, which must outlive
/// the result.
report::ReportInput reportInput(const binary::Program &program,
                                const CompiledModel &compiled, bool fromCompile,
                                const RunFigures &figures,
                                const std::vector<sim::PeStats> &pes,
                                int64_t samples);

} // namespace weft::driver

#endif // WEFT_DRIVER_REPORT_H
