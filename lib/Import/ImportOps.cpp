//===- ImportOps.cpp - Elementwise, tensor and shape ops ------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Elementwise ops become one linalg.generic each (numpy broadcasting through
// the indexing maps); data movement becomes tensor ops or an "indexed copy"
// generic; ops whose inputs are all known at import time are evaluated here
// (tryFold), which is how the Shape/Gather/Concat/Reshape chains exporters
// emit for static shapes disappear.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace weft::import::detail;

//===----------------------------------------------------------------------===//
// Host tensors
//===----------------------------------------------------------------------===//

static void storeDouble(TensorData &t, int64_t i, double v) {
  char *p = const_cast<char *>(t.bytes.data()) + i * elementByteSize(t.dtype);
  switch (t.dtype) {
  case onnx::TensorProto::FLOAT: {
    float f = float(v);
    std::memcpy(p, &f, 4);
    return;
  }
  case onnx::TensorProto::DOUBLE:
    std::memcpy(p, &v, 8);
    return;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16: {
    llvm::APFloat f(v);
    bool lost;
    f.convert(t.dtype == onnx::TensorProto::FLOAT16 ? llvm::APFloat::IEEEhalf()
                                                    : llvm::APFloat::BFloat(),
              llvm::APFloat::rmNearestTiesToEven, &lost);
    uint16_t bits = uint16_t(f.bitcastToAPInt().getZExtValue());
    std::memcpy(p, &bits, 2);
    return;
  }
  default: {
    int64_t iv = (v > -9.2e18 && v < 9.2e18) ? int64_t(v) : 0;
    std::memcpy(p, &iv, elementByteSize(t.dtype)); // little-endian truncation
    return;
  }
  }
}

static void storeInt(TensorData &t, int64_t i, int64_t v) {
  if (isFloatDtype(t.dtype))
    return storeDouble(t, i, double(v));
  char *p = const_cast<char *>(t.bytes.data()) + i * elementByteSize(t.dtype);
  if (t.dtype == onnx::TensorProto::BOOL)
    v = v != 0;
  std::memcpy(p, &v, elementByteSize(t.dtype));
}

/// Whether a known tensor of `shape` is small enough to compute here.
static bool foldable(ArrayRef<int64_t> shape) {
  int64_t n = checkedNumElements(shape);
  return n >= 0 && n <= kFoldElements;
}

/// Row-major strides of `shape`.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// Builds a tensor of `outShape` by copying, for every output position, the
/// source element `srcIndex(outIndices)` returns.
static TensorData
hostIndexed(const TensorData &src, ArrayRef<int64_t> outShape,
            llvm::function_ref<int64_t(ArrayRef<int64_t>)> srcIndex) {
  TensorData out = makeTensor(outShape, src.dtype);
  unsigned es = elementByteSize(src.dtype);
  int64_t n = out.numElements();
  SmallVector<int64_t> idx(outShape.size(), 0);
  char *dst = const_cast<char *>(out.bytes.data());
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + i * es, src.bytes.data() + srcIndex(idx) * es, es);
    for (int64_t d = int64_t(idx.size()) - 1; d >= 0; --d) {
      if (++idx[d] < outShape[d])
        break;
      idx[d] = 0;
    }
  }
  return out;
}

/// A reshape of a known tensor: same bytes, new shape, no copy.
static TensorData hostReshape(const TensorData &t, ArrayRef<int64_t> shape) {
  TensorData r = t;
  r.shape.assign(shape.begin(), shape.end());
  return r;
}

static TensorData int64Tensor(ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> values) {
  TensorData t = makeTensor(shape, onnx::TensorProto::INT64);
  std::memcpy(const_cast<char *>(t.bytes.data()), values.data(),
              values.size() * 8);
  return t;
}

static SmallVector<int64_t> intsOf(const TensorData &t) {
  SmallVector<int64_t> v;
  for (int64_t i = 0, e = t.numElements(); i < e; ++i)
    v.push_back(t.getInt(i));
  return v;
}

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(shape, os, ", ");
  os << "]";
  return s;
}

//===----------------------------------------------------------------------===//
// Host evaluation of ops on known inputs
//===----------------------------------------------------------------------===//

