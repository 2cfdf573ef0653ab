//===- ConvertToFabric.cpp - Imported network to fabric.program -----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-convert-to-fabric: the imported func.func (one dense layer, after
// --weft-import-cleanup) becomes a fabric.program: host ports for the graph
// input and output, one kernel holding the layer on one sample, and the two
// streams between them. Batch rows are streamed as samples
// (docs/execution-model.md), so every tensor in the program is per sample and
// the batch is recorded as `weft.batch`.
//
// The kernel body is rebuilt from the matched DenseLayer rather than cloned:
// the imported ops are typed on the whole batch, and the rebuilt form
// (weights [K, M], a broadcast bias accumulator or zeros, linalg.matmul,
// ReLU as arith.maximumf with 0) is the importer's own Gemm form on one row,
// which matchDenseLayer recognises again in the lowering.
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricOps.h"
#include "weft/Conversion/DenseLayer.h"
#include "weft/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/DebugLog.h"

#define DEBUG_TYPE "weft-convert-to-fabric"

namespace weft {
#define GEN_PASS_DEF_CONVERTTOFABRIC
#include "weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;
using namespace weft;
namespace wf = weft::fabric;

/// The ONNX node name the importer put in `loc` (a NameLoc, possibly inside
/// a fused location), or "".
static std::string nodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations())
      if (std::string n = nodeName(l); !n.empty())
        return n;
  return "";
}

/// "node 'fc1' (linalg.matmul)": how errors name an imported op.
static std::string describeOp(Operation *op) {
  std::string name = nodeName(op->getLoc());
  std::string s = name.empty() ? "" : "node '" + name + "' ";
  return s + "(" + op->getName().getStringRef().str() + ")";
}

/// The `onnx.name` of argument or result `i`, or a fallback.
static std::string onnxName(DictionaryAttr attrs, StringRef fallback) {
  if (attrs)
    if (auto s = attrs.getAs<StringAttr>("onnx.name"); s && !s.empty())
      return s.str();
  return fallback.str();
}

/// Upstream ops a dense layer is made of after import and clean-up.
static bool isDenseLayerOp(Operation *op) {
  return isa<arith::ConstantOp, tensor::EmptyOp, linalg::FillOp,
             linalg::BroadcastOp, linalg::MatmulOp, linalg::GenericOp,
             func::ReturnOp>(op);
}

/// A symbol name not yet used in `table`: `base`, else `base_1`, `base_2`...
static std::string uniqueName(SymbolTable &table, StringRef base) {
  std::string name = base.empty() ? "node" : base.str();
  for (unsigned i = 1; table.lookup(name); ++i)
    name = (base + "_" + Twine(i)).str();
  return name;
}

/// A [K, M]-style f32 constant: inline when small, otherwise a blob (weights
/// are never printed inline).
static Value f32Constant(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                         ArrayRef<float> values, StringRef blobName) {
  auto type = RankedTensorType::get(shape, b.getF32Type());
  ElementsAttr attr;
  if (values.size() <= 16)
    attr = DenseElementsAttr::get(type, values);
  else
    attr = DenseResourceElementsAttr::get(
        type, blobName, HeapAsmResourceBlob::allocateAndCopyInferAlign(values));
  return arith::ConstantOp::create(b, loc, attr);
}

/// Builds the body of the kernel for `layer` on one sample:
/// y = relu?(x W + b) with x : tensor<1xKxf32>.
static Value buildLayerBody(OpBuilder &b, Location loc, Value x,
                            const conversion::DenseLayer &layer,
                            StringRef kernelName) {
  Type f32 = b.getF32Type();
  auto outType = RankedTensorType::get({1, layer.M}, f32);
  Value w = f32Constant(b, loc, {layer.K, layer.M}, layer.weights,
                        (kernelName + "_weights").str());
  Value init = tensor::EmptyOp::create(b, loc, outType.getShape(), f32);
  if (!layer.bias.empty()) {
    Value bias = f32Constant(b, loc, {layer.M}, layer.bias,
                             (kernelName + "_bias").str());
    init = linalg::BroadcastOp::create(b, loc, bias, init, ArrayRef<int64_t>{0})
               .getResult()[0];
  } else {
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    init = linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{init})
               .getResult(0);
  }
  Value y = linalg::MatmulOp::create(b, loc, TypeRange{outType},
                                     ValueRange{x, w}, ValueRange{init})
                .getResult(0);
  if (!layer.relu)
    return y;
  Value empty = tensor::EmptyOp::create(b, loc, outType.getShape(), f32);
  AffineMap id = b.getMultiDimIdentityMap(2);
  SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{outType}, ValueRange{y}, ValueRange{empty},
             ArrayRef<AffineMap>{id, id}, iters,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value zero =
                   arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0));
               Value r = arith::MaximumFOp::create(nb, l, args[0], zero);
               linalg::YieldOp::create(nb, l, r);
             })
      .getResult(0);
}

