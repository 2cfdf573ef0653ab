//===- FabricAttrs.h - fabric attributes, enums and types -------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_DIALECTS_FABRIC_FABRICATTRS_H
#define WEFT_DIALECTS_FABRIC_FABRICATTRS_H

#include "fabric/FabricDialect.h"
#include "weft/Target/Target.h"

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

/// Prints a router port set as `[west, ramp]` (custom directive `DirSet`).
void printDirSet(mlir::OpAsmPrinter &p, mlir::Operation *op,
                 mlir::IntegerAttr set);
/// Parses `[north, ramp]` into a port bit set.
mlir::ParseResult parseDirSet(mlir::OpAsmParser &parser,
                              mlir::IntegerAttr &set);
/// "[x, x+w) x [y, y+h)" for diagnostics.
std::string rectString(RectAttr r);
/// "[west, ramp]" for diagnostics.
std::string dirSetString(unsigned set);

/// The target of the nearest enclosing op that carries a `target` attribute
/// (fabric.program or wavelet.program), if any.
std::optional<weft::target::Target> getEnclosingTarget(mlir::Operation *op);

} // namespace weft::fabric

#endif // WEFT_DIALECTS_FABRIC_FABRICATTRS_H
