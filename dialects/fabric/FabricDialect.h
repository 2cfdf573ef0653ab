//===- FabricDialect.h - The fabric dialect ---------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_DIALECTS_FABRIC_FABRICDIALECT_H
#define WEFT_DIALECTS_FABRIC_FABRICDIALECT_H

#include "mlir/IR/Dialect.h"

#include "fabric/FabricDialect.h.inc"

#endif // WEFT_DIALECTS_FABRIC_FABRICDIALECT_H
