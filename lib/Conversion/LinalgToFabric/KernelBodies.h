//===- KernelBodies.h - The bodies of matched kernels (internal) -*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-convert-to-fabric rebuilds each matched dense layer, convolution
// and pooling as the body of its fabric.kernel, on one sample, from the
// scheme's constants, in the importer's linalg form (so the host reference
// of the kernel is the model's).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_CONVERSION_KERNELBODIES_H
#define WEFT_LIB_CONVERSION_KERNELBODIES_H

#include "weft/Conversion/DenseLayer.h"
#include "weft/Conversion/PoolKernel.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace weft::conversion {

/// y = relu?(x W + b) with x : tensor<1xKxf32>, W and b the scheme's
/// constants.
mlir::Value buildLayerBody(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value x, const DenseLayer &layer,
                           mlir::ElementsAttr weights,
                           mlir::ElementsAttr biasAttr);

/// The zero pad, the convolution (grouped ones in the ngchw form) into the
/// bias broadcast (or zeros), and the ReLU or ReLU6.
mlir::Value buildConvBody(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value x, mlir::RankedTensorType outType,
                          const ConvShape &s, mlir::ElementsAttr weights,
                          mlir::ElementsAttr biasAttr);

/// The pad the windows read, the max or sum pooling, an average's divisor.
mlir::Value buildPoolBody(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value x, mlir::RankedTensorType outType,
                          const PoolShape &s);

} // namespace weft::conversion

#endif // WEFT_LIB_CONVERSION_KERNELBODIES_H
