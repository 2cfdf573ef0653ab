//===- WeftAttrs.h - attributes shared by fabric and wavelet ----*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_DIALECTS_COMMON_WEFTATTRS_H
#define WEFT_DIALECTS_COMMON_WEFTATTRS_H

#include "common/WeftDialect.h"
#include "weft/Machine/Target.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

#include "common/WeftEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "common/WeftAttrs.h.inc"

namespace weft::common {

/// Prints a router port set as `[west, ramp]` (custom directive `DirSet`).
void printDirSet(mlir::OpAsmPrinter &p, mlir::Operation *op,
                 mlir::IntegerAttr set);
/// Parses `[north, ramp]` into a port bit set.
mlir::ParseResult parseDirSet(mlir::OpAsmParser &parser,
                              mlir::IntegerAttr &set);
/// Prints a router's positions, flat (inputs, outputs, count) triples, as
/// `[from [west] to [ramp] x 12, from [ramp] to [east] x 4]` (custom
/// directive `RoutePositions`).
void printRoutePositions(mlir::OpAsmPrinter &p, mlir::Operation *op,
                         mlir::DenseI64ArrayAttr positions);
mlir::ParseResult parseRoutePositions(mlir::OpAsmParser &parser,
                                      mlir::DenseI64ArrayAttr &positions);
/// Why `positions` (flat triples) are not a valid cycle of router
/// positions for a route of port sets `inputs` and `outputs`: flat triples
/// checked by weft::machine::routePositionsProblem (the rule of
/// docs/architecture.md §4.4); an empty string if they are.
std::string routePositionsProblem(llvm::ArrayRef<int64_t> positions,
                                  unsigned inputs, unsigned outputs);
/// "[x, x+w) x [y, y+h)" for diagnostics.
std::string rectString(RectAttr r);
/// "[west, ramp]" for diagnostics.
std::string dirSetString(unsigned set);

/// The target of the nearest enclosing op that carries a `target` attribute
/// (fabric.program or wavelet.program), if any.
std::optional<weft::machine::Target> getEnclosingTarget(mlir::Operation *op);

} // namespace weft::common

#endif // WEFT_DIALECTS_COMMON_WEFTATTRS_H
