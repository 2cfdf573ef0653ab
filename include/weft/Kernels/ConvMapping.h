//===- ConvMapping.h - A convolution's layout, program and cost -*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). A 2-D convolution y = act(conv(x, W) + b) of one
// sample (1-D convolutions are 2-D ones of height 1) laid out on the fabric
// like a dense layer (docs/execution-model.md, "Convolution"): S columns of
// input-channel chunks by R rows of output-channel chunks. Feature maps
// stream row by row, pixel-major within a row chunk; every PE keeps a line
// buffer of the input rows its window needs and computes one output row at
// a time with one 4-D multiply-accumulate per kernel row. The schedule of
// that program (which rows are received, which output rows computed from
// which line-buffer slots) is computed here once; the emitter writes it and
// the cost model counts it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_CONVMAPPING_H
#define WEFT_KERNELS_CONVMAPPING_H

#include "weft/Kernels/DenseMapping.h"
#include "weft/Machine/Target.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::conversion {

/// The geometry of a convolution of one sample: `cin` x `hin` x `win`
/// input, `cout` output channels, a `kh` x `kw` window with strides,
/// dilations and pads (top, left, bottom, right), and `groups`: input
/// channels [g cin/groups, (g + 1) cin/groups) feed only output channels
/// [g cout/groups, (g + 1) cout/groups) (ONNX's Conv `group`).
struct ConvShape {
  int64_t cin = 1, hin = 1, win = 1, cout = 1, kh = 1, kw = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t groups = 1;
  bool relu = false, bias = false;
  /// With `relu`: the activation is min(max(x, 0), reluMax) (ReLU6, a
  /// Clip with a lower bound of 0) when set.
  std::optional<float> reluMax;
  /// A fused activation (never with `relu`): an Expression program the PE
  /// that sends an output row applies to it first (weft/Kernels/Epilogue.h;
  /// docs/execution-model.md, "Fused activations"). Empty: none.
  std::vector<float> epilogue;
  /// Frustum chains only (weft/Kernels/FrustumChain.h): the level is a max
  /// pool's window over cin = cout channels, with no weights nor bias.
  /// Nothing else reads it.
  bool maxPool = false;
  /// Frustum chains only: the last level of an identity residual block
  /// (docs/frustum.md, "Residual blocks in bands"): its output row adds the
  /// chain's input row of the same index before its ReLU (`relu` is then
  /// the add's). Nothing else reads it.
  bool skipAdd = false;

  /// A grouped convolution (groups > 1) runs as a column kernel of whole
  /// groups per row (weft/Kernels/DepthwiseMapping.h), not smeared.
  bool grouped() const { return groups > 1; }
  /// One group per input channel: cout = multiplier() x cin.
  bool depthwise() const { return groups > 1 && groups == cin; }
  /// Input and output channels per group.
  int64_t groupIn() const { return cin / groups; }
  int64_t groupOut() const { return cout / groups; }

  int64_t hout() const { return (hin + pt + pb - dh * (kh - 1) - 1) / sh + 1; }
  int64_t wout() const { return (win + pl + pr - dw * (kw - 1) - 1) / sw + 1; }
  int64_t inElements() const { return cin * hin * win; }
  int64_t outElements() const { return cout * hout() * wout(); }
  /// Input row of output row `oh`'s window row `i` (may lie in the pads).
  int64_t inputRow(int64_t oh, int64_t i) const {
    return oh * sh + i * dh - pt;
  }
  /// Multiply-accumulates per sample the model asks for (taps on pads
  /// excluded), and those the fabric executes (whole window rows inside
  /// the input, pad columns included); an output channel reads the
  /// cin / groups input channels of its group.
  int64_t modelMacs() const;
  int64_t executedMacs() const;
  /// An empty string when the shape is valid, else a sentence.
  std::string check() const;
};

/// The program every compute PE of a convolution runs per sample, in
/// order: receive an input row into a line-buffer slot, or compute an
/// output row from the window rows inside the input (kernel row i read from
/// slot `slots[k]` for i = `rows[k]`).
struct ConvStep {
  bool receive = false;
  int64_t row = 0;  ///< input row (receive) or output row (compute)
  int64_t slot = 0; ///< receive: the slot written
  std::vector<int64_t> taps, slots; ///< compute: kernel rows and their slots
  /// Compute: the output row is complete after these taps (else the next
  /// compute step continues it, after a receive).
  bool closeout = true;
};

struct ConvSchedule {
  /// Line-buffer rows: (kh - 1) * dh + 1 (a row is overwritten only when
  /// no later output row needs it).
  int64_t ringRows = 1;
  /// Padded row width in pixels: pl + win + whatever the last window
  /// reaches past the input (zeros, never written).
  int64_t paddedWidth = 1;
  std::vector<ConvStep> steps;
  /// Samples the program unrolls (2 when hout is odd: the last column's
  /// two output buffers alternate by output row).
  int64_t unroll = 1;
};