std::optional<LogicalResult> GraphImporter::tryFold(StringRef op) {
  static const char *const kFoldable[] = {
      "Add",  "Sub",       "Mul",       "Div",   "Neg",       "Abs",
      "Equal", "Less",     "Greater",   "Not",   "Where",     "Max",
      "Min",  "Cast",      "Concat",    "Gather", "Slice",    "Transpose",
      "Expand", "Sqrt",    "Floor",     "Ceil",  "ReduceProd", "Mod",
      "And",  "Or",        "Sum"};
  if (!llvm::is_contained(kFoldable, op))
    return std::nullopt;
  SmallVector<const TensorData *> ins;
  for (int64_t i = 0; i < numInputs(); ++i) {
    ImportedValue *v = input(i);
    if (!v) {
      ins.push_back(nullptr);
      continue;
    }
    if (!v->isConstant() || v->constant->numElements() > kFoldElements)
      return std::nullopt;
    ins.push_back(&*v->constant);
  }
  if (ins.empty() || !ins[0])
    return std::nullopt;
  // Legacy (opset < 7) broadcasting attributes are left to the IR path.
  if (node->attribute_size() &&
      !llvm::is_contained({"Cast", "Concat", "Gather", "Transpose"}, op) &&
      !(op == "Slice" || op == "ReduceProd" || op == "Mod"))
    return std::nullopt;

  // Elementwise arithmetic with numpy broadcasting.
  static const char *const kArith[] = {"Add", "Sub",   "Mul",     "Div",
                                       "Neg", "Abs",   "Equal",   "Less",
                                       "Greater", "Not", "Where", "Max",
                                       "Min", "Sqrt",  "Floor",   "Ceil",
                                       "Mod", "And",   "Or",      "Sum"};
  if (llvm::is_contained(kArith, op)) {
    SmallVector<ArrayRef<int64_t>> shapes;
    for (const TensorData *t : ins) {
      if (!t)
        return std::nullopt;
      shapes.push_back(t->shape);
    }
    FailureOr<SmallVector<int64_t>> outShape = broadcastShape(shapes);
    if (failed(outShape))
      return failure();
    if (checkedNumElements(*outShape) < 0 ||
        checkedNumElements(*outShape) > kFoldElements)
      return std::nullopt;
    if (op == "Mod")
      ignoreAttrs({"fmod"});
    const TensorData &a = *ins[op == "Where" ? 1 : 0];
    bool isCompare = op == "Equal" || op == "Less" || op == "Greater";
    int32_t outDtype = isCompare ? int32_t(onnx::TensorProto::BOOL) : a.dtype;
    bool isFloat = isFloatDtype(a.dtype);
    TensorData out = makeTensor(*outShape, outDtype);
    SmallVector<SmallVector<int64_t>> strides;
    for (const TensorData *t : ins) {
      SmallVector<int64_t> s = stridesOf(t->shape), full(outShape->size(), 0);
      size_t off = outShape->size() - t->shape.size();
      for (size_t d = 0; d < t->shape.size(); ++d)
        full[off + d] = t->shape[d] == 1 ? 0 : s[d];
      strides.push_back(full);
    }
    SmallVector<int64_t> idx(outShape->size(), 0);
    for (int64_t i = 0, n = out.numElements(); i < n; ++i) {
      SmallVector<int64_t> at;
      for (auto &s : strides) {
        int64_t lin = 0;
        for (size_t d = 0; d < idx.size(); ++d)
          lin += idx[d] * s[d];
        at.push_back(lin);
      }
      if (isFloat && op != "Where" && op != "Not" && op != "And" &&
          op != "Or") {
        SmallVector<double> x;
        for (auto [t, l] : llvm::zip(ins, at))
          x.push_back(t->getDouble(l));
        double r = 0;
        if (op == "Add" || op == "Sum")
          r = x[0] + x[1];
        else if (op == "Sub")
          r = x[0] - x[1];
        else if (op == "Mul")
          r = x[0] * x[1];
        else if (op == "Div")
          r = x[0] / x[1];
        else if (op == "Neg")
          r = -x[0];
        else if (op == "Abs")
          r = std::fabs(x[0]);
        else if (op == "Sqrt")
          r = std::sqrt(x[0]);
        else if (op == "Floor")
          r = std::floor(x[0]);
        else if (op == "Ceil")
          r = std::ceil(x[0]);
        else if (op == "Max")
          r = std::max(x[0], x[1]);
        else if (op == "Min")
          r = std::min(x[0], x[1]);
        else if (op == "Mod")
          r = std::fmod(x[0], x[1]);
        else if (op == "Equal")
          r = x[0] == x[1];
        else if (op == "Less")
          r = x[0] < x[1];
        else if (op == "Greater")
          r = x[0] > x[1];
        if (ins.size() > 2 && (op == "Sum" || op == "Max" || op == "Min"))
          return std::nullopt;
        storeDouble(out, i, r);
      } else {
        SmallVector<int64_t> x;
        for (auto [t, l] : llvm::zip(ins, at))
          x.push_back(t->getInt(l));
        if (ins.size() > 2 && op != "Where")
          return std::nullopt;
        int64_t r = 0;
        if (op == "Where") {
          // Data may be float: copy the chosen element's bytes.
          unsigned es = elementByteSize(a.dtype);
          const TensorData &src = x[0] ? *ins[1] : *ins[2];
          std::memcpy(const_cast<char *>(out.bytes.data()) + i * es,
                      src.bytes.data() + (x[0] ? at[1] : at[2]) * es, es);
        } else {
          if (op == "Add" || op == "Sum")
            r = int64_t(uint64_t(x[0]) + uint64_t(x[1]));
          else if (op == "Sub")
            r = int64_t(uint64_t(x[0]) - uint64_t(x[1]));
          else if (op == "Mul")
            r = int64_t(uint64_t(x[0]) * uint64_t(x[1]));
          else if (op == "Div" || op == "Mod") {
            if (x[1] == 0 || (x[0] == INT64_MIN && x[1] == -1))
              return fail("integer division by zero or overflow in a "
                          "shape computation");
            r = op == "Div" ? x[0] / x[1] : x[0] % x[1];
            // ONNX Mod (fmod = 0) follows the divisor's sign.
            if (op == "Mod" && r != 0 && ((r < 0) != (x[1] < 0)))
              r += x[1];
          } else if (op == "Neg")
            r = int64_t(0 - uint64_t(x[0]));
          else if (op == "Abs")
            r = x[0] < 0 ? int64_t(0 - uint64_t(x[0])) : x[0];
          else if (op == "Max")
            r = std::max(x[0], x[1]);
          else if (op == "Min")
            r = std::min(x[0], x[1]);
          else if (op == "Equal")
            r = x[0] == x[1];
          else if (op == "Less")
            r = x[0] < x[1];
          else if (op == "Greater")
            r = x[0] > x[1];
          else if (op == "Not")
            r = !x[0];
          else if (op == "And")
            r = x[0] && x[1];
          else if (op == "Or")
            r = x[0] || x[1];
          else
            return std::nullopt; // Sqrt/Floor/Ceil of ints: IR path.
          storeInt(out, i, r);
        }
      }
      for (int64_t d = int64_t(idx.size()) - 1; d >= 0; --d) {
        if (++idx[d] < (*outShape)[d])
          break;
        idx[d] = 0;
      }
    }
    setOutput(0, std::move(out));
    return success();
  }

  if (op == "Cast") {
    FailureOr<int64_t> to = intAttr("to", 0);
    if (failed(to))
      return failure();
    ignoreAttrs({"saturate"});
    if (failed(elementType(*to)))
      return failure();
    TensorData out = makeTensor(ins[0]->shape, *to);
    for (int64_t i = 0, n = out.numElements(); i < n; ++i) {
      if (isFloatDtype(ins[0]->dtype))
        storeDouble(out, i, ins[0]->getDouble(i));
      else
        storeInt(out, i, ins[0]->getInt(i));
    }
    setOutput(0, std::move(out));
    return success();
  }

  if (op == "Transpose") {
    FailureOr<SmallVector<int64_t>> perm = intsAttr("perm");
    if (failed(perm))
      return failure();
    int64_t rank = ins[0]->shape.size();
    if (perm->empty())
      for (int64_t i = rank - 1; i >= 0; --i)
        perm->push_back(i);
    if (int64_t(perm->size()) != rank)
      return fail("perm has " + Twine(perm->size()) + " entries for rank " +
                  Twine(rank));
    SmallVector<int64_t> outShape, srcStrides = stridesOf(ins[0]->shape);
    for (int64_t p : *perm) {
      if (p < 0 || p >= rank)
        return fail("perm entry " + Twine(p) + " is out of range");
      outShape.push_back(ins[0]->shape[p]);
    }
    setOutput(0, hostIndexed(*ins[0], outShape, [&](ArrayRef<int64_t> idx) {
                int64_t lin = 0;
                for (int64_t d = 0; d < rank; ++d)
                  lin += idx[d] * srcStrides[(*perm)[d]];
                return lin;
              }));
    return success();
  }
  // Concat, Gather, Slice, Expand on known inputs share the runtime
  // handlers' checks; those handlers see that the inputs are known.
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// Converts a scalar between element types (ONNX Cast semantics).
static Value convertScalar(ImplicitLocOpBuilder &b, Value v, Type to,
                           bool srcUnsigned, bool dstUnsigned) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromF = dyn_cast<FloatType>(from), toF = dyn_cast<FloatType>(to);
  if (fromF && toF)
    return fromF.getWidth() < toF.getWidth()
               ? Value(arith::ExtFOp::create(b, to, v))
               : Value(arith::TruncFOp::create(b, to, v));
  if (to.isInteger(1)) {
    if (fromF)
      return arith::CmpFOp::create(b, arith::CmpFPredicate::UNE, v,
                                   arith::ConstantOp::create(
                                       b, from, b.getFloatAttr(from, 0)));
    return arith::CmpIOp::create(
        b, arith::CmpIPredicate::ne, v,
        arith::ConstantOp::create(b, from, b.getIntegerAttr(from, 0)));
  }
  if (fromF)
    return dstUnsigned ? Value(arith::FPToUIOp::create(b, to, v))
                       : Value(arith::FPToSIOp::create(b, to, v));
  if (toF)
    return srcUnsigned ? Value(arith::UIToFPOp::create(b, to, v))
                       : Value(arith::SIToFPOp::create(b, to, v));
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw > tw)
    return arith::TruncIOp::create(b, to, v);
  return srcUnsigned ? Value(arith::ExtUIOp::create(b, to, v))
                     : Value(arith::ExtSIOp::create(b, to, v));
}

static Value fconst(ImplicitLocOpBuilder &b, Type t, double v) {
  return arith::ConstantOp::create(b, t, b.getFloatAttr(t, v));
}

