//===- OpTable.cpp - Which handler imports which op at which opset --------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The op table: a row per ONNX op of the default domain and per opset from
// which its form changes, naming the handler that imports the node and, for
// ops the importer evaluates on known inputs, the fold tried first. A row
// holds from its `since` until the op's next row, so the opset-dependent
// forms (an attribute that became an input, Softmax's coercion to 2D, the
// broadcasting of opset < 7) are chosen here, never by opset checks in the
// handlers. The elementwise ops live in their own table with their scalar
// bodies (kElementwiseOps in ImportElementwise.cpp); lookupOp searches both.
//
// The first row of an op is at the opset that introduced it in ONNX, so a
// model that uses an op below that opset is refused with the reason.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

using namespace mlir;
using namespace weft::import::detail;

namespace {
using GI = GraphImporter;
} // namespace

/// A handler or fold with fixed arguments, as a table entry:
/// `call<&GI::importClip, ParamFrom::Input>` calls `imp.importClip(Input)`.
template <auto Handler, auto... Args> static auto call(GraphImporter &imp) {
  return (imp.*Handler)(Args...);
}

/// Every op except the elementwise ones, grouped by the file of the handler,
/// alphabetical within a group.
static constexpr OpRow kOpTable[] = {
    // Elementwise ops that are more than one scalar body
    // (ImportElementwise.cpp).
    {"Cast", 1, call<&GI::importCast>, call<&GI::foldCast>},
    {"Clip", 1, call<&GI::importClip, ParamFrom::Attribute>},
    {"Clip", 11, call<&GI::importClip, ParamFrom::Input>},
    {"Where", 9, call<&GI::importWhere>, call<&GI::foldWhere>},

    // Known tensors, values passed through, import-time evaluation only
    // (ImportConstants.cpp).
    {"Constant", 1, call<&GI::importConstant>},
    {"ConstantOfShape", 9, call<&GI::importConstantOfShape>},
    {"Dropout", 1, call<&GI::importDropout, ParamFrom::Attribute>},
    {"Dropout", 12, call<&GI::importDropout, ParamFrom::Input>},
    {"Identity", 1, call<&GI::importIdentity>},
    {"Mod", 10, nullptr, call<&GI::foldMod>},
    {"Range", 11, call<&GI::importRange>},
    {"Shape", 1, call<&GI::importShape>},
    {"Size", 1, call<&GI::importSize>},

    // Shapes and data movement (ImportShape.cpp).
    {"Concat", 1, call<&GI::importConcat, ConcatAxis::DefaultOne>},
    {"Concat", 4, call<&GI::importConcat, ConcatAxis::Required>},
    {"Expand", 8, call<&GI::importExpand>},
    {"Flatten", 1, call<&GI::importFlatten>},
    {"Gather", 1, call<&GI::importGather>},
    {"Pad", 1, call<&GI::importPad, PadsFrom::PaddingsAttribute>},
    {"Pad", 2, call<&GI::importPad, PadsFrom::PadsAttribute>},
    {"Pad", 11, call<&GI::importPad, PadsFrom::Input>},
    {"Reshape", 1, call<&GI::importReshape, ParamFrom::Attribute>},
    {"Reshape", 5, call<&GI::importReshape, ParamFrom::Input>},
    {"Resize", 10, call<&GI::importResize, ResizeInputs::ScalesInput>},
    {"Resize", 11, call<&GI::importResize, ResizeInputs::RoiScalesSizes>},
    {"Slice", 1, call<&GI::importSlice, ParamFrom::Attribute>},
    {"Slice", 10, call<&GI::importSlice, ParamFrom::Input>},
    {"Split", 1, call<&GI::importSplit, ParamFrom::AttributeOrInput>},
    {"Split", 2, call<&GI::importSplit, ParamFrom::Attribute>},
    {"Split", 13, call<&GI::importSplit, ParamFrom::Input>},
    {"Squeeze", 1, call<&GI::importSqueeze, ParamFrom::Attribute>},
    {"Squeeze", 13, call<&GI::importSqueeze, ParamFrom::Input>},
    {"Tile", 1, call<&GI::importTile>},
    {"Transpose", 1, call<&GI::importTranspose>, call<&GI::foldTranspose>},
    {"Unsqueeze", 1, call<&GI::importUnsqueeze, ParamFrom::Attribute>},
    {"Unsqueeze", 13, call<&GI::importUnsqueeze, ParamFrom::Input>},
    {"Upsample", 1, call<&GI::importResize, ResizeInputs::ScalesAttribute>},
    {"Upsample", 9, call<&GI::importResize, ResizeInputs::ScalesInput>},

    // Convolution, matmul, pooling, normalization (ImportNN.cpp).
    {"AveragePool", 1, call<&GI::importPool, PoolKind::Average>},
    {"BatchNormalization", 1, call<&GI::importBatchNorm>},
    {"Conv", 1, call<&GI::importConv>},
    {"ConvTranspose", 1, call<&GI::importConvTranspose>},
    {"Gemm", 1, call<&GI::importGemm>},
    {"GlobalAveragePool", 1, call<&GI::importGlobalPool, PoolKind::Average>},
    {"GlobalMaxPool", 1, call<&GI::importGlobalPool, PoolKind::Max>},
    {"InstanceNormalization", 1, call<&GI::importInstanceNorm>},
    {"LRN", 1, call<&GI::importLRN>},
    {"LayerNormalization", 17, call<&GI::importLayerNorm>},
    {"LogSoftmax", 1,
     call<&GI::importSoftmax, SoftmaxKind::LogSoftmax, SoftmaxAxes::Coerced2D>},
    {"LogSoftmax", 13,
     call<&GI::importSoftmax, SoftmaxKind::LogSoftmax,
          SoftmaxAxes::SingleAxis>},
    {"MatMul", 1, call<&GI::importMatMul>},
    {"MaxPool", 1, call<&GI::importPool, PoolKind::Max>},
    {"Softmax", 1,
     call<&GI::importSoftmax, SoftmaxKind::Softmax, SoftmaxAxes::Coerced2D>},
    {"Softmax", 13,
     call<&GI::importSoftmax, SoftmaxKind::Softmax, SoftmaxAxes::SingleAxis>},

    // Reductions (ImportNN.cpp): the axes became an input at opset 13 for
    // ReduceSum, at opset 18 for the others.
    {"ReduceL1", 1,
     call<&GI::importReduce, Reduction::L1, ParamFrom::Attribute>},
    {"ReduceL1", 18, call<&GI::importReduce, Reduction::L1, ParamFrom::Input>},
    {"ReduceL2", 1,
     call<&GI::importReduce, Reduction::L2, ParamFrom::Attribute>},
    {"ReduceL2", 18, call<&GI::importReduce, Reduction::L2, ParamFrom::Input>},
    {"ReduceLogSum", 1,
     call<&GI::importReduce, Reduction::LogSum, ParamFrom::Attribute>},
    {"ReduceLogSum", 18,
     call<&GI::importReduce, Reduction::LogSum, ParamFrom::Input>},
    {"ReduceLogSumExp", 1,
     call<&GI::importReduce, Reduction::LogSumExp, ParamFrom::Attribute>},
    {"ReduceLogSumExp", 18,
     call<&GI::importReduce, Reduction::LogSumExp, ParamFrom::Input>},
    {"ReduceMax", 1,
     call<&GI::importReduce, Reduction::Max, ParamFrom::Attribute>},
    {"ReduceMax", 18,
     call<&GI::importReduce, Reduction::Max, ParamFrom::Input>},
    {"ReduceMean", 1,
     call<&GI::importReduce, Reduction::Mean, ParamFrom::Attribute>},
    {"ReduceMean", 18,
     call<&GI::importReduce, Reduction::Mean, ParamFrom::Input>},
    {"ReduceMin", 1,
     call<&GI::importReduce, Reduction::Min, ParamFrom::Attribute>},
    {"ReduceMin", 18,
     call<&GI::importReduce, Reduction::Min, ParamFrom::Input>},
    {"ReduceProd", 1,
     call<&GI::importReduce, Reduction::Prod, ParamFrom::Attribute>},
    {"ReduceProd", 18,
     call<&GI::importReduce, Reduction::Prod, ParamFrom::Input>},
    {"ReduceSum", 1,
     call<&GI::importReduce, Reduction::Sum, ParamFrom::Attribute>},
    {"ReduceSum", 13,
     call<&GI::importReduce, Reduction::Sum, ParamFrom::Input>},
    {"ReduceSumSquare", 1,
     call<&GI::importReduce, Reduction::SumSquare, ParamFrom::Attribute>},
    {"ReduceSumSquare", 18,
     call<&GI::importReduce, Reduction::SumSquare, ParamFrom::Input>},
};

