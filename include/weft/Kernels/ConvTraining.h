//===- ConvTraining.h - A trained convolution's PEs -------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). A convolution trained on its inference layout
// (docs/training.md, "Convolutions"): S columns of input-channel chunks by
// R rows of output-channel chunks, Lk and Lm channels a PE, one band, no
// merged lanes. What the emitter (EmitTrainedConv.cpp), the partitioner and
// the host's readback share: the memory map (one map for every PE of the
// layer, so a weight's word does not depend on the PE's role), where each
// weight and bias lives, the limits of the descriptors, and the cost.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_CONVTRAINING_H
#define WEFT_KERNELS_CONVTRAINING_H

#include "weft/Kernels/ConvMapping.h"
#include "weft/Kernels/DenseTraining.h"
#include "weft/Kernels/PoolMapping.h"

#include <cstdint>
#include <string>
#include <vector>

namespace weft::conversion {

/// Word addresses of a trained convolution's PE; -1 for a buffer the layer
/// does not have. fp32 throughout (two words an element).
struct TrainedConvMap {
  /// Channels a PE.
  int64_t lk = 1, lm = 1;
  /// A stored input row: `paddedWidth` pixels of Lk channels, the pads
  /// zero (never written); `hin` of them from `x`.
  int64_t paddedWidth = 1;
  /// A gradient row dY[oh] (Lm channels a pixel): `dyLeft` zero pixels, the
  /// wout pixels, `dyRight` zero pixels; `dyPitch` elements a row. The
  /// zeros are the reach of the input gradient's window (none without an
  /// input gradient).
  int64_t dyLeft = 0, dyRight = 0, dyPitch = 0;
  /// Strided input gradients (sw > 1): the gradient rows upsampled, dY[ow]
  /// at pixel upLeft + ow sw of a row of upPitch elements, zeros between
  /// and around (the window's reach), from `dyu`; the rows above stay
  /// compact. -1 / 0 otherwise.
  int64_t dyu = -1, upLeft = 0, upPitch = 0;
  /// The code's words after the task table, the first record's word and
  /// the records' number (4 words each).
  int64_t code = 0, records = 0, numRecords = 0;
  int64_t w = -1, g = -1, x = -1, acc = -1, bias = -1, gb = -1, y = -1,
          dy = -1, mask = -1, zero = -1, dx = -1;
  /// The first word after the data.
  int64_t end = 0;
};

/// The map of every PE of `s` trained under `m` and `t`.
TrainedConvMap trainedConvMap(const ConvShape &s, const DenseMapping &m,
                              const DenseTraining &t);

/// Kernel rows of output row `oh` whose input row lies inside the input
/// (the others read the zero pads and are skipped).
std::vector<int64_t> trainedConvTaps(const ConvShape &s, int64_t oh);

/// Kernel rows i for which input row `h` is read by an output row
/// (oh sh = h + pt - i dh, oh in [0, hout)): the input gradient's taps of
/// row h.
std::vector<int64_t> trainedConvInputTaps(const ConvShape &s, int64_t h);

/// An upper bound of the instructions of a PE's program (the setup and the
/// straight-line per-sample loop); the emitter checks it.
int64_t trainedConvInstructions(const ConvShape &s, const DenseMapping &m,
                                const DenseTraining &t);

/// Why `m` cannot train `s` under `t` (grouped, banded or merged layouts,
/// a fused activation other than ReLU, a pipelined schedule, a descriptor
/// dimension, stride or vector length out of range, records out of a DSR
/// load's reach), or "".
std::string trainedConvLimits(const ConvShape &s, const DenseMapping &m,
                              const DenseTraining &t);

/// Bytes of memory a PE needs (code, records and data).
int64_t trainedConvBytes(const ConvShape &s, const DenseMapping &m,
                         const DenseTraining &t);

/// W[o][ci][i][j] (ONNX's OIHW) and b[o] (on the first column).
WordPlace trainedConvWeightPlace(const ConvShape &s, const DenseMapping &m,
                                 const DenseTraining &t, int64_t o, int64_t ci,
                                 int64_t i, int64_t j);
WordPlace trainedConvBiasPlace(const ConvShape &s, const DenseMapping &m,
                               const DenseTraining &t, int64_t o);

/// CE cycles per sample of the busiest PE (the last column's): the
/// receives and forward, the gradient rows, the input gradient and its
/// reduction, the chain pass and the updates (MBGD's spread over its
/// samples), a record load a cycle.
int64_t predictTrainedConvCycles(const ConvShape &s, const DenseMapping &m,
                                 const DenseTraining &t);

/// A trained max pool (docs/training.md, "A trained max pool"): a column
/// of `rows` PEs, Lc = c / rows channels each, that keeps its input and
/// output rows for the backward pass. Word addresses (fp32, two words an
/// element).
struct TrainedPoolMap {
  int64_t lc = 1;
  int64_t code = 0, records = 0, numRecords = 0;
  int64_t x = -1, y = -1, dy = -1, mask = -1, ninf = -1;
  /// The backward's running maximum of a window (set to NaN where the
  /// window's first maximum was found), a scratch row, and the NaN word.
  int64_t ytmp = -1, scratch = -1, nan = -1;
  int64_t end = 0;
};

TrainedPoolMap trainedPoolMap(const PoolShape &s, int64_t rows);

/// Why a column of `rows` PEs cannot train `s` (an average, windows that
/// overlap, leave gaps or reach into pads, rows that do not divide the
/// channels or the map, a descriptor out of range), or "".
std::string trainedPoolLimits(const PoolShape &s, int64_t rows);

/// An upper bound of a PE's instructions (EmitTrainedPool.cpp checks it).
int64_t trainedPoolInstructions(const PoolShape &s);

/// A residual block's trained Add (EmitTrainedJoin.cpp): chunks of `L`
/// elements taken in `rows` rows of each input; word addresses.
struct TrainedJoinMap {
  int64_t code = 0, records = 0, numRecords = 0;
  int64_t a = 0, b = 0, y = 0, dy = 0, zero = 0, end = 0;
};
TrainedJoinMap trainedJoinMap(int64_t L, int64_t rows);
/// Bytes of memory a PE of it needs.
int64_t trainedJoinBytes(int64_t L, int64_t rows);

/// Bytes of memory a PE needs.
int64_t trainedPoolBytes(const PoolShape &s, int64_t rows);

/// CE cycles per sample of a PE: the forward (the receives, the window
/// rows' maxima, the sends) and the backward (the gradient rows, a mask,
/// a select and a send per input row).
int64_t predictTrainedPoolCycles(const PoolShape &s, int64_t rows);

} // namespace weft::conversion

#endif // WEFT_KERNELS_CONVTRAINING_H
