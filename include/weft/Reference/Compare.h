//===- Compare.h - Elementwise comparison of host tensors -------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The one comparison rule weft uses for numbers (docs/reference.md): floats
// agree when |got - want| <= atol + rtol * |want|, NaN agrees with NaN in the
// same position and infinities with equal infinities; integers and booleans
// must be equal. Plain C++, no MLIR, so the simulator tests can use it too.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_REFERENCE_COMPARE_H
#define WEFT_REFERENCE_COMPARE_H

#include "weft/TensorIO/TensorIO.h"

#include <cstdint>
#include <string>
#include <vector>

namespace weft::reference {

/// Tolerances for floating-point elements (integers are always exact). The
/// defaults are the ONNX backend runner's, used for its test data.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

/// The outcome of comparing two tensors.
struct Comparison {
  /// True when the dtypes and shapes match and every element agrees.
  bool equal = false;
  /// Elements that disagree.
  int64_t mismatches = 0;
  /// The largest |got - want| over disagreeing elements (NaN against a
  /// number counts as infinite), and where it is.
  double maxAbsError = 0;
  std::vector<int64_t> worstIndex;
  double worstGot = 0, worstWant = 0;
  /// Why the tensors differ, in one line; empty when they agree.
  std::string message;
};

/// Compares `got` with `want` elementwise. The dtypes and shapes must be the
/// same; a difference there is reported before any element is looked at.
Comparison compareTensors(const tensorio::HostTensor &got,
                          const tensorio::HostTensor &want,
                          const Tolerance &tolerance = {});

} // namespace weft::reference

#endif // WEFT_REFERENCE_COMPARE_H
