//===- Importer.h - The graph importer's shared state -----------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// GraphImporter walks an ONNX graph in order and keeps, for every ONNX value
// name, either a tensor known at import time (initializers, Constant nodes and
// everything computed only from them or from static shapes) or an SSA value.
// Known tensors are materialized as arith.constant only when a runtime op
// needs them.
//
// Every node goes through the op table (OpTable.cpp): a row per op and first
// opset, naming the handler and, for ops evaluated on known inputs, the fold.
// Elementwise ops have their own table of scalar bodies
// (ImportElementwise.cpp). The handlers are split by kind over
// ImportElementwise.cpp, ImportShape.cpp (shapes and data movement),
// ImportConstants.cpp (known tensors and import-time evaluation) and
// ImportNN.cpp (convolution, matmul, pooling, normalization, reductions).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_IMPORT_IMPORTER_H
#define WEFT_LIB_IMPORT_IMPORTER_H

#include "ModelLoader.h"
#include "weft/Import/ONNXImporter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <array>
#include <optional>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace weft::import::detail {

/// One ONNX value during import.
struct ImportedValue {
  /// The SSA value; for known tensors, set once materialized.
  mlir::Value value;
  /// The contents when known at import time.
  std::optional<TensorData> constant;
  int32_t dtype = 0;
  llvm::SmallVector<int64_t> shape;

  bool isConstant() const { return constant.has_value(); }
};

/// Function computing one result element from block arguments.
using BodyFn = llvm::function_ref<mlir::Value(mlir::ImplicitLocOpBuilder &,
                                              mlir::ValueRange)>;

/// Imports a serialized model; `source` names it in diagnostics.
mlir::OwningOpRef<mlir::ModuleOp>
importModelBytes(mlir::MLIRContext &ctx, llvm::StringRef bytes,
                 llvm::StringRef modelDir, llvm::StringRef source,
                 const ImportOptions &options);

/// Known tensors computed at import time (shape arithmetic) are limited to
/// this many elements; bigger computations stay in the IR.
constexpr int64_t kFoldElements = 1 << 16;

class GraphImporter;

//===----------------------------------------------------------------------===//
// Op forms the op table chooses by opset (OpTable.cpp)
//===----------------------------------------------------------------------===//

/// Where an op reads a parameter that a later opset moved from an attribute
/// to an input: Clip's bounds, Slice's bounds, the axes of Reduce*, Squeeze
/// and Unsqueeze, Reshape's shape, Split's sizes, Dropout's ratio, the
/// scales of Upsample. Each form refuses the other one with a clear error
/// (GraphImporter::attributeNotInput, inputNotAttribute).
enum class ParamFrom {
  Attribute,
  Input,
  /// Split-1 takes its sizes from either.
  AttributeOrInput,
};

/// Pad's amounts: the `paddings` attribute (Pad-1), the `pads` attribute
/// (Pad-2), or inputs #1 and #2 (Pad-11).
enum class PadsFrom { PaddingsAttribute, PadsAttribute, Input };

/// Concat's axis: optional with default 1 (Concat-1), required (Concat-4).
enum class ConcatAxis { DefaultOne, Required };

/// Softmax and LogSoftmax before opset 13 coerce the input to 2D at `axis`
/// (normalizing every dimension from `axis` on, default axis 1); from opset
/// 13 they normalize the one `axis` (default -1).
enum class SoftmaxAxes { Coerced2D, SingleAxis };
enum class SoftmaxKind { Softmax, LogSoftmax };

/// Where Resize and Upsample find their scales: the `scales` attribute
/// (Upsample-7), input #1 (Upsample-9, Resize-10), or the roi, scales and
/// sizes inputs #1 to #3 with the coordinate and nearest modes (Resize-11).
enum class ResizeInputs { ScalesAttribute, ScalesInput, RoiScalesSizes };

enum class PoolKind { Max, Average };

/// The ONNX Reduce* ops.
enum class Reduction {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  SumSquare,
  L1,
  L2,
  LogSum,
  LogSumExp,
};

//===----------------------------------------------------------------------===//
// The elementwise table (ImportElementwise.cpp)
//===----------------------------------------------------------------------===//

enum class Arity { Unary, Binary, Variadic };

/// How a binary op lines up its operands: numpy broadcasting (opset 7 on),
/// or before opset 7 the `broadcast`/`axis` attributes and equal shapes
/// otherwise. PRelu before opset 7 also takes a [C] slope per channel.
enum class Broadcast { Numpy, Legacy, LegacySlope };

/// The element types an elementwise op accepts.
enum class Operands {
  /// Any type, the same for every operand.
  Any,
  /// One floating-point type.
  Float,
  /// Pow: a floating-point base and an exponent of any type.
  FloatBase,
  /// i1 (BOOL).
  Bool,
};

