//===- OnnxTensor.cpp - onnx.TensorProto files ------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Uses the protobuf classes of Debian's libonnx-dev (built with ONNX_ML, so
// the generated header, reached through onnx/onnx_pb.h, is onnx-ml.pb.h). A TensorProto holds its
// elements either as little-endian raw_data or in the typed repeated field
// that the ONNX spec assigns to its data type: float_data (FLOAT), int32_data
// (INT32 and every narrower integer, BOOL and FLOAT16 as bit patterns),
// int64_data (INT64) or double_data (DOUBLE).
//
//===----------------------------------------------------------------------===//

#include "weft/TensorIO/TensorIO.h"

// onnx_pb.h defines ONNX_API and then includes onnx/onnx-ml.pb.h (ONNX_ML).
#include "onnx/onnx_pb.h"

#include <climits>
#include <cstring>

using namespace weft::tensorio;
using onnx::TensorProto;

template <typename T>
static std::optional<T> fail(std::string *error, const std::string &msg) {
  if (error)
    *error = msg;
  return std::nullopt;
}

static std::optional<DType> fromOnnx(int type) {
  switch (type) {
  case TensorProto::FLOAT:
    return DType::F32;
  case TensorProto::FLOAT16:
    return DType::F16;
  case TensorProto::DOUBLE:
    return DType::F64;
  case TensorProto::INT8:
    return DType::I8;
  case TensorProto::UINT8:
    return DType::U8;
  case TensorProto::INT16:
    return DType::I16;
  case TensorProto::INT32:
    return DType::I32;
  case TensorProto::INT64:
    return DType::I64;
  case TensorProto::BOOL:
    return DType::Bool;
  default:
    return std::nullopt;
  }
}

static int toOnnx(DType t) {
  switch (t) {
  case DType::F32:
    return TensorProto::FLOAT;
  case DType::F16:
    return TensorProto::FLOAT16;
  case DType::F64:
    return TensorProto::DOUBLE;
  case DType::I8:
    return TensorProto::INT8;
  case DType::U8:
    return TensorProto::UINT8;
  case DType::I16:
    return TensorProto::INT16;
  case DType::I32:
    return TensorProto::INT32;
  case DType::I64:
    return TensorProto::INT64;
  case DType::Bool:
    return TensorProto::BOOL;
  }
  return TensorProto::UNDEFINED;
}

/// Appends the low `size` bytes of `v`, little-endian.
static void putLE(std::vector<uint8_t> &out, uint64_t v, unsigned size) {
  for (unsigned i = 0; i < size; ++i)
    out.push_back(uint8_t(v >> (8 * i)));
}

