//===- FabricSchemes.cpp - How kernels compute ----------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The kernel scheme attributes (#fabric.dense, #fabric.conv, #fabric.pool,
// #fabric.elementwise, #fabric.softmax, #fabric.expression, #fabric.join):
// their verifiers and their KernelSchemeAttrInterface methods.
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricAttrs.h"

#include "weft/Kernels/ColumnKernel.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace weft::fabric;

#include "fabric/FabricInterfaces.cpp.inc"

/// Whether `attr` is a static f32 tensor of `shape`.
static bool isF32Of(ElementsAttr attr, ArrayRef<int64_t> shape) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  return type && type.getElementType().isF32() && type.getShape() == shape;
}

//===----------------------------------------------------------------------===//
// DenseSchemeAttr
//===----------------------------------------------------------------------===//

LogicalResult
DenseSchemeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t fanIn, int64_t neurons, bool, bool synthetic,
                        ElementsAttr weights, ElementsAttr bias,
                        StringAttr weightsSource, bool weightsTransposed,
                        StringAttr biasSource) {
  if (fanIn < 1 || neurons < 1)
    return emitError() << "a dense layer needs a fan-in and neurons of at "
                          "least 1, not "
                       << fanIn << " and " << neurons;
  if (!isF32Of(weights, {fanIn, neurons}))
    return emitError() << "weights must be tensor<" << fanIn << "x" << neurons
                       << "xf32>, not " << weights.getType();
  if (bias && !isF32Of(bias, {neurons}))
    return emitError() << "bias must be tensor<" << neurons << "xf32>, not "
                       << bias.getType();
  if (synthetic && (weightsSource || biasSource))
    return emitError() << "a matrix weft made has no source initializer";
  if (weightsTransposed && !weightsSource)
    return emitError() << "weights_transposed describes weights_source, "
                          "which is missing";
  if (biasSource && !bias)
    return emitError() << "bias_source names the initializer of a bias the "
                          "layer does not have";
  return success();
}

int64_t DenseSchemeAttr::getNumStreams() const { return 1; }
int64_t DenseSchemeAttr::getExecutedMacs() const {
  return getFanIn() * getNeurons();
}
int64_t DenseSchemeAttr::getModelMacs() const {
  return getSynthetic() ? 0 : getExecutedMacs();
}
std::string DenseSchemeAttr::getSummary() const {
  return llvm::formatv("dense {0} -> {1}", getFanIn(), getNeurons()).str();
}

//===----------------------------------------------------------------------===//
// Windows: what #fabric.conv and #fabric.pool share
//===----------------------------------------------------------------------===//

/// Sets a ConvShape's or PoolShape's window fields from the attributes'
/// arrays ([h, w] kernel, strides and dilations; [top, left, bottom,
/// right] pads), leaving the defaults where an array has the wrong size
/// (which verifyWindow refuses).
template <typename Shape>
static void setWindow(Shape &s, ArrayRef<int64_t> kernel,
                      ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                      ArrayRef<int64_t> pads) {
  if (kernel.size() == 2)
    s.kh = kernel[0], s.kw = kernel[1];
  if (strides.size() == 2)
    s.sh = strides[0], s.sw = strides[1];
  if (dilations.size() == 2)
    s.dh = dilations[0], s.dw = dilations[1];
  if (pads.size() == 4)
    s.pt = pads[0], s.pl = pads[1], s.pb = pads[2], s.pr = pads[3];
}

static LogicalResult
verifyWindow(function_ref<InFlightDiagnostic()> emitError,
             DenseI64ArrayAttr kernel, DenseI64ArrayAttr strides,
             DenseI64ArrayAttr dilations, DenseI64ArrayAttr pads) {
  if (kernel.size() != 2 || strides.size() != 2 || dilations.size() != 2)
    return emitError() << "kernel, strides and dilations must have 2 values "
                          "(height, width)";
  if (pads.size() != 4)
    return emitError() << "pads must have 4 values (top, left, bottom, right)";
  return success();
}

//===----------------------------------------------------------------------===//
// ConvSchemeAttr
//===----------------------------------------------------------------------===//

/// The kernel library's view of a convolution's parameters.
static weft::conversion::ConvShape
convShape(int64_t cin, int64_t cout, int64_t hin, int64_t win,
          ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
          ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads, int64_t groups,
          bool relu, FloatAttr reluMax, bool bias, ArrayAttr epilogue) {
  weft::conversion::ConvShape s;
  s.cin = cin;
  s.cout = cout;
  s.hin = hin;
  s.win = win;
  setWindow(s, kernel, strides, dilations, pads);
  s.groups = groups;
  s.relu = relu;
  if (reluMax)
    s.reluMax = float(reluMax.getValueAsDouble());
  s.bias = bias;
  std::string why;
  if (epilogue)
    if (FailureOr<std::vector<float>> p = expressionProgram(epilogue, why);
        succeeded(p))
      s.epilogue = std::move(*p);
  return s;
}

