//===- Passes.h - conversions -----------------------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The conversions linalg -> fabric and fabric -> wavelet (Passes.td beside
// this file).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_PASSES_H
#define WEFT_CONVERSION_PASSES_H

#include "fabric/FabricOps.h"
#include "wavelet/WaveletOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace weft {

#define GEN_PASS_DECL
#include "weft/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "weft/Conversion/Passes.h.inc"

} // namespace weft

#endif // WEFT_CONVERSION_PASSES_H
