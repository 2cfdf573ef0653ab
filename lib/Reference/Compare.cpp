//===- Compare.cpp - Elementwise comparison of host tensors ---------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Reference/Compare.h"

#include "weft/Machine/Numerics.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

using namespace weft;
using namespace weft::tensorio;
using namespace weft::reference;

namespace {
/// One element as a double (floats) or an int64 (integers and booleans).
struct Element {
  bool isFloat;
  double f;
  int64_t i;
};
} // namespace

template <typename T>
static T load(const uint8_t *bytes, int64_t index) {
  T value;
  std::memcpy(&value, bytes + index * sizeof(T), sizeof(T));
  return value;
}

static Element elementAt(DType dtype, const uint8_t *bytes, int64_t index) {
  switch (dtype) {
  case DType::F32:
    return {true, load<float>(bytes, index), 0};
  case DType::F64:
    return {true, load<double>(bytes, index), 0};
  case DType::F16:
    return {true, machine::f16ToF32(load<uint16_t>(bytes, index)), 0};
  case DType::Bool:
    return {false, 0, load<uint8_t>(bytes, index) != 0};
  case DType::I8:
    return {false, 0, load<int8_t>(bytes, index)};
  case DType::U8:
    return {false, 0, load<uint8_t>(bytes, index)};
  case DType::I16:
    return {false, 0, load<int16_t>(bytes, index)};
  case DType::I32:
    return {false, 0, load<int32_t>(bytes, index)};
  case DType::I64:
    return {false, 0, load<int64_t>(bytes, index)};
  default:
    break;
  }
  return {false, 0, 0};
}

static bool comparable(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::F64:
  case DType::F16:
  case DType::Bool:
  case DType::I8:
  case DType::U8:
  case DType::I16:
  case DType::I32:
  case DType::I64:
    return true;
  default:
    return false;
  }
}

static std::string shapeString(const std::vector<int64_t> &shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

/// The row-major multi-index of flat position `flat` in `shape`.
static std::vector<int64_t> unflatten(int64_t flat,
                                      const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return index;
}

Comparison weft::reference::compareTensors(const HostTensor &got,
                                           const HostTensor &want,
                                           const Tolerance &tolerance) {
  Comparison result;
  if (got.dtype != want.dtype) {
    result.message = std::string("dtype ") + dtypeName(got.dtype) +
                     ", expected " + dtypeName(want.dtype);
    return result;
  }
  if (got.shape != want.shape) {
    result.message = "shape " + shapeString(got.shape) + ", expected " +
                     shapeString(want.shape);
    return result;
  }
  if (!comparable(got.dtype)) {
    result.message =
        std::string("cannot compare elements of dtype ") + dtypeName(got.dtype);
    return result;
  }
  int64_t count = 1;
  for (int64_t d : want.shape)
    count *= d;
  size_t bytes = count * dtypeSize(want.dtype);
  if (got.bytes.size() != bytes || want.bytes.size() != bytes) {
    result.message = "byte size does not match the shape";
    return result;
  }

  int64_t worst = -1;
  for (int64_t i = 0; i < count; ++i) {
    Element g = elementAt(got.dtype, got.bytes.data(), i);
    Element w = elementAt(want.dtype, want.bytes.data(), i);
    double error;
    if (g.isFloat) {
      if (std::isnan(g.f) || std::isnan(w.f)) {
        if (std::isnan(g.f) && std::isnan(w.f))
          continue;
        error = std::numeric_limits<double>::infinity();
      } else if (g.f == w.f) {
        continue; // Also equal infinities, whose difference is NaN.
      } else {
        error = std::fabs(g.f - w.f);
        // An infinity matches only itself: no tolerance reaches it.
        if (std::isfinite(w.f) &&
            error <= tolerance.atol + tolerance.rtol * std::fabs(w.f))
          continue;
      }
    } else {
      if (g.i == w.i)
        continue;
      error = std::fabs(static_cast<double>(g.i) - static_cast<double>(w.i));
    }
    ++result.mismatches;
    if (worst < 0 || error > result.maxAbsError) {
      worst = i;
      result.maxAbsError = error;
      result.worstGot = g.isFloat ? g.f : static_cast<double>(g.i);
      result.worstWant = w.isFloat ? w.f : static_cast<double>(w.i);
    }
  }
  if (result.mismatches == 0) {
    result.equal = true;
    return result;
  }
  result.worstIndex = unflatten(worst, want.shape);
  std::ostringstream os;
  os.precision(9);
  os << result.mismatches << " of " << count
     << " elements differ (max abs err " << result.maxAbsError << " at "
     << shapeString(result.worstIndex) << ": got " << result.worstGot
     << ", expected " << result.worstWant << ")";
  result.message = os.str();
  return result;
}
