//===- TensorIO.h - Host tensor files (.npy, ONNX .pb) ----------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The host side of a run reads model inputs and writes outputs as files:
// NumPy .npy (format versions 1 to 3, little-endian, C order) or ONNX
// TensorProto .pb (the files of ONNX's test_data_set_N folders). A
// HostTensor is the element type, the shape and the raw little-endian bytes
// in row-major order; conversions to the machine's element types happen in
// the simulator's host, not here.
//
// Every reader checks the element count times the element size against the
// bytes actually present before allocating, and rejects what it does not
// understand (big-endian or Fortran-order .npy, external or segmented ONNX
// data, out-of-range typed values) with a sentence that says why.
//
// No MLIR dependency: weft-sim and weftc use this library.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TENSORIO_TENSORIO_H
#define WEFT_TENSORIO_TENSORIO_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::tensorio {

/// Element types of host tensors.
enum class DType : uint8_t { F32, F16, F64, I8, U8, I16, I32, I64, Bool };
constexpr unsigned kNumDTypes = 9;
/// Bytes per element (bool: 1).
unsigned dtypeSize(DType t);
/// "f32", "f16", "f64", "i8", "u8", "i16", "i32", "i64", "bool".
const char *dtypeName(DType t);
std::optional<DType> parseDType(const std::string &name);

/// A dense row-major tensor; `bytes` holds numElements() * dtypeSize(dtype)
/// little-endian bytes. An empty shape is a scalar (one element).
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  /// The product of the dimensions, or std::nullopt when a dimension is
  /// negative or the product overflows.
  std::optional<uint64_t> numElements() const;
  /// An empty string when the shape is valid and `bytes` has the right size,
  /// else a sentence naming the mismatch.
  std::string validate() const;
  bool operator==(const HostTensor &o) const {
    return dtype == o.dtype && shape == o.shape && bytes == o.bytes;
  }
};

/// Parses a .npy image (versions 1.0, 2.0 and 3.0 headers).
std::optional<HostTensor> readNpy(const uint8_t *data, size_t size,
                                  std::string *error);
/// Serializes as .npy: version 1.0 when the header fits, else 2.0. Returns
/// std::nullopt (with `error`) when the tensor does not validate().
std::optional<std::vector<uint8_t>> writeNpy(const HostTensor &t,
                                             std::string *error);

/// Parses a serialized onnx.TensorProto (raw_data or the typed repeated
/// fields).
std::optional<HostTensor> readOnnxTensor(const uint8_t *data, size_t size,
                                         std::string *error);
/// Serializes as an onnx.TensorProto with raw_data and the given name.
std::optional<std::vector<uint8_t>> writeOnnxTensor(const HostTensor &t,
                                                    const std::string &name,
                                                    std::string *error);

/// Reads `path`, choosing the format by its extension: ".npy" or ".pb".
std::optional<HostTensor> readTensorFile(const std::string &path,
                                         std::string *error);
/// Writes `t` to `path` in the format its extension names (".npy" or ".pb";
/// a .pb tensor is named after the file's stem).
bool writeTensorFile(const std::string &path, const HostTensor &t,
                     std::string *error);

} // namespace weft::tensorio

#endif // WEFT_TENSORIO_TENSORIO_H
