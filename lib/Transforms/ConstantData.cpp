//===- ConstantData.cpp - Reading and making f32 constants ----------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Transforms/ConstantData.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

FailureOr<SmallVector<float>> weft::readF32(ElementsAttr attr,
                                            std::string &why) {
  auto type = cast<ShapedType>(attr.getType());
  if (!type.getElementType().isF32()) {
    why = "element type is not f32";
    return failure();
  }
  int64_t n = type.getNumElements();
  SmallVector<float> out;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    out.reserve(n);
    for (float f : dense.getValues<float>())
      out.push_back(f);
    return out;
  }
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob) {
      why = "blob '" + res.getRawHandle().getKey().str() + "' holds no data";
      return failure();
    }
    ArrayRef<char> data = blob->getData();
    if (int64_t(data.size()) != n * 4) {
      why = "blob '" + res.getRawHandle().getKey().str() + "' holds " +
            std::to_string(data.size()) + " bytes, the type needs " +
            std::to_string(n * 4);
      return failure();
    }
    out.resize(n);
    std::memcpy(out.data(), data.data(), data.size());
    return out;
  }
  why = "unsupported constant kind";
  return failure();
}

ElementsAttr weft::makeF32(RankedTensorType type, ArrayRef<float> values,
                           StringRef name) {
  if (values.size() <= 16 || llvm::all_equal(values)) {
    if (!values.empty() && llvm::all_equal(values))
      return DenseElementsAttr::get(type, values.front());
    return DenseElementsAttr::get(type, values);
  }
  return DenseResourceElementsAttr::get(
      type, name, HeapAsmResourceBlob::allocateAndCopyInferAlign(values));
}
