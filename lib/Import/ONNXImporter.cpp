//===- ONNXImporter.cpp - ONNX graphs to upstream MLIR --------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The driver: graph inputs and outputs, the node loop (each node folded or
// imported by its row of the op table, OpTable.cpp), attribute access with
// "every attribute must be understood" bookkeeping, constants and the IR
// helpers the op handlers share.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace weft::import;
using namespace weft::import::detail;

/// Known tensors with at most this many elements are printed inline; larger
/// ones (every real weight) become dense_resource blobs.
static constexpr int64_t kInlineElements = 16;

GraphImporter::GraphImporter(MLIRContext &ctx, onnx::ModelProto &model,
                             StringRef modelDir, StringRef sourceName,
                             const ImportOptions &options)
    : ctx(ctx), model(model), modelDir(modelDir.str()),
      sourceName(sourceName.str()), options(options),
      b(UnknownLoc::get(&ctx), &ctx) {
  for (const onnx::OperatorSetIdProto &op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx")
      opsetVersion = op.version();
}

//===----------------------------------------------------------------------===//
// Node context
//===----------------------------------------------------------------------===//

LogicalResult GraphImporter::fail(const Twine &reason) {
  InFlightDiagnostic diag = mlir::emitError(b.getLoc());
  if (node)
    diag << "node '" << node->name() << "' (" << node->op_type() << "): ";
  diag << reason;
  return failure();
}

int64_t GraphImporter::numInputs() const { return node->input_size(); }
int64_t GraphImporter::numOutputs() const { return node->output_size(); }

ImportedValue *GraphImporter::input(unsigned i) {
  if (int64_t(i) >= node->input_size() || node->input(i).empty())
    return nullptr;
  auto it = values.find(node->input(i));
  return it == values.end() ? nullptr : &it->second;
}

FailureOr<ImportedValue *> GraphImporter::required(unsigned i) {
  if (ImportedValue *v = input(i))
    return v;
  if (int64_t(i) < node->input_size() && !node->input(i).empty())
    return fail("input '" + node->input(i) + "' is not defined before use");
  return fail("missing required input #" + Twine(i));
}

Value GraphImporter::operand(unsigned i) {
  ImportedValue *v = input(i);
  if (!v)
    return nullptr;
  if (!v->value) {
    // Constants are materialized at the start of the function so that every
    // later use dominates.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(b.getInsertionBlock());
    // Named after the tensor (an initializer, or a Constant node's output)
    // inside the loc of the node that first reads it: what later stages
    // record as a kernel's weights' source (docs/training.md).
    Location nodeLoc = b.getLoc();
    b.setLoc(NameLoc::get(b.getStringAttr(node->input(i)), nodeLoc));
    v->value = materialize(*v->constant, node->input(i));
    b.setLoc(nodeLoc);
  }
  return v->value;
}

FailureOr<const TensorData *> GraphImporter::constantInput(unsigned i,
                                                           StringRef what) {
  FailureOr<ImportedValue *> v = required(i);
  if (failed(v))
    return failure();
  if (!(*v)->isConstant())
    return fail(what + " (input #" + Twine(i) +
                ") must be known at import time (static); it is computed at "
                "run time");
  return &*(*v)->constant;
}

bool GraphImporter::hasOutput(unsigned i) const {
  return int64_t(i) < node->output_size() && !node->output(i).empty();
}

void GraphImporter::setOutput(unsigned i, Value value, int32_t dtype) {
  if (!hasOutput(i))
    return;
  ImportedValue &v = values[node->output(i)];
  v = ImportedValue();
  v.value = value;
  v.dtype = dtype;
  ArrayRef<int64_t> shape = shapeOf(value);
  v.shape.assign(shape.begin(), shape.end());
}

void GraphImporter::setOutput(unsigned i, TensorData data) {
  if (!hasOutput(i))
    return;
  ImportedValue &v = values[node->output(i)];
  v = ImportedValue();
  v.dtype = data.dtype;
  v.shape = data.shape;
  v.constant = std::move(data);
}

void GraphImporter::forwardOutput(unsigned i, const ImportedValue &value) {
  if (!hasOutput(i))
    return;
  ImportedValue copy = value;
  values[node->output(i)] = std::move(copy);
}

const onnx::AttributeProto *GraphImporter::attr(StringRef name) {
  for (const onnx::AttributeProto &a : node->attribute())
    if (a.name() == name) {
      usedAttrs.insert(name);
      return &a;
    }
  return nullptr;
}

void GraphImporter::ignoreAttrs(ArrayRef<StringRef> names) {
  for (StringRef n : names)
    (void)attr(n);
}

FailureOr<int64_t> GraphImporter::intAttr(StringRef name, int64_t dflt) {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt;
  if (a->type() != onnx::AttributeProto::INT &&
      !(a->type() == onnx::AttributeProto::UNDEFINED && a->has_i()))
    return fail("attribute '" + name + "' must be an integer");
  return a->i();
}

FailureOr<double> GraphImporter::floatAttr(StringRef name, double dflt) {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt;
  if (a->type() != onnx::AttributeProto::FLOAT &&
      !(a->type() == onnx::AttributeProto::UNDEFINED && a->has_f()))
    return fail("attribute '" + name + "' must be a float");
  return a->f();
}

FailureOr<std::string> GraphImporter::stringAttr(StringRef name,
                                                 StringRef dflt) {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt.str();
  if (a->type() != onnx::AttributeProto::STRING &&
      !(a->type() == onnx::AttributeProto::UNDEFINED && a->has_s()))
    return fail("attribute '" + name + "' must be a string");
  return a->s();
}

FailureOr<SmallVector<int64_t>> GraphImporter::intsAttr(StringRef name,
                                                        bool *present) {
  const onnx::AttributeProto *a = attr(name);
  if (present)
    *present = a != nullptr;
  if (!a)
    return SmallVector<int64_t>();
  if (a->type() != onnx::AttributeProto::INTS &&
      a->type() != onnx::AttributeProto::UNDEFINED)
    return fail("attribute '" + name + "' must be a list of integers");
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

FailureOr<SmallVector<double>> GraphImporter::floatsAttr(StringRef name) {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return SmallVector<double>();
  if (a->type() != onnx::AttributeProto::FLOATS &&
      a->type() != onnx::AttributeProto::UNDEFINED)
    return fail("attribute '" + name + "' must be a list of floats");
  return SmallVector<double>(a->floats().begin(), a->floats().end());
}

LogicalResult GraphImporter::attributeNotInput(unsigned i, StringRef name) {
  if (!input(i))
    return success();
  return fail("'" + name + "' is an attribute at opset " + Twine(opset()) +
              ", not input #" + Twine(i));
}

LogicalResult GraphImporter::inputNotAttribute(unsigned i, StringRef name) {
  // Not through attr(), which would mark the attribute as understood.
  for (const onnx::AttributeProto &a : node->attribute())
    if (a.name() == name)
      return fail("'" + name + "' is input #" + Twine(i) + " at opset " +
                  Twine(opset()) + ", not an attribute");
  return success();
}

FailureOr<int64_t> GraphImporter::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank || (rank == 0 && axis != 0))
    return fail("axis " + Twine(axis) + " is out of range for rank " +
                Twine(rank));
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// IR helpers
//===----------------------------------------------------------------------===//

FailureOr<Type> GraphImporter::elementType(int32_t dtype) {
  switch (dtype) {
  case onnx::TensorProto::FLOAT:
    return Type(b.getF32Type());
  case onnx::TensorProto::DOUBLE:
    return Type(b.getF64Type());
  case onnx::TensorProto::FLOAT16:
    return Type(b.getF16Type());
  case onnx::TensorProto::BFLOAT16:
    return Type(b.getBF16Type());
  case onnx::TensorProto::BOOL:
    return Type(b.getI1Type());
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    return Type(b.getI8Type());
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return Type(b.getI16Type());
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return Type(b.getI32Type());
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
    return Type(b.getI64Type());
  default:
    return fail("element type " + dtypeName(dtype) + " is not supported");
  }
}

RankedTensorType GraphImporter::tensorType(ArrayRef<int64_t> shape,
                                           Type elementType) {
  return RankedTensorType::get(shape, elementType);
}

ArrayRef<int64_t> GraphImporter::shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// A resource key the MLIR printer and parser accept unquoted.
static std::string blobKey(StringRef name) {
  std::string key;
  for (char c : name)
    key.push_back(llvm::isAlnum(c) || c == '_' || c == '.' ? c : '_');
  if (key.empty() || llvm::isDigit(key[0]) || key[0] == '.')
    key.insert(0, "w_");
  return key;
}

Value GraphImporter::materialize(const TensorData &data, StringRef name) {
  Type et = *elementType(data.dtype); // Checked when the tensor was made.
  RankedTensorType type = tensorType(data.shape, et);
  int64_t n = data.numElements();
  unsigned es = elementByteSize(data.dtype);
  ElementsAttr attr;
  if (et.isInteger(1)) {
    SmallVector<bool> bits;
    bits.reserve(n);
    for (int64_t i = 0; i < n; ++i)
      bits.push_back(data.bytes[i] != 0);
    attr = DenseElementsAttr::get(type, bits);
  } else {
    bool splat = n > 1;
    for (int64_t i = 1; splat && i < n; ++i)
      splat = std::memcmp(data.bytes.data(), data.bytes.data() + i * es,
                          es) == 0;
    if (n <= kInlineElements || splat) {
      attr = DenseElementsAttr::getFromRawBuffer(
          type, splat ? data.bytes.take_front(es) : data.bytes);
    } else {
      AsmResourceBlob blob;
      if (reinterpret_cast<uintptr_t>(data.bytes.data()) % es == 0) {
        // Share the parser's bytes: the blob keeps their owner alive.
        blob = AsmResourceBlob(
            data.bytes, es,
            [owner = data.owner](void *, size_t, size_t) {},
            /*dataIsMutable=*/false);
      } else {
        blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(data.bytes, es);
      }
      attr = DenseResourceElementsAttr::get(type, blobKey(name),
                                            std::move(blob));
    }
  }
  return arith::ConstantOp::create(b, type, cast<TypedAttr>(attr));
}

Value weft::import::detail::fconst(ImplicitLocOpBuilder &b, Type t, double v) {
  return arith::ConstantOp::create(b, t, b.getFloatAttr(t, v));
}

Value GraphImporter::scalar(Type type, double value) {
  if (auto ft = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, type, b.getFloatAttr(ft, value));
  return arith::ConstantOp::create(b, type,
                                   b.getIntegerAttr(type, int64_t(value)));
}

Value GraphImporter::empty(ArrayRef<int64_t> shape, Type elementType) {
  return tensor::EmptyOp::create(b, shape, elementType);
}

Value GraphImporter::filled(ArrayRef<int64_t> shape, Type elementType,
                            double value) {
  Value init = empty(shape, elementType);
  return linalg::FillOp::create(b, ValueRange{scalar(elementType, value)},
                                ValueRange{init})
      .getResult(0);
}

Value GraphImporter::reshape(Value value, ArrayRef<int64_t> shape) {
  auto srcType = cast<RankedTensorType>(value.getType());
  if (srcType.getShape() == shape)
    return value;
  auto dstType = tensorType(shape, srcType.getElementType());
  if (srcType.getRank() != dstType.getRank()) {
    if (std::optional<SmallVector<ReassociationIndices>> re =
            getReassociationIndicesForReshape(srcType, dstType)) {
      if (srcType.getRank() > dstType.getRank())
        return tensor::CollapseShapeOp::create(b, dstType, value, *re);
      return tensor::ExpandShapeOp::create(b, dstType, value, *re);
    }
  }
  // No single collapse or expand does it: go through one dimension.
  int64_t n = srcType.getNumElements();
  Value flat = value;
  auto flatType = tensorType({n}, srcType.getElementType());
  if (srcType.getRank() == 0)
    flat = tensor::ExpandShapeOp::create(b, flatType, value,
                                         ArrayRef<ReassociationIndices>{});
  else if (srcType.getRank() > 1)
    flat = tensor::CollapseShapeOp::create(
        b, flatType, value,
        ArrayRef<ReassociationIndices>{ReassociationIndices(
            llvm::to_vector(llvm::seq<int64_t>(0, srcType.getRank())))});
  if (dstType.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, dstType, flat,
                                           ArrayRef<ReassociationIndices>{});
  if (dstType.getRank() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(
      b, dstType, flat,
      ArrayRef<ReassociationIndices>{ReassociationIndices(
          llvm::to_vector(llvm::seq<int64_t>(0, dstType.getRank())))});
}

Value GraphImporter::transpose(Value value, ArrayRef<int64_t> perm) {
  ArrayRef<int64_t> shape = shapeOf(value);
  bool identity = true;
  SmallVector<int64_t> outShape;
  for (auto [i, p] : llvm::enumerate(perm)) {
    outShape.push_back(shape[p]);
    identity &= int64_t(i) == p;
  }
  if (identity)
    return value;
  Value init =
      empty(outShape, cast<RankedTensorType>(value.getType()).getElementType());
  return linalg::TransposeOp::create(b, value, init, perm).getResult()[0];
}

Value GraphImporter::padConstant(Value value, ArrayRef<int64_t> low,
                                 ArrayRef<int64_t> high, double padValue) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  // Negative pads crop first.
  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()),
      strides(rank, 1);
  bool crop = false;
  for (int64_t i = 0; i < rank; ++i) {
    if (low[i] < 0) {
      offsets[i] = -low[i];
      sizes[i] += low[i];
      crop = true;
    }
    if (high[i] < 0) {
      sizes[i] += high[i];
      crop = true;
    }
  }
  if (crop)
    value = tensor::ExtractSliceOp::create(
        b, tensorType(sizes, type.getElementType()), value, ValueRange{},
        ValueRange{}, ValueRange{}, offsets, sizes, strides);
  SmallVector<int64_t> lo, hi, outShape;
  bool any = false;
  for (int64_t i = 0; i < rank; ++i) {
    lo.push_back(std::max<int64_t>(low[i], 0));
    hi.push_back(std::max<int64_t>(high[i], 0));
    outShape.push_back(sizes[i] + lo.back() + hi.back());
    any |= lo.back() || hi.back();
  }
  if (!any)
    return value;
  Value pad = scalar(type.getElementType(), padValue);
  auto resultType = tensorType(outShape, type.getElementType());
  return tensor::PadOp::create(b, resultType, value,
                               getAsIndexOpFoldResult(&ctx, lo),
                               getAsIndexOpFoldResult(&ctx, hi), pad);
}