/// Whether the body of `g` is exactly one arithmetic op on its block
/// arguments (and constants) whose result it yields: `x + b` or
/// `max(x, 0)`, never `alpha * x + b`. A second check behind
/// matchDenseLayer, so that nothing the matcher does not model (a Gemm's
/// alpha or beta) is silently dropped when the layer is rebuilt.
static bool isSingleOpBody(linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  Operation *compute = nullptr;
  for (Operation &op : body.without_terminator()) {
    if (isa<arith::ConstantOp>(op))
      continue;
    if (compute)
      return false;
    compute = &op;
  }
  if (!compute || compute->getNumResults() != 1 ||
      body.getTerminator()->getOperands() != ValueRange(compute->getResult(0)))
    return false;
  for (Value v : compute->getOperands())
    if (!(isa<BlockArgument>(v) && cast<BlockArgument>(v).getOwner() == &body &&
          cast<BlockArgument>(v).getArgNumber() < g.getNumDpsInputs()) &&
        !v.getDefiningOp<arith::ConstantOp>())
      return false;
  return true;
}

/// Checks the function is one dense layer from its only input to its only
/// output and returns the layer; emits the error otherwise.
static FailureOr<conversion::DenseLayer> matchGraph(func::FuncOp fn) {
  FunctionType type = fn.getFunctionType();
  if (type.getNumInputs() != 1 || type.getNumResults() != 1)
    return fn.emitError() << "the graph has " << type.getNumInputs()
                          << " inputs and " << type.getNumResults()
                          << " outputs; the fabric path supports exactly one "
                             "of each (one dense layer)";
  // Ops that can never be part of a dense layer are named first: that is
  // the most useful message for a network with convolutions, reshapes...
  for (Operation &op : fn.getBody().front())
    if (!isDenseLayerOp(&op))
      return op.emitError()
             << describeOp(&op) << ": '" << op.getName()
             << "' is not supported on the fabric yet; weft maps exactly one "
                "dense layer (Gemm or MatMul, optional bias, optional ReLU)";

  std::string inName = onnxName(fn.getArgAttrDict(0), "input");
  auto inType = dyn_cast<RankedTensorType>(type.getInput(0));
  if (!inType || inType.getRank() != 2 || !inType.getElementType().isF32() ||
      !inType.hasStaticShape())
    return fn.emitError() << "graph input '" << inName << "' has type "
                          << type.getInput(0)
                          << "; a dense layer takes a static [batch, K] f32 "
                             "tensor";

  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  Value result = ret.getOperand(0);
  Operation *last = result.getDefiningOp();
  if (!last)
    return fn.emitError() << "graph output '"
                          << onnxName(fn.getResultAttrDict(0), "output")
                          << "' is the graph input; there is no layer to map";
  std::string why;
  FailureOr<conversion::DenseLayer> layer =
      conversion::matchDenseLayer(result, why);
  if (failed(layer))
    return last->emitError()
           << describeOp(last)
           << ": not a dense layer the fabric supports: " << why;

  for (Operation *op : layer->ops)
    if (auto g = dyn_cast<linalg::GenericOp>(op); g && !isSingleOpBody(g))
      return op->emitError()
             << describeOp(op)
             << ": not a dense layer the fabric supports: its elementwise "
                "op computes more than x + bias or max(x, 0) (a Gemm alpha "
                "or beta other than 1?)";

  // The layer must start at the graph input: anything between them would
  // be a second layer.
  if (layer->input != fn.getArgument(0)) {
    Operation *before = layer->input.getDefiningOp();
    InFlightDiagnostic d = (before ? before->emitError() : fn.emitError());
    if (before)
      d << describeOp(before) << ": ";
    d << "only one dense layer is supported; the layer's input is computed "
         "by another op instead of being the graph input '"
      << inName << "'";
    return d;
  }
  // Everything that is not part of the layer (or a constant, empty or fill
  // feeding it) would be silently dropped: refuse it.
  llvm::SmallPtrSet<Operation *, 16> used;
  SmallVector<Operation *> work(layer->ops.begin(), layer->ops.end());
  work.push_back(ret);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!used.insert(op).second)
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        work.push_back(def);
  }
  for (Operation &op : fn.getBody().front())
    if (!used.contains(&op) && !isa<arith::ConstantOp, tensor::EmptyOp>(op))
      return op.emitError() << describeOp(&op)
                            << ": is not part of the dense layer; the "
                               "fabric path supports one layer only";
  for (Operation *op : used)
    if (isa<linalg::MatmulOp, linalg::GenericOp>(op) &&
        !llvm::is_contained(layer->ops, op))
      return op->emitError() << describeOp(op)
                             << ": only one dense layer is supported; this "
                                "op is outside it";
  return layer;
}