/// What a scalar body uses besides its block arguments.
struct ScalarEnv {
  /// The element type of operand 0.
  mlir::Type type;
  bool isFloat = false;
  /// ONNX signedness of operand 0 and of operand 1 (Pow's exponent).
  bool isUnsigned = false, rhsUnsigned = false;
  /// The row's float attributes, in the row's order.
  std::array<double, 2> attrs = {0, 0};
};

/// Builds one result element from the block arguments (one per operand).
using ScalarBodyFn = mlir::Value (*)(mlir::ImplicitLocOpBuilder &,
                                     mlir::ValueRange, const ScalarEnv &);
/// Import-time evaluation of one element on doubles and on integers (unary
/// ops ignore the second argument). The integer form returns std::nullopt
/// on division by zero or overflow.
using HostFloatFn = double (*)(double, double);
using HostIntFn = std::optional<int64_t> (*)(int64_t, int64_t);

/// A float attribute of an elementwise op and its default.
struct FloatAttrSpec {
  /// Null when the slot is unused.
  const char *name = nullptr;
  double dflt = 0;
};

/// A row of the elementwise table: an op whose result element depends only
/// on the operand elements at the same (broadcast) position, from opset
/// `since` until the op's next row. It becomes one linalg.generic with
/// `body` as its region, or, when every input is known and the row has a
/// host form, a known tensor.
struct ElementwiseOp {
  llvm::StringLiteral op;
  int64_t since;
  Arity arity;
  Broadcast broadcast;
  Operands operands;
  /// The result is BOOL (i1) rather than the operand type.
  bool compare;
  std::array<FloatAttrSpec, 2> attrs;
  ScalarBodyFn body;
  /// Null when the op is not evaluated at import on that kind of element.
  HostFloatFn hostFloat;
  HostIntFn hostInt;
};

/// Every row of the elementwise table.
llvm::ArrayRef<ElementwiseOp> elementwiseOps();

//===----------------------------------------------------------------------===//
// The op table (OpTable.cpp)
//===----------------------------------------------------------------------===//

using ImportFn = mlir::LogicalResult (*)(GraphImporter &);
using FoldFn = std::optional<mlir::LogicalResult> (*)(GraphImporter &);

/// A row of the op table: how nodes of `op` are imported from opset `since`
/// until the op's next row.
struct OpRow {
  llvm::StringLiteral op;
  int64_t since;
  /// Imports a node into IR or known tensors. Null for an op that is only
  /// evaluated at import time: when its fold declines, the op is not
  /// supported.
  ImportFn import;
  /// Evaluates a node whose inputs are all known, before `import`;
  /// std::nullopt leaves the node to `import`. Null when there is none.
  FoldFn fold = nullptr;
};

/// The row that applies to an op at an opset: one of the op table or one of
/// the elementwise table, or neither.
struct OpLookup {
  const OpRow *row = nullptr;
  const ElementwiseOp *elementwise = nullptr;
  /// The first opset of the op's rows; 0 when the op has none.
  int64_t firstSince = 0;
};

/// Looks `op` up in the op table and the elementwise table.
OpLookup lookupOp(llvm::StringRef op, int64_t opset);

//===----------------------------------------------------------------------===//
// Host tensors (ImportConstants.cpp)
//===----------------------------------------------------------------------===//

/// Stores `v` as element `i` of `t`, converted to its dtype.
void storeDouble(TensorData &t, int64_t i, double v);
void storeInt(TensorData &t, int64_t i, int64_t v);
/// Whether a known tensor of `shape` is small enough to compute here.
bool foldable(llvm::ArrayRef<int64_t> shape);
/// Row-major strides of `shape`.
llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);
/// Builds a tensor of `outShape` by copying, for every output position, the
/// source element `srcIndex(outIndices)` returns.
TensorData
hostIndexed(const TensorData &src, llvm::ArrayRef<int64_t> outShape,
            llvm::function_ref<int64_t(llvm::ArrayRef<int64_t>)> srcIndex);
/// A reshape of a known tensor: same bytes, new shape, no copy.
TensorData hostReshape(const TensorData &t, llvm::ArrayRef<int64_t> shape);
TensorData int64Tensor(llvm::ArrayRef<int64_t> shape,
                       llvm::ArrayRef<int64_t> values);
/// The elements of `t` as integers.
llvm::SmallVector<int64_t> intsOf(const TensorData &t);
/// "[1, 2, 3]".
std::string shapeStr(llvm::ArrayRef<int64_t> shape);

/// A floating-point constant of type `t` (ONNXImporter.cpp).
mlir::Value fconst(mlir::ImplicitLocOpBuilder &b, mlir::Type t, double v);