LogicalResult GraphImporter::importElementwise(StringRef op) {
  ignoreAttrs({"consumed_inputs"});
  static const char *const kBinary[] = {
      "Add",   "Sub",     "Mul",         "Div",           "Pow", "PRelu",
      "Equal", "Less",    "Greater",     "LessOrEqual",   "GreaterOrEqual",
      "And",   "Or",      "Xor"};
  bool binary = llvm::is_contained(kBinary, op);
  FailureOr<ImportedValue *> x = required(0);
  if (failed(x))
    return failure();
  SmallVector<Value> ins = {operand(0)};
  if (binary) {
    FailureOr<ImportedValue *> y = required(1);
    if (failed(y))
      return failure();
    Value rhs = operand(1);
    // Opset < 7: `broadcast` aligns B with A starting at `axis`.
    FailureOr<int64_t> bcast = intAttr("broadcast", 0);
    if (failed(bcast))
      return failure();
    int64_t ra = shapeOf(ins[0]).size(), rb = shapeOf(rhs).size();
    FailureOr<int64_t> axis = intAttr("axis", ra - rb);
    if (failed(axis))
      return failure();
    if (*bcast) {
      if (*axis < 0)
        *axis += ra;
      if (*axis < 0 || *axis + rb > ra)
        return fail("legacy broadcast axis " + Twine(*axis) +
                    " does not fit B into A");
      SmallVector<int64_t> s(*axis, 1);
      llvm::append_range(s, shapeOf(rhs));
      s.resize(ra, 1);
      rhs = reshape(rhs, s);
    } else if (opset() < 7 && shapeOf(rhs) != shapeOf(ins[0]) &&
               op != "PRelu") {
      return fail("opset " + Twine(opset()) +
                  " needs equal shapes unless broadcast=1");
    }
    // Old PRelu exports give a per-channel slope as [C].
    if (op == "PRelu" && opset() < 7 && rb == 1 && ra > 2 &&
        shapeOf(rhs)[0] == shapeOf(ins[0])[1] && shapeOf(rhs)[0] != 1) {
      SmallVector<int64_t> s = {shapeOf(rhs)[0]};
      s.resize(ra - 1, 1);
      rhs = reshape(rhs, s);
    }
    ins.push_back(rhs);
  }
  Type et = cast<RankedTensorType>(ins[0].getType()).getElementType();
  if (binary && op != "Pow" &&
      cast<RankedTensorType>(ins[1].getType()).getElementType() != et)
    return fail("operand element types differ");
  bool isFloat = isa<FloatType>(et);
  bool isUnsigned = isUnsignedDtype((*x)->dtype);
  static const char *const kFloatOnly[] = {
      "Pow",     "PRelu",     "LeakyRelu", "Sigmoid",     "Tanh",
      "HardSigmoid", "HardSwish", "Elu",   "Selu",        "Softplus",
      "Softsign", "Exp",      "Log",       "Sqrt",        "Reciprocal",
      "Erf",     "Floor",     "Ceil",      "Sin",         "Cos",
      "Round",   "ThresholdedRelu", "Celu"};
  if (!isFloat && llvm::is_contained(kFloatOnly, op))
    return fail("needs a floating-point input, got " +
                dtypeName((*x)->dtype));
  bool isLogic = op == "Not" || op == "And" || op == "Or" || op == "Xor";
  if (isLogic && !et.isInteger(1))
    return fail("needs BOOL inputs");
  bool isCompare = op == "Equal" || op == "Less" || op == "Greater" ||
                   op == "LessOrEqual" || op == "GreaterOrEqual";
  Type resultType = isCompare ? Type(b.getI1Type()) : et;
  int32_t resultDtype =
      isCompare ? int32_t(onnx::TensorProto::BOOL) : (*x)->dtype;

  double alpha = 0, beta = 0, gamma = 0;
  auto getAlpha = [&](double d) {
    FailureOr<double> a = floatAttr("alpha", d);
    alpha = succeeded(a) ? *a : d;
    return a;
  };
  if (op == "LeakyRelu" && failed(getAlpha(0.01)))
    return failure();
  if ((op == "Elu" || op == "ThresholdedRelu" || op == "Celu") &&
      failed(getAlpha(1.0)))
    return failure();
  if (op == "HardSigmoid" || op == "HardSwish") {
    if (op == "HardSigmoid") {
      if (failed(getAlpha(0.2)))
        return failure();
      FailureOr<double> bt = floatAttr("beta", 0.5);
      if (failed(bt))
        return failure();
      beta = *bt;
    } else {
      alpha = 1.0 / 6;
      beta = 0.5;
    }
  }
  if (op == "Selu") {
    if (failed(getAlpha(1.67326319217681884765625)))
      return failure();
    FailureOr<double> g = floatAttr("gamma", 1.05070102214813232421875);
    if (failed(g))
      return failure();
    gamma = *g;
  }

  auto body = [&](ImplicitLocOpBuilder &ib, ValueRange a) -> Value {
    Value v = a[0];
    auto c = [&](double d) { return fconst(ib, et, d); };
    auto ltZero = [&](Value t) {
      return arith::CmpFOp::create(ib, arith::CmpFPredicate::OLT, t, c(0));
    };
    if (op == "Add")
      return isFloat ? Value(arith::AddFOp::create(ib, v, a[1]))
                     : Value(arith::AddIOp::create(ib, v, a[1]));
    if (op == "Sub")
      return isFloat ? Value(arith::SubFOp::create(ib, v, a[1]))
                     : Value(arith::SubIOp::create(ib, v, a[1]));
    if (op == "Mul")
      return isFloat ? Value(arith::MulFOp::create(ib, v, a[1]))
                     : Value(arith::MulIOp::create(ib, v, a[1]));
    if (op == "Div")
      return isFloat      ? Value(arith::DivFOp::create(ib, v, a[1]))
             : isUnsigned ? Value(arith::DivUIOp::create(ib, v, a[1]))
                          : Value(arith::DivSIOp::create(ib, v, a[1]));
    if (op == "Pow") {
      Value e = convertScalar(ib, a[1], et, isUnsignedDtype(input(1)->dtype),
                              false);
      return math::PowFOp::create(ib, v, e);
    }
    if (op == "PRelu")
      return arith::SelectOp::create(ib, ltZero(v),
                                     arith::MulFOp::create(ib, v, a[1]), v);
    if (op == "Relu")
      return isFloat ? Value(arith::MaximumFOp::create(ib, v, c(0)))
                     : Value(arith::MaxSIOp::create(
                           ib, v,
                           arith::ConstantOp::create(
                               ib, et, ib.getIntegerAttr(et, 0))));
    if (op == "LeakyRelu")
      return arith::SelectOp::create(
          ib, ltZero(v), arith::MulFOp::create(ib, v, c(alpha)), v);
    if (op == "Sigmoid") {
      Value e = math::ExpOp::create(ib, arith::NegFOp::create(ib, v));
      return arith::DivFOp::create(ib, c(1), arith::AddFOp::create(ib, c(1), e));
    }
    if (op == "Tanh")
      return math::TanhOp::create(ib, v);
    if (op == "HardSigmoid" || op == "HardSwish") {
      Value t = arith::AddFOp::create(
          ib, arith::MulFOp::create(ib, v, c(alpha)), c(beta));
      t = arith::MaximumFOp::create(ib, c(0),
                                    arith::MinimumFOp::create(ib, c(1), t));
      return op == "HardSwish" ? Value(arith::MulFOp::create(ib, v, t)) : t;
    }
    if (op == "Elu") {
      Value e = arith::SubFOp::create(ib, math::ExpOp::create(ib, v), c(1));
      return arith::SelectOp::create(ib, ltZero(v),
                                     arith::MulFOp::create(ib, e, c(alpha)), v);
    }
    if (op == "Celu") {
      Value e = arith::SubFOp::create(
          ib,
          math::ExpOp::create(ib, arith::DivFOp::create(ib, v, c(alpha))),
          c(1));
      return arith::AddFOp::create(
          ib, arith::MaximumFOp::create(ib, c(0), v),
          arith::MinimumFOp::create(ib, c(0),
                                    arith::MulFOp::create(ib, e, c(alpha))));
    }
    if (op == "Selu") {
      Value neg = arith::SubFOp::create(
          ib, arith::MulFOp::create(ib, math::ExpOp::create(ib, v), c(alpha)),
          c(alpha));
      Value pos = arith::CmpFOp::create(ib, arith::CmpFPredicate::OGT, v, c(0));
      return arith::MulFOp::create(ib, c(gamma),
                                   arith::SelectOp::create(ib, pos, v, neg));
    }
    if (op == "Softplus")
      return math::LogOp::create(
          ib, arith::AddFOp::create(ib, math::ExpOp::create(ib, v), c(1)));
    if (op == "Softsign")
      return arith::DivFOp::create(
          ib, v, arith::AddFOp::create(ib, c(1), math::AbsFOp::create(ib, v)));
    if (op == "ThresholdedRelu")
      return arith::SelectOp::create(
          ib, arith::CmpFOp::create(ib, arith::CmpFPredicate::OGT, v, c(alpha)),
          v, c(0));
    if (op == "Exp")
      return math::ExpOp::create(ib, v);
    if (op == "Log")
      return math::LogOp::create(ib, v);
    if (op == "Sqrt")
      return math::SqrtOp::create(ib, v);
    if (op == "Erf")
      return math::ErfOp::create(ib, v);
    if (op == "Floor")
      return math::FloorOp::create(ib, v);
    if (op == "Ceil")
      return math::CeilOp::create(ib, v);
    if (op == "Sin")
      return math::SinOp::create(ib, v);
    if (op == "Cos")
      return math::CosOp::create(ib, v);
    if (op == "Round")
      return math::RoundEvenOp::create(ib, v);
    if (op == "Reciprocal")
      return arith::DivFOp::create(ib, c(1), v);
    if (op == "Neg")
      return isFloat ? Value(arith::NegFOp::create(ib, v))
                     : Value(arith::SubIOp::create(
                           ib,
                           arith::ConstantOp::create(ib, et,
                                                     ib.getIntegerAttr(et, 0)),
                           v));
    if (op == "Abs")
      return isFloat ? Value(math::AbsFOp::create(ib, v))
                     : Value(math::AbsIOp::create(ib, v));
    if (op == "Sign") {
      if (isFloat) {
        Value pos =
            arith::CmpFOp::create(ib, arith::CmpFPredicate::OGT, v, c(0));
        return arith::SelectOp::create(
            ib, pos, c(1), arith::SelectOp::create(ib, ltZero(v), c(-1), c(0)));
      }
      Value zero =
          arith::ConstantOp::create(ib, et, ib.getIntegerAttr(et, 0));
      Value one = arith::ConstantOp::create(ib, et, ib.getIntegerAttr(et, 1));
      Value m1 = arith::ConstantOp::create(ib, et, ib.getIntegerAttr(et, -1));
      Value pos = arith::CmpIOp::create(ib, arith::CmpIPredicate::sgt, v, zero);
      Value neg = arith::CmpIOp::create(ib, arith::CmpIPredicate::slt, v, zero);
      return arith::SelectOp::create(
          ib, pos, one, arith::SelectOp::create(ib, neg, m1, zero));
    }
    if (isCompare) {
      if (isFloat) {
        arith::CmpFPredicate p =
            op == "Equal"   ? arith::CmpFPredicate::OEQ
            : op == "Less"  ? arith::CmpFPredicate::OLT
            : op == "Greater" ? arith::CmpFPredicate::OGT
            : op == "LessOrEqual" ? arith::CmpFPredicate::OLE
                                  : arith::CmpFPredicate::OGE;
        return arith::CmpFOp::create(ib, p, v, a[1]);
      }
      arith::CmpIPredicate p =
          op == "Equal" ? arith::CmpIPredicate::eq
          : op == "Less"
              ? (isUnsigned ? arith::CmpIPredicate::ult
                            : arith::CmpIPredicate::slt)
          : op == "Greater"
              ? (isUnsigned ? arith::CmpIPredicate::ugt
                            : arith::CmpIPredicate::sgt)
          : op == "LessOrEqual"
              ? (isUnsigned ? arith::CmpIPredicate::ule
                            : arith::CmpIPredicate::sle)
              : (isUnsigned ? arith::CmpIPredicate::uge
                            : arith::CmpIPredicate::sge);
      return arith::CmpIOp::create(ib, p, v, a[1]);
    }
    if (op == "Not")
      return arith::XOrIOp::create(
          ib, v, arith::ConstantOp::create(ib, et, ib.getBoolAttr(true)));
    if (op == "And")
      return arith::AndIOp::create(ib, v, a[1]);
    if (op == "Or")
      return arith::OrIOp::create(ib, v, a[1]);
    return arith::XOrIOp::create(ib, v, a[1]); // Xor
  };
  FailureOr<Value> r = elementwise(ins, resultType, body);
  if (failed(r))
    return failure();
  setOutput(0, *r, resultDtype);
  return success();
}

