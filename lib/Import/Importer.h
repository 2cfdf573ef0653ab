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
// needs them. The op handlers are split over ImportOps.cpp (tensor and
// elementwise ops) and ImportNN.cpp (convolution, pooling, normalization).
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

  //===--------------------------------------------------------------------===//
  // Op handlers (ImportOps.cpp, ImportNN.cpp).
  //===--------------------------------------------------------------------===//

  mlir::LogicalResult importElementwise(llvm::StringRef op);
  mlir::LogicalResult importVariadic(llvm::StringRef op);
  mlir::LogicalResult importCast();
  mlir::LogicalResult importClip();
  mlir::LogicalResult importWhere();
  mlir::LogicalResult importReshapeLike(llvm::StringRef op);
  mlir::LogicalResult importTranspose();
  mlir::LogicalResult importConcat();
  mlir::LogicalResult importSplit();
  mlir::LogicalResult importSlice();
  mlir::LogicalResult importPad();
  mlir::LogicalResult importGather();
  mlir::LogicalResult importExpand();
  mlir::LogicalResult importTile();
  mlir::LogicalResult importResize(llvm::StringRef op);
  mlir::LogicalResult importReduce(llvm::StringRef op);
  mlir::LogicalResult importShape();
  mlir::LogicalResult importConstant();
  mlir::LogicalResult importConstantOfShape();
  mlir::LogicalResult importRange();

  mlir::LogicalResult importConv();
  mlir::LogicalResult importConvTranspose();
  mlir::LogicalResult importGemm();
  mlir::LogicalResult importMatMul();
  mlir::LogicalResult importPool(llvm::StringRef op);
  mlir::LogicalResult importGlobalPool(llvm::StringRef op);
  mlir::LogicalResult importBatchNorm();
  mlir::LogicalResult importInstanceNorm();
  mlir::LogicalResult importLayerNorm();
  mlir::LogicalResult importLRN();
  mlir::LogicalResult importSoftmax(llvm::StringRef op);

  /// Evaluates an op on known inputs at import time. Returns std::nullopt
  /// when the op (or these inputs) is left to the IR path.
  std::optional<mlir::LogicalResult> tryFold(llvm::StringRef op);

private:
  mlir::LogicalResult importGraphInputs(llvm::SmallVectorImpl<mlir::Type> &);
  mlir::LogicalResult importNode(const onnx::NodeProto &node);
  mlir::LogicalResult dispatch(llvm::StringRef op);

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