FailureOr<SmallVector<int64_t>>
GraphImporter::broadcastShape(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t> out(rank, 1);
  for (ArrayRef<int64_t> s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &o = out[rank - s.size() + i];
      if (s[i] == o || s[i] == 1)
        continue;
      if (o != 1) {
        std::string a, c;
        llvm::raw_string_ostream os(a);
        llvm::interleave(s, os, "x");
        llvm::raw_string_ostream os2(c);
        llvm::interleave(out, os2, "x");
        return fail("shapes " + a + " and " + c + " do not broadcast");
      }
      o = s[i];
    }
  }
  return out;
}

/// The indexing map reading an operand of `shape` inside a loop nest over
/// `outShape` with numpy broadcasting.
static AffineMap broadcastMap(ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> outShape, MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  size_t offset = outShape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    exprs.push_back(shape[i] == 1 && outShape[offset + i] != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(offset + i, ctx));
  return AffineMap::get(outShape.size(), 0, exprs, ctx);
}

Value GraphImporter::elementwiseTo(ArrayRef<int64_t> outShape,
                                   ValueRange inputs, Type resultElementType,
                                   BodyFn body) {
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(shapeOf(in), outShape, &ctx));
  maps.push_back(AffineMap::getMultiDimIdentityMap(outShape.size(), &ctx));
  SmallVector<utils::IteratorType> iters(outShape.size(),
                                         utils::IteratorType::parallel);
  Value init = empty(outShape, resultElementType);
  auto op = linalg::GenericOp::create(
      b, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        ImplicitLocOpBuilder ib(loc, nb);
        Value r = body(ib, args.drop_back());
        linalg::YieldOp::create(ib, r);
      });
  return op.getResult(0);
}

