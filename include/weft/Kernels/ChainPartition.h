//===- ChainPartition.h - A balanced pipeline for a chain -------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The partitioning algorithm of --weft-partition-dense, without MLIR: a
// chain of kernels (dense layers and column kernels) is laid out west to
// east from column 0, every rectangle at row 0 (docs/execution-model.md,
// "A network on the fabric"). The rows of the vector between two kernels tie
// them together: a dense kernel smears its fan-in over as many columns as
// the previous kernel has output rows (S_{l+1} = R_l), and a column kernel
// keeps the rows it receives. The algorithm chooses S_0 and every R_l so
// that the slowest kernel's predicted cycles per sample are the fewest (a
// balanced pipeline), then the fewest PEs; and, for `--grid auto`, the
// fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_CHAINPARTITION_H
#define WEFT_KERNELS_CHAINPARTITION_H

#include "weft/Kernels/ColumnKernel.h"
#include "weft/Kernels/ConvMapping.h"
#include "weft/Kernels/DenseMapping.h"
#include "weft/Kernels/DenseTraining.h"
#include "weft/Kernels/SparseActivations.h"
#include "weft/Kernels/DepthwiseMapping.h"
#include "weft/Kernels/PoolMapping.h"
#include "weft/Machine/Target.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::conversion {

/// One kernel of the chain, as the partitioner sees it.
struct ChainLayer {
  enum class Kind { Dense, Column, Join, Conv, Pool };
  Kind kind = Kind::Dense;
  /// Dense layers and convolutions are smeared: S columns of input chunks
  /// by R rows of output chunks (docs/execution-model.md); a grouped
  /// (depthwise) convolution is laid out like a pooling instead.
  bool smeared() const {
    return kind == Kind::Dense || (kind == Kind::Conv && !conv.grouped());
  }
  /// Conv: its geometry (K and M are its input and output elements).
  ConvShape conv;
  /// Conv: a frustum group fused into one kernel (docs/frustum.md, "The
  /// lowering"): its layers, `conv` their envelope (weft/Kernels/
  /// FrustumChain.h); it runs only on S = R = 1 in `frustumTiles` bands.
  std::vector<ConvShape> frustum;
  int64_t frustumTiles = 1;
  /// Pool: its geometry (K and M its input and output elements; laid out
  /// like a column kernel, rows in = rows out).
  PoolShape pool;
  /// Dense: fan-in and neurons. Column: K == M == the vector's length.
  int64_t K = 0, M = 0;
  bool bias = false;            ///< dense: adds a bias
  /// Dense: the matrix is weft's (a transpose or reduction as a 0/1
  /// matrix), so its MACs are executed but are none of the model's.
  bool synthetic = false;
  /// Join of feature maps: a FIFO of `fifoPixels` pixels of the map's
  /// `pixels` per channel (0: a FIFO of one whole sample).
  int64_t pixels = 0, fifoPixels = 0;
  /// Join of feature maps: the map's rows (its height; 1 otherwise), what a
  /// trained Add takes row by row.
  int64_t mapRows = 1;
  /// Join: max(a op b, 0), a ReLU fused into it (one more vector step per
  /// element). Dense: a fused ReLU (costed only when trained).
  bool relu = false;
  /// Join: b is per channel of a's `pixels` (K is a's elements).
  bool broadcast = false;
  /// Dense, convolution, max pool or Add, in a training program: how it
  /// trains. Its mappings must then hold the training memory
  /// (docs/training.md; a dense layer's ReLU mask counted whether or not it
  /// has one) and the instructions' limits (trainedDenseLimits,
  /// trainedConvLimits, trainedPoolLimits).
  std::optional<DenseTraining> training;
  /// Dense, in mixed precision: its input may arrive sparse (a ReLU
  /// stream from one dense layer, or a host input, read by it alone;
  /// docs/execution-model.md, "Sparse activations") at this expected
  /// density. `sparseOn`: it will (`--sparse-activations on`); else
  /// (`auto`) only where the cost model finds it faster, so the layer is
  /// costed at the faster of the two.
  bool sparseInput = false, sparseOn = false;
  ExpectedDensity inputDensity;
  ColumnOp op = ColumnOp::Relu; ///< column: what it computes
  std::vector<float> params;    ///< column: its constants (the cost may
                                ///< depend on them, e.g. Clip's bounds)

