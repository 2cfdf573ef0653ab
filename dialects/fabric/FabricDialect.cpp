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
// TargetAttr
//===----------------------------------------------------------------------===//

static weft::target::TargetConfig toConfig(unsigned w, unsigned h, unsigned mem,
                                           unsigned colors, unsigned rq,
                                           unsigned cq) {
  weft::target::TargetConfig c;
  c.width = w;
  c.height = h;
  c.memoryBytes = mem;
  c.routableColors = colors;
  c.routerQueueDepth = rq;
  c.ceQueueDepth = cq;
  return c;
}

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 unsigned width, unsigned height,
                                 unsigned memoryBytes, unsigned routableColors,
                                 unsigned routerQueueDepth,
                                 unsigned ceQueueDepth) {
  std::string err;
  if (!weft::target::Target::create(toConfig(width, height, memoryBytes,
                                             routableColors, routerQueueDepth,
                                             ceQueueDepth),
                                    &err))
    return emitError() << "invalid target: " << err;
  return success();
}

weft::target::Target TargetAttr::getModel() const {
  // The attribute was verified on creation, so the model exists.
  return *weft::target::Target::create(
      toConfig(getWidth(), getHeight(), getMemoryBytes(), getRoutableColors(),
               getRouterQueueDepth(), getCeQueueDepth()));
}

TargetAttr TargetAttr::get(MLIRContext *ctx,
                           const weft::target::TargetConfig &c) {
  return get(ctx, c.width, c.height, c.memoryBytes, c.routableColors,
             c.routerQueueDepth, c.ceQueueDepth);
}

Attribute TargetAttr::parse(AsmParser &parser, Type) {
  // Collect the text form "WxH,key=value,..." and let the machine model parse
  // and validate it, so the keys and limits are defined in one place.
  SmallVector<int64_t> dims;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseDimensionList(dims, /*allowDynamic=*/false,
                                /*withTrailingX=*/false))
    return {};
  if (dims.size() != 2) {
    parser.emitError(loc, "expected a WxH grid");
    return {};
  }
  std::string text = std::to_string(dims[0]) + "x" + std::to_string(dims[1]);
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    uint64_t value;
    if (parser.parseKeyword(&key) || parser.parseEqual() ||
        parser.parseInteger(value))
      return {};
    text += "," + key.str() + "=" + std::to_string(value);
  }
  if (parser.parseGreater())
    return {};
  std::string err;
  std::optional<weft::target::Target> t =
      weft::target::Target::parse(text, &err);
  if (!t) {
    parser.emitError(loc, "invalid target: ") << err;
    return {};
  }
  return TargetAttr::get(parser.getContext(), t->config());
}

void TargetAttr::print(AsmPrinter &p) const {
  p << "<" << getWidth() << "x" << getHeight() << ", mem = " << getMemoryBytes()
    << ", colors = " << getRoutableColors() << ", rq = " << getRouterQueueDepth()
    << ", cq = " << getCeQueueDepth() << ">";
}

//===----------------------------------------------------------------------===//
// Other attributes and types
//===----------------------------------------------------------------------===//

LogicalResult RectAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t x, int64_t y, int64_t width,
                               int64_t height) {
  if (x < 0 || y < 0)
    return emitError() << "rectangle origin (" << x << ", " << y
                       << ") is negative";
  if (width < 1 || height < 1)
    return emitError() << "rectangle " << width << "x" << height
                       << " is empty";
  return success();
}

LogicalResult ColorAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                unsigned value) {
  if (value >= weft::target::Arch::kFabricColors)
    return emitError() << "color " << value
                       << " does not fit the 5-bit color field (0.."
                       << weft::target::Arch::kFabricColors - 1 << ")";
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

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

std::string weft::fabric::rectString(RectAttr r) {
  return "[" + std::to_string(r.getX()) + ", " +
         std::to_string(r.getX() + r.getWidth()) + ") x [" +
         std::to_string(r.getY()) + ", " +
         std::to_string(r.getY() + r.getHeight()) + ")";
}

std::string weft::fabric::dirSetString(unsigned set) {
  std::string s = "[";
  bool first = true;
  for (unsigned d = 0; d < weft::target::kNumDirs; ++d) {
    if (!(set & (1u << d)))
      continue;
    if (!first)
      s += ", ";
    first = false;
    s += weft::target::dirName(weft::target::Dir(d));
  }
  return s + "]";
}

void weft::fabric::printDirSet(OpAsmPrinter &p, Operation *,
                               IntegerAttr set) {
  p << dirSetString(unsigned(set.getInt()));
}

ParseResult weft::fabric::parseDirSet(OpAsmParser &parser, IntegerAttr &set) {
  unsigned bits = 0;
  auto parseOne = [&]() -> ParseResult {
    StringRef name;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&name))
      return failure();
    std::optional<weft::target::Dir> d = weft::target::parseDir(name.str());
    if (!d)
      return parser.emitError(loc, "unknown router port '")
             << name << "' (north, east, south, west, ramp)";
    unsigned bit = 1u << unsigned(*d);
    if (bits & bit)
      return parser.emitError(loc, "port '") << name << "' listed twice";
    bits |= bit;
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseOne))
    return failure();
  set = parser.getBuilder().getI32IntegerAttr(int32_t(bits));
  return success();
}

std::optional<weft::target::Target>
weft::fabric::getEnclosingTarget(Operation *op) {
  for (Operation *p = op; p; p = p->getParentOp())
    if (auto t = p->getAttrOfType<TargetAttr>("target"))
      return t.getModel();
  return std::nullopt;
}