FailureOr<Value> GraphImporter::elementwise(ValueRange inputs,
                                            Type resultElementType,
                                            BodyFn body) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value in : inputs)
    shapes.push_back(shapeOf(in));
  FailureOr<SmallVector<int64_t>> out = broadcastShape(shapes);
  if (failed(out))
    return failure();
  return elementwiseTo(*out, inputs, resultElementType, body);
}

Value GraphImporter::broadcastTo(Value value, ArrayRef<int64_t> shape) {
  if (shapeOf(value) == shape)
    return value;
  Type et = cast<RankedTensorType>(value.getType()).getElementType();
  return elementwiseTo(shape, value, et,
                       [](ImplicitLocOpBuilder &, ValueRange a) { return a[0]; });
}

/// The identity element of a reduction.
static double reduceInit(GraphImporter::ReduceKind kind, Type et) {
  bool isFloat = isa<FloatType>(et);
  switch (kind) {
  case GraphImporter::ReduceKind::Sum:
    return 0;
  case GraphImporter::ReduceKind::Prod:
    return 1;
  case GraphImporter::ReduceKind::Max:
    return isFloat ? -INFINITY
                   : double(APInt::getSignedMinValue(et.getIntOrFloatBitWidth())
                                .getSExtValue());
  case GraphImporter::ReduceKind::Min:
    return isFloat ? INFINITY
                   : double(APInt::getSignedMaxValue(et.getIntOrFloatBitWidth())
                                .getSExtValue());
  }
  return 0;
}

