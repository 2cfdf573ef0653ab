//===- ImportConstants.cpp - Known tensors and import-time evaluation -----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Values known at import time never reach the IR unless a run-time op uses
// them: Constant, ConstantOfShape, Shape, Size and Range make known tensors,
// Identity and inference Dropout forward their input, and the folds evaluate
// arithmetic, comparisons, Where, Cast and Transpose on known inputs (the
// op table tries a row's fold before its handler). This is how the
// Shape/Gather/Concat/Reshape chains exporters emit for static shapes
// disappear.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace weft::import::detail;

//===----------------------------------------------------------------------===//
// Host tensors
//===----------------------------------------------------------------------===//

void weft::import::detail::storeDouble(TensorData &t, int64_t i, double v) {
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

void weft::import::detail::storeInt(TensorData &t, int64_t i, int64_t v) {
  if (isFloatDtype(t.dtype))
    return storeDouble(t, i, double(v));
  char *p = const_cast<char *>(t.bytes.data()) + i * elementByteSize(t.dtype);
  if (t.dtype == onnx::TensorProto::BOOL)
    v = v != 0;
  std::memcpy(p, &v, elementByteSize(t.dtype));
}

bool weft::import::detail::foldable(ArrayRef<int64_t> shape) {
  int64_t n = checkedNumElements(shape);
  return n >= 0 && n <= kFoldElements;
}

SmallVector<int64_t> weft::import::detail::stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

TensorData weft::import::detail::hostIndexed(
    const TensorData &src, ArrayRef<int64_t> outShape,
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

TensorData weft::import::detail::hostReshape(const TensorData &t,
                                             ArrayRef<int64_t> shape) {
  TensorData r = t;
  r.shape.assign(shape.begin(), shape.end());
  return r;
}

TensorData weft::import::detail::int64Tensor(ArrayRef<int64_t> shape,
                                             ArrayRef<int64_t> values) {
  TensorData t = makeTensor(shape, onnx::TensorProto::INT64);
  std::memcpy(const_cast<char *>(t.bytes.data()), values.data(),
              values.size() * 8);
  return t;
}

SmallVector<int64_t> weft::import::detail::intsOf(const TensorData &t) {
  SmallVector<int64_t> v;
  for (int64_t i = 0, e = t.numElements(); i < e; ++i)
    v.push_back(t.getInt(i));
  return v;
}

std::string weft::import::detail::shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(shape, os, ", ");
  os << "]";
  return s;
}

//===----------------------------------------------------------------------===//
// Import-time evaluation
//===----------------------------------------------------------------------===//

/// The node's inputs when every present one is a known tensor small enough
/// to compute with (absent optional inputs are null); std::nullopt when some
/// input is computed at run time or too large, or input 0 is absent.
static std::optional<SmallVector<const TensorData *>>
knownInputs(GraphImporter &imp) {
  SmallVector<const TensorData *> ins;
  for (int64_t i = 0; i < imp.numInputs(); ++i) {
    ImportedValue *v = imp.input(i);
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
  return ins;
}

/// Evaluates an elementwise node on the known tensors `ins` with numpy
/// broadcasting into output 0, a tensor of `dtype`: `element(out, i, at)`
/// sets element `i` of `out` from the input elements at the linear indices
/// `at` (one per input). Results over kFoldElements are left to the handler.
static std::optional<LogicalResult> foldBroadcast(
    GraphImporter &imp, ArrayRef<const TensorData *> ins, int32_t dtype,
    llvm::function_ref<LogicalResult(TensorData &, int64_t, ArrayRef<int64_t>)>
        element) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (const TensorData *t : ins)
    shapes.push_back(t->shape);
  FailureOr<SmallVector<int64_t>> outShape = imp.broadcastShape(shapes);
  if (failed(outShape))
    return failure();
  if (!foldable(*outShape))
    return std::nullopt;
  TensorData out = makeTensor(*outShape, dtype);
  // Per input, the stride of every output dimension (0 where broadcast).
  SmallVector<SmallVector<int64_t>> strides;
  for (const TensorData *t : ins) {
    SmallVector<int64_t> s = stridesOf(t->shape), full(outShape->size(), 0);
    size_t off = outShape->size() - t->shape.size();
    for (size_t d = 0; d < t->shape.size(); ++d)
      full[off + d] = t->shape[d] == 1 ? 0 : s[d];
    strides.push_back(full);
  }
  SmallVector<int64_t> idx(outShape->size(), 0), at(ins.size(), 0);
  for (int64_t i = 0, n = out.numElements(); i < n; ++i) {
    for (auto [k, s] : llvm::enumerate(strides)) {
      at[k] = 0;
      for (size_t d = 0; d < idx.size(); ++d)
        at[k] += idx[d] * s[d];
    }
    if (failed(element(out, i, at)))
      return failure();
    for (int64_t d = int64_t(idx.size()) - 1; d >= 0; --d) {
      if (++idx[d] < (*outShape)[d])
        break;
      idx[d] = 0;
    }
  }
  imp.setOutput(0, std::move(out));
  return success();
}

/// Evaluates an elementwise op on known inputs by its host forms: on doubles
/// when the inputs are floating-point and `hostFloat` is given, on integers
/// otherwise. Variadic ops and integer forms take at most two inputs; more
/// are left to the handler.
static std::optional<LogicalResult> foldArithmetic(GraphImporter &imp,
                                                   Arity arity, bool compare,
                                                   HostFloatFn hostFloat,
                                                   HostIntFn hostInt) {
  std::optional<SmallVector<const TensorData *>> ins = knownInputs(imp);
  if (!ins || llvm::is_contained(*ins, nullptr))
    return std::nullopt;
  size_t n = ins->size();
  // A missing operand is for the handler to report.
  if (arity == Arity::Binary && n < 2)
    return std::nullopt;
  const TensorData &a = *(*ins)[0];
  bool onFloats = isFloatDtype(a.dtype) && hostFloat;
  if (!onFloats && !hostInt)
    return std::nullopt;
  if (n > 2 && (!onFloats || arity == Arity::Variadic))
    return std::nullopt;
  // A variadic op of one input is that input.
  bool identity = arity == Arity::Variadic && n == 1;
  int32_t dtype = compare ? int32_t(onnx::TensorProto::BOOL) : a.dtype;
  return foldBroadcast(
      imp, *ins, dtype,
      [&](TensorData &out, int64_t i, ArrayRef<int64_t> at) -> LogicalResult {
        if (onFloats) {
          double x = (*ins)[0]->getDouble(at[0]);
          double y = n > 1 ? (*ins)[1]->getDouble(at[1]) : 0;
          storeDouble(out, i, identity ? x : hostFloat(x, y));
          return success();
        }
        int64_t x = (*ins)[0]->getInt(at[0]);
        int64_t y = n > 1 ? (*ins)[1]->getInt(at[1]) : 0;
        std::optional<int64_t> r = identity ? x : hostInt(x, y);
        if (!r)
          return imp.fail("integer division by zero or overflow in a shape "
                          "computation");
        storeInt(out, i, *r);
        return success();
      });
}

std::optional<LogicalResult>
GraphImporter::foldElementwise(const ElementwiseOp &op) {
  if (!op.hostFloat && !op.hostInt)
    return std::nullopt;
  // The broadcasting attributes of opset < 7 are left to the handler.
  if (node->attribute_size())
    return std::nullopt;
  return foldArithmetic(*this, op.arity, op.compare, op.hostFloat, op.hostInt);
}

static double hostMod(double a, double b) { return std::fmod(a, b); }

/// ONNX Mod on integers (fmod = 0): the result has the divisor's sign.
static std::optional<int64_t> hostModInt(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1))
    return std::nullopt;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

