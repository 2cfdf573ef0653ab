//===- ModelLoader.h - Parse and check ONNX protobufs -----------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The protobuf layer of the importer: parsing a ModelProto without
// exceptions, and turning TensorProtos (inline or external) into packed
// bytes after checking dims x dtype against the bytes actually present. It
// knows nothing of MLIR, so the fuzzer can drive it directly.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_IMPORT_MODELLOADER_H
#define WEFT_LIB_IMPORT_MODELLOADER_H

#include "onnx/onnx_pb.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>

namespace weft::import::detail {

/// The largest tensor (in elements) the importer accepts; far above any
/// network a fabric holds, far below what overflows 64-bit byte counts.
constexpr int64_t kMaxElements = int64_t(1) << 40;

/// A tensor's contents: densely packed, little-endian elements of `dtype`
/// (an onnx::TensorProto_DataType). `owner` keeps `bytes` alive, so the same
/// bytes can back several constants (reshapes) and MLIR blobs without copies.
struct TensorData {
  llvm::SmallVector<int64_t> shape;
  int32_t dtype = 0;
  std::shared_ptr<const void> owner;
  llvm::ArrayRef<char> bytes;

  int64_t numElements() const;
  /// Element `i` converted to int64 (ints, bools, truncated floats).
  int64_t getInt(int64_t i) const;
  /// Element `i` converted to double.
  double getDouble(int64_t i) const;
};

/// Bytes per element of an ONNX dtype, or 0 when weft does not support it.
unsigned elementByteSize(int32_t dtype);
/// The ONNX spelling of a dtype ("FLOAT", "INT64", ...).
llvm::StringRef dtypeName(int32_t dtype);
bool isFloatDtype(int32_t dtype);
bool isUnsignedDtype(int32_t dtype);

/// Number of elements of `shape`, or -1 when a dim is negative or the
/// product leaves [0, kMaxElements].
int64_t checkedNumElements(llvm::ArrayRef<int64_t> shape);

/// Parses a serialized ModelProto (never throws) and checks the structure
/// the importer relies on: a graph, an opset for the default domain.
llvm::Expected<std::unique_ptr<onnx::ModelProto>>
parseModel(llvm::StringRef bytes);

/// Takes the contents out of `tensor`: raw_data is moved (not copied), typed
/// fields are packed, external data is read from a file under `modelDir`
/// (refused when the path leaves it or `modelDir` is empty).
llvm::Expected<TensorData> loadTensor(onnx::TensorProto &tensor,
                                      llvm::StringRef modelDir);

/// Makes a tensor of `shape` and `dtype` that owns fresh zeroed storage.
TensorData makeTensor(llvm::ArrayRef<int64_t> shape, int32_t dtype);

} // namespace weft::import::detail

#endif // WEFT_LIB_IMPORT_MODELLOADER_H
