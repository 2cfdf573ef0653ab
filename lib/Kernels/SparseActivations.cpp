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

std::vector<double> ExpectedDensity::chunks(int64_t n,
                                            int64_t numChunks) const {
  std::vector<double> out(size_t(std::max<int64_t>(numChunks, 0)), mean);
  if (n <= 0 || perElement.size() != size_t(n))
    return out;
  for (int64_t c = 0; c < numChunks; ++c) {
    int64_t begin = chunkBegin(n, numChunks, c), size = chunkSize(n, numChunks, c);
    if (size <= 0)
      continue;
    double sum = 0.0;
    for (int64_t i = begin; i < begin + size; ++i)
      sum += perElement[size_t(i)];
    out[size_t(c)] = sum / double(size);
  }
  return out;
}

int64_t streamWavelets(int64_t n, int64_t chunks, bool sparse,
                       const ExpectedDensity &density) {
  if (!sparse)
    return n;
  std::vector<double> d = density.chunks(n, chunks);
  int64_t total = 0;
  for (int64_t r = 0; r < chunks; ++r)
    total += expectedNonZeros(chunkSize(n, chunks, r), d[size_t(r)]) + 1;
  return total;
}

namespace {

/// `consumer`'s input arriving sparse at `density`.
SparseIo sparseInput(const SparseLayerShape &consumer,
                     const ExpectedDensity &density) {
  SparseIo io = consumer.io;
  io.in = true;
  io.inDensity = density.mean;
  io.chunkDensity.clear();
  if (density.perElement.size() == size_t(consumer.K))
    io.chunkDensity = density.chunks(consumer.K, consumer.m.smear);
  return io;
}

} // namespace

SparseDecision decideSparseStream(SparseMode mode,
                                  const ExpectedDensity &density,
                                  const SparseLayerShape &producer,
                                  const SparseLayerShape &consumer) {
  auto cycles = [](const SparseLayerShape &l, const SparseIo &io) {
    return predictCyclesPerSample(l.K, l.M, l.m, l.bias, io);
  };
  SparseIo pDense = producer.io, pSparse = producer.io;
  pDense.out = false;
  pSparse.out = true;
  SparseIo cDense = consumer.io;
  cDense.in = false;
  cDense.inDensity = 1.0;
  cDense.chunkDensity.clear();
  SparseIo cSparse = sparseInput(consumer, density);
  SparseDecision d;
  d.consumerIo = cSparse;
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

SparseDecision decideSparseInput(SparseMode mode,
                                 const ExpectedDensity &density,
                                 const SparseLayerShape &consumer) {
  SparseIo dense = consumer.io;
  dense.in = false;
  dense.inDensity = 1.0;
  dense.chunkDensity.clear();
  SparseIo sparse = sparseInput(consumer, density);
  SparseDecision d;
  d.consumerIo = sparse;
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
