//===- Frustum.h - Frustum tiling of a group of layers ----------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). Frustum tiling (docs/frustum.md): a group of
// consecutive convolution and pooling layers (a chain, or a residual block
// with its skip) runs depth-first, one output tile at a time. A tile is
// chosen at the group's top and projected back through every layer; each
// tile's PEs hold the weights of every layer of the group and the tiles of
// two adjacent levels at a time, so intermediate maps never cross the
// fabric. This file holds the geometry (back-projection), the per-PE
// working set against the machine model's budget, the largest tile that
// fits, group formation over a chain, and the cost model that compares a
// group with the per-layer mapping and picks overlap or exchange of halos.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_FRUSTUM_H
#define WEFT_KERNELS_FRUSTUM_H

#include "weft/Machine/Target.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::conversion {

/// One layer of a frustum group: a convolution (with weights) or a pooling
/// window (none), on a `cin` x `hin` x `win` input, pads (top, left, bottom,
/// right) as in ONNX.
struct FrustumLayer {
  bool pool = false;
  int64_t cin = 1, hin = 1, win = 1, cout = 1, kh = 1, kw = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t groups = 1;

  int64_t hout() const { return (hin + pt + pb - dh * (kh - 1) - 1) / sh + 1; }
  int64_t wout() const { return (win + pl + pr - dw * (kw - 1) - 1) / sw + 1; }
  /// Weight elements (0 for a pool); biases count one per output channel.
  int64_t weightElements() const {
    return pool ? 0 : cout * (cin / groups) * kh * kw + cout;
  }
  /// Multiply-accumulates per output pixel (window taps for a pool).
  int64_t macsPerPixel() const {
    return pool ? cout * kh * kw : cout * (cin / groups) * kh * kw;
  }
  /// An empty string when the layer is valid, else a sentence.
  std::string check() const;
};

/// A half-open range [lo, hi) of rows or columns.
struct Span {
  int64_t lo = 0, hi = 0;
  int64_t size() const { return hi - lo; }
  bool operator==(const Span &o) const { return lo == o.lo && hi == o.hi; }
};

/// The rows (or columns) of a layer's input that output rows `out` read:
/// [lo·s − p, (hi − 1)·s − p + d·(k − 1) + 1) clipped to [0, n); the
/// unclipped size is (h_out − 1)·s + d·(k − 1) + 1. Rows in the pads are
/// not stored (they are zeros).
Span backProject(Span out, int64_t k, int64_t s, int64_t d, int64_t pad,
                 int64_t n);

/// A group: consecutive `layers` (layer i + 1 reads layer i's output), and
/// optionally a residual skip from the group's input to its output, added
/// at the top (identity, or through `projection`, a 1 x 1 strided
/// convolution: ResNet's downsample).
struct FrustumGroup {
  std::vector<FrustumLayer> layers;
  bool residual = false;
  std::optional<FrustumLayer> projection;
  /// An empty string when the group is consistent, else a sentence.
  std::string check() const;
  /// Channels of level l: 0 is the group's input, layers.size() its output.
  int64_t channels(size_t level) const;
};

/// The spans of one tile at every level (0 = the group's input, L = the
/// output tile itself) and, for a residual group, of the skip's input.
struct FrustumTile {
  std::vector<Span> rows, cols;
  int64_t elements(size_t level, int64_t channels) const {
    return rows[level].size() * cols[level].size() * channels;
  }
};

/// Back-projects output tile (rows, cols) through every layer of `g`.
FrustumTile projectTile(const FrustumGroup &g, Span rows, Span cols);

/// All tiles of `g`'s output cut into th x tw tiles (the last row and
/// column of tiles ragged), row-major.
std::vector<FrustumTile> groupTiles(const FrustumGroup &g, int64_t th,
                                    int64_t tw);