Value GraphImporter::reduce(Value value, ArrayRef<int64_t> axes, bool keepDims,
                            ReduceKind kind) {
  ArrayRef<int64_t> shape = shapeOf(value);
  Type et = cast<RankedTensorType>(value.getType()).getElementType();
  int64_t rank = shape.size();
  SmallVector<int64_t> outShape, keptShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iters;
  for (int64_t i = 0; i < rank; ++i) {
    bool reduced = llvm::is_contained(axes, i);
    iters.push_back(reduced ? utils::IteratorType::reduction
                            : utils::IteratorType::parallel);
    keptShape.push_back(reduced ? 1 : shape[i]);
    if (!reduced) {
      outShape.push_back(shape[i]);
      outExprs.push_back(b.getAffineDimExpr(i));
    }
  }
  Value init = filled(outShape, et, reduceInit(kind, et));
  SmallVector<AffineMap> maps = {
      AffineMap::getMultiDimIdentityMap(rank, &ctx),
      AffineMap::get(rank, 0, outExprs, &ctx)};
  bool isFloat = isa<FloatType>(et);
  auto op = linalg::GenericOp::create(
      b, TypeRange{init.getType()}, ValueRange{value}, ValueRange{init}, maps,
      iters, [&](OpBuilder &nb, Location loc, ValueRange args) {
        ImplicitLocOpBuilder ib(loc, nb);
        Value x = args[0], acc = args[1], r;
        switch (kind) {
        case ReduceKind::Sum:
          r = isFloat ? Value(arith::AddFOp::create(ib, acc, x))
                      : Value(arith::AddIOp::create(ib, acc, x));
          break;
        case ReduceKind::Prod:
          r = isFloat ? Value(arith::MulFOp::create(ib, acc, x))
                      : Value(arith::MulIOp::create(ib, acc, x));
          break;
        case ReduceKind::Max:
          r = isFloat ? Value(arith::MaximumFOp::create(ib, acc, x))
                      : Value(arith::MaxSIOp::create(ib, acc, x));
          break;
        case ReduceKind::Min:
          r = isFloat ? Value(arith::MinimumFOp::create(ib, acc, x))
                      : Value(arith::MinSIOp::create(ib, acc, x));
          break;
        }
        linalg::YieldOp::create(ib, r);
      });
  Value result = op.getResult(0);
  return keepDims ? reshape(result, keptShape) : result;
}

