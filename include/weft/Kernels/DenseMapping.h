//===- DenseMapping.h - A dense layer's layout and cost model ---*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). How a dense layer y = act(x W + b) of K inputs and M
// neurons is laid out on the fabric (docs/execution-model.md, "Dense
// layer"), what it costs per sample and in memory, and the best layout on a
// target. The matcher (weft/Conversion/DenseLayer.h) finds the layers; the
// partition pass chooses a DenseMapping; the lowering emits it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_DENSEMAPPING_H
#define WEFT_KERNELS_DENSEMAPPING_H

#include "weft/Kernels/Chunks.h"
#include "weft/Machine/Target.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::conversion {

/// The precision a layer is compiled for.
enum class Precision { FP32, Mixed };

/// How a dense layer is laid out (docs/execution-model.md, "Dense layer"):
/// a rectangle of `smear` columns by `rows` rows at (x0, y0). Column c holds
/// input chunk c (the fan-in is smeared over the columns), row r holds
/// neuron chunk r; chunks are ceil(K / smear) and ceil(M / rows) long, the
/// last ones shorter. Input chunk c enters on row c and turns into column c
/// at PE (c, c), so the layer occupies max(smear, rows) rows; rows from
/// `rows` on only carry input chunks (routers and the turning PEs).
/// A convolution may repeat the rectangle `tiles` times side by side, each
/// copy computing one band of output columns (docs/execution-model.md,
/// "Bands of output columns"); dense layers have one.
/// An unbanded convolution may take its input on `merge` x `smear` row
/// lanes, `merge` of them per column: lanes jk .. jk + k - 1 merge into
/// column j, which turns at row jk (docs/execution-model.md, "Merged
/// lanes"); the footprint is then max(merge x smear, rows) rows.
struct DenseMapping {
  int64_t x0 = 0, y0 = 0;
  int64_t smear = 1, rows = 1;
  int64_t tiles = 1;
  int64_t merge = 1;
  Precision precision = Precision::FP32;

  /// The row lanes the input arrives on.
  int64_t lanes() const { return smear * merge; }
  /// The row (from y0) where column c's input turns into the column.
  int64_t turnRow(int64_t c) const { return c * merge; }
  /// Rows the layout occupies.
  int64_t footprint() const { return lanes() > rows ? lanes() : rows; }
};

/// How a dense layer's activations travel (docs/execution-model.md, "Sparse
/// activations"): dense by default; its input may arrive as a sparse stream
/// (only the non-zero elements, an expected `inDensity` of them), and its
/// ReLU results may leave as one.
struct SparseIo {
  bool in = false;
  double inDensity = 1.0;
  bool out = false;
  /// When measured per element (a calibration run): the expected density of
  /// each column's input chunk, one per column (`smear`); it replaces
  /// `inDensity` in the cycles. Empty: every chunk at `inDensity`.
  std::vector<double> chunkDensity;
};

/// The cost model (docs/execution-model.md, "Cost model"): steady-state
/// cycles per sample of the layer under `m`, from the same ISA cost table the
/// simulator uses. `bias`: the layer adds a bias (one more vector
/// instruction on the last column). `io`: sparse input and output.
int64_t predictCyclesPerSample(int64_t K, int64_t M, const DenseMapping &m,
                               bool bias = true, const SparseIo &io = {});

/// The input elements of a chunk of `lk` a sparse stream of density `d`
/// is expected to carry: ceil(d * lk), at most lk.
int64_t expectedNonZeros(int64_t lk, double d);

/// Words one PE's weight column of `lm` neurons takes: lm elements of 1
/// (mixed) or 2 words, or, with `sliced` weights, the sliced vector's slots
/// and lane masks (weft/Machine/Sliced.h).
int64_t weightColumnWords(int64_t lm, bool mixed, bool sliced);

/// Bytes of PE memory the most loaded PE of the mapping needs (code, task
/// table, descriptors, weights, accumulator, bias), with the weights sliced
/// or not.
int64_t memoryPerPE(int64_t K, int64_t M, const DenseMapping &m,
                    bool slicedWeights = false);

/// Chooses smear and rows on `target` (the rectangle starts at (0, 0)):
/// the fewest cycles per sample, then the fewest PEs. Returns nothing with
/// a sentence in `why` saying what is needed when nothing fits (PEs,
/// memory).
std::optional<DenseMapping> chooseDenseMapping(int64_t K, int64_t M,
                                               Precision p,
                                               const machine::Target &target,
                                               std::string &why);

} // namespace weft::conversion

#endif // WEFT_KERNELS_DENSEMAPPING_H
