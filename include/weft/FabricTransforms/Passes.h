//===- Passes.h - fabric transforms -----------------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The passes on the fabric dialect (Passes.td beside this file).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_FABRICTRANSFORMS_PASSES_H
#define WEFT_FABRICTRANSFORMS_PASSES_H

#include "fabric/FabricOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace weft {

#define GEN_PASS_DECL
#include "weft/FabricTransforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "weft/FabricTransforms/Passes.h.inc"

} // namespace weft

#endif // WEFT_FABRICTRANSFORMS_PASSES_H