Value GraphImporter::index(int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

Value GraphImporter::indexedCopy(Value src, ArrayRef<int64_t> outShape,
                                 ValueRange extraInputs,
                                 ArrayRef<AffineMap> extraMaps, IndexFn fn) {
  Type et = cast<RankedTensorType>(src.getType()).getElementType();
  SmallVector<AffineMap> maps(extraMaps);
  maps.push_back(AffineMap::getMultiDimIdentityMap(outShape.size(), &ctx));
  SmallVector<utils::IteratorType> iters(outShape.size(),
                                         utils::IteratorType::parallel);
  Value init = empty(outShape, et);
  auto op = linalg::GenericOp::create(
      b, TypeRange{init.getType()}, extraInputs, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        ImplicitLocOpBuilder ib(loc, nb);
        SmallVector<Value> outIdx;
        for (size_t d = 0; d < outShape.size(); ++d)
          outIdx.push_back(linalg::IndexOp::create(ib, d));
        SmallVector<Value> srcIdx = fn(ib, outIdx, args.drop_back());
        Value r = tensor::ExtractOp::create(ib, src, srcIdx);
        linalg::YieldOp::create(ib, r);
      });
  return op.getResult(0);
}

//===----------------------------------------------------------------------===//
// The graph
//===----------------------------------------------------------------------===//