/// With `lateReceives`, every input row is received just before the
/// first kernel row that reads it, between the multiply-accumulates of an
/// output row (its compute is then split into several steps): the rows
/// are taken off the fabric spread over the output rows' compute, as the
/// producer sends them, instead of two at once at the top of a sample and
/// none while the bottom rows are computed (docs/execution-model.md,
/// "Convolution"). Without it every output row is one step, after the
/// rows its window reads. `minRingRows` keeps at least that many rows in
/// the line buffer (a frustum band's skip reads its input rows later).
ConvSchedule convSchedule(const ConvShape &s, bool lateReceives = false,
                          int64_t minRingRows = 0);

/// One band of output columns of a convolution cut into bands
/// (docs/execution-model.md, "Bands of output columns"): output columns
/// [out0, out1), computed from input columns [in0, in1), which is what the
/// band's copy of the rectangle receives of every input row, as a
/// convolution of its own (`shape`: its width, pads and output width).
/// Neighbouring bands' input columns overlap by the window's halo; columns
/// no window reads go to the band on their left (the last band: the row's
/// end), so every input column is received by some band.
struct ConvTile {
  int64_t out0 = 0, out1 = 0, in0 = 0, in1 = 0;
  ConvShape shape;
};

/// The `tiles` bands of `s` (nearly equal numbers of output columns, the
/// larger ones first), or an empty vector when `tiles` is not in
/// [1, wout] or a band would read nothing but padding.
std::vector<ConvTile> convTiles(const ConvShape &s, int64_t tiles);

/// Input and output channels per PE under `m` (S = m.smear must divide
/// cin, R = m.rows cout).
inline int64_t convLk(const ConvShape &s, const DenseMapping &m) {
  return s.cin / m.smear;
}
inline int64_t convLm(const ConvShape &s, const DenseMapping &m) {
  return s.cout / m.rows;
}

/// 16-bit memory words of a weight or line-buffer element: 2 in fp32, 1 in
/// mixed precision (fp16 storage and multiply, fp32 accumulation;
/// docs/execution-model.md, "Convolution").
inline int64_t convElementWords(Precision p) {
  return p == Precision::Mixed ? 1 : 2;
}

/// The cycles a sample a band of output columns waits on its shared input
/// lane (docs/execution-model.md, "Bands of output columns"): the bands
/// run the same program, so they reach a receive together, and a lane
/// hands each its columns in column order, each only while it is in that
/// receive: every receive of a band lasts as long as the whole row's
/// transfer, not only its own columns'. `rows` rows received a sample,
/// `rowWidth` and `bandWidth` pixels in the lane's row and in the band's,
/// `channels` wavelets a pixel.
inline int64_t bandLaneWait(int64_t rows, int64_t rowWidth, int64_t bandWidth,
                            int64_t channels) {
  return rows * (rowWidth - bandWidth) * channels;
}

/// CE cycles to take `n` elements of a row off the fabric into the line
/// buffer: a `mov32`, or in mixed precision an `ff2h` (the fabric supplies
/// one element a cycle either way).
int64_t convReceiveCycles(Precision p, int64_t n);

/// Why `m` cannot run `s` on PEs of `memoryBytes` (chunks that do not
/// divide the channels, bands that do not fit the output columns, a 4-D
/// descriptor dimension or stride out of range, the program or memory too
/// large), or an empty string. With m.tiles > 1 every band is checked.
std::string convMappingProblem(const ConvShape &s, const DenseMapping &m,
                               int64_t memoryBytes);

/// Instructions of the straight-line per-sample program of the largest
/// PE's program (the diagonal's), of the largest band.
int64_t convProgramInstructions(const ConvShape &s, const DenseMapping &m);

/// The cost model: steady-state cycles per sample (docs/execution-model.md,
/// "Convolution"): the slowest column of the slowest band, or the output
/// rows' lane (every band's results merge into one stream per row chunk,
/// one wavelet a cycle) when that is slower.
int64_t predictConvCycles(const ConvShape &s, const DenseMapping &m);

/// The part of predictConvCycles beyond the busiest band's cycles of work:
/// what the bands wait on their lanes (bandLaneWait, or the output lane
/// when that sets the figure).
int64_t convBandsLaneWait(const ConvShape &s, const DenseMapping &m);

/// Bytes of PE memory the most loaded PE needs.
int64_t convMemoryPerPE(const ConvShape &s, const DenseMapping &m);

/// The PE memory map of a convolution's compute PE (of one band: `s` is
/// the band's shape, m.tiles is ignored): the words of code (after the
/// task table), word addresses of the records and data, and the end of the
/// data.
struct ConvMemoryMap {
  int64_t records = 0, weights = 0, ring = 0, acc = 0, bias = 0, outBuf = 0,
          clip = 0, epilogue = 0, end = 0, code = 0;
  int64_t numRecords = 0;
};
ConvMemoryMap convMemoryMap(const ConvShape &s, const DenseMapping &m);

} // namespace weft::conversion

#endif // WEFT_KERNELS_CONVMAPPING_H