/// What a tile's PEs may use: the memory of the target minus the task
/// table and the code. `elementBytes` is the size of a stored activation or
/// weight (4: convolutions run in fp32 on the fabric; 2 for fp16).
struct FrustumBudget {
  int64_t memoryBytes = 0;
  int64_t reservedBytes = 0;
  int64_t elementBytes = 4;
  int64_t available() const { return memoryBytes - reservedBytes; }
};

/// The budget of a PE of `target` running a program of `codeInstructions`
/// instructions: the task table and one 32-bit slot per instruction are
/// reserved (docs/architecture.md; the CE and router queues are hardware,
/// not PE memory).
FrustumBudget frustumBudget(const machine::Target &target,
                            int64_t codeInstructions, int64_t elementBytes);

/// Per-PE bytes of one tile's working set when the tile runs on `side` x
/// `side` PEs laid out like a smeared convolution (docs/frustum.md): PE
/// (c, r) holds input-channel chunk c and output-channel chunk r of every
/// layer, so weights are split side^2 ways and each of two adjacent levels'
/// tiles side ways (rounded up): all weights of the group, plus the largest
/// pair of adjacent levels' tiles (the ping-pong: level l + 1's tile overwrites
/// level l − 1's), plus for a residual group the skip's tile, live from
/// the first step to the add at the top.
struct FrustumWorkingSet {
  int64_t weightBytes = 0, bufferBytes = 0, skipBytes = 0;
  /// The pair of levels (l, l + 1) whose buffers are the largest.
  size_t peakLevel = 0;
  int64_t total() const { return weightBytes + bufferBytes + skipBytes; }
};
FrustumWorkingSet workingSet(const FrustumGroup &g, const FrustumTile &t,
                             int64_t side, int64_t elementBytes);

/// The largest tile of `g` on side x side PEs whose every tile's working set
/// fits `budget`: the largest t x t (clipped to the output's height and width;
/// edge tiles ragged). std::nullopt when not even 1 x 1 fits; `diagnostic`
/// then says how many bytes a 1 x 1 tile needs and of what.
struct FrustumTiling {
  int64_t th = 0, tw = 0, side = 1;
  int64_t numTiles = 0;
  FrustumWorkingSet worst; ///< the largest working set over the tiles
};
std::optional<FrustumTiling> largestTile(const FrustumGroup &g, int64_t side,
                                         const FrustumBudget &budget,
                                         std::string *diagnostic = nullptr);
/// The th x tw tiling of `g` on side x side PEs (its tiles and their worst
/// working set), fitting or not.
FrustumTiling tilingOf(const FrustumGroup &g, int64_t th, int64_t tw,
                       int64_t side, int64_t elementBytes);

/// How the halo of neighbouring tiles is handled (docs/frustum.md).
enum class HaloPolicy { Overlap, Exchange };
const char *haloPolicyName(HaloPolicy p);

/// What the per-layer mapping of the same layers costs, as the partitioner
/// predicts it: cycles per image of every layer's rectangle (the pipeline
/// runs at the slowest), its PEs, the hops inside it per image (input rows
/// to the diagonals, columns, partial sums east: the counterpart of a
/// frustum block's internal hops), and the mean hops a wavelet travels from
/// one layer's rectangle to the next one's.
struct PerLayerCost {
  std::vector<int64_t> cycles, pes, memoryPerPE, internalHops;
  int64_t hopsBetweenLayers = 1;
  int64_t colorsPerLayer = 5;
};

/// The cost model's figures of one mapping of a group (docs/frustum.md,
/// "Cost model"): wavelet hops per image (the group's input, intermediate
/// maps and halos; the output leaves the same way in both and is not
/// counted), cycles per image (the pipeline's interval), bytes per PE,
/// colors and PEs.
struct FrustumCost {
  int64_t hops = 0, cycles = 0, memoryPerPE = 0, colors = 0, pes = 0;
};

FrustumCost perLayerCost(const FrustumGroup &g, const PerLayerCost &base);

/// The frustum mapping of `g` with `tiling`, each tile's PEs `hopsToTiles`
/// hops on average from the group's producer.
FrustumCost frustumCost(const FrustumGroup &g, const FrustumTiling &tiling,
                        HaloPolicy policy, int64_t hopsToTiles);