LogicalResult GraphImporter::importVariadic(StringRef op) {
  ignoreAttrs({"consumed_inputs"});
  SmallVector<Value> ins;
  for (int64_t i = 0; i < numInputs(); ++i)
    if (input(i))
      ins.push_back(operand(i));
  if (ins.empty())
    return fail("needs at least one input");
  Type et = cast<RankedTensorType>(ins[0].getType()).getElementType();
  for (Value v : ins)
    if (cast<RankedTensorType>(v.getType()).getElementType() != et)
      return fail("operand element types differ");
  bool isFloat = isa<FloatType>(et);
  bool isUnsigned = isUnsignedDtype(input(0)->dtype);
  if (op == "Mean" && !isFloat)
    return fail("needs floating-point inputs");
  FailureOr<Value> r = elementwise(
      ins, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) -> Value {
        Value acc = a[0];
        for (Value v : a.drop_front()) {
          if (op == "Max")
            acc = isFloat      ? Value(arith::MaximumFOp::create(ib, acc, v))
                  : isUnsigned ? Value(arith::MaxUIOp::create(ib, acc, v))
                               : Value(arith::MaxSIOp::create(ib, acc, v));
          else if (op == "Min")
            acc = isFloat      ? Value(arith::MinimumFOp::create(ib, acc, v))
                  : isUnsigned ? Value(arith::MinUIOp::create(ib, acc, v))
                               : Value(arith::MinSIOp::create(ib, acc, v));
          else
            acc = isFloat ? Value(arith::AddFOp::create(ib, acc, v))
                          : Value(arith::AddIOp::create(ib, acc, v));
        }
        if (op == "Mean")
          acc = arith::DivFOp::create(ib, acc,
                                      fconst(ib, et, double(a.size())));
        return acc;
      });
  if (failed(r))
    return failure();
  setOutput(0, *r, input(0)->dtype);
  return success();
}

LogicalResult GraphImporter::importCast() {
  FailureOr<int64_t> to = intAttr("to", 0);
  if (failed(to))
    return failure();
  ignoreAttrs({"saturate"});
  FailureOr<Type> toType = elementType(*to);
  FailureOr<ImportedValue *> x = required(0);
  if (failed(toType) || failed(x))
    return failure();
  Value v = operand(0);
  bool srcUnsigned = isUnsignedDtype((*x)->dtype),
       dstUnsigned = isUnsignedDtype(*to);
  FailureOr<Value> r = elementwise(
      v, *toType, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
        return convertScalar(ib, a[0], *toType, srcUnsigned, dstUnsigned);
      });
  if (failed(r))
    return failure();
  setOutput(0, *r, *to);
  return success();
}

LogicalResult GraphImporter::importClip() {
  FailureOr<ImportedValue *> x = required(0);
  if (failed(x))
    return failure();
  SmallVector<Value> ins = {operand(0)};
  Type et = cast<RankedTensorType>(ins[0].getType()).getElementType();
  bool isFloat = isa<FloatType>(et);
  int minIdx = -1, maxIdx = -1;
  if (opset() < 11) {
    ignoreAttrs({"consumed_inputs"});
    FailureOr<double> lo = floatAttr("min", -INFINITY),
                      hi = floatAttr("max", INFINITY);
    if (failed(lo) || failed(hi))
      return failure();
    if (!isFloat)
      return fail("needs a floating-point input");
    ins.push_back(filled({}, et, *lo));
    minIdx = 1;
    ins.push_back(filled({}, et, *hi));
    maxIdx = 2;
  } else {
    if (input(1)) {
      minIdx = ins.size();
      ins.push_back(operand(1));
    }
    if (input(2)) {
      maxIdx = ins.size();
      ins.push_back(operand(2));
    }
  }
  bool isUnsigned = isUnsignedDtype((*x)->dtype);
  FailureOr<Value> r = elementwise(
      ins, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) -> Value {
        Value v = a[0];
        if (minIdx >= 0)
          v = isFloat      ? Value(arith::MaximumFOp::create(ib, v, a[minIdx]))
              : isUnsigned ? Value(arith::MaxUIOp::create(ib, v, a[minIdx]))
                           : Value(arith::MaxSIOp::create(ib, v, a[minIdx]));
        if (maxIdx >= 0)
          v = isFloat      ? Value(arith::MinimumFOp::create(ib, v, a[maxIdx]))
              : isUnsigned ? Value(arith::MinUIOp::create(ib, v, a[maxIdx]))
                           : Value(arith::MinSIOp::create(ib, v, a[maxIdx]));
        return v;
      });
  if (failed(r))
    return failure();
  setOutput(0, *r, (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importWhere() {
  for (unsigned i = 0; i < 3; ++i)
    if (failed(required(i)))
      return failure();
  Value c = operand(0), x = operand(1), y = operand(2);
  Type et = cast<RankedTensorType>(x.getType()).getElementType();
  FailureOr<Value> r = elementwise(
      ValueRange{c, x, y}, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
        return arith::SelectOp::create(ib, a[0], a[1], a[2]);
      });
  if (failed(r))
    return failure();
  setOutput(0, *r, input(1)->dtype);
  return success();
}

//===----------------------------------------------------------------------===//
// Shapes and data movement
//===----------------------------------------------------------------------===//

LogicalResult GraphImporter::importReshapeLike(StringRef op) {
  FailureOr<ImportedValue *> xOr = required(0);
  if (failed(xOr))
    return failure();
  ImportedValue &x = **xOr;
  ignoreAttrs({"consumed_inputs"});
  ArrayRef<int64_t> in = x.shape;
  int64_t rank = in.size();
  SmallVector<int64_t> out;
  if (op == "Reshape") {
    SmallVector<int64_t> target;
    bool attrGiven;
    FailureOr<SmallVector<int64_t>> attrShape = intsAttr("shape", &attrGiven);
    if (failed(attrShape))
      return failure();
    if (attrGiven) {
      target = *attrShape;
    } else {
      FailureOr<const TensorData *> s = constantInput(1, "the target shape");
      if (failed(s))
        return failure();
      target = intsOf(**s);
    }
    FailureOr<int64_t> allowZero = intAttr("allowzero", 0);
    if (failed(allowZero))
      return failure();
    int64_t known = 1, inferAt = -1;
    for (auto [i, d] : llvm::enumerate(target)) {
      if (d == 0 && !*allowZero) {
        if (int64_t(i) >= rank)
          return fail("shape entry 0 at " + Twine(i) +
                      " copies a dimension the input does not have");
        d = in[i];
      }
      if (d == -1) {
        if (inferAt >= 0)
          return fail("shape has more than one -1");
        inferAt = i;
        continue;
      }
      if (d < 0)
        return fail("shape entry " + Twine(d) + " is invalid");
      if (d != 0 && known > kMaxElements / d)
        return fail("target shape is too large");
      known *= d;
      out.push_back(d);
    }
    int64_t total = checkedNumElements(in);
    if (inferAt >= 0) {
      if (known == 0 || total % known)
        return fail("cannot infer -1 in " + shapeStr(target) + " from " +
                    shapeStr(in));
      out.insert(out.begin() + inferAt, total / known);
    }
    if (checkedNumElements(out) != total)
      return fail("cannot reshape " + shapeStr(in) + " to " + shapeStr(out));
  } else if (op == "Flatten") {
    FailureOr<int64_t> axis = intAttr("axis", 1);
    if (failed(axis))
      return failure();
    int64_t a = *axis < 0 ? *axis + rank : *axis;
    if (a < 0 || a > rank)
      return fail("axis " + Twine(*axis) + " is out of range");
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i)
      (i < a ? outer : inner) *= in[i];
    out = {outer, inner};
  } else {
    SmallVector<int64_t> axes;
    bool given;
    FailureOr<SmallVector<int64_t>> attrAxes = intsAttr("axes", &given);
    if (failed(attrAxes))
      return failure();
    if (given) {
      axes = *attrAxes;
    } else if (input(1)) {
      FailureOr<const TensorData *> a = constantInput(1, "axes");
      if (failed(a))
        return failure();
      axes = intsOf(**a);
    }
    if (op == "Squeeze") {
      for (int64_t &a : axes) {
        FailureOr<int64_t> n = normalizeAxis(a, rank);
        if (failed(n))
          return failure();
        a = *n;
        if (in[a] != 1)
          return fail("cannot squeeze dimension " + Twine(a) + " of size " +
                      Twine(in[a]));
      }
      for (int64_t i = 0; i < rank; ++i)
        if (!(axes.empty() ? in[i] == 1 : llvm::is_contained(axes, i)))
          out.push_back(in[i]);
    } else {
      if (axes.empty())
        return fail("needs axes");
      int64_t outRank = rank + axes.size();
      SmallVector<bool> isNew(outRank, false);
      for (int64_t a : axes) {
        FailureOr<int64_t> n = normalizeAxis(a, outRank);
        if (failed(n))
          return failure();
        if (isNew[*n])
          return fail("axis " + Twine(a) + " is repeated");
        isNew[*n] = true;
      }
      int64_t next = 0;
      for (int64_t i = 0; i < outRank; ++i)
        out.push_back(isNew[i] ? 1 : in[next++]);
    }
  }
  if (x.isConstant()) {
    setOutput(0, hostReshape(*x.constant, out));
    return success();
  }
  setOutput(0, reshape(operand(0), out), x.dtype);
  return success();
}

