//===- ImportShape.cpp - Shapes and data movement -------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Reshapes become tensor.collapse_shape/expand_shape (same bytes for known
// tensors), Transpose linalg.transpose, Concat and Split tensor.concat and
// tensor.extract_slice, Pad tensor.pad. What no tensor op expresses (reflect
// and edge padding, negative-step slices, run-time Gather, Tile, nearest
// Resize) is an "indexed copy": a linalg.generic whose body reads the source
// with tensor.extract at computed indices. On known inputs of at most
// kFoldElements elements Concat, Slice, Gather and Expand compute the result
// here.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace weft::import::detail;

//===----------------------------------------------------------------------===//
// Reshapes
//===----------------------------------------------------------------------===//

/// Output 0 is `x` with the shape `shape`: the same bytes under the new
/// shape for a known tensor, a tensor.collapse_shape or expand_shape
/// otherwise.
static LogicalResult setReshaped(GraphImporter &imp, const ImportedValue &x,
                                 ArrayRef<int64_t> shape) {
  if (x.isConstant()) {
    imp.setOutput(0, hostReshape(*x.constant, shape));
    return success();
  }
  imp.setOutput(0, imp.reshape(imp.operand(0), shape), x.dtype);
  return success();
}

LogicalResult GraphImporter::importReshape(ParamFrom form) {
  FailureOr<ImportedValue *> xOr = required(0);
  if (failed(xOr))
    return failure();
  ImportedValue &x = **xOr;
  ignoreAttrs({"consumed_inputs"});
  ArrayRef<int64_t> in = x.shape;
  int64_t rank = in.size();
  SmallVector<int64_t> target;
  if (form == ParamFrom::Attribute) {
    bool given;
    FailureOr<SmallVector<int64_t>> attrShape = intsAttr("shape", &given);
    if (failed(attrShape) || failed(attributeNotInput(1, "shape")))
      return failure();
    if (!given)
      return fail("needs the 'shape' attribute");
    target = *attrShape;
  } else {
    if (failed(inputNotAttribute(1, "shape")))
      return failure();
    FailureOr<const TensorData *> s = constantInput(1, "the target shape");
    if (failed(s))
      return failure();
    target = intsOf(**s);
  }
  FailureOr<int64_t> allowZero = intAttr("allowzero", 0);
  if (failed(allowZero))
    return failure();
  SmallVector<int64_t> out;
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
  return setReshaped(*this, x, out);
}

LogicalResult GraphImporter::importFlatten() {
  FailureOr<ImportedValue *> xOr = required(0);
  if (failed(xOr))
    return failure();
  ImportedValue &x = **xOr;
  ignoreAttrs({"consumed_inputs"});
  ArrayRef<int64_t> in = x.shape;
  int64_t rank = in.size();
  FailureOr<int64_t> axis = intAttr("axis", 1);
  if (failed(axis))
    return failure();
  int64_t a = *axis < 0 ? *axis + rank : *axis;
  if (a < 0 || a > rank)
    return fail("axis " + Twine(*axis) + " is out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < a ? outer : inner) *= in[i];
  return setReshaped(*this, x, {outer, inner});
}

/// The axes of Squeeze and Unsqueeze: the attribute, or input #1 from
/// opset 13 on; none when neither is given.
static FailureOr<SmallVector<int64_t>> readAxes(GraphImporter &imp,
                                                ParamFrom form) {
  if (form == ParamFrom::Attribute) {
    FailureOr<SmallVector<int64_t>> axes = imp.intsAttr("axes");
    if (failed(axes) || failed(imp.attributeNotInput(1, "axes")))
      return failure();
    return axes;
  }
  if (failed(imp.inputNotAttribute(1, "axes")))
    return failure();
  if (!imp.input(1))
    return SmallVector<int64_t>();
  FailureOr<const TensorData *> a = imp.constantInput(1, "axes");
  if (failed(a))
    return failure();
  return intsOf(**a);
}

LogicalResult GraphImporter::importSqueeze(ParamFrom form) {
  FailureOr<ImportedValue *> xOr = required(0);
  if (failed(xOr))
    return failure();
  ImportedValue &x = **xOr;
  ignoreAttrs({"consumed_inputs"});
  ArrayRef<int64_t> in = x.shape;
  int64_t rank = in.size();
  FailureOr<SmallVector<int64_t>> axes = readAxes(*this, form);
  if (failed(axes))
    return failure();
  for (int64_t &a : *axes) {
    FailureOr<int64_t> n = normalizeAxis(a, rank);
    if (failed(n))
      return failure();
    a = *n;
    if (in[a] != 1)
      return fail("cannot squeeze dimension " + Twine(a) + " of size " +
                  Twine(in[a]));
  }
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < rank; ++i)
    if (!(axes->empty() ? in[i] == 1 : llvm::is_contained(*axes, i)))
      out.push_back(in[i]);
  return setReshaped(*this, x, out);
}