  static ChainLayer convolution(const ConvShape &shape) {
    ChainLayer l;
    l.kind = Kind::Conv;
    l.conv = shape;
    l.K = shape.inElements();
    l.M = shape.outElements();
    l.bias = shape.bias;
    return l;
  }
  static ChainLayer pooling(const PoolShape &shape) {
    ChainLayer l;
    l.kind = Kind::Pool;
    l.pool = shape;
    l.K = shape.inElements();
    l.M = shape.outElements();
    return l;
  }
  static ChainLayer dense(int64_t K, int64_t M, bool bias) {
    ChainLayer l;
    l.K = K;
    l.M = M;
    l.bias = bias;
    return l;
  }
  /// An elementwise op of two streams of n elements (the partitioner
  /// lays it out like a column kernel), with `relu` a ReLU fused into it.
  static ChainLayer join(int64_t n, bool relu = false) {
    ChainLayer l;
    l.kind = Kind::Join;
    l.K = l.M = n;
    l.relu = relu;
    return l;
  }
  static ChainLayer column(ColumnOp op, int64_t n,
                           std::vector<float> params = {}) {
    ChainLayer l;
    l.kind = Kind::Column;
    l.K = l.M = n;
    l.op = op;
    l.params = std::move(params);
    return l;
  }
};

/// Where one kernel goes: the rectangle (x0, 0, width, rows). A dense
/// kernel's width is its smear factor S and its footprint max(S, rows) rows
/// (input chunk c turns into column c at row c); a column kernel is one
/// column of `rows` rows.
struct ChainPlacement {
  int64_t x0 = 0, width = 1, rows = 1, footprint = 1;
  /// A convolution's bands of output columns, each on its own copy of the
  /// S x R rectangle (width = tiles x S).
  int64_t tiles = 1;
  int64_t predictedCycles = 0;
  /// Bytes of PE memory the most loaded PE needs (dense kernels; column
  /// kernels: their largest buffers).
  int64_t memoryPerPE = 0;
};

struct ChainMapping {
  std::vector<ChainPlacement> kernels;
  /// Rows of every stream (partitionNetwork's numbering).
  std::vector<int64_t> streamRows;
  /// Rows of the host input (the first kernel's S, or R for a column
  /// kernel) and of the host output (the last kernel's rows).
  int64_t inputRows = 1, outputRows = 1;
  /// The largest predicted cycles per sample over the kernels: the
  /// pipeline's steady-state interval.
  int64_t bottleneckCycles = 0;
  /// Columns used (the sum of the widths) and rows used (the largest
  /// footprint).
  int64_t width = 0, height = 0;
  /// PEs of the kernels' rectangles (sum of width x rows).
  int64_t pes = 0;
};

/// A network of kernels as the partitioner sees it: kernel l reads the
/// streams `inputs` (one, or two for a join) and writes stream `output`;
/// streams are numbered 0 .. numStreams - 1, and a stream no kernel writes
/// comes from the host. Kernels are in topological order (a kernel reads
/// only streams of the host or of earlier kernels).
struct NetworkLayer {
  ChainLayer layer;
  std::vector<int64_t> inputs;
  int64_t output = 0;
};
struct NetworkShape {
  std::vector<NetworkLayer> layers;
  int64_t numStreams = 0;
  /// Feature-map streams: the channels the rows of stream i must divide
  /// (every row chunk holds whole channels); 0 or missing: any rows.
  std::vector<int64_t> streamChannels;
  /// Unbanded convolutions may take their input on k S lanes, k per column
  /// (docs/execution-model.md, "Merged lanes"): a kernel entered by r rows
  /// may then be r / k columns wide.
  bool mergeLanes = false;
  /// What the layout minimises first (then the PEs): the slowest
  /// kernel's predicted cycles per sample (`Interval`: the pipeline's
  /// period, with many samples in flight), or their sum (`Latency`: with
  /// one sample in flight, as in SGD, each kernel waits for the sample to
  /// come back through the others; docs/training.md, "Partitioning for one
  /// sample in flight"). The latency objective runs the exact programs
  /// only; above their state budget the layout falls back to `Interval`.
  enum class Objective { Interval, Latency };
  Objective objective = Objective::Interval;
  /// The chain host -> 0 -> 1 -> ... -> host (stream l enters kernel l).
  static NetworkShape chain(const std::vector<ChainLayer> &chain);
};

