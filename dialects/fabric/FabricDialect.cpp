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
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace weft::fabric;

#include "fabric/FabricDialect.cpp.inc"
#include "fabric/FabricEnums.cpp.inc"

/// A density of #fabric.sparse: a float literal, printed in the fewest
/// digits that read back the same double.
static ParseResult parseDensity(AsmParser &parser, FailureOr<APFloat> &density) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  density = APFloat(value);
  return success();
}
static void printDensity(AsmPrinter &p, const APFloat &density) {
  SmallString<16> text;
  density.toString(text);
  p << text;
}

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

LogicalResult SparseAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 APFloat density) {
  double d = density.convertToDouble();
  if (!(d >= 0.0 && d <= 1.0))
    return emitError() << "sparse density must be between 0 and 1, not "
                       << d;
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
TrainingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     Optimizer optimizer, FloatAttr lr, int64_t batch,
                     int64_t samples) {
  if (!lr || !lr.getType().isF32())
    return emitError() << "the learning rate must be an f32";
  double rate = lr.getValueAsDouble();
  if (!std::isfinite(rate) || rate <= 0)
    return emitError() << "the learning rate must be positive and finite, got "
                       << rate;
  if (batch < 1)
    return emitError() << "the mini-batch must have at least one sample, got "
                       << batch;
  if (optimizer == Optimizer::sgd && batch != 1)
    return emitError() << "sgd updates after every sample (a batch of 1), got "
                       << "a batch of " << batch << "; mbgd averages over "
                       << "mini-batches";
  if (optimizer == Optimizer::cpgd && batch != 1)
    return emitError() << "cpgd updates every layer after every sample (a "
                       << "batch of 1), got a batch of " << batch;
  if (optimizer == Optimizer::cpgd && samples < 1)
    return emitError() << "cpgd drains its pipeline after the last sample: "
                       << "give the number of samples (at least 1), got "
                       << samples;
  if (optimizer == Optimizer::sgd && samples != 0)
    return emitError() << "sgd takes no number of samples: it runs one "
                          "sample at a time";
  if (optimizer == Optimizer::mbgd && (samples < 0 || samples % batch != 0))
    return emitError() << "mbgd pipelines whole mini-batches: its "
                       << samples << " samples are no multiple of the batch "
                       << "of " << batch;
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
