//===- TrainedDenseModel.h - A host model of a trained dense layer --------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// What a dense layer trained on the fabric computes (docs/training.md), as
// the same f32 operations in the same order as its PEs: the forward partial
// sums reduced west to east, dL/dx reduced down each column to its
// diagonal, the SGD and MBGD updates. TrainedDenseTest and
// TrainedColumnTest compare the simulator with it bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TEST_UNIT_TRAINEDDENSEMODEL_H
#define WEFT_TEST_UNIT_TRAINEDDENSEMODEL_H

#include "weft/Kernels/Chunks.h"

#include "weft/Sim/Simulator.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace weft::test {

using conversion::chunkBegin;
using conversion::chunkSize;

struct Case {
  int64_t K, M, S, R;
  bool relu = true, bias = true, inputGradient = true, mbgd = false;
  int64_t batch = 1, samples = 5;
  weft::sim::Mode mode = weft::sim::Mode::Reference;
};

inline std::string describe(const Case &c) {
  return std::to_string(c.K) + " -> " + std::to_string(c.M) + " on " +
         std::to_string(c.S) + " x " + std::to_string(c.R) +
         (c.relu ? ", relu" : "") + (c.bias ? ", bias" : "") +
         (c.inputGradient ? ", dx" : "") +
         (c.mbgd ? ", mbgd " + std::to_string(c.batch) : ", sgd");
}

/// What the layer computes over the samples, in the PEs' order.
struct Trace {
  std::vector<float> y, dx, w, b;
};

inline float fma2(float acc, float a, float b) {
  float p = a * b;
  return acc + p;
}

/// The layer over cs.samples samples of xs: dL/dy of sample s is what
/// `gradient(s, y)` writes into dy (M values) given the sample's y.
inline Trace hostModel(
    const Case &cs, std::vector<float> w, std::vector<float> b,
    const std::vector<float> &xs, float lr,
    const std::function<void(int64_t, const std::vector<float> &, float *)>
        &gradient) {
  const int64_t K = cs.K, M = cs.M, S = cs.S, R = cs.R;
  const float negLr = -lr;
  Trace tr;
  std::vector<float> g(static_cast<size_t>(K * M), 0.f), gb(size_t(M), 0.f);
  int64_t count = 0;
  for (int64_t s = 0; s < cs.samples; ++s) {
    const float *x = &xs[size_t(s * K)];
    std::vector<float> y(static_cast<size_t>(M)), dz(static_cast<size_t>(M)),
        dy(static_cast<size_t>(M));
    for (int64_t n = 0; n < M; ++n) {
      float psum = 0;
      for (int64_t c = 0; c < S; ++c) {
        float acc = 0;
        int64_t kb = chunkBegin(K, S, c);
        for (int64_t t = 0; t < chunkSize(K, S, c); ++t)
          acc = fma2(acc, w[size_t((kb + t) * M + n)], x[kb + t]);
        psum = c == 0 ? acc : acc + psum;
      }
      float z = cs.bias ? psum + b[size_t(n)] : psum;
      // (The inputs are finite: max is the PE's maxNum.)
      y[size_t(n)] = cs.relu ? std::max(z, 0.f) : z;
    }
    gradient(s, y, dy.data());
    for (int64_t n = 0; n < M; ++n)
      dz[size_t(n)] = cs.relu && y[size_t(n)] == 0 ? 0.f : dy[size_t(n)];
    tr.y.insert(tr.y.end(), y.begin(), y.end());
    if (cs.bias)
      for (int64_t n = 0; n < M; ++n) {
        if (cs.mbgd)
          gb[size_t(n)] = gb[size_t(n)] + dz[size_t(n)];
        else
          b[size_t(n)] = fma2(b[size_t(n)], dz[size_t(n)], negLr);
      }
    if (cs.inputGradient) {
      for (int64_t c = 0; c < S; ++c) {
        int64_t kb = chunkBegin(K, S, c), lk = chunkSize(K, S, c);
        // part[r][t]: row r's partial sum over its neurons.
        std::vector<std::vector<float>> part(
            static_cast<size_t>(R),
            std::vector<float>(static_cast<size_t>(lk)));
        for (int64_t r = 0; r < R; ++r) {
          int64_t mb = chunkBegin(M, R, r);
          for (int64_t t = 0; t < lk; ++t) {
            float acc = 0;
            for (int64_t n = mb; n < mb + chunkSize(M, R, r); ++n)
              acc = fma2(acc, w[size_t((kb + t) * M + n)], dz[size_t(n)]);
            part[size_t(r)][size_t(t)] = acc;
          }
        }
        const int64_t d = c;
        for (int64_t t = 0; t < lk; ++t) {
          auto P = [&](int64_t r) { return part[size_t(r)][size_t(t)]; };
          int64_t upperEnd = std::min(d, R);
          float up = upperEnd > 0 ? P(0) : 0;
          for (int64_t r = 1; r < upperEnd; ++r)
            up = P(r) + up;
          float v;
          if (d >= R) {
            v = up;
          } else {
            v = P(d);
            if (d > 0)
              v = v + up;
            if (d + 1 < R) {
              float low = P(R - 1);
              for (int64_t r = R - 2; r > d; --r)
                low = P(r) + low;
              v = v + low;
            }
          }
          tr.dx.push_back(v);
        }
      }
    }
    if (!cs.mbgd) {
      std::vector<float> dlr(static_cast<size_t>(M));
      for (int64_t n = 0; n < M; ++n)
        dlr[size_t(n)] = dz[size_t(n)] * negLr;
      for (int64_t k = 0; k < K; ++k)
        for (int64_t n = 0; n < M; ++n)
          w[size_t(k * M + n)] =
              fma2(w[size_t(k * M + n)], x[k], dlr[size_t(n)]);
    } else {
      for (int64_t k = 0; k < K; ++k)
        for (int64_t n = 0; n < M; ++n)
          g[size_t(k * M + n)] = fma2(g[size_t(k * M + n)], x[k], dz[size_t(n)]);
      if (++count == cs.batch) {
        for (int64_t i = 0; i < K * M; ++i) {
          w[size_t(i)] = fma2(w[size_t(i)], g[size_t(i)], negLr);
          g[size_t(i)] = 0;
        }
        if (cs.bias)
          for (int64_t n = 0; n < M; ++n) {
            b[size_t(n)] = fma2(b[size_t(n)], gb[size_t(n)], negLr);
            gb[size_t(n)] = 0;
          }
        count = 0;
      }
    }
  }
  tr.w = w;
  tr.b = b;
  return tr;
}

} // namespace weft::test

#endif // WEFT_TEST_UNIT_TRAINEDDENSEMODEL_H
