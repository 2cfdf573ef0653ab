//===- Train.h - What `weftc train` does around the simulator ---*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The host side of training (docs/training.md): checking the samples and
// labels, and writing the trained weights, read back from the PEs, into a
// copy of the input ONNX model in the initializers' own names, shapes and
// layouts.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_DRIVER_TRAIN_H
#define WEFT_DRIVER_TRAIN_H

#include "weft/TensorIO/TensorIO.h"

#include <cstdint>
#include <string>
#include <vector>

namespace weft::driver {

/// A trained dense kernel's parameters as the fabric holds them: W as
/// K x M row-major (input k, neuron n), b the M biases (empty: none), and
/// the initializers they go back into (the kernel scheme's sources; W's
/// initializer is M x K when `transposed`).
struct TrainedValues {
  std::string kernel;
  std::string weightsSource, biasSource;
  bool transposed = false;
  /// A convolution: `w` is already in its initializer's OIHW order.
  bool conv = false;
  int64_t K = 0, M = 0;
  std::vector<float> w, b;
};

/// The labels as the fabric takes them (one int16 per sample), from an
/// integer tensor of `samples` elements with every value in [0, classes);
/// otherwise empty, with `error` naming the first problem.
std::vector<int16_t> checkLabels(const tensorio::HostTensor &labels,
                                 int64_t samples, int64_t classes,
                                 std::string &error);

/// `modelBytes` (a serialized ONNX model) with the initializers every
/// kernel in `trained` names replaced (in their own shapes and layouts).
/// False with `error` when one is missing, not float32, stored outside the
/// model or of another size.
bool replaceInitializers(const std::string &modelBytes,
                         const std::vector<TrainedValues> &trained,
                         std::string &outBytes, std::string &error);

} // namespace weft::driver

#endif // WEFT_DRIVER_TRAIN_H