LogicalResult
ConvSchemeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t cin, int64_t cout, int64_t hin, int64_t win,
                       DenseI64ArrayAttr kernel, DenseI64ArrayAttr strides,
                       DenseI64ArrayAttr dilations, DenseI64ArrayAttr pads,
                       int64_t groups, bool relu, FloatAttr reluMax,
                       ElementsAttr weights, ElementsAttr bias,
                       ArrayAttr epilogue, StringAttr /*weightsSource*/,
                       StringAttr biasSource) {
  if (biasSource && !bias)
    return emitError() << "bias_source names the initializer of a bias the "
                          "convolution does not have";
  if (failed(verifyWindow(emitError, kernel, strides, dilations, pads)))
    return failure();
  if (reluMax && !reluMax.getType().isF32())
    return emitError() << "relu_max must be an f32, not " << reluMax;
  if (epilogue) {
    if (epilogue.empty())
      return emitError() << "an epilogue needs at least one node";
    if (failed(ExpressionSchemeAttr::verify(emitError, epilogue)))
      return failure();
    std::string why;
    if (failed(expressionProgram(epilogue, why)))
      return emitError() << "bad epilogue: " << why;
  }
  weft::conversion::ConvShape s =
      convShape(cin, cout, hin, win, kernel.asArrayRef(), strides.asArrayRef(),
                dilations.asArrayRef(), pads.asArrayRef(), groups, relu,
                reluMax, bool(bias), epilogue);
  std::string why = s.check();
  if (!why.empty())
    return emitError() << "not a convolution: " << why;
  if (!isF32Of(weights, {cout, s.groupIn(), s.kh, s.kw}))
    return emitError() << "weights must be tensor<" << cout << "x"
                       << s.groupIn() << "x" << s.kh << "x" << s.kw << "xf32>"
                       << (groups > 1 ? " (in_channels / groups inputs)" : "")
                       << ", not " << weights.getType();
  if (bias && !isF32Of(bias, {cout}))
    return emitError() << "bias must be tensor<" << cout << "xf32>, not "
                       << bias.getType();
  return success();
}

weft::conversion::ConvShape ConvSchemeAttr::getShape() const {
  return convShape(getInChannels(), getOutChannels(), getInHeight(),
                   getInWidth(), getKernel().asArrayRef(),
                   getStrides().asArrayRef(), getDilations().asArrayRef(),
                   getPads().asArrayRef(), getGroups(), getRelu(), getReluMax(),
                   bool(getBias()), getEpilogue());
}

int64_t ConvSchemeAttr::getNumStreams() const { return 1; }
int64_t ConvSchemeAttr::getExecutedMacs() const {
  return getShape().executedMacs();
}
int64_t ConvSchemeAttr::getModelMacs() const { return getShape().modelMacs(); }
std::string ConvSchemeAttr::getSummary() const {
  weft::conversion::ConvShape s = getShape();
  std::string kind = s.depthwise() ? "depthwise conv"
                     : s.grouped()
                         ? llvm::formatv("{0}-group conv", s.groups).str()
                         : "conv";
  return llvm::formatv("{0} {1}x{2}x{3} -> {4}x{5}x{6}, {7}x{8}{9}", kind,
                       s.cin, s.hin, s.win, s.cout, s.hout(), s.wout(), s.kh,
                       s.kw, s.epilogue.empty() ? "" : " + activation")
      .str();
}

//===----------------------------------------------------------------------===//
// PoolSchemeAttr
//===----------------------------------------------------------------------===//

/// The kernel library's view of a pooling's parameters.
static weft::conversion::PoolShape
poolShape(PoolKind kind, int64_t c, int64_t hin, int64_t win,
          ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
          ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads, bool ceil,
          bool includePad) {
  weft::conversion::PoolShape s;
  s.max = kind == PoolKind::max;
  s.c = c;
  s.hin = hin;
  s.win = win;
  setWindow(s, kernel, strides, dilations, pads);
  s.ceil = ceil;
  s.includePad = includePad;
  return s;
}