/// The decision for one group: the tiling, the halo policy (the cheaper in
/// cycles, then in hops) and both costs. `chosen` is false when the frustum
/// mapping would be slower than per layer (or nothing fits): the group then
/// runs per layer.
struct FrustumDecision {
  bool chosen = false;
  std::optional<FrustumTiling> tiling;
  HaloPolicy policy = HaloPolicy::Overlap;
  /// `frustum` is the chosen policy's cost; `overlap` and `exchange` each
  /// policy's (a lowering without one of them takes the other).
  FrustumCost frustum, perLayer, overlap, exchange;
  std::string reason; ///< why not chosen (a sentence), or empty
  /// Weighed at the network's pace (decideNetworkFrustums): the network's
  /// predicted interval per layer, and with this group (and the groups
  /// chosen before it) fused; 0 when weighed against its own layers.
  int64_t networkCycles = 0, fusedNetworkCycles = 0;
};
FrustumDecision decideFrustum(const FrustumGroup &g, const PerLayerCost &base,
                              int64_t side, const FrustumBudget &budget,
                              int64_t hopsToTiles);
/// The same decision for a given tiling, on a fabric of `maxPes` PEs (0:
/// any): tiles that need more PEs are not chosen either.
FrustumDecision decideFrustum(const FrustumGroup &g, const PerLayerCost &base,
                              const FrustumTiling &tiling, int64_t hopsToTiles,
                              int64_t maxPes = 0);
/// The decision over every tile size up to `largest` (the memory bound,
/// largestTile): square tiles of t x t outputs (clipped to the group's
/// output) for t from largest down to 1, each decided as above; the
/// fastest chosen one (then fewer hops, then fewer PEs) wins. When none is
/// chosen, the decision of `largest` (its reason says why). Smaller tiles
/// use more blocks of PEs and are often much faster: docs/frustum.md,
/// "The decision".
FrustumDecision decideFastestFrustum(const FrustumGroup &g,
                                     const PerLayerCost &base,
                                     const FrustumTiling &largest,
                                     int64_t elementBytes, int64_t maxPes = 0);
/// The tilings the decisions try: `largest` (the memory bound), then
/// square tiles of t x t outputs (clipped to the group's output and to
/// `largest`) for t from its side down to 1, each once.
std::vector<FrustumTiling> tilingsUpTo(const FrustumGroup &g,
                                       const FrustumTiling &largest,
                                       int64_t elementBytes);
/// The mean hops from a group's producer to its tiles' PEs, as the
/// decision takes them: a square grid of ceil(sqrt(tiles)) blocks of side
/// PEs entered from one edge, half of it crossed on average, plus the link
/// into the region.
int64_t hopsToTiles(const FrustumTiling &tiling);

/// Group formation over a chain of layers (layer i + 1 reads layer i's
/// output; a link's `skipFrom` marks a residual block). Greedy from the
/// input: the longest group of at least two layers from the current one
/// whose tile still fits on side x side PEs and that never splits a residual
/// block (a block is exactly one group, or lies outside every group).
/// Returns [first, last] layer index pairs; layers outside every group run
/// per layer.
struct ChainLink {
  FrustumLayer layer;
  /// When >= 0: a skip from the input of layer `skipFrom` is added to this
  /// layer's output (identity, or through `projection`).
  int64_t skipFrom = -1;
  std::optional<FrustumLayer> projection;
};
std::vector<std::pair<size_t, size_t>>
formGroups(const std::vector<ChainLink> &chain, int64_t side,
           const FrustumBudget &budget);

/// The group of chain layers [first, last] (a residual skip ending at
/// `last` that starts at `first` included).
FrustumGroup chainGroup(const std::vector<ChainLink> &chain, size_t first,
                        size_t last);

} // namespace weft::conversion

#endif // WEFT_KERNELS_FRUSTUM_H
