//===- SparseWeights.h - When a dense layer's weights are sliced -*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). Weight-memory sparsity (docs/execution-model.md,
// "Sparse weights"): whether a placed dense layer stores its weight columns
// as sliced vectors (lane masks and packed non-zero lanes,
// weft/Machine/Sliced.h). The weights are constants, so the estimate is
// exact: it packs every PE's columns as the lowering will and counts the
// words, the groups the multiply-accumulates issue and the read energy.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_SPARSEWEIGHTS_H
#define WEFT_KERNELS_SPARSEWEIGHTS_H

#include "weft/Kernels/DenseMapping.h"
#include "weft/Kernels/SparseActivations.h"

#include <cstdint>
#include <vector>

namespace weft::conversion {

/// What one sample's multiply-accumulates over the layer's weights cost,
/// dense and sliced, summed over the PEs (every input element meets every
/// weight column once).
struct SlicedWeightsEstimate {
  /// Weights, and those that are zero in the layer's precision (all bits
  /// zero: -0 is not zero).
  int64_t weights = 0, zeros = 0;
  /// Weight reads' energy in femtojoules (Energy.h).
  uint64_t denseReadFj = 0, slicedReadFj = 0;
  /// Groups the MAC instructions issue per sample (datapath cycles),
  /// summed over the PEs, and on the PE that issues the most.
  int64_t denseGroups = 0, slicedGroups = 0;
  int64_t maxPeDenseGroups = 0, maxPeSlicedGroups = 0;
  /// Bytes the most loaded PE needs, dense and sliced (memoryPerPE).
  int64_t denseBytes = 0, slicedBytes = 0;
};

/// Packs the columns of `weights` (row-major K x M, W[k * M + m]) as the
/// lowering would under `m` and counts.
SlicedWeightsEstimate estimateSlicedWeights(const std::vector<float> &weights,
                                            int64_t K, int64_t M,
                                            const DenseMapping &m);

/// The cycles per sample slicing saves the layer: the MAC groups its
/// busiest PE no longer issues, for the fraction `inDensity` of its input
/// elements that arrive (1 for a dense input; a sparse input's expected
/// density: its zeros start no task, so they save nothing more).
int64_t slicedCyclesSaved(const SlicedWeightsEstimate &e, bool mixed,
                          double inDensity = 1.0);

/// `auto` slices when the weight reads' energy falls by at least this
/// fraction (so weights without zeros stay dense).
constexpr double kSlicedMinEnergySaving = 0.10;

/// The choice for one layer: `Off` never, `On` always, `Auto` when the
/// energy saving reaches kSlicedMinEnergySaving; never when the sliced
/// weights do not fit `memoryBytes` (the caller says why for `On`).
bool decideSlicedWeights(SparseMode mode, const SlicedWeightsEstimate &e,
                         int64_t memoryBytes);

} // namespace weft::conversion

#endif // WEFT_KERNELS_SPARSEWEIGHTS_H
