//===- ModelLoader.cpp - Parse and check ONNX protobufs -------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "ModelLoader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <climits>
#include <cstring>

using namespace weft::import::detail;
using llvm::createStringError;
using llvm::Expected;
using llvm::StringRef;

static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE host needed");

template <typename... Ts>
static llvm::Error error(const char *fmt, const Ts &...vals) {
  return createStringError(llvm::inconvertibleErrorCode(), fmt, vals...);
}

unsigned weft::import::detail::elementByteSize(int32_t dtype) {
  switch (dtype) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return 4;
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::BOOL:
    return 1;
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    return 2;
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
  case onnx::TensorProto::DOUBLE:
    return 8;
  default:
    return 0;
  }
}

StringRef weft::import::detail::dtypeName(int32_t dtype) {
  if (!onnx::TensorProto_DataType_IsValid(dtype))
    return "<invalid>";
  const std::string &name = onnx::TensorProto_DataType_Name(
      static_cast<onnx::TensorProto_DataType>(dtype));
  return name;
}

bool weft::import::detail::isFloatDtype(int32_t dtype) {
  return dtype == onnx::TensorProto::FLOAT ||
         dtype == onnx::TensorProto::DOUBLE ||
         dtype == onnx::TensorProto::FLOAT16 ||
         dtype == onnx::TensorProto::BFLOAT16;
}

bool weft::import::detail::isUnsignedDtype(int32_t dtype) {
  return dtype == onnx::TensorProto::UINT8 ||
         dtype == onnx::TensorProto::UINT16 ||
         dtype == onnx::TensorProto::UINT32 ||
         dtype == onnx::TensorProto::UINT64 ||
         dtype == onnx::TensorProto::BOOL;
}

int64_t
weft::import::detail::checkedNumElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d != 0 && n > kMaxElements / d))
      return -1;
    n *= d;
  }
  return n;
}

int64_t TensorData::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

static uint16_t load16(const char *p) {
  return llvm::support::endian::read16le(p);
}

