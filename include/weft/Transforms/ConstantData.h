//===- ConstantData.h - Reading and making f32 constants --------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Imported weights are dense_resource blobs, small constants are dense
// elements; the folding passes read both through these helpers and make
// blobs for anything large, so weights are never printed inline.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TRANSFORMS_CONSTANTDATA_H
#define WEFT_TRANSFORMS_CONSTANTDATA_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace weft {

/// The f32 contents of a constant (splats expanded). Fails, saying why in
/// `why`, for other element types and for blobs without data (elided).
mlir::FailureOr<llvm::SmallVector<float>> readF32(mlir::ElementsAttr attr,
                                                 std::string &why);

/// A constant of `type` holding `values`: inline when small, otherwise a
/// dense_resource blob named after `name`.
mlir::ElementsAttr makeF32(mlir::RankedTensorType type,
                           llvm::ArrayRef<float> values, llvm::StringRef name);

} // namespace weft

#endif // WEFT_TRANSFORMS_CONSTANTDATA_H