LogicalResult
PoolSchemeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       PoolKind kind, int64_t c, int64_t hin, int64_t win,
                       DenseI64ArrayAttr kernel, DenseI64ArrayAttr strides,
                       DenseI64ArrayAttr dilations, DenseI64ArrayAttr pads,
                       bool ceil, bool includePad) {
  if (failed(verifyWindow(emitError, kernel, strides, dilations, pads)))
    return failure();
  if (kind == PoolKind::max && includePad)
    return emitError() << "count_include_pad is for average pools";
  std::string why =
      poolShape(kind, c, hin, win, kernel.asArrayRef(), strides.asArrayRef(),
                dilations.asArrayRef(), pads.asArrayRef(), ceil, includePad)
          .check();
  if (!why.empty())
    return emitError() << "not a pooling: " << why;
  return success();
}

weft::conversion::PoolShape PoolSchemeAttr::getShape() const {
  return poolShape(getKind(), getChannels(), getInHeight(), getInWidth(),
                   getKernel().asArrayRef(), getStrides().asArrayRef(),
                   getDilations().asArrayRef(), getPads().asArrayRef(),
                   getCeilMode(), getCountIncludePad());
}

int64_t PoolSchemeAttr::getNumStreams() const { return 1; }
int64_t PoolSchemeAttr::getExecutedMacs() const { return 0; }
int64_t PoolSchemeAttr::getModelMacs() const { return 0; }
std::string PoolSchemeAttr::getSummary() const {
  weft::conversion::PoolShape s = getShape();
  return llvm::formatv("{0}pool {1}x{2}x{3} -> {1}x{4}x{5}, {6}x{7}",
                       s.max ? "max" : "avg", s.c, s.hin, s.win, s.hout(),
                       s.wout(), s.kh, s.kw)
      .str();
}

//===----------------------------------------------------------------------===//
// ElementwiseSchemeAttr
//===----------------------------------------------------------------------===//

LogicalResult
ElementwiseSchemeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              StringRef op, DenseF32ArrayAttr,
                              ElementsAttr constant) {
  if (op.empty())
    return emitError() << "an elementwise kernel needs an op";
  if (constant) {
    auto type = dyn_cast<RankedTensorType>(constant.getType());
    if (!type || !type.getElementType().isF32() || !type.hasStaticShape())
      return emitError() << "constant must be a static f32 tensor, not "
                         << constant.getType();
  }
  return success();
}

int64_t ElementwiseSchemeAttr::getNumStreams() const { return 1; }
int64_t ElementwiseSchemeAttr::getExecutedMacs() const { return 0; }
int64_t ElementwiseSchemeAttr::getModelMacs() const { return 0; }
std::string ElementwiseSchemeAttr::getSummary() const {
  return getOp().str();
}

//===----------------------------------------------------------------------===//
// SoftmaxSchemeAttr
//===----------------------------------------------------------------------===//

LogicalResult
SoftmaxSchemeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          bool log, int64_t group, int64_t stride, bool loss) {
  if (loss && (log || group))
    return emitError() << "a loss is the softmax of the whole sample (no "
                          "log, no group)";
  if (group < 0 || stride < 1)
    return emitError() << "softmax groups of " << group << " elements "
                       << stride << " apart";
  if (group == 0 && stride != 1)
    return emitError() << "a softmax over the whole sample has stride 1";
  return success();
}

int64_t SoftmaxSchemeAttr::getNumStreams() const { return 1; }
int64_t SoftmaxSchemeAttr::getExecutedMacs() const { return 0; }
int64_t SoftmaxSchemeAttr::getModelMacs() const { return 0; }
std::string SoftmaxSchemeAttr::getSummary() const {
  if (getLoss())
    return "softmax cross-entropy loss";
  // The column kernels' names (docs/execution-model.md).
  return std::string(getGroup() ? "Axis" : "") +
         (getLog() ? "LogSoftmax" : "Softmax");
}

//===----------------------------------------------------------------------===//
// ExpressionSchemeAttr
//===----------------------------------------------------------------------===//

// An expression's program is four floats a node, {kind, a, b, v}
// (weft/Kernels/Expression.h): Select keeps its false arm in v, Unary its
// column op in b and the op's constant in v.
FailureOr<std::vector<float>>
weft::fabric::expressionProgram(ArrayAttr nodes, std::string &why) {
  std::vector<float> p;
  for (Attribute a : nodes) {
    auto n = dyn_cast<ExprNodeAttr>(a);
    if (!n) {
      why = "an expression node is no #fabric.node";
      return failure();
    }
    float v = n.getValue() ? float(n.getValue().getValueAsDouble()) : 0.0f;
    float b = float(n.getB());
    if (n.getKind() == ExprKind::select)
      v = float(n.getC());
    if (n.getKind() == ExprKind::unary) {
      std::optional<weft::conversion::ColumnOp> op =
          weft::conversion::parseColumnOp(std::string_view(n.getFn()));
      if (!op) {
        why = "expression node calls '" + n.getFn().str() +
              "', which is no column op";
        return failure();
      }
      b = float(int(*op));
    }
    p.insert(p.end(), {float(int32_t(n.getKind())), float(n.getA()), b, v});
  }
  return p;
}

