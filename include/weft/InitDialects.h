//===- InitDialects.h - Register every dialect weft tools use ---*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_INITDIALECTS_H
#define WEFT_INITDIALECTS_H

#include "common/WeftDialect.h"
#include "fabric/FabricDialect.h"
#include "wavelet/WaveletDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

namespace weft {

/// Our dialects (the shared `weft` one, fabric, wavelet) and the upstream ones
/// the imported networks live in.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<common::WeftDialect, fabric::FabricDialect,
                  wavelet::WaveletDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::linalg::LinalgDialect>();
}

} // namespace weft

#endif // WEFT_INITDIALECTS_H
