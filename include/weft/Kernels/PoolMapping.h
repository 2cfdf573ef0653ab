//===- PoolMapping.h - A pooling's layout, program and cost -----*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). A 2-D max or average pooling of one sample (1-D
// pools are 2-D ones of height 1; GlobalMaxPool and GlobalAveragePool are
// pools whose window is the whole map) laid out like a column kernel
// (docs/execution-model.md, "Pooling"): one column of R rows, row r pooling
// channel chunk r of the feature-map stream. Every PE keeps a line buffer of
// the input rows its windows need (the convolution's schedule,
// weft/Kernels/ConvMapping.h) and computes one output row at a time with
// one 4-D max or add per window row; the schedule is computed here once,
// the emitter writes it and the cost model counts it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_POOLMAPPING_H
#define WEFT_KERNELS_POOLMAPPING_H

#include "weft/Kernels/ConvMapping.h"

#include <cstdint>
#include <string>
#include <vector>

namespace weft::conversion {

/// The geometry of a pooling of one sample: `c` x `hin` x `win` input, a
/// `kh` x `kw` window with strides, dilations and ONNX's pads (top, left,
/// bottom, right) and ceil_mode; an average divides by the window positions
/// inside the input, or (`includePad`) inside the explicitly padded input
/// (positions that only ceil_mode reaches never count, as in ONNX).
struct PoolShape {
  bool max = true;
  int64_t c = 1, hin = 1, win = 1, kh = 1, kw = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  bool ceil = false, includePad = false;

  int64_t hout() const { return outSize(hin, kh, sh, dh, pt, pb); }
  int64_t wout() const { return outSize(win, kw, sw, dw, pl, pr); }
  /// The bottom and right pads the windows read: ONNX's, or more when
  /// ceil_mode's last window reaches past them.
  int64_t padBottom() const { return padEnd(hin, kh, sh, dh, pt, pb); }
  int64_t padRight() const { return padEnd(win, kw, sw, dw, pl, pr); }
  int64_t inElements() const { return c * hin * win; }
  int64_t outElements() const { return c * hout() * wout(); }
  /// The window is the whole map (GlobalMaxPool, GlobalAveragePool).
  bool global() const {
    return kh == hin && kw == win && pt == 0 && pl == 0 && pb == 0 &&
           pr == 0 && dh == 1 && dw == 1;
  }
  /// An average's divisor along each axis for output row `oh` / column
  /// `ow`, and for the output pixel (their product).
  int64_t rowCount(int64_t oh) const;
  int64_t colCount(int64_t ow) const;
  /// The window as a convolution's (channels in and out = c, the pads the
  /// windows read): its schedule and checks are the convolution's.
  ConvShape window() const;
  /// An empty string when the shape is valid, else a sentence.
  std::string check() const;

private:
  int64_t outSize(int64_t in, int64_t k, int64_t s, int64_t d, int64_t lo,
                  int64_t hi) const;
  int64_t padEnd(int64_t in, int64_t k, int64_t s, int64_t d, int64_t lo,
                 int64_t hi) const;
};

/// One step of a pooling PE's per-sample program: receive an input row into
/// a line-buffer slot, or combine window rows (from `slots`) into the output
/// row's accumulator; `begin` first resets it (to -inf or 0), `end` then
/// finishes the row (an average's scaling) and sends it.
struct PoolStep {
  bool receive = false;
  int64_t row = 0;  ///< input row (receive) or output row (compute)
  int64_t slot = 0; ///< receive: the slot written
  std::vector<int64_t> slots;
  bool begin = true, end = true;
};

struct PoolSchedule {
  int64_t ringRows = 1;
  /// Padded row width in pixels (the convolution's).
  int64_t paddedWidth = 1;
  /// The window's width and output columns a compute step covers (a global
  /// pool adds every received row into its one output pixel: the row's
  /// width).
  int64_t wo = 1, kw = 1;
  std::vector<PoolStep> steps;
  /// Samples the program unrolls (2 when the output rows are odd: the two
  /// output buffers alternate by output row).
  int64_t unroll = 1;
};

PoolSchedule poolSchedule(const PoolShape &s);

/// The distinct row divisors of an average (the factor vectors the PE
/// keeps, one per entry) and, per output row, its entry.
std::vector<int64_t> poolRowCounts(const PoolShape &s,
                                   std::vector<int64_t> *indexOfRow = nullptr);

/// Channels per PE on `rows` rows.
inline int64_t poolLc(const PoolShape &s, int64_t rows) { return s.c / rows; }

/// Why `rows` rows cannot run `s` on PEs of `memoryBytes` (rows that do not
/// divide the channels, a descriptor dimension or stride out of range, the
/// program or memory too large), or an empty string.
std::string poolMappingProblem(const PoolShape &s, int64_t rows,
                               int64_t memoryBytes);

/// Instructions of the straight-line per-sample program (unrolled).
int64_t poolProgramInstructions(const PoolShape &s, int64_t rows);

/// The cost model: steady-state cycles per sample (docs/execution-model.md,
/// "Pooling").
int64_t predictPoolCycles(const PoolShape &s, int64_t rows);

/// The PE memory map of a pooling PE (word addresses).
struct PoolMemoryMap {
  int64_t code = 0, records = 0, ring = 0, outBuf = 0, factors = 0, ninf = 0,
          end = 0;
  int64_t numRecords = 0;
};
PoolMemoryMap poolMemoryMap(const PoolShape &s, int64_t rows);

/// Bytes of PE memory a pooling PE needs.
int64_t poolMemoryPerPE(const PoolShape &s, int64_t rows);

/// A max pool cut into `tiles` bands of output columns, a column of `rows`
/// PEs each (docs/execution-model.md, "Pooling", "Bands"): the bands of
/// its window (convTiles), each a pool of its own (its input columns, the
/// pads it reads, ceil_mode resolved into them), in order; empty when
/// `tiles` does not cut the output columns, for an average or a global
/// pool (a band's divisors would need the whole row's pads).
std::vector<PoolShape> poolBands(const PoolShape &s, int64_t tiles);
/// Why `tiles` bands cannot run (the first band that cannot), or "".
std::string poolBandsProblem(const PoolShape &s, int64_t rows, int64_t tiles,
                             int64_t memoryBytes);
/// The slowest band's cycles per sample, or the lanes' (every band's input
/// columns pass one lane a row, every band's results leave on one).
int64_t predictPoolBandsCycles(const PoolShape &s, int64_t rows,
                               int64_t tiles);
int64_t poolBandsMemoryPerPE(const PoolShape &s, int64_t rows, int64_t tiles);
/// The part of predictPoolBandsCycles beyond the busiest band's cycles of
/// work: what the bands wait on their lanes.
int64_t poolBandsLaneWait(const PoolShape &s, int64_t rows, int64_t tiles);

} // namespace weft::conversion

#endif // WEFT_KERNELS_POOLMAPPING_H
