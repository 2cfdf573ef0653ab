//===- WeftDialect.cpp - The weft base dialect ----------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "common/WeftDialect.h"
#include "common/WeftAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace weft::common;

#include "common/WeftDialect.cpp.inc"
#include "common/WeftEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "common/WeftAttrs.cpp.inc"

void WeftDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "common/WeftAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// TargetAttr
//===----------------------------------------------------------------------===//

static weft::machine::TargetConfig toConfig(unsigned w, unsigned h, unsigned mem,
                                           unsigned colors, unsigned rq,
                                           unsigned cq) {
  weft::machine::TargetConfig c;
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
  if (!weft::machine::Target::create(toConfig(width, height, memoryBytes,
                                             routableColors, routerQueueDepth,
                                             ceQueueDepth),
                                    &err))
    return emitError() << "invalid target: " << err;
  return success();
}

weft::machine::Target TargetAttr::getModel() const {
  // The attribute was verified on creation, so the model exists.
  return *weft::machine::Target::create(
      toConfig(getWidth(), getHeight(), getMemoryBytes(), getRoutableColors(),
               getRouterQueueDepth(), getCeQueueDepth()));
}

TargetAttr TargetAttr::get(MLIRContext *ctx,
                           const weft::machine::TargetConfig &c) {
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
    uint64_t value = 0;
    if (parser.parseKeyword(&key) || parser.parseEqual() ||
        parser.parseInteger(value))
      return {};
    text += "," + key.str() + "=" + std::to_string(value);
  }
  if (parser.parseGreater())
    return {};
  std::string err;
  std::optional<weft::machine::Target> t =
      weft::machine::Target::parse(text, &err);
  if (!t) {
    parser.emitError(loc, "invalid target: ") << err;
    return {};
  }
  return TargetAttr::get(parser.getContext(), t->config());
}

void TargetAttr::print(AsmPrinter &p) const {
  p << "<" << getWidth() << "x" << getHeight() << ", mem = " << getMemoryBytes()
    << ", colors = " << getRoutableColors()
    << ", rq = " << getRouterQueueDepth() << ", cq = " << getCeQueueDepth()
    << ">";
}

//===----------------------------------------------------------------------===//
// RectAttr
//===----------------------------------------------------------------------===//

LogicalResult RectAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t x, int64_t y, int64_t width,
                               int64_t height) {
  if (x < 0 || y < 0)
    return emitError() << "rectangle origin (" << x << ", " << y
                       << ") is negative";
  if (width < 1 || height < 1)
    return emitError() << "rectangle " << width << "x" << height << " is empty";
  return success();
}

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

std::string weft::common::rectString(RectAttr r) {
  return "[" + std::to_string(r.getX()) + ", " +
         std::to_string(r.getX() + r.getWidth()) + ") x [" +
         std::to_string(r.getY()) + ", " +
         std::to_string(r.getY() + r.getHeight()) + ")";
}

std::string weft::common::dirSetString(unsigned set) {
  return weft::machine::dirSetName(set);
}

void weft::common::printDirSet(OpAsmPrinter &p, Operation *, IntegerAttr set) {
  p << dirSetString(unsigned(set.getInt()));
}

ParseResult weft::common::parseDirSet(OpAsmParser &parser, IntegerAttr &set) {
  unsigned bits = 0;
  auto parseOne = [&]() -> ParseResult {
    StringRef name;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&name))
      return failure();
    std::optional<weft::machine::Dir> d = weft::machine::parseDir(name.str());
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

void weft::common::printRoutePositions(OpAsmPrinter &p, Operation *,
                                       DenseI64ArrayAttr positions) {
  ArrayRef<int64_t> v = positions.asArrayRef();
  p << "[";
  for (size_t i = 0; i + 2 < v.size(); i += 3)
    p << (i ? ", " : "") << "from " << dirSetString(unsigned(v[i])) << " to "
      << dirSetString(unsigned(v[i + 1])) << " x " << v[i + 2];
  p << "]";
}

ParseResult
weft::common::parseRoutePositions(OpAsmParser &parser,
                                  DenseI64ArrayAttr &positions) {
  SmallVector<int64_t> v;
  auto parseOne = [&]() -> ParseResult {
    IntegerAttr in, out;
    int64_t count = 0;
    if (parser.parseKeyword("from") || parseDirSet(parser, in) ||
        parser.parseKeyword("to") || parseDirSet(parser, out) ||
        parser.parseKeyword("x") || parser.parseInteger(count))
      return failure();
    v.append({in.getInt(), out.getInt(), count});
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseOne))
    return failure();
  positions = parser.getBuilder().getDenseI64ArrayAttr(v);
  return success();
}

std::string weft::common::routePositionsProblem(ArrayRef<int64_t> v,
                                                unsigned inputs,
                                                unsigned outputs) {
  if (v.size() % 3)
    return "positions must be (inputs, outputs, count) triples, got " +
           std::to_string(v.size()) + " values";
  std::vector<weft::machine::RoutePositionSpec> specs;
  for (size_t i = 0; i < v.size(); i += 3)
    specs.push_back({v[i], v[i + 1], v[i + 2]});
  return weft::machine::routePositionsProblem(specs, inputs, outputs);
}

std::optional<weft::machine::Target>
weft::common::getEnclosingTarget(Operation *op) {
  for (Operation *p = op; p; p = p->getParentOp())
    if (auto t = p->getAttrOfType<TargetAttr>("target"))
      return t.getModel();
  return std::nullopt;
}