LogicalResult
ExpressionSchemeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                             ArrayAttr nodes) {
  if (nodes.empty())
    return emitError() << "an expression needs at least one node";
  // Node 0 is x; node i + 1 is nodes[i] and reads earlier nodes only.
  for (auto [i, a] : llvm::enumerate(nodes)) {
    auto n = dyn_cast<ExprNodeAttr>(a);
    if (!n)
      return emitError() << "expression node " << i + 1 << " is " << a
                         << ", not a #fabric.node";
    int64_t self = int64_t(i) + 1;
    auto reads = [&](int64_t v) { return v >= 0 && v < self; };
    bool ok = true;
    switch (n.getKind()) {
    case ExprKind::constant:
      ok = bool(n.getValue());
      break;
    case ExprKind::unary:
    case ExprKind::tanh:
      ok = reads(n.getA()) && (n.getKind() == ExprKind::tanh ||
                               !n.getFn().empty());
      break;
    case ExprKind::select:
      ok = reads(n.getA()) && reads(n.getB()) && reads(n.getC());
      break;
    default:
      ok = reads(n.getA()) && reads(n.getB());
      break;
    }
    if (!ok)
      return emitError() << "expression node " << self << " ("
                         << stringifyExprKind(n.getKind())
                         << ") reads a node that is not before it, or lacks "
                            "its constant or function";
  }
  return success();
}

int64_t ExpressionSchemeAttr::getNumStreams() const { return 1; }
int64_t ExpressionSchemeAttr::getExecutedMacs() const { return 0; }
int64_t ExpressionSchemeAttr::getModelMacs() const { return 0; }
std::string ExpressionSchemeAttr::getSummary() const {
  return "Expression";
}

//===----------------------------------------------------------------------===//
// JoinSchemeAttr
//===----------------------------------------------------------------------===//

LogicalResult
JoinSchemeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       JoinKind op, bool relu, int64_t buffered, int64_t fifo,
                       int64_t fifoPixels, int64_t broadcast) {
  // Sub and div take two vector steps when a is buffered; a ReLU after them
  // would be a third that touches only memory, which no microthread runs
  // (docs/execution-model.md, "Join kernels").
  if (relu && (op == JoinKind::sub || op == JoinKind::div))
    return emitError() << "a join fuses a ReLU only after add, mul, max or "
                          "min, not "
                       << stringifyJoinKind(op);
  if (buffered < -1 || buffered > 1)
    return emitError() << "a join buffers input 0 or 1 (or -1 before "
                          "partitioning), not "
                       << buffered;
  if (fifo < 0 || fifoPixels < 0 || (fifo > 0 && fifoPixels > 0))
    return emitError() << "a join's FIFO holds whole samples or pixels of a "
                          "feature map, not both; got fifo = "
                       << fifo << ", fifo_pixels = " << fifoPixels;
  if ((buffered == -1) != (fifo + fifoPixels == 0))
    return emitError() << "a join that buffers an input has a FIFO of at "
                          "least one sample or pixel, and only then; got "
                          "buffered = "
                       << buffered << ", fifo = " << fifo;
  // A per-channel input (docs/execution-model.md, "Broadcast joins"): b,
  // multiplied into a, which waits in the FIFO for a whole sample.
  if (broadcast != -1 && broadcast != 1)
    return emitError() << "a join's per-channel input is b (broadcast = 1; "
                          "a mul commutes, so the conversion puts it "
                          "second), or none (-1), not "
                       << broadcast;
  if (broadcast == 1 && (op != JoinKind::mul || relu))
    return emitError() << "a join with a per-channel input is a mul "
                          "without ReLU, not "
                       << stringifyJoinKind(op) << (relu ? " + relu" : "");
  if (broadcast == 1 && (buffered == 1 || fifoPixels > 0))
    return emitError() << "a join with a per-channel input buffers the "
                          "feature map (input 0) in whole samples: the "
                          "scale needs a whole sample of it first; got "
                          "buffered = "
                       << buffered << ", fifo_pixels = " << fifoPixels;
  return success();
}

int64_t JoinSchemeAttr::getNumStreams() const { return 2; }
int64_t JoinSchemeAttr::getExecutedMacs() const { return 0; }
int64_t JoinSchemeAttr::getModelMacs() const { return 0; }
std::string JoinSchemeAttr::getSummary() const {
  return ("join " + stringifyJoinKind(getOp()) + (getRelu() ? " + relu" : "") +
          (getBroadcast() == 1 ? " per channel" : ""))
      .str();
}
