//===- SparseWeights.cpp - When a dense layer's weights are sliced --------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/SparseWeights.h"

#include "weft/Kernels/Chunks.h"
#include "weft/Machine/Energy.h"
#include "weft/Machine/ISA.h"
#include "weft/Machine/Numerics.h"
#include "weft/Machine/Sliced.h"

#include <algorithm>
#include <cmath>

namespace wt = weft::machine;

namespace weft::conversion {

SlicedWeightsEstimate estimateSlicedWeights(const std::vector<float> &weights,
                                            int64_t K, int64_t M,
                                            const DenseMapping &m) {
  SlicedWeightsEstimate e;
  const bool mixed = m.precision == Precision::Mixed;
  const unsigned ew = mixed ? 1 : 2;
  const unsigned simd =
      wt::info(mixed ? wt::Opcode::FMACHS : wt::Opcode::FMAC).simd;
  const wt::SlicedWord word = wt::SlicedLayout{0, ew}.word();
  const uint64_t elementFj = wt::readEnergyFj(2 * ew);
  std::vector<uint32_t> column;
  for (int64_t c = 0; c < m.smear; ++c) {
    int64_t lk = chunkSize(K, m.smear, c), kb = chunkBegin(K, m.smear, c);
    for (int64_t r = 0; r < m.rows; ++r) {
      int64_t lm = chunkSize(M, m.rows, r), mb = chunkBegin(M, m.rows, r);
      int64_t peDense = 0, peSliced = 0;
      for (int64_t t = 0; t < lk; ++t) {
        column.clear();
        for (int64_t n = 0; n < lm; ++n) {
          float v = weights[size_t((kb + t) * M + mb + n)];
          column.push_back(mixed ? uint32_t(wt::f32ToF16(v))
                                 : wt::f32ToBits(v));
        }
        int64_t dense = (lm + simd - 1) / simd;
        e.denseGroups += dense;
        e.denseReadFj += uint64_t(lm) * elementFj;
        e.weights += lm;
        for (size_t w = 0; w * wt::kSlicedLanes < column.size(); ++w) {
          unsigned pc = 0;
          for (size_t l = 0; l < wt::kSlicedLanes; ++l) {
            size_t i = w * wt::kSlicedLanes + l;
            if (i < column.size() && column[i])
              ++pc;
          }
          e.slicedReadFj += wt::slicedReadEnergyFj(word, pc);
          e.slicedGroups += (pc + simd - 1) / simd;
          peSliced += (pc + simd - 1) / simd;
        }
        for (uint32_t v : column)
          e.zeros += v == 0;
        peDense += dense;
      }
      e.maxPeDenseGroups = std::max(e.maxPeDenseGroups, peDense);
      e.maxPeSlicedGroups = std::max(e.maxPeSlicedGroups, peSliced);
    }
  }
  e.denseBytes = memoryPerPE(K, M, m, false);
  e.slicedBytes = memoryPerPE(K, M, m, true);
  return e;
}

int64_t slicedCyclesSaved(const SlicedWeightsEstimate &e, bool mixed,
                          double inDensity) {
  int64_t cpg =
      wt::info(mixed ? wt::Opcode::FMACHS : wt::Opcode::FMAC).cyclesPerGroup;
  double d = std::clamp(inDensity, 0.0, 1.0);
  return int64_t(
      std::llround(double((e.maxPeDenseGroups - e.maxPeSlicedGroups) * cpg) * d));
}

bool decideSlicedWeights(SparseMode mode, const SlicedWeightsEstimate &e,
                         int64_t memoryBytes) {
  if (mode == SparseMode::Off || e.slicedBytes > memoryBytes)
    return false;
  if (mode == SparseMode::On)
    return true;
  return double(e.slicedReadFj) <=
         (1.0 - kSlicedMinEnergySaving) * double(e.denseReadFj);
}

} // namespace weft::conversion