LogicalResult GraphImporter::importTranspose() {
  FailureOr<ImportedValue *> x = required(0);
  FailureOr<SmallVector<int64_t>> perm = intsAttr("perm");
  if (failed(x) || failed(perm))
    return failure();
  int64_t rank = (*x)->shape.size();
  if (perm->empty())
    for (int64_t i = rank - 1; i >= 0; --i)
      perm->push_back(i);
  SmallVector<int64_t> sorted(*perm);
  llvm::sort(sorted);
  if (int64_t(perm->size()) != rank ||
      sorted != llvm::to_vector(llvm::seq<int64_t>(0, rank)))
    return fail("perm " + shapeStr(*perm) + " is not a permutation of rank " +
                Twine(rank));
  setOutput(0, transpose(operand(0), *perm), (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importConcat() {
  FailureOr<int64_t> axisAttr = intAttr("axis", opset() < 4 ? 1 : INT64_MIN);
  if (failed(axisAttr))
    return failure();
  if (*axisAttr == INT64_MIN)
    return fail("needs the 'axis' attribute");
  SmallVector<ImportedValue *> ins;
  for (int64_t i = 0; i < numInputs(); ++i) {
    FailureOr<ImportedValue *> v = required(i);
    if (failed(v))
      return failure();
    ins.push_back(*v);
  }
  if (ins.empty())
    return fail("needs at least one input");
  int64_t rank = ins[0]->shape.size();
  FailureOr<int64_t> axis = normalizeAxis(*axisAttr, rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> outShape(ins[0]->shape);
  outShape[*axis] = 0;
  bool allKnown = true;
  for (ImportedValue *v : ins) {
    if (int64_t(v->shape.size()) != rank || v->dtype != ins[0]->dtype)
      return fail("inputs differ in rank or element type");
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && v->shape[d] != outShape[d])
        return fail("inputs " + shapeStr(ins[0]->shape) + " and " +
                    shapeStr(v->shape) + " differ outside axis " +
                    Twine(*axis));
    outShape[*axis] += v->shape[*axis];
    allKnown &= v->isConstant();
  }
  if (allKnown && foldable(outShape)) {
    // Shape vectors and other small known tensors: concatenate here.
    TensorData out = makeTensor(outShape, ins[0]->dtype);
    unsigned es = elementByteSize(out.dtype);
    int64_t outer = 1, outInner = 1;
    for (int64_t d = 0; d < *axis; ++d)
      outer *= outShape[d];
    for (int64_t d = *axis; d < rank; ++d)
      outInner *= outShape[d];
    int64_t offset = 0;
    char *dst = const_cast<char *>(out.bytes.data());
    for (ImportedValue *v : ins) {
      int64_t inner = 1;
      for (int64_t d = *axis; d < rank; ++d)
        inner *= v->shape[d];
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(dst + (o * outInner + offset) * es,
                    v->constant->bytes.data() + o * inner * es, inner * es);
      offset += inner;
    }
    setOutput(0, std::move(out));
    return success();
  }
  SmallVector<Value> vals;
  for (int64_t i = 0; i < numInputs(); ++i)
    if (ins[i]->shape[*axis] != 0)
      vals.push_back(operand(i));
  if (vals.empty())
    return fail("concatenates only tensors that are empty along axis " +
                std::to_string(*axis) + "; an empty result is not supported");
  if (vals.size() == 1) {
    setOutput(0, vals[0], ins[0]->dtype);
    return success();
  }
  setOutput(0, tensor::ConcatOp::create(b, *axis, vals), ins[0]->dtype);
  return success();
}

LogicalResult GraphImporter::importSplit() {
  FailureOr<ImportedValue *> x = required(0);
  FailureOr<int64_t> axisAttr = intAttr("axis", 0);
  bool given;
  FailureOr<SmallVector<int64_t>> splitAttr = intsAttr("split", &given);
  ignoreAttrs({"num_outputs"});
  if (failed(x) || failed(axisAttr) || failed(splitAttr))
    return failure();
  int64_t rank = (*x)->shape.size();
  FailureOr<int64_t> axis = normalizeAxis(*axisAttr, rank);
  if (failed(axis))
    return failure();
  int64_t dim = (*x)->shape[*axis];
  SmallVector<int64_t> sizes = *splitAttr;
  if (!given && input(1)) {
    FailureOr<const TensorData *> s = constantInput(1, "split");
    if (failed(s))
      return failure();
    sizes = intsOf(**s);
  }
  int64_t n = numOutputs();
  if (sizes.empty()) {
    if (n == 0 || dim % n)
      return fail("dimension " + Twine(dim) + " does not split evenly into " +
                  Twine(n) + " outputs");
    sizes.assign(n, dim / n);
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return fail("negative split size");
    total += s;
  }
  if (int64_t(sizes.size()) != n || total != dim)
    return fail("split sizes " + shapeStr(sizes) + " do not cover dimension " +
                Twine(dim) + " with " + Twine(n) + " outputs");
  Value v = operand(0);
  Type et = cast<RankedTensorType>(v.getType()).getElementType();
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    SmallVector<int64_t> offs(rank, 0), sz((*x)->shape), strides(rank, 1);
    offs[*axis] = offset;
    sz[*axis] = sizes[i];
    offset += sizes[i];
    Value slice = tensor::ExtractSliceOp::create(
        b, tensorType(sz, et), v, ValueRange{}, ValueRange{}, ValueRange{},
        offs, sz, strides);
    setOutput(i, slice, (*x)->dtype);
  }
  return success();
}

LogicalResult GraphImporter::importSlice() {
  FailureOr<ImportedValue *> xOr = required(0);
  if (failed(xOr))
    return failure();
  ImportedValue &x = **xOr;
  int64_t rank = x.shape.size();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (opset() < 10) {
    FailureOr<SmallVector<int64_t>> s = intsAttr("starts"), e = intsAttr("ends"),
                                    a = intsAttr("axes");
    if (failed(s) || failed(e) || failed(a))
      return failure();
    starts = *s;
    ends = *e;
    axes = *a;
  } else {
    FailureOr<const TensorData *> s = constantInput(1, "starts"),
                                  e = constantInput(2, "ends");
    if (failed(s) || failed(e))
      return failure();
    starts = intsOf(**s);
    ends = intsOf(**e);
    if (input(3)) {
      FailureOr<const TensorData *> a = constantInput(3, "axes");
      if (failed(a))
        return failure();
      axes = intsOf(**a);
    }
    if (input(4)) {
      FailureOr<const TensorData *> st = constantInput(4, "steps");
      if (failed(st))
        return failure();
      steps = intsOf(**st);
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return fail("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> offs(rank, 0), sizes(x.shape), strides(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> a = normalizeAxis(axes[i], rank);
    if (failed(a))
      return failure();
    if (seen[*a])
      return fail("axis " + Twine(axes[i]) + " is repeated");
    seen[*a] = true;
    int64_t dim = x.shape[*a], step = steps[i];
    if (step == 0)
      return fail("step 0 is invalid");
    auto norm = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0)
        v = std::max<int64_t>(v, -dim - 1) + dim;
      return std::clamp<int64_t>(v, lo, hi);
    };
    int64_t s, e, n;
    if (step > 0) {
      s = norm(starts[i], 0, dim);
      e = norm(ends[i], 0, dim);
      n = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = norm(starts[i], 0, dim - 1);
      e = norm(ends[i], -1, dim - 1);
      n = s > e ? (s - e + (-step) - 1) / (-step) : 0;
      if (dim == 0)
        n = 0;
    }
    offs[*a] = s;
    sizes[*a] = n;
    strides[*a] = step;
  }
  bool negative = llvm::any_of(strides, [](int64_t s) { return s < 0; });
  if (x.isConstant() && foldable(sizes)) {
    SmallVector<int64_t> srcStrides = stridesOf(x.shape);
    setOutput(0, hostIndexed(*x.constant, sizes, [&](ArrayRef<int64_t> idx) {
                int64_t lin = 0;
                for (int64_t d = 0; d < rank; ++d)
                  lin += (offs[d] + idx[d] * strides[d]) * srcStrides[d];
                return lin;
              }));
    return success();
  }
  Value v = operand(0);
  Type et = cast<RankedTensorType>(v.getType()).getElementType();
  if (!negative) {
    setOutput(0,
              tensor::ExtractSliceOp::create(b, tensorType(sizes, et), v,
                                             ValueRange{}, ValueRange{},
                                             ValueRange{}, offs, sizes,
                                             strides),
              x.dtype);
    return success();
  }
  Value r = indexedCopy(
      v, sizes, {}, {},
      [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> out, ValueRange) {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d)
          idx.push_back(arith::AddIOp::create(
              ib, arith::ConstantIndexOp::create(ib, offs[d]),
              arith::MulIOp::create(
                  ib, out[d], arith::ConstantIndexOp::create(ib, strides[d]))));
        return idx;
      });
  setOutput(0, r, x.dtype);
  return success();
}

LogicalResult GraphImporter::importPad() {
  FailureOr<ImportedValue *> x = required(0);
  FailureOr<std::string> mode = stringAttr("mode", "constant");
  if (failed(x) || failed(mode))
    return failure();
  int64_t rank = (*x)->shape.size();
  SmallVector<int64_t> pads;
  double padValue = 0;
  if (opset() < 11) {
    bool given;
    FailureOr<SmallVector<int64_t>> p =
        intsAttr(opset() < 2 ? "paddings" : "pads", &given);
    FailureOr<double> v = floatAttr("value", 0);
    if (failed(p) || failed(v))
      return failure();
    pads = *p;
    padValue = *v;
  } else {
    FailureOr<const TensorData *> p = constantInput(1, "pads");
    if (failed(p))
      return failure();
    pads = intsOf(**p);
    if (input(2)) {
      FailureOr<const TensorData *> v = constantInput(2, "constant_value");
      if (failed(v))
        return failure();
      if ((*v)->numElements() != 1)
        return fail("constant_value must be a scalar");
      padValue = (*v)->getDouble(0);
    }
    if (input(3))
      return fail("the 'axes' input is not supported");
  }
  if (int64_t(pads.size()) != 2 * rank)
    return fail("pads has " + Twine(pads.size()) + " entries for rank " +
                Twine(rank));
  SmallVector<int64_t> low(pads.begin(), pads.begin() + rank),
      high(pads.begin() + rank, pads.end());
  Value v = operand(0);
  if (*mode == "constant") {
    setOutput(0, padConstant(v, low, high, padValue), (*x)->dtype);
    return success();
  }
  if (*mode != "reflect" && *mode != "edge")
    return fail("mode '" + *mode + "' is not supported");
  SmallVector<int64_t> outShape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = (*x)->shape[d];
    if (low[d] < 0 || high[d] < 0)
      return fail("negative pads are only supported in constant mode");
    if (*mode == "reflect" && (low[d] >= n || high[d] >= n) &&
        (low[d] || high[d]))
      return fail("reflect pads must be smaller than the dimension");
    if (n == 0 && (low[d] || high[d]))
      return fail("cannot pad an empty dimension in " + *mode + " mode");
    outShape.push_back(n + low[d] + high[d]);
  }
  bool reflect = *mode == "reflect";
  ArrayRef<int64_t> inShape = (*x)->shape;
  Value r = indexedCopy(
      v, outShape, {}, {},
      [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> out, ValueRange) {
        SmallVector<Value> idx;
        Value zero = arith::ConstantIndexOp::create(ib, 0);
        for (int64_t d = 0; d < rank; ++d) {
          if (!low[d] && !high[d]) {
            idx.push_back(out[d]);
            continue;
          }
          Value last = arith::ConstantIndexOp::create(ib, inShape[d] - 1);
          Value i = arith::SubIOp::create(
              ib, out[d], arith::ConstantIndexOp::create(ib, low[d]));
          if (reflect) {
            Value neg = arith::CmpIOp::create(ib, arith::CmpIPredicate::slt, i,
                                              zero);
            i = arith::SelectOp::create(ib, neg,
                                        arith::SubIOp::create(ib, zero, i), i);
            Value over = arith::CmpIOp::create(ib, arith::CmpIPredicate::sgt,
                                               i, last);
            Value twice = arith::ConstantIndexOp::create(ib, 2 * (inShape[d] - 1));
            i = arith::SelectOp::create(ib, over,
                                        arith::SubIOp::create(ib, twice, i), i);
          } else {
            i = arith::MaxSIOp::create(ib, i, zero);
            i = arith::MinSIOp::create(ib, i, last);
          }
          idx.push_back(i);
        }
        return idx;
      });
  setOutput(0, r, (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importGather() {
  FailureOr<ImportedValue *> data = required(0), indices = required(1);
  FailureOr<int64_t> axisAttr = intAttr("axis", 0);
  if (failed(data) || failed(indices) || failed(axisAttr))
    return failure();
  ImportedValue &d = **data, &ix = **indices;
  int64_t rank = d.shape.size();
  if (rank == 0)
    return fail("data must have rank >= 1");
  FailureOr<int64_t> axis = normalizeAxis(*axisAttr, rank);
  if (failed(axis))
    return failure();
  if (isFloatDtype(ix.dtype) || ix.dtype == onnx::TensorProto::BOOL)
    return fail("indices must be integers");
  int64_t dim = d.shape[*axis];
  SmallVector<int64_t> outShape(d.shape.begin(), d.shape.begin() + *axis);
  llvm::append_range(outShape, ix.shape);
  outShape.append(d.shape.begin() + *axis + 1, d.shape.end());
  if (ix.isConstant()) {
    for (int64_t i = 0, n = ix.constant->numElements(); i < n; ++i) {
      int64_t v = ix.constant->getInt(i);
      if (v < -dim || v >= dim)
        return fail("index " + Twine(v) + " is out of range for dimension " +
                    Twine(dim));
    }
  }
  int64_t ir = ix.shape.size();
  if (d.isConstant() && ix.isConstant() &&
      foldable(outShape)) {
    SmallVector<int64_t> ds = stridesOf(d.shape), is = stridesOf(ix.shape);
    setOutput(0, hostIndexed(*d.constant, outShape, [&](ArrayRef<int64_t> o) {
                int64_t lin = 0, il = 0;
                for (int64_t k = 0; k < ir; ++k)
                  il += o[*axis + k] * is[k];
                int64_t v = ix.constant->getInt(il);
                if (v < 0)
                  v += dim;
                for (int64_t k = 0; k < *axis; ++k)
                  lin += o[k] * ds[k];
                lin += v * ds[*axis];
                for (int64_t k = *axis + 1; k < rank; ++k)
                  lin += o[k + ir - 1] * ds[k];
                return lin;
              }));
    return success();
  }
  Value src = operand(0), idxVal = operand(1);
  int64_t outRank = outShape.size();
  SmallVector<AffineExpr> exprs;
  for (int64_t k = 0; k < ir; ++k)
    exprs.push_back(b.getAffineDimExpr(*axis + k));
  AffineMap idxMap = AffineMap::get(outRank, 0, exprs, &ctx);
  Value r = indexedCopy(
      src, outShape, idxVal, idxMap,
      [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> out, ValueRange args) {
        Value i = arith::IndexCastOp::create(ib, ib.getIndexType(), args[0]);
        Value zero = arith::ConstantIndexOp::create(ib, 0);
        Value n = arith::ConstantIndexOp::create(ib, dim);
        Value neg =
            arith::CmpIOp::create(ib, arith::CmpIPredicate::slt, i, zero);
        i = arith::SelectOp::create(ib, neg, arith::AddIOp::create(ib, i, n),
                                    i);
        // Out-of-range run-time indices are clamped rather than read
        // outside the tensor.
        i = arith::MaxSIOp::create(ib, i, zero);
        i = arith::MinSIOp::create(
            ib, i, arith::ConstantIndexOp::create(ib, std::max<int64_t>(dim - 1, 0)));
        SmallVector<Value> idx(out.begin(), out.begin() + *axis);
        idx.push_back(i);
        idx.append(out.begin() + *axis + ir, out.end());
        return idx;
      });
  setOutput(0, r, d.dtype);
  return success();
}

LogicalResult GraphImporter::importExpand() {
  FailureOr<ImportedValue *> x = required(0);
  FailureOr<const TensorData *> s = constantInput(1, "the target shape");
  if (failed(x) || failed(s))
    return failure();
  SmallVector<int64_t> target = intsOf(**s);
  FailureOr<SmallVector<int64_t>> out =
      broadcastShape({ArrayRef<int64_t>((*x)->shape), target});
  if (failed(out))
    return failure();
  if (checkedNumElements(*out) < 0)
    return fail("expanded shape is too large");
  if ((*x)->isConstant() && foldable(*out)) {
    const TensorData &src = *(*x)->constant;
    SmallVector<int64_t> ss = stridesOf(src.shape);
    size_t off = out->size() - src.shape.size();
    setOutput(0, hostIndexed(src, *out, [&](ArrayRef<int64_t> o) {
                int64_t lin = 0;
                for (size_t k = 0; k < src.shape.size(); ++k)
                  lin += (src.shape[k] == 1 ? 0 : o[off + k]) * ss[k];
                return lin;
              }));
    return success();
  }
  setOutput(0, broadcastTo(operand(0), *out), (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importTile() {
  FailureOr<ImportedValue *> x = required(0);
  FailureOr<const TensorData *> r = constantInput(1, "repeats");
  if (failed(x) || failed(r))
    return failure();
  SmallVector<int64_t> reps = intsOf(**r);
  ArrayRef<int64_t> in = (*x)->shape;
  if (reps.size() != in.size())
    return fail("repeats has " + Twine(reps.size()) + " entries for rank " +
                Twine(in.size()));
  SmallVector<int64_t> out;
  for (auto [d, k] : llvm::zip(in, reps)) {
    if (k < 0)
      return fail("negative repeat");
    out.push_back(d * k);
  }
  if (checkedNumElements(out) < 0)
    return fail("tiled shape is too large");
  Value v = indexedCopy(
      operand(0), out, {}, {},
      [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> o, ValueRange) {
        SmallVector<Value> idx;
        for (size_t d = 0; d < in.size(); ++d)
          idx.push_back(reps[d] == 1 ? o[d]
                                     : Value(arith::RemUIOp::create(
                                           ib, o[d],
                                           arith::ConstantIndexOp::create(
                                               ib, in[d]))));
        return idx;
      });
  setOutput(0, v, (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importResize(StringRef op) {
  FailureOr<ImportedValue *> x = required(0);
  FailureOr<std::string> mode = stringAttr("mode", "nearest");
  if (failed(x) || failed(mode))
    return failure();
  std::string coord = "asymmetric", nearest = "floor";
  ignoreAttrs({"cubic_coeff_a", "exclude_outside", "extrapolation_value"});
  if (op == "Resize" && opset() >= 11) {
    FailureOr<std::string> c =
        stringAttr("coordinate_transformation_mode", "half_pixel");
    FailureOr<std::string> n = stringAttr("nearest_mode", "round_prefer_floor");
    if (failed(c) || failed(n))
      return failure();
    coord = *c;
    nearest = *n;
  }
  if (*mode != "nearest")
    return fail("mode '" + *mode + "' is not supported (only nearest)");
  ArrayRef<int64_t> in = (*x)->shape;
  int64_t rank = in.size();
  SmallVector<double> scales;
  SmallVector<int64_t> outShape;
  if (op == "Upsample" && opset() < 9) {
    FailureOr<SmallVector<double>> s = floatsAttr("scales");
    if (failed(s))
      return failure();
    scales = *s;
  } else {
    unsigned scalesIdx = (op == "Resize" && opset() >= 11) ? 2 : 1;
    if (input(scalesIdx) && input(scalesIdx)->constant &&
        input(scalesIdx)->constant->numElements() > 0) {
      for (int64_t i = 0, n = input(scalesIdx)->constant->numElements(); i < n;
           ++i)
        scales.push_back(input(scalesIdx)->constant->getDouble(i));
    } else if (input(scalesIdx) && !input(scalesIdx)->isConstant()) {
      return fail("scales must be known at import time");
    }
    if (scales.empty() && op == "Resize" && opset() >= 11 && input(3)) {
      FailureOr<const TensorData *> sz = constantInput(3, "sizes");
      if (failed(sz))
        return failure();
      outShape = intsOf(**sz);
      if (int64_t(outShape.size()) != rank)
        return fail("sizes has " + Twine(outShape.size()) +
                    " entries for rank " + Twine(rank));
      for (int64_t d = 0; d < rank; ++d)
        scales.push_back(in[d] ? double(outShape[d]) / in[d] : 1.0);
    }
  }
  if (int64_t(scales.size()) != rank)
    return fail("needs " + Twine(rank) + " scales or sizes");
  if (outShape.empty())
    for (int64_t d = 0; d < rank; ++d) {
      if (!(scales[d] > 0) || scales[d] > 1e6)
        return fail("scale " + std::to_string(scales[d]) + " is invalid");
      outShape.push_back(int64_t(std::floor(in[d] * scales[d])));
    }
  if (checkedNumElements(outShape) < 0)
    return fail("resized shape is too large");
  for (int64_t d : outShape)
    if (d > kFoldElements * 256)
      return fail("resized dimension " + Twine(d) + " is too large");
  // One lookup table per resized axis, computed here.
  SmallVector<Value> tables;
  SmallVector<AffineMap> maps;
  SmallVector<int64_t> tableOf(rank, -1);
  for (int64_t d = 0; d < rank; ++d) {
    if (outShape[d] == in[d] && scales[d] == 1.0)
      continue;
    TensorData t = makeTensor({outShape[d]}, onnx::TensorProto::INT64);
    for (int64_t o = 0; o < outShape[d]; ++o) {
      double s = scales[d], xo;
      if (coord == "half_pixel")
        xo = (o + 0.5) / s - 0.5;
      else if (coord == "pytorch_half_pixel")
        xo = outShape[d] > 1 ? (o + 0.5) / s - 0.5 : 0;
      else if (coord == "align_corners")
        xo = outShape[d] == 1 ? 0
                              : double(o) * (in[d] - 1) / (outShape[d] - 1);
      else if (coord == "asymmetric")
        xo = o / s;
      else if (coord == "tf_half_pixel_for_nearest")
        xo = (o + 0.5) / s;
      else
        return fail("coordinate_transformation_mode '" + coord +
                    "' is not supported");
      double r;
      if (nearest == "round_prefer_floor")
        r = (xo - std::floor(xo) == 0.5) ? std::floor(xo) : std::round(xo);
      else if (nearest == "round_prefer_ceil")
        r = (xo - std::floor(xo) == 0.5) ? std::ceil(xo) : std::round(xo);
      else if (nearest == "floor")
        r = std::floor(xo);
      else if (nearest == "ceil")
        r = std::ceil(xo);
      else
        return fail("nearest_mode '" + nearest + "' is not supported");
      int64_t i = std::clamp<int64_t>(int64_t(r), 0, in[d] - 1);
      storeInt(t, o, i);
    }
    tableOf[d] = tables.size();
    tables.push_back(materialize(t, "resize_index"));
    maps.push_back(AffineMap::get(rank, 0, b.getAffineDimExpr(d), &ctx));
  }
  Value v = indexedCopy(
      operand(0), outShape, tables, maps,
      [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> o, ValueRange args) {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d)
          idx.push_back(tableOf[d] < 0
                            ? o[d]
                            : Value(arith::IndexCastOp::create(
                                  ib, ib.getIndexType(), args[tableOf[d]])));
        return idx;
      });
  setOutput(0, v, (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importReduce(StringRef op) {
  FailureOr<ImportedValue *> x = required(0);
  FailureOr<int64_t> keep = intAttr("keepdims", 1),
                     noop = intAttr("noop_with_empty_axes", 0);
  bool given;
  FailureOr<SmallVector<int64_t>> axesAttr = intsAttr("axes", &given);
  if (failed(x) || failed(keep) || failed(noop) || failed(axesAttr))
    return failure();
  int64_t rank = (*x)->shape.size();
  SmallVector<int64_t> axes = *axesAttr;
  if (!given && input(1)) {
    FailureOr<const TensorData *> a = constantInput(1, "axes");
    if (failed(a))
      return failure();
    axes = intsOf(**a);
  }
  Value v = operand(0);
  if (axes.empty() && *noop) {
    setOutput(0, v, (*x)->dtype);
    return success();
  }
  if (axes.empty())
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  for (int64_t &a : axes) {
    FailureOr<int64_t> n = normalizeAxis(a, rank);
    if (failed(n))
      return failure();
    a = *n;
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  Type et = cast<RankedTensorType>(v.getType()).getElementType();
  bool isFloat = isa<FloatType>(et);
  if (!isFloat && op != "ReduceSum" && op != "ReduceMax" && op != "ReduceMin" &&
      op != "ReduceProd")
    return fail("needs a floating-point input");
  if (!isFloat && isUnsignedDtype((*x)->dtype) &&
      (op == "ReduceMax" || op == "ReduceMin"))
    return fail("unsigned inputs are not supported");
  auto unary = [&](auto makeOp) {
    return *elementwise(v, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
      return makeOp(ib, a[0]);
    });
  };
  ReduceKind kind = ReduceKind::Sum;
  if (op == "ReduceMax")
    kind = ReduceKind::Max;
  else if (op == "ReduceMin")
    kind = ReduceKind::Min;
  else if (op == "ReduceProd")
    kind = ReduceKind::Prod;
  else if (op == "ReduceSumSquare" || op == "ReduceL2")
    v = unary([](ImplicitLocOpBuilder &ib, Value a) -> Value {
      return arith::MulFOp::create(ib, a, a);
    });
  else if (op == "ReduceL1")
    v = unary([](ImplicitLocOpBuilder &ib, Value a) -> Value {
      return math::AbsFOp::create(ib, a);
    });
  else if (op == "ReduceLogSumExp")
    v = unary([](ImplicitLocOpBuilder &ib, Value a) -> Value {
      return math::ExpOp::create(ib, a);
    });
  Value r = reduce(v, axes, *keep, kind);
  int64_t count = 1;
  for (int64_t a : axes)
    count *= (*x)->shape[a];
  auto post = [&](auto makeOp) {
    r = *elementwise(r, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
      return makeOp(ib, a[0]);
    });
  };
  if (op == "ReduceMean")
    post([&](ImplicitLocOpBuilder &ib, Value a) -> Value {
      return arith::DivFOp::create(ib, a, fconst(ib, et, double(count)));
    });
  else if (op == "ReduceL2")
    post([](ImplicitLocOpBuilder &ib, Value a) -> Value {
      return math::SqrtOp::create(ib, a);
    });
  else if (op == "ReduceLogSum" || op == "ReduceLogSumExp")
    post([](ImplicitLocOpBuilder &ib, Value a) -> Value {
      return math::LogOp::create(ib, a);
    });
  setOutput(0, r, (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importShape() {
  FailureOr<ImportedValue *> x = required(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = (*x)->shape;
  if (node->op_type() == "Size") {
    setOutput(0, int64Tensor({}, {checkedNumElements(shape)}));
    return success();
  }
  int64_t rank = shape.size();
  FailureOr<int64_t> start = intAttr("start", 0), end = intAttr("end", rank);
  if (failed(start) || failed(end))
    return failure();
  auto clampAxis = [&](int64_t a) {
    if (a < 0)
      a += rank;
    return std::clamp<int64_t>(a, 0, rank);
  };
  int64_t s = clampAxis(*start), e = clampAxis(*end);
  SmallVector<int64_t> dims;
  for (int64_t i = s; i < e; ++i)
    dims.push_back(shape[i]);
  setOutput(0, int64Tensor({int64_t(dims.size())}, dims));
  return success();
}

LogicalResult GraphImporter::importConstant() {
  static const char *const kKinds[] = {
      "value",        "value_float", "value_floats", "value_int",
      "value_ints",   "sparse_value", "value_string", "value_strings"};
  const onnx::AttributeProto *a = nullptr;
  for (const char *k : kKinds)
    if (const onnx::AttributeProto *cand = attr(k)) {
      if (a)
        return fail("has more than one value attribute");
      a = cand;
    }
  if (!a)
    return fail("has no value attribute");
  StringRef kind = a->name();
  if (kind == "value") {
    if (!a->has_t())
      return fail("attribute 'value' holds no tensor");
    // The model is ours and mutable: moving raw_data out avoids a copy.
    auto &t = const_cast<onnx::TensorProto &>(a->t());
    llvm::Expected<TensorData> data = loadTensor(t, modelDir);
    if (!data)
      return fail(llvm::toString(data.takeError()));
    setOutput(0, std::move(*data));
    return success();
  }
  if (kind == "value_float") {
    TensorData t = makeTensor({}, onnx::TensorProto::FLOAT);
    storeDouble(t, 0, a->f());
    setOutput(0, std::move(t));
    return success();
  }
  if (kind == "value_floats") {
    TensorData t = makeTensor({a->floats_size()}, onnx::TensorProto::FLOAT);
    for (int i = 0; i < a->floats_size(); ++i)
      storeDouble(t, i, a->floats(i));
    setOutput(0, std::move(t));
    return success();
  }
  if (kind == "value_int") {
    setOutput(0, int64Tensor({}, {a->i()}));
    return success();
  }
  if (kind == "value_ints") {
    SmallVector<int64_t> v(a->ints().begin(), a->ints().end());
    setOutput(0, int64Tensor({int64_t(v.size())}, v));
    return success();
  }
  return fail("attribute '" + kind + "' is not supported");
}

LogicalResult GraphImporter::importConstantOfShape() {
  FailureOr<const TensorData *> s = constantInput(0, "the shape");
  if (failed(s))
    return failure();
  SmallVector<int64_t> shape = intsOf(**s);
  int64_t nn = checkedNumElements(shape);
  if (nn < 0)
    return fail("shape " + shapeStr(shape) +
                " has a negative entry or too many elements");
  int64_t *n = &nn;
  TensorData value = makeTensor({}, onnx::TensorProto::FLOAT);
  if (const onnx::AttributeProto *a = attr("value")) {
    auto &t = const_cast<onnx::TensorProto &>(a->t());
    llvm::Expected<TensorData> data = loadTensor(t, modelDir);
    if (!data)
      return fail(llvm::toString(data.takeError()));
    if (data->numElements() != 1)
      return fail("value must hold one element");
    value = std::move(*data);
  }
  if (*n <= kFoldElements) {
    TensorData out = makeTensor(shape, value.dtype);
    unsigned es = elementByteSize(value.dtype);
    for (int64_t i = 0; i < *n; ++i)
      std::memcpy(const_cast<char *>(out.bytes.data()) + i * es,
                  value.bytes.data(), es);
    setOutput(0, std::move(out));
    return success();
  }
  // Large fills stay a splat attribute; nothing is allocated here.
  Type et = *elementType(value.dtype);
  auto type = tensorType(shape, et);
  auto attr = DenseElementsAttr::getFromRawBuffer(type, value.bytes);
  setOutput(0, arith::ConstantOp::create(b, type, attr), value.dtype);
  return success();
}

LogicalResult GraphImporter::importRange() {
  FailureOr<const TensorData *> s = constantInput(0, "start"),
                                l = constantInput(1, "limit"),
                                d = constantInput(2, "delta");
  if (failed(s) || failed(l) || failed(d))
    return failure();
  if ((*s)->numElements() != 1 || (*l)->numElements() != 1 ||
      (*d)->numElements() != 1)
    return fail("start, limit and delta must be scalars");
  double start = (*s)->getDouble(0), limit = (*l)->getDouble(0),
         delta = (*d)->getDouble(0);
  if (delta == 0)
    return fail("delta is zero");
  double count = std::ceil((limit - start) / delta);
  if (!(count < double(kFoldElements)))
    count = count > 0 ? -1 : 0;
  if (count < 0)
    return fail("range is too long to evaluate at import time");
  int64_t n = int64_t(count);
  TensorData out = makeTensor({n}, (*s)->dtype);
  for (int64_t i = 0; i < n; ++i) {
    if (isFloatDtype(out.dtype))
      storeDouble(out, i, start + i * delta);
    else
      storeInt(out, i, (*s)->getInt(0) + i * (*d)->getInt(0));
  }
  setOutput(0, std::move(out));
  return success();
}