/// IEEE half to float, exact.
static float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 0x1f,
           mant = h & 0x3ff, bits;
  if (exp == 0x1f)
    bits = sign | 0x7f800000u | (mant << 13);
  else if (exp != 0)
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  else if (mant == 0)
    bits = sign;
  else {
    // Subnormal half: normalise into a float.
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while (!(mant & 0x400));
    bits = sign | uint32_t(112 - e) << 23 | ((mant & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double TensorData::getDouble(int64_t i) const {
  const char *p = bytes.data() + i * elementByteSize(dtype);
  switch (dtype) {
  case onnx::TensorProto::FLOAT: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case onnx::TensorProto::DOUBLE: {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  case onnx::TensorProto::FLOAT16:
    return halfToFloat(load16(p));
  case onnx::TensorProto::BFLOAT16: {
    uint32_t bits = uint32_t(load16(p)) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case onnx::TensorProto::UINT64: {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return double(v);
  }
  default:
    return double(getInt(i));
  }
}

int64_t TensorData::getInt(int64_t i) const {
  const char *p = bytes.data() + i * elementByteSize(dtype);
  switch (dtype) {
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case onnx::TensorProto::INT32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case onnx::TensorProto::UINT32: {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case onnx::TensorProto::INT16:
    return int16_t(load16(p));
  case onnx::TensorProto::UINT16:
    return load16(p);
  case onnx::TensorProto::INT8:
    return int8_t(*p);
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    return uint8_t(*p);
  default: {
    double d = getDouble(i);
    // Float to int conversion of out-of-range values is undefined in C++.
    if (!(d > -9.2e18 && d < 9.2e18))
      return d > 0 ? INT64_MAX : INT64_MIN;
    return int64_t(d);
  }
  }
}

TensorData weft::import::detail::makeTensor(llvm::ArrayRef<int64_t> shape,
                                            int32_t dtype) {
  TensorData t;
  t.shape.assign(shape.begin(), shape.end());
  t.dtype = dtype;
  size_t size = size_t(t.numElements()) * elementByteSize(dtype);
  // uint64_t storage gives every element type its alignment.
  auto storage = std::make_shared<std::vector<uint64_t>>((size + 7) / 8 + 1);
  t.bytes = llvm::ArrayRef<char>(reinterpret_cast<char *>(storage->data()),
                                 size);
  t.owner = storage;
  return t;
}

Expected<std::unique_ptr<onnx::ModelProto>>
weft::import::detail::parseModel(StringRef bytes) {
  if (bytes.empty())
    return error("empty file is not an ONNX model");
  if (bytes.size() > size_t(INT_MAX))
    return error("model of %zu bytes exceeds protobuf's 2 GiB limit; keep "
                 "weights in external data files",
                 bytes.size());
  auto model = std::make_unique<onnx::ModelProto>();
  if (!model->ParseFromArray(bytes.data(), int(bytes.size())))
    return error("not a valid ONNX protobuf (malformed or truncated)");
  if (!model->has_graph())
    return error("model has no graph");
  bool haveDefault = false;
  for (const onnx::OperatorSetIdProto &op : model->opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") {
      if (op.version() < 1 || op.version() > 10000)
        return error("invalid opset version %lld", (long long)op.version());
      haveDefault = true;
    }
  }
  // IR version 3+ models must name their opset; older ones mean opset 1.
  if (!haveDefault && model->ir_version() >= 3)
    return error("model imports no opset of the default ONNX domain");
  return model;
}

/// Resolves an external-data location under `modelDir`, refusing absolute
/// paths, `..` components and symlinks that lead outside the directory.
static Expected<std::string> resolveExternal(StringRef location,
                                             StringRef modelDir) {
  if (modelDir.empty())
    return error("external data '%s' refused: no model directory to resolve "
                 "it against",
                 location.str().c_str());
  if (location.empty() || location.contains('\0'))
    return error("external data location is empty or contains NUL");
  if (llvm::sys::path::is_absolute(location) || location.starts_with("/") ||
      location.starts_with("\\"))
    return error("external data path '%s' is absolute; it must stay inside "
                 "the model's directory",
                 location.str().c_str());
  for (auto it = llvm::sys::path::begin(location),
            end = llvm::sys::path::end(location);
       it != end; ++it)
    if (*it == "..")
      return error("external data path '%s' leaves the model's directory",
                   location.str().c_str());
  llvm::SmallString<256> dirReal, fileReal, joined(modelDir);
  llvm::sys::path::append(joined, location);
  if (llvm::sys::fs::real_path(modelDir, dirReal))
    return error("cannot resolve model directory '%s'", modelDir.str().c_str());
  if (std::error_code ec = llvm::sys::fs::real_path(joined, fileReal))
    return error("external data file '%s' not found: %s",
                 location.str().c_str(), ec.message().c_str());
  StringRef dir = dirReal.str(), file = fileReal.str();
  if (!file.starts_with(dir) || file.size() <= dir.size() ||
      !llvm::sys::path::is_separator(file[dir.size()]))
    return error("external data path '%s' resolves outside the model's "
                 "directory (symlink?)",
                 location.str().c_str());
  return std::string(file);
}

static Expected<TensorData> loadExternal(onnx::TensorProto &tensor,
                                         StringRef modelDir, TensorData t,
                                         uint64_t size) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto &kv : tensor.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      long long v;
      if (StringRef(kv.value()).getAsInteger(10, v) || v < 0)
        return error("external data %s '%s' is not a non-negative integer",
                     kv.key().c_str(), kv.value().c_str());
      (kv.key() == "offset" ? offset : length) = v;
    }
  }
  Expected<std::string> path = resolveExternal(location, modelDir);
  if (!path)
    return path.takeError();
  uint64_t fileSize;
  if (std::error_code ec = llvm::sys::fs::file_size(*path, fileSize))
    return error("cannot stat external data '%s': %s", location.c_str(),
                 ec.message().c_str());
  if (length >= 0 && uint64_t(length) != size)
    return error("external data length %lld does not match %llu bytes of "
                 "dims x dtype",
                 (long long)length, (unsigned long long)size);
  if (uint64_t(offset) > fileSize || fileSize - uint64_t(offset) < size)
    return error("external data '%s' holds %llu bytes after offset %lld, "
                 "dims x dtype need %llu",
                 location.c_str(),
                 (unsigned long long)(uint64_t(offset) > fileSize
                                          ? 0
                                          : fileSize - offset),
                 (long long)offset, (unsigned long long)size);
  if (size == 0) {
    t.bytes = {};
    return t;
  }
  // getFileSlice maps large slices, so the weights are not copied here.
  auto buffer = llvm::MemoryBuffer::getFileSlice(*path, size, offset,
                                                 /*IsVolatile=*/false);
  if (!buffer)
    return error("cannot read external data '%s': %s", location.c_str(),
                 buffer.getError().message().c_str());
  std::shared_ptr<llvm::MemoryBuffer> owned = std::move(*buffer);
  t.bytes = llvm::ArrayRef<char>(owned->getBufferStart(), size);
  t.owner = owned;
  return t;
}

template <typename Src, typename Dst>
static void pack(const google::protobuf::RepeatedField<Src> &field,
                 TensorData &t) {
  Dst *out = reinterpret_cast<Dst *>(const_cast<char *>(t.bytes.data()));
  for (int i = 0, e = field.size(); i < e; ++i)
    out[i] = static_cast<Dst>(field.Get(i));
}

Expected<TensorData> weft::import::detail::loadTensor(onnx::TensorProto &tensor,
                                                      StringRef modelDir) {
  int32_t dtype = tensor.data_type();
  unsigned elemSize = elementByteSize(dtype);
  if (elemSize == 0)
    return error("element type %s is not supported",
                 dtypeName(dtype).str().c_str());
  if (tensor.has_segment())
    return error("segmented tensors are not supported");
  llvm::SmallVector<int64_t> shape(tensor.dims().begin(),
                                      tensor.dims().end());
  int64_t n = checkedNumElements(shape);
  if (n < 0)
    return error("dims have a negative entry or more than 2^40 elements");
  uint64_t size = uint64_t(n) * elemSize;

  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    TensorData t;
    t.shape = shape;
    t.dtype = dtype;
    return loadExternal(tensor, modelDir, std::move(t), size);
  }

  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != size)
      return error("raw_data holds %zu bytes, dims x dtype need %llu",
                   tensor.raw_data().size(), (unsigned long long)size);
    // Take the parser's string instead of copying it. Heap strings are
    // 16-byte aligned; short (inline) ones may not be, so copy those.
    std::shared_ptr<std::string> raw(tensor.release_raw_data());
    if (reinterpret_cast<uintptr_t>(raw->data()) % elemSize != 0) {
      TensorData t = makeTensor(shape, dtype);
      std::memcpy(const_cast<char *>(t.bytes.data()), raw->data(), size);
      return t;
    }
    TensorData t;
    t.shape = shape;
    t.dtype = dtype;
    t.bytes = llvm::ArrayRef<char>(raw->data(), size);
    t.owner = raw;
    return t;
  }

  // Typed fields: check the count before allocating anything.
  int64_t have = -1;
  switch (dtype) {
  case onnx::TensorProto::FLOAT:
    have = tensor.float_data_size();
    break;
  case onnx::TensorProto::DOUBLE:
    have = tensor.double_data_size();
    break;
  case onnx::TensorProto::INT64:
    have = tensor.int64_data_size();
    break;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    have = tensor.uint64_data_size();
    break;
  default:
    have = tensor.int32_data_size();
    break;
  }
  if (have != n)
    return error("tensor holds %lld values, dims need %lld", (long long)have,
                 (long long)n);
  TensorData t = makeTensor(shape, dtype);
  switch (dtype) {
  case onnx::TensorProto::FLOAT:
    pack<float, float>(tensor.float_data(), t);
    break;
  case onnx::TensorProto::DOUBLE:
    pack<double, double>(tensor.double_data(), t);
    break;
  case onnx::TensorProto::INT64:
    pack<int64_t, int64_t>(tensor.int64_data(), t);
    break;
  case onnx::TensorProto::UINT32:
    pack<uint64_t, uint32_t>(tensor.uint64_data(), t);
    break;
  case onnx::TensorProto::UINT64:
    pack<uint64_t, uint64_t>(tensor.uint64_data(), t);
    break;
  case onnx::TensorProto::INT32:
    pack<int32_t, int32_t>(tensor.int32_data(), t);
    break;
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    pack<int32_t, uint16_t>(tensor.int32_data(), t);
    break;
  default: // INT8, UINT8, BOOL
    pack<int32_t, uint8_t>(tensor.int32_data(), t);
    break;
  }
  return t;
}