LogicalResult GraphImporter::importUnsqueeze(ParamFrom form) {
  FailureOr<ImportedValue *> xOr = required(0);
  if (failed(xOr))
    return failure();
  ImportedValue &x = **xOr;
  ignoreAttrs({"consumed_inputs"});
  ArrayRef<int64_t> in = x.shape;
  int64_t rank = in.size();
  FailureOr<SmallVector<int64_t>> axes = readAxes(*this, form);
  if (failed(axes))
    return failure();
  if (axes->empty())
    return fail("needs axes");
  int64_t outRank = rank + axes->size();
  SmallVector<bool> isNew(outRank, false);
  for (int64_t a : *axes) {
    FailureOr<int64_t> n = normalizeAxis(a, outRank);
    if (failed(n))
      return failure();
    if (isNew[*n])
      return fail("axis " + Twine(a) + " is repeated");
    isNew[*n] = true;
  }
  SmallVector<int64_t> out;
  int64_t next = 0;
  for (int64_t i = 0; i < outRank; ++i)
    out.push_back(isNew[i] ? 1 : in[next++]);
  return setReshaped(*this, x, out);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

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

LogicalResult GraphImporter::importConcat(ConcatAxis form) {
  FailureOr<int64_t> axisAttr =
      intAttr("axis", form == ConcatAxis::DefaultOne ? 1 : INT64_MIN);
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

LogicalResult GraphImporter::importSplit(ParamFrom form) {
  FailureOr<ImportedValue *> x = required(0);
  FailureOr<int64_t> axisAttr = intAttr("axis", 0);
  bool given = false;
  FailureOr<SmallVector<int64_t>> splitAttr = form == ParamFrom::Input
                                                  ? SmallVector<int64_t>()
                                                  : intsAttr("split", &given);
  ignoreAttrs({"num_outputs"});
  if (failed(x) || failed(axisAttr) || failed(splitAttr))
    return failure();
  int64_t rank = (*x)->shape.size();
  FailureOr<int64_t> axis = normalizeAxis(*axisAttr, rank);
  if (failed(axis))
    return failure();
  int64_t dim = (*x)->shape[*axis];
  SmallVector<int64_t> sizes = *splitAttr;
  if (form == ParamFrom::Attribute && failed(attributeNotInput(1, "split")))
    return failure();
  if (form == ParamFrom::Input && failed(inputNotAttribute(1, "split")))
    return failure();
  // Split-1 reads input #1 when the attribute is not given.
  bool fromInput = form == ParamFrom::Input ||
                   (form == ParamFrom::AttributeOrInput && !given);
  if (fromInput && input(1)) {
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

LogicalResult GraphImporter::importSlice(ParamFrom form) {
  FailureOr<ImportedValue *> xOr = required(0);
  if (failed(xOr))
    return failure();
  ImportedValue &x = **xOr;
  int64_t rank = x.shape.size();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (form == ParamFrom::Attribute) {
    FailureOr<SmallVector<int64_t>> s = intsAttr("starts"),
                                    e = intsAttr("ends"), a = intsAttr("axes");
    if (failed(s) || failed(e) || failed(a) ||
        failed(attributeNotInput(1, "starts")) ||
        failed(attributeNotInput(2, "ends")) ||
        failed(attributeNotInput(3, "axes")))
      return failure();
    starts = *s;
    ends = *e;
    axes = *a;
  } else {
    if (failed(inputNotAttribute(1, "starts")) ||
        failed(inputNotAttribute(2, "ends")) ||
        failed(inputNotAttribute(3, "axes")))
      return failure();
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
              tensor::ExtractSliceOp::create(
                  b, tensorType(sizes, et), v, ValueRange{}, ValueRange{},
                  ValueRange{}, offs, sizes, strides),
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

LogicalResult GraphImporter::importPad(PadsFrom form) {
  FailureOr<ImportedValue *> x = required(0);
  FailureOr<std::string> mode = stringAttr("mode", "constant");
  if (failed(x) || failed(mode))
    return failure();
  int64_t rank = (*x)->shape.size();
  SmallVector<int64_t> pads;
  double padValue = 0;
  if (form != PadsFrom::Input) {
    StringRef name = form == PadsFrom::PaddingsAttribute ? "paddings" : "pads";
    FailureOr<SmallVector<int64_t>> p = intsAttr(name);
    FailureOr<double> v = floatAttr("value", 0);
    if (failed(p) || failed(v) || failed(attributeNotInput(1, name)) ||
        failed(attributeNotInput(2, "value")))
      return failure();
    pads = *p;
    padValue = *v;
  } else {
    if (failed(inputNotAttribute(1, "pads")))
      return failure();
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
            Value neg =
                arith::CmpIOp::create(ib, arith::CmpIPredicate::slt, i, zero);
            i = arith::SelectOp::create(ib, neg,
                                        arith::SubIOp::create(ib, zero, i), i);
            Value over =
                arith::CmpIOp::create(ib, arith::CmpIPredicate::sgt, i, last);
            Value twice =
                arith::ConstantIndexOp::create(ib, 2 * (inShape[d] - 1));
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
  if (d.isConstant() && ix.isConstant() && foldable(outShape)) {
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
            ib, i,
            arith::ConstantIndexOp::create(ib, std::max<int64_t>(dim - 1, 0)));
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
          idx.push_back(
              reps[d] == 1
                  ? o[d]
                  : Value(arith::RemUIOp::create(
                        ib, o[d], arith::ConstantIndexOp::create(ib, in[d]))));
        return idx;
      });
  setOutput(0, v, (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importResize(ResizeInputs form) {
  FailureOr<ImportedValue *> x = required(0);
  FailureOr<std::string> mode = stringAttr("mode", "nearest");
  if (failed(x) || failed(mode))
    return failure();
  std::string coord = "asymmetric", nearest = "floor";
  ignoreAttrs({"cubic_coeff_a", "exclude_outside", "extrapolation_value"});
  if (form == ResizeInputs::RoiScalesSizes) {
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
  if (form == ResizeInputs::ScalesAttribute) {
    FailureOr<SmallVector<double>> s = floatsAttr("scales");
    if (failed(s) || failed(attributeNotInput(1, "scales")))
      return failure();
    scales = *s;
  } else {
    unsigned scalesIdx = form == ResizeInputs::RoiScalesSizes ? 2 : 1;
    if (failed(inputNotAttribute(scalesIdx, "scales")))
      return failure();
    if (input(scalesIdx) && input(scalesIdx)->constant &&
        input(scalesIdx)->constant->numElements() > 0) {
      for (int64_t i = 0, n = input(scalesIdx)->constant->numElements(); i < n;
           ++i)
        scales.push_back(input(scalesIdx)->constant->getDouble(i));
    } else if (input(scalesIdx) && !input(scalesIdx)->isConstant()) {
      return fail("scales must be known at import time");
    }
    if (scales.empty() && form == ResizeInputs::RoiScalesSizes && input(3)) {
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
        xo = outShape[d] == 1 ? 0 : double(o) * (in[d] - 1) / (outShape[d] - 1);
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
