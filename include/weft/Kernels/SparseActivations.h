//===- SparseActivations.h - When a stream goes sparse ----------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). Whether a dense layer's ReLU results travel to the
// next dense layer as a sparse stream, only their non-zero values as
// sparse16 wavelets (docs/execution-model.md, "Sparse activations"): the
// `--sparse-activations` modes and the cost decision for one stream.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_SPARSEACTIVATIONS_H
#define WEFT_KERNELS_SPARSEACTIVATIONS_H

#include "weft/Kernels/DenseMapping.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace weft::conversion {

enum class SparseMode { Off, Auto, On };

/// "off", "auto", "on"; nothing for anything else.
std::optional<SparseMode> parseSparseMode(const std::string &s);
const char *sparseModeName(SparseMode m);

/// The expected fraction of non-zero ReLU outputs when none is given: half
/// (a ReLU of a zero-mean pre-activation).
constexpr double kDefaultActivationDensity = 0.5;

/// What a stream's values are expected to be: the fraction of non-zeros
/// and, when a calibration run measured it per element, each element's
/// (element i of one sample: the fraction of the samples in which it is
/// not zero). A PE's chunk of a ReLU result can be denser than the
/// layer's average, and the busiest PE sets a layer's pace.
struct ExpectedDensity {
  ExpectedDensity(double mean = kDefaultActivationDensity,
                  std::vector<double> perElement = {})
      : mean(mean), perElement(std::move(perElement)) {}
  double mean;
  /// Empty: every element at `mean`.
  std::vector<double> perElement;

  /// The expected density of each of `chunks` chunks of a stream of `n`
  /// elements cut as every kernel cuts it (weft/Kernels/Chunks.h): the
  /// mean of `perElement` over the chunk's elements, or `mean` for every
  /// chunk when `perElement` does not hold n elements.
  std::vector<double> chunks(int64_t n, int64_t chunks) const;
};

/// One dense layer as the decision sees it: its shape, layout, bias and how
/// its input arrives (`io.in`, decided for the stream before).
struct SparseLayerShape {
  int64_t K = 0, M = 0;
  DenseMapping m;
  bool bias = false;
  SparseIo io;
};

/// What the cost model predicts for a stream from `producer` to
/// `consumer` dense and sparse, and the choice.
struct SparseDecision {
  bool sparse = false;
  /// The slower of the two layers' cycles per sample, dense and sparse.
  int64_t denseCycles = 0, sparseCycles = 0;
  /// The consumer's own cycles per sample, dense and sparse.
  int64_t consumerDense = 0, consumerSparse = 0;
  /// Wavelets per sample the stream carries, dense and sparse (expected).
  int64_t denseWavelets = 0, sparseWavelets = 0;
  /// The consumer's input as costed sparse (`SparseIo::chunkDensity` set
  /// when the density is known for each of its K elements).
  SparseIo consumerIo;
};

/// Wavelets per sample of a stream of `n` elements in `chunks` row chunks:
/// n dense; sparse, the expected non-zeros of each chunk plus one closeout
/// per chunk.
int64_t streamWavelets(int64_t n, int64_t chunks, bool sparse,
                       const ExpectedDensity &density);

/// The decision for the stream of `producer`'s results (density `density`;
/// per element, the consumer's columns are costed at their own chunks')
/// into `consumer`. `Off`: dense. `On`: sparse. `Auto`: sparse when the
/// model says the consumer gets faster and the slower of the two layers
/// does not get slower; so never slower than dense per the model. The stream must be eligible (the caller checks: a ReLU producer,
/// one dense consumer computing in mixed precision).
SparseDecision decideSparseStream(SparseMode mode,
                                  const ExpectedDensity &density,
                                  const SparseLayerShape &producer,
                                  const SparseLayerShape &consumer);

/// The decision for a host input (density `density` of non-zero values)
/// into `consumer`: the host sends only the non-zero values, so the only
/// layer whose cost changes is the consumer. `Auto`: sparse when it gets
/// faster. (The `denseCycles`/`sparseCycles` are the consumer's.)
SparseDecision decideSparseInput(SparseMode mode,
                                 const ExpectedDensity &density,
                                 const SparseLayerShape &consumer);

} // namespace weft::conversion

#endif // WEFT_KERNELS_SPARSEACTIVATIONS_H