/// The latency objective's cycles per PE a streamed vector crosses inside a
/// smeared kernel (a partial sum east along a row, a reduction down a
/// column): one on the link, one in the router's queue, and two in the
/// CE that adds its own part (its queue and the add), the element after
/// streaming behind. Measured against the alternatives in
/// docs/performance.md ("SGD partitioned for its latency").
constexpr int64_t kLatencyPerHop = 4;

/// Lays the network out west to east from column 0 in its order, every
/// rectangle at row 0: each stream gets one row count, which every kernel
/// reading it takes (a dense kernel as its smear, a column or join kernel
/// as its rows; a join's two streams must agree); the fewest predicted
/// cycles for the slowest kernel (or, with the latency objective, summed
/// over the kernels), then the fewest PEs, as partitionChain.
std::optional<ChainMapping> partitionNetwork(const NetworkShape &net,
                                             Precision precision,
                                             const machine::Target &target,
                                             std::string &why);

/// The bands a fused frustum group (docs/frustum.md, "The lowering") is
/// placed in when its tile gives `bands`: one when that is one and fits,
/// else the fewest tabulated bands (kTileOptions) no fewer than `bands`
/// that fit PEs of `memoryBytes` (narrower bands need less memory), else
/// the most below it (e.g. 6 when 8 bands of 7 output columns do not
/// exist); 0 when none fits.
int64_t placedFrustumBands(const std::vector<ConvShape> &chain, int64_t bands,
                           int64_t memoryBytes);

/// Model MACs per sample of the network's dense kernels.
int64_t networkMacsPerSample(const NetworkShape &net);

/// Lays the chain out on `target` with `precision` for the dense kernels:
/// the fewest predicted cycles for the slowest kernel, then the fewest PEs,
/// subject to the total width and every footprint fitting the fabric, the
/// per-PE memory, and no empty chunk. Fails with a sentence in `why` saying
/// what the chain needs (columns, PEs of memory) when nothing fits.
std::optional<ChainMapping> partitionChain(const std::vector<ChainLayer> &chain,
                                           Precision precision,
                                           const machine::Target &target,
                                           std::string &why);

/// Multiply-accumulates per sample the model asks for (dense kernels that
/// are not synthetic): what utilization and `--grid auto` count.
int64_t chainMacsPerSample(const std::vector<ChainLayer> &chain);

/// The fabric `--grid auto` chooses, and why.
struct GridChoice {
  int64_t width = 0, height = 0;
  ChainMapping mapping;
  /// Predicted utilization MACs / (width x height x peak x bottleneck) on
  /// this grid, and the best over every grid considered.
  double utilization = 0, bestUtilization = 0;
  int64_t bestWidth = 0, bestHeight = 0;
  /// Grids on which the chain fits, of those considered.
  int64_t gridsFitting = 0;
};

/// Grid sizes `chooseGrid` considers along one side up to `max`: every size
/// up to 16, multiples of 4 up to 64, multiples of 8 up to 128, multiples of
/// 16 beyond, and `max` itself.
std::vector<int64_t> candidateGridSizes(int64_t max);

/// `--grid auto`: over every W x H grid with W and H from
/// candidateGridSizes of `largest`'s width and height (and `largest`'s
/// memory and colors), the predicted utilization U of the chain's best
/// mapping; returns the grid with the fewest PEs whose U is within
/// `tolerance` (relative, e.g. 0.05) of the best U found, ties broken by
/// fewer predicted cycles, then the squarer grid. Fails with the
/// partitionChain sentence for `largest` when the chain fits no grid.
std::optional<GridChoice> chooseGrid(const std::vector<ChainLayer> &chain,
                                     Precision precision,
                                     const machine::Target &largest,
                                     double tolerance, std::string &why);
std::optional<GridChoice> chooseGrid(const NetworkShape &net,
                                     Precision precision,
                                     const machine::Target &largest,
                                     double tolerance, std::string &why);

} // namespace weft::conversion

#endif // WEFT_KERNELS_CHAINPARTITION_H