std::optional<LogicalResult> GraphImporter::foldMod() {
  ignoreAttrs({"fmod"});
  return foldArithmetic(*this, Arity::Binary, /*compare=*/false, hostMod,
                        hostModInt);
}

std::optional<LogicalResult> GraphImporter::foldWhere() {
  std::optional<SmallVector<const TensorData *>> ins = knownInputs(*this);
  if (!ins || ins->size() < 3 || llvm::is_contained(*ins, nullptr) ||
      node->attribute_size())
    return std::nullopt;
  const TensorData &cond = *(*ins)[0], &x = *(*ins)[1], &y = *(*ins)[2];
  unsigned es = elementByteSize(x.dtype);
  // The data may be of any type: copy the chosen element's bytes.
  auto select = [&](TensorData &out, int64_t i, ArrayRef<int64_t> at) {
    bool pickX = cond.getInt(at[0]) != 0;
    const TensorData &src = pickX ? x : y;
    std::memcpy(const_cast<char *>(out.bytes.data()) + i * es,
                src.bytes.data() + at[pickX ? 1 : 2] * es, es);
    return success();
  };
  return foldBroadcast(*this, *ins, x.dtype, select);
}

std::optional<LogicalResult> GraphImporter::foldCast() {
  std::optional<SmallVector<const TensorData *>> ins = knownInputs(*this);
  if (!ins)
    return std::nullopt;
  const TensorData &in = *(*ins)[0];
  FailureOr<int64_t> to = intAttr("to", 0);
  if (failed(to))
    return failure();
  ignoreAttrs({"saturate"});
  if (failed(elementType(*to)))
    return failure();
  TensorData out = makeTensor(in.shape, *to);
  for (int64_t i = 0, n = out.numElements(); i < n; ++i) {
    if (isFloatDtype(in.dtype))
      storeDouble(out, i, in.getDouble(i));
    else
      storeInt(out, i, in.getInt(i));
  }
  setOutput(0, std::move(out));
  return success();
}