LogicalResult
GraphImporter::importGraphInputs(SmallVectorImpl<Type> &argTypes) {
  const onnx::GraphProto &graph = model.graph();
  llvm::StringSet<> initializerNames;
  for (const onnx::TensorProto &t : graph.initializer())
    initializerNames.insert(t.name());
  for (const onnx::ValueInfoProto &in : graph.input()) {
    if (initializerNames.contains(in.name()))
      continue;
    b.setLoc(NameLoc::get(b.getStringAttr(in.name()),
                          FileLineColLoc::get(&ctx, sourceName, 0, 0)));
    auto bad = [&](const Twine &why) {
      return fail("graph input '" + in.name() + "': " + why);
    };
    if (!in.type().has_tensor_type())
      return bad("only tensor inputs are supported");
    const onnx::TypeProto::Tensor &tt = in.type().tensor_type();
    if (elementByteSize(tt.elem_type()) == 0)
      return bad("element type " + dtypeName(tt.elem_type()) +
                 " is not supported");
    FailureOr<Type> et = elementType(tt.elem_type());
    if (failed(et))
      return failure();
    if (!tt.has_shape())
      return bad("has no shape; weft needs static shapes");
    SmallVector<int64_t> shape;
    for (auto [i, d] : llvm::enumerate(tt.shape().dim())) {
      if (d.has_dim_value() && d.dim_value() >= 0) {
        shape.push_back(d.dim_value());
        continue;
      }
      if (i == 0) {
        if (options.batchSize < 1)
          return bad("batch size " + Twine(options.batchSize) +
                     " is not positive");
        shape.push_back(options.batchSize);
        continue;
      }
      return bad("dimension " + Twine(i) + " ('" + d.dim_param() +
                 "') is dynamic; only the leading (batch) dimension may be "
                 "symbolic");
    }
    if (checkedNumElements(shape) < 0)
      return bad("shape has too many elements");
    if (values.count(in.name()))
      return bad("is defined twice");
    ImportedValue &v = values[in.name()];
    v.dtype = tt.elem_type();
    v.shape = shape;
    argTypes.push_back(tensorType(shape, *et));
  }
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  Location fileLoc = FileLineColLoc::get(&ctx, sourceName, 0, 0);
  b.setLoc(fileLoc);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b);
  onnx::GraphProto &graph = *model.mutable_graph();

  module->getOperation()->setAttr("onnx.opset",
                                  b.getI64IntegerAttr(opsetVersion));
  if (model.has_ir_version())
    module->getOperation()->setAttr("onnx.ir_version",
                                    b.getI64IntegerAttr(model.ir_version()));
  if (!model.producer_name().empty()) {
    std::string producer = model.producer_name();
    if (!model.producer_version().empty())
      producer += " " + model.producer_version();
    module->getOperation()->setAttr("onnx.producer",
                                    b.getStringAttr(producer));
  }

  // Initializers first: they are known tensors, never arguments.
  for (onnx::TensorProto &t : *graph.mutable_initializer()) {
    b.setLoc(NameLoc::get(b.getStringAttr(t.name()), fileLoc));
    llvm::Expected<TensorData> data = loadTensor(t, modelDir);
    if (!data) {
      (void)fail("initializer '" + t.name() +
                 "': " + llvm::toString(data.takeError()));
      return nullptr;
    }
    ImportedValue &v = values[t.name()];
    v.dtype = data->dtype;
    v.shape = data->shape;
    v.constant = std::move(*data);
  }

  SmallVector<Type> argTypes;
  if (failed(importGraphInputs(argTypes)))
    return nullptr;

  b.setLoc(fileLoc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, "main_graph",
                                   b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  {
    unsigned argNo = 0;
    llvm::StringSet<> initializerNames;
    for (const onnx::TensorProto &t : graph.initializer())
      initializerNames.insert(t.name());
    for (const onnx::ValueInfoProto &in : graph.input()) {
      if (initializerNames.contains(in.name()))
        continue;
      values[in.name()].value = entry->getArgument(argNo);
      func.setArgAttr(argNo++, "onnx.name", b.getStringAttr(in.name()));
    }
  }

  for (const onnx::NodeProto &n : graph.node())
    if (failed(importNode(n)))
      return nullptr;
  node = nullptr;

  // Results.
  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    b.setLoc(NameLoc::get(b.getStringAttr(out.name()), fileLoc));
    auto it = values.find(out.name());
    if (it == values.end()) {
      (void)fail("graph output '" + out.name() + "' is never computed");
      return nullptr;
    }
    ImportedValue &v = it->second;
    if (!v.value) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(entry);
      v.value = materialize(*v.constant, out.name());
    }
    if (out.type().has_tensor_type()) {
      const onnx::TypeProto::Tensor &tt = out.type().tensor_type();
      if (tt.elem_type() != 0 && tt.elem_type() != v.dtype) {
        (void)fail("graph output '" + out.name() + "' is declared " +
                   dtypeName(tt.elem_type()) + " but computed as " +
                   dtypeName(v.dtype));
        return nullptr;
      }
      if (tt.has_shape() && tt.shape().dim_size() == int(v.shape.size())) {
        for (auto [i, d] : llvm::enumerate(tt.shape().dim()))
          if (i > 0 && d.has_dim_value() && d.dim_value() != v.shape[i]) {
            (void)fail("graph output '" + out.name() + "' is declared with " +
                       Twine(d.dim_value()) + " at dimension " + Twine(i) +
                       " but computed with " + Twine(v.shape[i]));
            return nullptr;
          }
      }
    }
    results.push_back(v.value);
    resultTypes.push_back(v.value.getType());
  }
  b.setLoc(fileLoc);
  func::ReturnOp::create(b, results);
  func.setFunctionType(b.getFunctionType(argTypes, resultTypes));
  for (auto [i, out] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "onnx.name", b.getStringAttr(out.name()));

  if (failed(mlir::verify(*module))) {
    mlir::emitError(fileLoc) << "internal error: imported IR does not verify";
    return nullptr;
  }
  return module;
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &n) {
  node = &n;
  usedAttrs.clear();
  std::string name = n.name();
  if (name.empty())
    name = n.output_size() ? n.output(0) : n.op_type();
  b.setLoc(NameLoc::get(b.getStringAttr(name), FileLineColLoc::get(&ctx, sourceName, 0, 0)));
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    return fail("operator domain '" + n.domain() + "' is not supported");
  for (int i = 0; i < n.input_size(); ++i)
    if (!n.input(i).empty() && !values.count(n.input(i)))
      return fail("input '" + n.input(i) + "' is not defined before use");

  OpLookup found = lookupOp(n.op_type(), opset());
  if (!found.row && !found.elementwise) {
    if (found.firstSince)
      return fail("operator is not supported at opset " + Twine(opset()) +
                  " (weft imports it from opset " + Twine(found.firstSince) +
                  ")");
    return fail("operator is not supported");
  }
  if (failed(importByRow(found)))
    return failure();

  for (const onnx::AttributeProto &a : n.attribute())
    if (!usedAttrs.contains(a.name()))
      return fail("attribute '" + a.name() + "' is not supported");
  for (int i = 0; i < n.output_size(); ++i)
    if (!n.output(i).empty() && !values.count(n.output(i)))
      return fail("output #" + Twine(i) + " ('" + n.output(i) +
                  "') is not supported");
  return success();
}

