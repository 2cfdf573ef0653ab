//===- WeftDialect.h - The weft base dialect --------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_DIALECTS_COMMON_WEFTDIALECT_H
#define WEFT_DIALECTS_COMMON_WEFTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "common/WeftDialect.h.inc"

#endif // WEFT_DIALECTS_COMMON_WEFTDIALECT_H
