//===- DepthwiseMapping.h - A grouped convolution's cost -------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). A grouped convolution of one sample (ConvShape with
// groups > 1; depthwise when every group has one input channel) laid out
// like a pooling (docs/execution-model.md, "Depthwise convolution"): one
// column of R rows, R dividing the groups, row r holding groups
// [r G/R, (r + 1) G/R) — their input channels (a chunk of the feature-map
// stream), their weights (stationary) and their output channels (the chunk
// it sends). Every PE keeps a line buffer of the input rows its windows need
// (the convolution's schedule, weft/Kernels/ConvMapping.h) and computes one
// output row at a time into one of two output buffers: the bias broadcast
// (or zeros), then per kernel row inside the input and per input channel k
// of a group one 4-D multiply-accumulate over (groups, channel multiplier,
// output columns, window columns), then the ReLU (or ReLU6) and the row's
// send.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_DEPTHWISEMAPPING_H
#define WEFT_KERNELS_DEPTHWISEMAPPING_H

#include "weft/Kernels/ConvMapping.h"

#include <cstdint>
#include <string>

namespace weft::conversion {

/// Groups, input channels and output channels per PE on `rows` rows.
inline int64_t depthwiseGroups(const ConvShape &s, int64_t rows) {
  return s.groups / rows;
}
inline int64_t depthwiseLc(const ConvShape &s, int64_t rows) {
  return s.cin / rows;
}
inline int64_t depthwiseLo(const ConvShape &s, int64_t rows) {
  return s.cout / rows;
}

/// The per-sample schedule: the convolution's (receive every input row
/// into its line-buffer slot, compute each output row from the window rows
/// inside the input); the two output buffers alternate by output row, so
/// it unrolls two samples when the output rows are odd.
ConvSchedule depthwiseSchedule(const ConvShape &s);

/// Why `rows` rows cannot run `s` on PEs of `memoryBytes` (not a grouped
/// convolution, rows that do not divide the groups, a descriptor dimension
/// or stride out of range, the program or memory too large), or an empty
/// string.
std::string depthwiseMappingProblem(const ConvShape &s, int64_t rows,
                                    int64_t memoryBytes,
                                    Precision p = Precision::FP32);

/// Instructions of the straight-line per-sample program (unrolled).
int64_t depthwiseProgramInstructions(const ConvShape &s, int64_t rows);

/// In mixed precision (`p`; docs/execution-model.md, "Depthwise
/// convolution", "Mixed precision") the weights and the line buffer hold
/// fp16, a row is received with `ff2h` and the multiply-accumulate is an
/// `fmachs`, four groups a cycle; the output buffers, bias and sends stay
/// fp32.
///
/// The cost model: steady-state cycles per sample of a PE
/// (docs/execution-model.md, "Depthwise convolution"): the program's
/// instructions with the ISA's costs, plus the cycles the sends of the
/// output rows (on a microthread) cannot find in the main thread's gaps.
int64_t predictDepthwiseCycles(const ConvShape &s, int64_t rows,
                               Precision p = Precision::FP32);

/// The PE memory map (word addresses): code after the task table, the
/// records, then weights, line buffer, bias, the two output buffers and
/// the clipped ReLU's bound.
struct DepthwiseMemoryMap {
  int64_t code = 0, records = 0, weights = 0, ring = 0, bias = 0, outBuf = 0,
          clip = 0, epilogue = 0, end = 0;
  int64_t numRecords = 0;
};
DepthwiseMemoryMap depthwiseMemoryMap(const ConvShape &s, int64_t rows,
                                      Precision p = Precision::FP32);

/// Bytes of PE memory a PE needs.
int64_t depthwiseMemoryPerPE(const ConvShape &s, int64_t rows,
                             Precision p = Precision::FP32);

/// A depthwise (grouped) convolution cut into `tiles` bands of output
/// columns (convTiles), each band a column of its own running the program
/// of its band's convolution (docs/execution-model.md, "Depthwise
/// convolution", "Bands"): why it cannot run (the first band that cannot,
/// or no such cut), its cycles per sample (the slowest band, or the input
/// or output lane, one wavelet a cycle, when that is slower) and the most
/// PE memory of a band. tiles = 1 is the kernel above.
std::string depthwiseBandsProblem(const ConvShape &s, int64_t rows,
                                  int64_t tiles, int64_t memoryBytes,
                                  Precision p = Precision::FP32);
int64_t predictDepthwiseBandsCycles(const ConvShape &s, int64_t rows,
                                    int64_t tiles,
                                    Precision p = Precision::FP32);
int64_t depthwiseBandsMemoryPerPE(const ConvShape &s, int64_t rows,
                                  int64_t tiles,
                                  Precision p = Precision::FP32);

} // namespace weft::conversion

#endif // WEFT_KERNELS_DEPTHWISEMAPPING_H
