//===- FrustumChain.h - A fused chain of convolutions per band -*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). The lowering of a frustum group of convolutions
// (docs/frustum.md, "The lowering"): the group's output is cut into bands
// of output columns, one PE each; the band's PE holds every layer's weights
// and runs the whole chain on its columns depth-first, a line buffer per
// level, so intermediate rows never leave it. Only the group's input (the
// band's columns with their halo) and output cross the fabric.
//
// To the partitioner and the routing the fused chain is one convolution,
// its *envelope*: the first layer's input, the last layer's output, and one
// window whose reach, stride and pads compose the chain's; a band of the
// envelope (convTiles) reads exactly the input columns the chain's band
// reads, so the input and output routes of a banded convolution of
// S = R = 1 (lib/Kernels/Routing.cpp) serve the chain unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_FRUSTUMCHAIN_H
#define WEFT_KERNELS_FRUSTUMCHAIN_H

#include "weft/Kernels/ConvMapping.h"
#include "weft/Kernels/PoolMapping.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::conversion {

/// Why `chain` cannot run fused (not two or more smeared convolutions or
/// max pools (`ConvShape::maxPool`, no bias nor activation) each reading
/// the previous one's output, a fused activation other than ReLU, an
/// envelope whose output differs from the chain's, a skip (`skipAdd`)
/// anywhere but on the last level or onto an output of another shape than
/// the input's), or an empty string.
std::string frustumChainProblem(const std::vector<ConvShape> &chain);

/// A pool as a level of a fused chain: its window with `maxPool` set, or
/// std::nullopt (with `why`) for an average or global pool, which do not
/// run fused.
std::optional<ConvShape> frustumPoolLevel(const PoolShape &p, std::string &why);

/// Makes `top`, a chain's last level, add the skip of an identity residual
/// block, then the add's ReLU when `relu`; a sentence when it cannot (its
/// own activation would come before the add), else an empty string.
std::string frustumSkipLevel(ConvShape &top, bool relu);

/// The envelope of a valid chain: cin x hin x win of the first layer, cout
/// of the last, window 1 + sum (k_l - 1) d_l J_l with J_l the product of
/// the strides below l, stride prod s_l, leading pads sum p_l J_l, trailing
/// pads so that its output is the last layer's.
ConvShape frustumEnvelope(const std::vector<ConvShape> &chain);

/// The number of bands a top tile `tw` columns wide gives the chain's
/// output (ceil(wout / tw)).
int64_t frustumBandsForTile(const std::vector<ConvShape> &chain, int64_t tw);

/// One band: output columns [out0, out1) of the chain's last layer; the
/// band receives input columns [in0, in1) of every input row (the
/// envelope's band). `levels[l]` is layer l run on the band: its input is
/// what the band holds of level l (for l = 0, the first `levels[0].win` of
/// the received columns), its output exactly the columns level l + 1
/// reads.
struct FrustumBand {
  int64_t out0 = 0, out1 = 0, in0 = 0, in1 = 0;
  std::vector<ConvShape> levels;
  int64_t received() const { return in1 - in0; }
};

/// The `tiles` bands of `chain`, or an empty vector when the envelope's
/// bands do not exist or a level's band would read nothing but padding.
std::vector<FrustumBand> frustumBands(const std::vector<ConvShape> &chain,
                                      int64_t tiles);

/// One step of a band's per-sample program, in order.
struct FrustumStep {
  enum class Kind {
    Receive, ///< level 0: input row `row` from the fabric into `slot`
    Mac,     ///< level `level`: kernel row `tap` on the row in `slot`
    Closeout ///< level `level`'s output row `row` is complete: into
             ///< level + 1's `slot` (the top level: sent)
  };
  Kind kind = Kind::Receive;
  int64_t level = 0, row = 0, slot = 0, tap = 0;
  /// The top level's closeout of an identity residual block: the level-0
  /// slot holding input row `row`, which the output row adds (-1: none).
  int64_t skipSlot = -1;
};

/// The depth-first program of a band: level 0 follows convSchedule (rows
/// received before the output rows that read them); every output row a
/// level completes is level + 1's next input row, after which level + 1
/// computes every output row that row completes, and so on up. With a
/// skip, level 0's line buffer keeps each input row until the top level's
/// row of the same index has added it.
std::vector<FrustumStep> frustumSchedule(const FrustumBand &band);
/// Each level's line-buffer schedule (convSchedule; level 0's ring deep
/// enough for the skip).
std::vector<ConvSchedule> frustumLevelSchedules(const FrustumBand &band);

/// A band PE's memory (16-bit word addresses, like ConvMemoryMap): the code
/// after the task table, the records, then per level its weights, line
/// buffer, accumulator and biases, then the top level's two output buffers.
struct FrustumMemoryMap {
  int64_t code = 0, records = 0, numRecords = 0, end = 0;
  std::vector<int64_t> weights, ring, acc, bias;
  /// Per level: line-buffer rows and the padded width (pixels) of a row.
  std::vector<int64_t> ringRows, ringWidth;
  int64_t outBuf = 0;
  /// The word -inf a max pool's accumulator starts from.
  int64_t negInf = 0;
};
FrustumMemoryMap frustumMemoryMap(const FrustumBand &band);

/// Instructions of the band's straight-line program (the samples it
/// unrolls included) and predicted cycles per sample of the slowest band:
/// the program's instructions with the ISA's cycle table, or the output
/// lane (every band's output merges into one lane) when that is slower.
int64_t frustumProgramInstructions(const FrustumBand &band);
int64_t predictFrustumCycles(const std::vector<ConvShape> &chain,
                             int64_t tiles);
/// Bytes of the most loaded band PE.
int64_t frustumMemoryPerPE(const std::vector<ConvShape> &chain, int64_t tiles);
/// Why `tiles` bands of `chain` cannot run on PEs of `memoryBytes`, or an
/// empty string.
std::string frustumMappingProblem(const std::vector<ConvShape> &chain,
                                  int64_t tiles, int64_t memoryBytes);

/// What a frustum group is weighed against (docs/frustum.md, "The
/// decision"): a member's fewest predicted cycles per sample per layer, on
/// its fastest S x R rectangle (S | cin, R | cout) of at most `height`
/// rows, unbanded or in bands of output columns at most `width` columns
/// wide in all, computing in `precision`, or a pool on its fastest
/// column; INT64_MAX when none fits PEs of `memoryBytes`.
int64_t fastestConvCycles(const ConvShape &s, int64_t width, int64_t height,
                          int64_t memoryBytes,
                          Precision precision = Precision::FP32);
int64_t fastestPoolCycles(const PoolShape &p, int64_t height,
                          int64_t memoryBytes);

} // namespace weft::conversion

#endif // WEFT_KERNELS_FRUSTUMCHAIN_H