class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext &ctx, onnx::ModelProto &model,
                llvm::StringRef modelDir, llvm::StringRef sourceName,
                const ImportOptions &options);
  mlir::OwningOpRef<mlir::ModuleOp> run();

  //===--------------------------------------------------------------------===//
  // Node context, valid while one node is imported.
  //===--------------------------------------------------------------------===//

  /// Emits "node 'n' (Op): reason" at the node's location; returns failure.
  mlir::LogicalResult fail(const llvm::Twine &reason);
  int64_t numInputs() const;
  /// Input `i`, or null when absent (beyond the list or an empty name).
  ImportedValue *input(unsigned i);
  /// Input `i` as an SSA value (materializing known tensors); null if absent.
  mlir::Value operand(unsigned i);
  /// Input `i`, which must be present; fails (with a message) otherwise.
  mlir::FailureOr<ImportedValue *> required(unsigned i);
  /// Input `i` if it is known at import time, else fails naming `what`.
  mlir::FailureOr<const TensorData *> constantInput(unsigned i,
                                                    llvm::StringRef what);
  /// The ONNX name of input `i` (for naming blobs).
  llvm::StringRef inputName(unsigned i) const { return node->input(i); }
  int64_t numOutputs() const;
  bool hasOutput(unsigned i) const;
  void setOutput(unsigned i, mlir::Value value, int32_t dtype);
  void setOutput(unsigned i, TensorData data);
  void forwardOutput(unsigned i, const ImportedValue &value);

  // Attributes: every read marks the attribute as understood; a node with an
  // attribute no handler read is refused.
  const onnx::AttributeProto *attr(llvm::StringRef name);
  bool hasAttr(llvm::StringRef name) { return attr(name) != nullptr; }
  mlir::FailureOr<int64_t> intAttr(llvm::StringRef name, int64_t dflt);
  mlir::FailureOr<double> floatAttr(llvm::StringRef name, double dflt);
  mlir::FailureOr<std::string> stringAttr(llvm::StringRef name,
                                          llvm::StringRef dflt);
  /// An INTS attribute; `present` tells whether it was given.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  intsAttr(llvm::StringRef name, bool *present = nullptr);
  mlir::FailureOr<llvm::SmallVector<double>> floatsAttr(llvm::StringRef name);
  /// Reads and discards attributes that do not change inference results.
  void ignoreAttrs(llvm::ArrayRef<llvm::StringRef> names);
  int64_t opset() const { return opsetVersion; }

  //===--------------------------------------------------------------------===//
  // IR building helpers.
  //===--------------------------------------------------------------------===//

  mlir::ImplicitLocOpBuilder &builder() { return b; }
  mlir::FailureOr<mlir::Type> elementType(int32_t dtype);
  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape,
                                    mlir::Type elementType);
  /// Materializes known tensor contents as an arith.constant (a
  /// dense_resource blob sharing the bytes when large).
  mlir::Value materialize(const TensorData &data, llvm::StringRef name);
  mlir::Value scalar(mlir::Type type, double value);
  mlir::Value empty(llvm::ArrayRef<int64_t> shape, mlir::Type elementType);
  mlir::Value filled(llvm::ArrayRef<int64_t> shape, mlir::Type elementType,
                     double value);
  mlir::Value reshape(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value value, llvm::ArrayRef<int64_t> perm);
  /// Pads with a constant; negative amounts crop.
  mlir::Value padConstant(mlir::Value value, llvm::ArrayRef<int64_t> low,
                          llvm::ArrayRef<int64_t> high, double padValue);
  /// Numpy-broadcast shape of several shapes, or failure.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  broadcastShape(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes);
  /// A parallel linalg.generic over the broadcast shape of `inputs`.
  mlir::FailureOr<mlir::Value> elementwise(mlir::ValueRange inputs,
                                           mlir::Type resultElementType,
                                           BodyFn body);
  /// Like `elementwise` with an explicit output shape that every input
  /// broadcasts to.
  mlir::Value elementwiseTo(llvm::ArrayRef<int64_t> outShape,
                            mlir::ValueRange inputs,
                            mlir::Type resultElementType, BodyFn body);
  enum class ReduceKind { Sum, Max, Min, Prod };
  /// Reduces `axes` (sorted, unique); keeps them as size-1 dims if asked.
  mlir::Value reduce(mlir::Value value, llvm::ArrayRef<int64_t> axes,
                     bool keepDims, ReduceKind kind);
  /// Broadcasts `value` to `shape` (numpy rules).
  mlir::Value broadcastTo(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  /// Index computation for `indexedCopy`: source indices from the output
  /// indices and the block arguments of `extraInputs`.
  using IndexFn = llvm::function_ref<llvm::SmallVector<mlir::Value>(
      mlir::ImplicitLocOpBuilder &, llvm::ArrayRef<mlir::Value> outIndices,
      mlir::ValueRange extraArgs)>;
  /// A linalg.generic over `outShape` whose body reads `src` with
  /// tensor.extract at indices computed by `fn`: gathers, reflections,
  /// nearest-neighbour resizing, negative-step slices and tiling.
  mlir::Value indexedCopy(mlir::Value src, llvm::ArrayRef<int64_t> outShape,
                          mlir::ValueRange extraInputs,
                          llvm::ArrayRef<mlir::AffineMap> extraMaps,
                          IndexFn fn);
  /// An index-typed constant.
  mlir::Value index(int64_t v);

  static llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
  /// Normalizes a possibly negative axis; fails (with a message) when out
  /// of range.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);

  /// Fails when input `i` is given to an op form that takes `name` as an
  /// attribute at this opset.
  mlir::LogicalResult attributeNotInput(unsigned i, llvm::StringRef name);
  /// Fails when attribute `name` is given to an op form that takes it as
  /// input `i` at this opset.
  mlir::LogicalResult inputNotAttribute(unsigned i, llvm::StringRef name);

  //===--------------------------------------------------------------------===//
  // Op handlers, named by the op table (OpTable.cpp). `form` is the op's form
  // at the model's opset, chosen by the table row.
  //===--------------------------------------------------------------------===//

  // ImportElementwise.cpp
  mlir::LogicalResult importElementwise(const ElementwiseOp &op);
  mlir::LogicalResult importCast();
  mlir::LogicalResult importClip(ParamFrom form);
  mlir::LogicalResult importWhere();

  // ImportShape.cpp
  mlir::LogicalResult importReshape(ParamFrom form);
  mlir::LogicalResult importFlatten();
  mlir::LogicalResult importSqueeze(ParamFrom form);
  mlir::LogicalResult importUnsqueeze(ParamFrom form);
  mlir::LogicalResult importTranspose();
  mlir::LogicalResult importConcat(ConcatAxis form);
  mlir::LogicalResult importSplit(ParamFrom form);
  mlir::LogicalResult importSlice(ParamFrom form);
  mlir::LogicalResult importPad(PadsFrom form);
  mlir::LogicalResult importGather();
  mlir::LogicalResult importExpand();
  mlir::LogicalResult importTile();
  mlir::LogicalResult importResize(ResizeInputs form);

  // ImportConstants.cpp
  mlir::LogicalResult importIdentity();
  mlir::LogicalResult importDropout(ParamFrom form);
  mlir::LogicalResult importShape();
  mlir::LogicalResult importSize();
  mlir::LogicalResult importConstant();
  mlir::LogicalResult importConstantOfShape();
  mlir::LogicalResult importRange();

  // ImportNN.cpp
  mlir::LogicalResult importConv();
  mlir::LogicalResult importConvTranspose();
  mlir::LogicalResult importGemm();
  mlir::LogicalResult importMatMul();
  mlir::LogicalResult importPool(PoolKind kind);
  mlir::LogicalResult importGlobalPool(PoolKind kind);
  mlir::LogicalResult importBatchNorm();
  mlir::LogicalResult importInstanceNorm();
  mlir::LogicalResult importLayerNorm();
  mlir::LogicalResult importLRN();
  mlir::LogicalResult importSoftmax(SoftmaxKind kind, SoftmaxAxes form);
  mlir::LogicalResult importReduce(Reduction kind, ParamFrom form);

  //===--------------------------------------------------------------------===//
  // Import-time evaluation of nodes whose inputs are all known
  // (ImportConstants.cpp). std::nullopt leaves the node to its handler.
  //===--------------------------------------------------------------------===//

  std::optional<mlir::LogicalResult> foldElementwise(const ElementwiseOp &op);
  std::optional<mlir::LogicalResult> foldWhere();
  std::optional<mlir::LogicalResult> foldMod();
  std::optional<mlir::LogicalResult> foldCast();
  std::optional<mlir::LogicalResult> foldTranspose();

private:
  mlir::LogicalResult importGraphInputs(llvm::SmallVectorImpl<mlir::Type> &);
  mlir::LogicalResult importNode(const onnx::NodeProto &node);
  /// Folds or imports the current node by the row `found`.
  mlir::LogicalResult importByRow(const OpLookup &found);

  mlir::MLIRContext &ctx;
  onnx::ModelProto &model;
  std::string modelDir;
  std::string sourceName;
  const ImportOptions &options;
  int64_t opsetVersion = 1;
  mlir::ImplicitLocOpBuilder b;
  llvm::StringMap<ImportedValue> values;

  const onnx::NodeProto *node = nullptr;
  llvm::StringSet<> usedAttrs;
  unsigned blobCounter = 0;
};

} // namespace weft::import::detail

#endif // WEFT_LIB_IMPORT_IMPORTER_H