std::optional<LogicalResult> GraphImporter::foldTranspose() {
  std::optional<SmallVector<const TensorData *>> ins = knownInputs(*this);
  if (!ins)
    return std::nullopt;
  const TensorData &in = *(*ins)[0];
  FailureOr<SmallVector<int64_t>> perm = intsAttr("perm");
  if (failed(perm))
    return failure();
  int64_t rank = in.shape.size();
  if (perm->empty())
    for (int64_t i = rank - 1; i >= 0; --i)
      perm->push_back(i);
  if (int64_t(perm->size()) != rank)
    return fail("perm has " + Twine(perm->size()) + " entries for rank " +
                Twine(rank));
  SmallVector<int64_t> outShape, srcStrides = stridesOf(in.shape);
  for (int64_t p : *perm) {
    if (p < 0 || p >= rank)
      return fail("perm entry " + Twine(p) + " is out of range");
    outShape.push_back(in.shape[p]);
  }
  setOutput(0, hostIndexed(in, outShape, [&](ArrayRef<int64_t> idx) {
              int64_t lin = 0;
              for (int64_t d = 0; d < rank; ++d)
                lin += idx[d] * srcStrides[(*perm)[d]];
              return lin;
            }));
  return success();
}

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

LogicalResult GraphImporter::importIdentity() {
  FailureOr<ImportedValue *> in = required(0);
  if (failed(in))
    return failure();
  forwardOutput(0, **in);
  return success();
}

LogicalResult GraphImporter::importDropout(ParamFrom form) {
  // Inference ignores the ratio, the seed and is_test.
  if (form == ParamFrom::Attribute) {
    ignoreAttrs({"ratio", "is_test"});
    if (failed(attributeNotInput(1, "ratio")))
      return failure();
  } else {
    ignoreAttrs({"seed"});
    if (failed(inputNotAttribute(1, "ratio")))
      return failure();
  }
  FailureOr<ImportedValue *> in = required(0);
  if (failed(in))
    return failure();
  if (numInputs() > 2 && input(2)) {
    if (!input(2)->isConstant() || input(2)->constant->getInt(0) != 0)
      return fail("training_mode must be a known false for inference");
  }
  // Copied first: setting an output may move the values `in` points into.
  ImportedValue copy = **in;
  forwardOutput(0, copy);
  if (hasOutput(1)) {
    // The mask of inference-mode dropout keeps everything.
    TensorData mask = makeTensor(copy.shape, onnx::TensorProto::BOOL);
    std::memset(const_cast<char *>(mask.bytes.data()), 1, mask.bytes.size());
    setOutput(1, std::move(mask));
  }
  return success();
}

LogicalResult GraphImporter::importShape() {
  FailureOr<ImportedValue *> x = required(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = (*x)->shape;
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

LogicalResult GraphImporter::importSize() {
  FailureOr<ImportedValue *> x = required(0);
  if (failed(x))
    return failure();
  setOutput(0, int64Tensor({}, {checkedNumElements((*x)->shape)}));
  return success();
}

LogicalResult GraphImporter::importConstant() {
  static const char *const kKinds[] = {
      "value",      "value_float",  "value_floats", "value_int",
      "value_ints", "sparse_value", "value_string", "value_strings"};
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
