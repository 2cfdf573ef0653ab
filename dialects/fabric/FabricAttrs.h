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

namespace weft::fabric {
/// The program (weft/Kernels/Expression.h: four floats a node) of the
/// #fabric.node attributes `nodes` of an expression or a fused activation;
/// failure, with a sentence in `why`, for a node that is no #fabric.node or
/// calls no column op.
mlir::FailureOr<std::vector<float>> expressionProgram(mlir::ArrayAttr nodes,
                                                      std::string &why);
} // namespace weft::fabric

#endif // WEFT_DIALECTS_FABRIC_FABRICATTRS_H