/// Among `rows`, the last one of `op` whose `since` is at most `opset`.
/// Sets `firstSince` to the `since` of the op's first row when the op has
/// rows here. Rows of one op are in increasing `since`.
template <typename Row>
static const Row *findRow(ArrayRef<Row> rows, StringRef op, int64_t opset,
                          int64_t &firstSince) {
  const Row *found = nullptr, *previous = nullptr;
  for (const Row &row : rows) {
    if (row.op != op)
      continue;
    assert((!previous || previous->since < row.since) &&
           "rows of one op must be in increasing opset order");
    if (!previous)
      firstSince = row.since;
    previous = &row;
    if (row.since <= opset)
      found = &row;
  }
  return found;
}

OpLookup weft::import::detail::lookupOp(StringRef op, int64_t opset) {
  // A linear scan: about 130 rows, far cheaper than the ops a node builds.
  OpLookup result;
  result.row = findRow(ArrayRef<OpRow>(kOpTable), op, opset, result.firstSince);
  int64_t elementwiseSince = 0;
  result.elementwise = findRow(elementwiseOps(), op, opset, elementwiseSince);
  assert(!(result.firstSince && elementwiseSince) &&
         "an op is in the op table or in the elementwise table, not both");
  if (elementwiseSince)
    result.firstSince = elementwiseSince;
  return result;
}