namespace {

struct ConvertToFabric : weft::impl::ConvertToFabricBase<ConvertToFabric> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string why;
    std::optional<target::Target> t = target::Target::parse(grid, &why);
    if (!t) {
      module.emitError() << "bad grid '" << grid << "': " << why;
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    if (funcs.size() != 1) {
      module.emitError() << "expected one func.func (the imported graph), "
                            "found "
                         << funcs.size();
      return signalPassFailure();
    }
    if (failed(convert(funcs.front(), *t)))
      return signalPassFailure();
  }

  LogicalResult convert(func::FuncOp fn, const target::Target &t) {
    FailureOr<conversion::DenseLayer> layer = matchGraph(fn);
    if (failed(layer))
      return failure();
    MLIRContext *ctx = &getContext();
    OpBuilder b(fn);
    Type f32 = b.getF32Type();
    auto inType = RankedTensorType::get({1, layer->K}, f32);
    auto outType = RankedTensorType::get({1, layer->M}, f32);

    auto program = wf::ProgramOp::create(b, fn.getLoc(), fn.getSymName(),
                                         wf::TargetAttr::get(ctx, t.config()));
    program->setAttr("weft.batch", b.getI64IntegerAttr(layer->batch));
    Block *body = &program.getBody().emplaceBlock();
    SymbolTable symbols(program);
    b.setInsertionPointToEnd(body);

    // Host ports. Rows are the first row until partitioning chooses them.
    auto io = [&](StringRef name, wf::PortDir dir, wf::Edge edge,
                  RankedTensorType type, Location loc) {
      auto op = wf::IoOp::create(
          b, loc, b.getStringAttr(uniqueName(symbols, name)),
          wf::PortDirAttr::get(ctx, dir), wf::EdgeAttr::get(ctx, edge),
          b.getI64IntegerAttr(0), b.getI64IntegerAttr(1), TypeAttr::get(type));
      symbols.insert(op);
      return op;
    };
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    wf::IoOp in = io(onnxName(fn.getArgAttrDict(0), "input"),
                     wf::PortDir::input, wf::Edge::west, inType, fn.getLoc());
    wf::IoOp out =
        io(onnxName(fn.getResultAttrDict(0), "output"), wf::PortDir::output,
           wf::Edge::east, outType, ret.getLoc());

    // The kernel, named after the matmul's ONNX node.
    Operation *matmul = nullptr;
    for (Operation *op : layer->ops)
      if (isa<linalg::MatmulOp>(op))
        matmul = op;
    SmallVector<Location> locs;
    for (Operation *op : layer->ops)
      locs.push_back(op->getLoc());
    Location kernelLoc = FusedLoc::get(ctx, locs);
    std::string kernelName =
        uniqueName(symbols, nodeName(matmul ? matmul->getLoc() : kernelLoc));
    auto kernel = wf::KernelOp::create(
        b, kernelLoc, b.getStringAttr(kernelName), /*rect=*/nullptr,
        b.getI64IntegerAttr(1), /*tile=*/nullptr,
        TypeAttr::get(b.getFunctionType({inType}, {outType})));
    symbols.insert(kernel);
    {
      OpBuilder::InsertionGuard guard(b);
      Block *kb = b.createBlock(&kernel.getBody(), {}, {inType}, {fn.getLoc()});
      Value y =
          buildLayerBody(b, kernelLoc, kb->getArgument(0), *layer, kernelName);
      wf::YieldOp::create(b, kernelLoc, ValueRange{y});
    }

    // The streams host -> kernel -> host.
    auto stream = [&](Operation *src, Operation *dst, int64_t count) {
      StringRef s = SymbolTable::getSymbolName(src).getValue();
      StringRef d = SymbolTable::getSymbolName(dst).getValue();
      auto op = wf::StreamOp::create(
          b, kernelLoc,
          b.getStringAttr(uniqueName(symbols, (s + "_to_" + d).str())),
          FlatSymbolRefAttr::get(ctx, s), b.getI64IntegerAttr(0),
          FlatSymbolRefAttr::get(ctx, d), b.getI64IntegerAttr(0),
          TypeAttr::get(wf::WaveletsType::get(ctx, f32, count)),
          /*color=*/nullptr);
      symbols.insert(op);
    };
    stream(in, kernel, layer->K);
    stream(kernel, out, layer->M);

    LDBG() << "kernel @" << kernelName << ": " << layer->K << " -> " << layer->M
           << (layer->bias.empty() ? "" : " + bias")
           << (layer->relu ? ", relu" : "") << ", batch " << layer->batch;
    ++numKernels;
    fn.erase();
    return success();
  }
};

} // namespace
