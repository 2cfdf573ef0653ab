//===- FabricDialect.cpp - The fabric dialect ------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricDialect.h"
#include "fabric/FabricAttrs.h"
#include "fabric/FabricOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace weft::fabric;

#include "fabric/FabricDialect.cpp.inc"
#include "fabric/FabricEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fabric/FabricAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "fabric/FabricTypes.cpp.inc"

void FabricDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fabric/FabricAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "fabric/FabricTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "fabric/FabricOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Other attributes and types
//===----------------------------------------------------------------------===//

LogicalResult ColorAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                unsigned value) {
  if (value >= weft::machine::Arch::kFabricColors)
    return emitError() << "color " << value
                       << " does not fit the 5-bit color field (0.."
                       << weft::machine::Arch::kFabricColors - 1 << ")";
  return success();
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 LayoutKind kind, int64_t parts) {
  if (parts < 1)
    return emitError() << "layout needs at least one part, got " << parts;
  if (kind == LayoutKind::replicated && parts != 1)
    return emitError() << "a replicated layout has exactly one part, got "
                       << parts;
  return success();
}

LogicalResult
WaveletsType::verify(function_ref<InFlightDiagnostic()> emitError,
                     Type elementType, int64_t count) {
  if (!elementType.isF32() && !elementType.isF16())
    return emitError() << "stream elements must be f32 or f16, got "
                       << elementType;
  if (count < 1)
    return emitError() << "stream of " << count << " elements";
  return success();
}