std::optional<HostTensor>
weft::tensorio::readOnnxTensor(const uint8_t *data, size_t size,
                               std::string *error) {
  using R = HostTensor;
  if (size > size_t(INT_MAX))
    return fail<R>(error, "TensorProto of " + std::to_string(size) +
                              " bytes is larger than protobuf can parse");
  TensorProto proto;
  if (!proto.ParseFromArray(data, int(size)))
    return fail<R>(error, "not a valid onnx.TensorProto (protobuf parse "
                          "failed)");
  std::string what = proto.name().empty() ? std::string("TensorProto")
                                          : "TensorProto '" + proto.name() + "'";
  std::optional<DType> dt = fromOnnx(proto.data_type());
  if (!dt)
    return fail<R>(error, what + " has data type " +
                              std::to_string(proto.data_type()) +
                              ", which is not supported (float, float16, "
                              "double, int8, uint8, int16, int32, int64, "
                              "bool)");
  if (proto.data_location() == TensorProto::EXTERNAL)
    return fail<R>(error, what + " keeps its data in an external file, "
                                 "which is not supported");
  if (proto.has_segment())
    return fail<R>(error, what + " is a segment of a larger tensor, which "
                                 "is not supported");
  HostTensor t;
  t.dtype = *dt;
  t.shape.assign(proto.dims().begin(), proto.dims().end());
  std::optional<uint64_t> n = t.numElements();
  if (!n || *n > UINT64_MAX / dtypeSize(t.dtype))
    return fail<R>(error, what + " has a negative dimension or too many "
                                 "elements");
  uint64_t want = *n * dtypeSize(t.dtype);
  unsigned esize = dtypeSize(t.dtype);

  if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (raw.size() != want)
      return fail<R>(error, what + ": " + std::to_string(*n) + " " +
                                dtypeName(t.dtype) + " elements need " +
                                std::to_string(want) +
                                " bytes of raw_data, found " +
                                std::to_string(raw.size()));
    t.bytes.assign(raw.begin(), raw.end());
    return t;
  }

  // Typed fields: the count must match before anything is allocated.
  auto count = [&](int have, const char *field) -> bool {
    if (uint64_t(have) == *n)
      return true;
    fail<R>(error, what + ": " + std::to_string(*n) + " elements expected in " +
                       field + ", found " + std::to_string(have));
    return false;
  };
  // Only reserve once a field's count has matched: then `want` is bounded by
  // the elements actually present in the input.
  auto reserve = [&] { t.bytes.reserve(size_t(want)); };
  switch (t.dtype) {
  case DType::F32:
    if (!count(proto.float_data_size(), "float_data"))
      return std::nullopt;
    reserve();
    for (float f : proto.float_data()) {
      uint32_t b;
      std::memcpy(&b, &f, 4);
      putLE(t.bytes, b, 4);
    }
    break;
  case DType::F64:
    if (!count(proto.double_data_size(), "double_data"))
      return std::nullopt;
    reserve();
    for (double d : proto.double_data()) {
      uint64_t b;
      std::memcpy(&b, &d, 8);
      putLE(t.bytes, b, 8);
    }
    break;
  case DType::I64:
    if (!count(proto.int64_data_size(), "int64_data"))
      return std::nullopt;
    reserve();
    for (int64_t v : proto.int64_data())
      putLE(t.bytes, uint64_t(v), 8);
    break;
  default: {
    // int32_data holds INT32, the narrower integers, BOOL and FLOAT16 bits.
    if (!count(proto.int32_data_size(), "int32_data"))
      return std::nullopt;
    reserve();
    int64_t lo = INT32_MIN, hi = INT32_MAX;
    switch (t.dtype) {
    case DType::I8:
      lo = -128, hi = 127;
      break;
    case DType::U8:
      lo = 0, hi = 255;
      break;
    case DType::I16:
      lo = -32768, hi = 32767;
      break;
    case DType::F16:
      lo = 0, hi = 65535;
      break;
    case DType::Bool:
      lo = 0, hi = 1;
      break;
    default:
      break;
    }
    for (int i = 0; i < proto.int32_data_size(); ++i) {
      int64_t v = proto.int32_data(i);
      if (v < lo || v > hi)
        return fail<R>(error, what + ": int32_data[" + std::to_string(i) +
                                  "] = " + std::to_string(v) +
                                  " does not fit " + dtypeName(t.dtype));
      putLE(t.bytes, uint64_t(v), esize);
    }
    break;
  }
  }
  return t;
}

std::optional<std::vector<uint8_t>>
weft::tensorio::writeOnnxTensor(const HostTensor &t, const std::string &name,
                                std::string *error) {
  using R = std::vector<uint8_t>;
  std::string err = t.validate();
  if (!err.empty())
    return fail<R>(error, err);
  TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(toOnnx(t.dtype));
  for (int64_t d : t.shape)
    proto.add_dims(d);
  proto.set_raw_data(std::string(t.bytes.begin(), t.bytes.end()));
  std::string out;
  if (!proto.SerializeToString(&out))
    return fail<R>(error, "cannot serialize the TensorProto");
  return R(out.begin(), out.end());
}
