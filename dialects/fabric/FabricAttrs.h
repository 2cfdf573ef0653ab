//===- FabricAttrs.h - fabric attributes, enums and types -------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_DIALECTS_FABRIC_FABRICATTRS_H
#define WEFT_DIALECTS_FABRIC_FABRICATTRS_H

#include "common/WeftAttrs.h"
#include "fabric/FabricDialect.h"
#include "weft/Kernels/ConvMapping.h"
#include "weft/Kernels/PoolMapping.h"
#include "weft/Machine/Target.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/Types.h"

#include "fabric/FabricEnums.h.inc"

#include "fabric/FabricInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fabric/FabricAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "fabric/FabricTypes.h.inc"

#endif // WEFT_DIALECTS_FABRIC_FABRICATTRS_H
