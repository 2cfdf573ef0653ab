//===- SparseActivations.cpp - When a stream goes sparse ------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/SparseActivations.h"

#include "weft/Kernels/Chunks.h"

#include <algorithm>

namespace weft::conversion {

std::optional<SparseMode> parseSparseMode(const std::string &s) {
  if (s == "off")
    return SparseMode::Off;
  if (s == "auto")
    return SparseMode::Auto;
  if (s == "on")
    return SparseMode::On;
  return std::nullopt;
}

const char *sparseModeName(SparseMode m) {
  switch (m) {
  case SparseMode::Off:
    return "off";
  case SparseMode::Auto:
    return "auto";
  case SparseMode::On:
    return "on";
  }
  return "off";
}

int64_t streamWavelets(int64_t n, int64_t chunks, bool sparse,
                       double density) {
  if (!sparse)
    return n;
  int64_t total = 0;
  for (int64_t r = 0; r < chunks; ++r)
    total += expectedNonZeros(chunkSize(n, chunks, r), density) + 1;
  return total;
}

SparseDecision decideSparseStream(SparseMode mode, double density,
                                  const SparseLayerShape &producer,
                                  const SparseLayerShape &consumer) {
  auto cycles = [](const SparseLayerShape &l, const SparseIo &io) {
    return predictCyclesPerSample(l.K, l.M, l.m, l.bias, io);
  };
  SparseIo pDense = producer.io, pSparse = producer.io;
  pDense.out = false;
  pSparse.out = true;
  SparseIo cDense = consumer.io, cSparse = consumer.io;
  cDense.in = false;
  cDense.inDensity = 1.0;
  cSparse.in = true;
  cSparse.inDensity = density;
  SparseDecision d;
  d.consumerDense = cycles(consumer, cDense);
  d.consumerSparse = cycles(consumer, cSparse);
  d.denseCycles = std::max(cycles(producer, pDense), d.consumerDense);
  d.sparseCycles = std::max(cycles(producer, pSparse), d.consumerSparse);
  d.denseWavelets = streamWavelets(producer.M, producer.m.rows, false, 1.0);
  d.sparseWavelets =
      streamWavelets(producer.M, producer.m.rows, true, density);
  switch (mode) {
  case SparseMode::Off:
    d.sparse = false;
    break;
  case SparseMode::On:
    d.sparse = true;
    break;
  case SparseMode::Auto:
    d.sparse = d.sparseCycles <= d.denseCycles &&
               d.consumerSparse < d.consumerDense;
    break;
  }
  return d;
}

SparseDecision decideSparseInput(SparseMode mode, double density,
                                 const SparseLayerShape &consumer) {
  SparseIo dense = consumer.io, sparse = consumer.io;
  dense.in = false;
  dense.inDensity = 1.0;
  sparse.in = true;
  sparse.inDensity = density;
  SparseDecision d;
  d.consumerDense = d.denseCycles = predictCyclesPerSample(
      consumer.K, consumer.M, consumer.m, consumer.bias, dense);
  d.consumerSparse = d.sparseCycles = predictCyclesPerSample(
      consumer.K, consumer.M, consumer.m, consumer.bias, sparse);
  // The host's chunks are the consumer's input chunks (one per column).
  d.denseWavelets = streamWavelets(consumer.K, consumer.m.smear, false, 1.0);
  d.sparseWavelets =
      streamWavelets(consumer.K, consumer.m.smear, true, density);
  d.sparse = mode == SparseMode::On ||
             (mode == SparseMode::Auto && d.consumerSparse < d.consumerDense);
  return d;
}

} // namespace weft::conversion