LogicalResult GraphImporter::importByRow(const OpLookup &found) {
  // Known inputs are evaluated here when the row can; otherwise the handler
  // builds IR (and may still compute known results itself).
  std::optional<LogicalResult> folded;
  if (found.elementwise)
    folded = foldElementwise(*found.elementwise);
  else if (found.row->fold)
    folded = found.row->fold(*this);
  if (folded)
    return *folded;
  if (found.elementwise)
    return importElementwise(*found.elementwise);
  if (found.row->import)
    return found.row->import(*this);
  return fail("operator is not supported");
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> weft::import::importOnnxBuffer(MLIRContext &ctx,
                                                     StringRef bytes,
                                                     StringRef modelDir,
                                                     const ImportOptions &opts) {
  return detail::importModelBytes(ctx, bytes, modelDir, "<buffer>", opts);
}

OwningOpRef<ModuleOp>
weft::import::detail::importModelBytes(MLIRContext &ctx, StringRef bytes,
                                       StringRef modelDir, StringRef source,
                                       const ImportOptions &opts) {
  ctx.loadDialect<func::FuncDialect, arith::ArithDialect, math::MathDialect,
                  tensor::TensorDialect, linalg::LinalgDialect>();
  llvm::Expected<std::unique_ptr<onnx::ModelProto>> model = parseModel(bytes);
  if (!model) {
    mlir::emitError(FileLineColLoc::get(&ctx, source, 0, 0))
        << "cannot read ONNX model: " << llvm::toString(model.takeError());
    return nullptr;
  }
  GraphImporter importer(ctx, **model, modelDir, source, opts);
  return importer.run();
}

OwningOpRef<ModuleOp> weft::import::importOnnxFile(MLIRContext &ctx,
                                                   StringRef path,
                                                   const ImportOptions &opts) {
  // Map rather than read: the protobuf parser copies what it needs.
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    mlir::emitError(FileLineColLoc::get(&ctx, path, 0, 0))
        << "cannot open ONNX model: " << buffer.getError().message();
    return nullptr;
  }
  SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  return detail::importModelBytes(ctx, (*buffer)->getBuffer(), dir, path,
                                  opts);
}

void weft::import::registerImportDialects(DialectRegistry &registry) {
  registry.insert<func::FuncDialect, arith::ArithDialect, math::MathDialect,
                  tensor::TensorDialect, linalg::LinalgDialect>();
}
