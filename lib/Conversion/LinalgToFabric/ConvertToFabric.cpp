//===- ConvertToFabric.cpp - Imported network to fabric.program -----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-convert-to-fabric: the imported func.func (after
// --weft-import-cleanup) becomes a fabric.program: host ports for the graph
// input and output, one kernel per layer of the chain between them, and the
// streams input -> k0 -> ... -> kn -> output. Batch rows are streamed as
// samples (docs/execution-model.md), so every tensor in the program is per
// sample and the batch is recorded as `weft.batch`.
//
// The chain is found by walking back from the graph output: at each value,
// a reshape of the sample is dropped (it does not change the row-major
// order), a dense layer is recognised by matchDenseLayer, and an activation
// or (log-)softmax by matchColumnKernel on a per-sample copy of its ops.
//
// A dense kernel's body is rebuilt from the matched DenseLayer rather than
// cloned: the imported ops are typed on the whole batch, and the rebuilt
// form (weights [K, M], a broadcast bias accumulator or zeros,
// linalg.matmul, ReLU as arith.maximumf with 0) is the importer's own Gemm
// form on one row, which matchDenseLayer recognises again in the lowering.
// A column kernel's ops are cloned with the batch dimension set to 1, so
// the body is the importer's form on one sample.
//
//===----------------------------------------------------------------------===//

#include "KernelBodies.h"

#include "fabric/FabricOps.h"
#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/DenseLayer.h"
#include "weft/Conversion/PoolKernel.h"
#include "weft/FabricTransforms/KernelScheme.h"
#include "weft/Kernels/Epilogue.h"
#include "weft/Conversion/Passes.h"
#include "weft/Transforms/ConstantData.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/DebugLog.h"

#include <limits>

#define DEBUG_TYPE "weft-convert-to-fabric"

namespace weft {
#define GEN_PASS_DEF_CONVERTTOFABRIC
#include "weft/Conversion/Passes.h.inc"
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

/// Upstream ops the layers of a chain are made of after import and
/// clean-up (math ops only appear inside linalg.generic bodies).
static bool isFabricOp(Operation *op) {
  return isa<arith::ConstantOp, tensor::EmptyOp, linalg::FillOp,
             linalg::BroadcastOp, linalg::MatmulOp, linalg::GenericOp,
             linalg::Conv2DNchwFchwOp, linalg::Conv1DNcwFcwOp,
             linalg::DepthwiseConv2DNchwChwOp, linalg::Conv2DNgchwGfchwOp,
             linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp,
             linalg::PoolingNcwMaxOp, linalg::PoolingNcwSumOp, tensor::PadOp,
             tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ReshapeOp,
             func::ReturnOp>(op);
}

/// A symbol name not yet used in `table`: `base`, else `base_1`, `base_2`...
static std::string uniqueName(SymbolTable &table, StringRef base) {
  std::string name = base.empty() ? "node" : base.str();
  for (unsigned i = 1; table.lookup(name); ++i)
    name = (base + "_" + Twine(i)).str();
  return name;
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

/// Whether `type` is a statically shaped f32 tensor.
static bool isStaticF32(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.hasStaticShape() && t.getElementType().isF32();
}

/// One layer of the network, in the imported graph.
struct Layer {
  enum Kind { Dense, Column, Join, Conv, Pool };
  Kind kind = Dense;
  conversion::DenseLayer denseLayer;
  conversion::PoolLayer poolLayer;
  wf::JoinKind join = wf::JoinKind::add;
  /// Join: the ReLU that followed it is fused (max(a op b, 0)).
  bool joinRelu = false;
  /// Join: input 1 is per channel of input 0's feature map (a mul).
  bool joinBroadcast = false;
  conversion::ColumnOp op = conversion::ColumnOp::Relu;
  /// A column kernel's constants (columnParamCount(op) of them, the
  /// constant tensor's elements, or an Expression's program).
  std::vector<float> params;
  /// Dense: weft made the matrix (a --weft-linear-to-matmul layer).
  bool synthetic = false;
  /// A column kernel's body on one sample (its argument is the input).
  std::unique_ptr<Block> body;
  Value bodyResult;
  /// The values the layer reads (1, or 2 for a join; reshapes of the
  /// sample in front of them dropped) and its result.
  SmallVector<Value> inputs;
  Value result;
  /// The imported ops the layer is made of.
  SmallVector<Operation *> ops;
  /// The op that names the kernel (the matmul, or the last op).
  Operation *namer = nullptr;
  /// Conv: the fused activation's body on one sample (a column layer's,
  /// its argument the convolution's result) and result.
  std::unique_ptr<Block> epilogueBody;
  Value epilogueResult;
};

/// The network the pass maps: the layers from the graph inputs to the
/// graph outputs, producers first, and the reshapes between them.
struct Network {
  int64_t batch = 1;
  std::vector<Layer> layers;
  /// The layer producing each graph output.
  SmallVector<int64_t> outputs;
  SmallVector<Operation *> reshapes;
};

/// `type` on one sample: the batch dimension (the first) set to 1.
static RankedTensorType perSample(RankedTensorType type, int64_t batch) {
  if (batch == 1 || type.getRank() == 0 || type.getDimSize(0) != batch)
    return type;
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = 1;
  return type.clone(shape);
}

/// The value an activation or (log-)softmax in the importer's form starts
/// from, seen from the generic `g` that produces its result: the input of
/// a one-input elementwise op, or the `x` of softmax's `x - max(x)`.
static Value columnInput(linalg::GenericOp g) {
  if (g.getNumDpsInputs() == 1)
    return g.getDpsInputs()[0];
  if (Value x = conversion::columnKernelOperand(g->getResult(0)))
    return x;
  if (g.getNumDpsInputs() != 2)
    return {};
  // Softmax divides exp(d) by the sum, LogSoftmax subtracts from d.
  Value d = g.getDpsInputs()[0];
  if (auto e = d.getDefiningOp<linalg::GenericOp>();
      e && e.getNumDpsInputs() == 1 &&
      llvm::any_of(e.getRegion().front(),
                   [](Operation &op) { return isa<math::ExpOp>(op); }))
    d = e.getDpsInputs()[0];
  auto shift = d.getDefiningOp<linalg::GenericOp>();
  if (!shift || shift.getNumDpsInputs() != 2)
    return {};
  return shift.getDpsInputs()[0];
}

/// Recognises the activation or (log-)softmax whose result is `result`:
/// collects its ops back to its input, clones them on one sample into a
/// fresh block and asks matchColumnKernel. Fails with `why`.
static LogicalResult matchColumnLayer(Value result, int64_t batch, Layer &layer,
                                      std::string &why) {
  auto g = result.getDefiningOp<linalg::GenericOp>();
  Value x = g ? columnInput(g) : Value();
  if (!x) {
    why = "it is neither a one-input elementwise linalg.generic nor the last "
          "step of a softmax";
    return failure();
  }
  // The ops from x to the result (operands of nested regions included).
  Block *top = g->getBlock();
  llvm::SetVector<Operation *> slice;
  SmallVector<Operation *> work = {g};
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!slice.insert(op))
      continue;
    bool bad = false;
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        if (v == x)
          continue;
        Operation *def = v.getDefiningOp();
        if (def && def->getBlock() == top)
          work.push_back(def);
        else if (!def && cast<BlockArgument>(v).getOwner() == top)
          bad = true;
      }
    });
    if (bad ||
        !isa<linalg::GenericOp, linalg::FillOp, tensor::EmptyOp,
             arith::ConstantOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
            op)) {
      why = "it reads values other than its input (from " +
            op->getName().getStringRef().str() + ")";
      return failure();
    }
  }
  SmallVector<Operation *> ops(slice.begin(), slice.end());
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });

  // The copy on one sample: the batch dimension of every result set to 1.
  auto inType = perSample(cast<RankedTensorType>(x.getType()), batch);
  auto block = std::make_unique<Block>();
  block->addArgument(inType, x.getLoc());
  // The block has no parent yet: the builder takes the context directly.
  OpBuilder b(result.getContext());
  b.setInsertionPointToEnd(block.get());
  IRMapping map;
  map.map(x, block->getArgument(0));
  {
    // A copy that does not verify on one sample is reported below, not
    // as a stray diagnostic.
    ScopedDiagnosticHandler quiet(result.getContext(),
                                  [](Diagnostic &) { return success(); });
    for (Operation *op : ops) {
      Operation *copy = b.clone(*op, map);
      if (batch > 1 && !isa<arith::ConstantOp>(copy)) {
        for (Value r : copy->getResults())
          if (auto t = dyn_cast<RankedTensorType>(r.getType()))
            r.setType(perSample(t, batch));
        if (auto e = dyn_cast<tensor::ExpandShapeOp>(copy))
          e.setStaticOutputShape(e.getResultType().getShape());
      }
      // Also linalg's shape checks, which catch a constant operand that
      // differs per sample (typed on the whole batch).
      if (failed(copy->getName().verifyInvariants(copy)) ||
          (isa<linalg::LinalgOp>(copy) &&
           failed(linalg::detail::verifyStructuredOpInterface(copy)))) {
        why = "its ops do not work on one sample (the batch dimension is "
              "not the first everywhere)";
        return failure();
      }
    }
  }
  Value copied = map.lookup(result);
  Value input;
  std::vector<float> params;
  FailureOr<conversion::ColumnOp> op =
      conversion::matchColumnKernel(copied, input, why, &params);
  if (failed(op))
    return failure();
  if (input != block->getArgument(0)) {
    why = "its input is not the value it starts from";
    return failure();
  }
  // A softmax over the batch dimension mixes samples (its per-sample copy
  // would reduce a dimension of size 1).
  for (Operation *op : ops)
    if (auto r = dyn_cast<linalg::GenericOp>(op);
        r && batch > 1 && r.getNumLoops() > 0 &&
        r.getIteratorTypesArray()[0] == utils::IteratorType::reduction) {
      why = "it reduces over the batch dimension (dimension 0, " +
            std::to_string(batch) + " samples)";
      return failure();
    }
  layer.kind = Layer::Column;
  layer.op = *op;
  layer.params = std::move(params);
  layer.body = std::move(block);
  layer.bodyResult = copied;
  layer.inputs = {x};
  layer.result = result;
  layer.ops = std::move(ops);
  layer.namer = g;
  return success();
}

/// Whether a failure at `def` is about a dense layer only: a matrix
/// product, or an elementwise op that combines one with constants (a bias,
/// Gemm's alpha or beta).
static bool isDenseRooted(Operation *def) {
  if (isa<linalg::MatmulOp>(def))
    return true;
  auto g = dyn_cast<linalg::GenericOp>(def);
  if (!g || g.getNumDpsInputs() < 2)
    return false;
  int64_t products = 0;
  for (Value v : g.getDpsInputs()) {
    if (v.getDefiningOp<linalg::MatmulOp>())
      ++products;
    else if (!v.getDefiningOp<arith::ConstantOp>())
      return false;
  }
  return products == 1;
}

/// Whether input `i` of `g` is per channel of its result, a feature map
/// [B, C, spatial...]: a [B, C, 1, ...] tensor read through (d0, d1, 0,
/// ...), a squeeze-and-excitation scale broadcast over the pixels.
static bool perChannelInput(linalg::GenericOp g, unsigned i) {
  auto out = cast<RankedTensorType>(g.getResult(0).getType());
  auto in = dyn_cast<RankedTensorType>(g.getDpsInputs()[i].getType());
  if (!in || in.getRank() != out.getRank() || out.getRank() < 3 ||
      !in.hasStaticShape() || !out.hasStaticShape() ||
      in.getDimSize(1) != out.getDimSize(1))
    return false;
  AffineMap m = g.getIndexingMapsArray()[i];
  if (m.getNumResults() != in.getRank() ||
      m.getResult(0) != getAffineDimExpr(0, g.getContext()) ||
      m.getResult(1) != getAffineDimExpr(1, g.getContext()))
    return false;
  for (int64_t d = 2; d < in.getRank(); ++d) {
    auto c = dyn_cast<AffineConstantExpr>(m.getResult(unsigned(d)));
    if (in.getDimSize(d) != 1 || !c || c.getValue() != 0)
      return false;
  }
  return llvm::product_of(out.getShape().drop_front(2)) > 1;
}

/// The join of two streams `result` computes, if it is one: an
/// elementwise linalg.generic over two non-constant tensors of its own shape
/// whose body is one add, sub, mul, div, max or min of the two, or a mul
/// of a feature map by a per-channel tensor (`broadcast`: that input's
/// index, else -1). `swapped`: the body computes b op a of the generic's
/// inputs (a, b).
static std::optional<wf::JoinKind> matchJoin(Value result, bool &swapped,
                                             std::string &why,
                                             int *broadcast = nullptr) {
  auto g = result.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 2 || g.getNumResults() != 1) {
    why = "it is not an elementwise op of two tensors";
    return std::nullopt;
  }
  for (Value in : g.getDpsInputs())
    if (in.getDefiningOp<arith::ConstantOp>()) {
      why = "one operand is a constant";
      return std::nullopt;
    }
  // One operand per channel of the other (y = x * s of a
  // squeeze-and-excitation block), either way round.
  int perChannel = -1;
  for (unsigned i = 0; i < 2; ++i)
    if (perChannelInput(g, i) &&
        g.getIndexingMapsArray()[1 - i].isIdentity() &&
        g.getIndexingMapsArray()[2].isIdentity() &&
        g.getDpsInputs()[1 - i].getType() == result.getType())
      perChannel = int(i);
  if (broadcast)
    *broadcast = perChannel;
  if (perChannel < 0 &&
      (!llvm::all_of(g.getIndexingMapsArray(),
                     [](AffineMap m) { return m.isIdentity(); }) ||
       g.getDpsInputs()[0].getType() != result.getType() ||
       g.getDpsInputs()[1].getType() != result.getType())) {
    why = "its operands are broadcast or of another shape than its result";
    return std::nullopt;
  }
  Block &body = g.getRegion().front();
  if (!llvm::hasSingleElement(body.without_terminator())) {
    why = "its body is more than one op";
    return std::nullopt;
  }
  Operation &op = body.front();
  if (op.getNumOperands() != 2 ||
      body.getTerminator()->getOperands() != op.getResults()) {
    why = "its body is not one binary op";
    return std::nullopt;
  }
  Value x = body.getArgument(0), y = body.getArgument(1);
  if (op.getOperand(0) == x && op.getOperand(1) == y)
    swapped = false;
  else if (op.getOperand(0) == y && op.getOperand(1) == x)
    swapped = true;
  else {
    why = "its body does not combine the two operands";
    return std::nullopt;
  }
  std::optional<wf::JoinKind> kind =
      TypeSwitch<Operation *, std::optional<wf::JoinKind>>(&op)
          .Case([](arith::AddFOp) { return wf::JoinKind::add; })
          .Case([](arith::SubFOp) { return wf::JoinKind::sub; })
          .Case([](arith::MulFOp) { return wf::JoinKind::mul; })
          .Case([](arith::DivFOp) { return wf::JoinKind::div; })
          .Case([](arith::MaximumFOp) { return wf::JoinKind::max; })
          .Case([](arith::MinimumFOp) { return wf::JoinKind::min; })
          .Default([](Operation *) { return std::nullopt; });
  if (!kind)
    why = "'" + op.getName().getStringRef().str() +
          "' is not an add, sub, mul, div, max or min";
  if (kind && perChannel >= 0 && *kind != wf::JoinKind::mul) {
    why = "one operand is per channel of the other, which only a mul "
          "takes, not " +
          stringifyJoinKind(*kind).str();
    return std::nullopt;
  }
  if (kind && perChannel >= 0 && !broadcast) {
    why = "one operand is per channel of the other";
    return std::nullopt;
  }
  return kind;
}

/// The join whose result `result`, a ReLU, is the only reader of, if it
/// is one the join kernel can absorb (add, mul, max or min; sub and div
/// may take two steps before it, docs/execution-model.md, "Join kernels"):
/// the join's result, with its kind and `swapped` set.
static Value joinUnderRelu(Value result, wf::JoinKind &kind, bool &swapped) {
  Operation *relu = result.getDefiningOp();
  if (!conversion::isRelu(relu))
    return {};
  auto g = cast<linalg::GenericOp>(relu);
  Value joined = g.getDpsInputs()[0];
  if (joined.getType() != result.getType() || !joined.hasOneUse() ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return {};
  std::string why;
  std::optional<wf::JoinKind> k = matchJoin(joined, swapped, why);
  if (!k || *k == wf::JoinKind::sub || *k == wf::JoinKind::div)
    return {};
  kind = *k;
  return joined;
}

/// Builds a join layer's body on one sample: y = a op b, or with `relu`
/// (the ReLU generic reading the join's result, fused into the layer)
/// max(a op b, 0).
static void buildJoinLayer(Value result, wf::JoinKind kind, bool swapped,
                           int64_t batch, Layer &layer,
                           Operation *relu = nullptr, int broadcast = -1) {
  auto g = result.getDefiningOp<linalg::GenericOp>();
  auto type = perSample(cast<RankedTensorType>(result.getType()), batch);
  Location loc = g.getLoc();
  layer.kind = Layer::Join;
  layer.join = kind;
  // A per-channel operand is always b: x * s, or s * x (a mul commutes
  // exactly), as the kernel takes it.
  if (broadcast >= 0)
    swapped = broadcast == 0;
  layer.joinBroadcast = broadcast >= 0;
  layer.inputs = {g.getDpsInputs()[swapped ? 1 : 0],
                  g.getDpsInputs()[swapped ? 0 : 1]};
  RankedTensorType typeB = type;
  AffineMap id = AffineMap::getMultiDimIdentityMap(unsigned(type.getRank()),
                                                   result.getContext());
  AffineMap mapB = id;
  if (broadcast >= 0) {
    typeB = perSample(cast<RankedTensorType>(layer.inputs[1].getType()), batch);
    mapB = g.getIndexingMapsArray()[unsigned(broadcast)];
  }
  layer.body = std::make_unique<Block>();
  layer.body->addArguments({type, typeB}, {loc, loc});
  OpBuilder b(result.getContext());
  b.setInsertionPointToEnd(layer.body.get());
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  SmallVector<utils::IteratorType> iters(size_t(type.getRank()),
                                         utils::IteratorType::parallel);
  Operation &op = g.getRegion().front().front();
  layer.bodyResult =
      linalg::GenericOp::create(
          b, loc, TypeRange{type}, layer.body->getArguments(),
          ValueRange{empty}, ArrayRef<AffineMap>{id, mapB, id}, iters,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            IRMapping map;
            map.map(op.getOperand(0), swapped ? args[1] : args[0]);
            map.map(op.getOperand(1), swapped ? args[0] : args[1]);
            Value y = nb.clone(op, map)->getResult(0);
            if (relu) {
              Value zero = arith::ConstantOp::create(
                  nb, l, nb.getFloatAttr(y.getType(), 0.0));
              y = arith::MaximumFOp::create(nb, l, y, zero);
            }
            linalg::YieldOp::create(nb, l, y);
          })
          .getResult(0);
  layer.joinRelu = relu != nullptr;
  layer.result = relu ? relu->getResult(0) : result;
  layer.ops = {g};
  if (relu)
    layer.ops.push_back(relu);
  // (Named after the join, as a convolution after itself, not its ReLU.)
  layer.namer = g;
}

namespace {
/// Matches the layers of a function backwards from its results: every
/// value a layer or result reads is a graph input or another layer's
/// result (reshapes of the sample in between are dropped), so the layers
/// form a DAG; they are recorded producers first.
class GraphMatcher {
public:
  GraphMatcher(func::FuncOp fn, Network &net) : fn(fn), net(net) {}

  /// `v` with the reshapes of the sample in front of it dropped.
  FailureOr<Value> strip(Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
               tensor::ReshapeOp>(def))
        break;
      // (A grouped convolution's result reshaped back to [N, M, H, W] is
      // the convolution's: matchConvLayer takes the reshape.)
      if (isa<tensor::CollapseShapeOp>(def) &&
          def->getOperand(0).getDefiningOp<linalg::Conv2DNgchwGfchwOp>())
        break;
      auto from = cast<RankedTensorType>(def->getOperand(0).getType());
      auto to = cast<RankedTensorType>(v.getType());
      bool keepsSamples =
          net.batch == 1 ||
          (from.getRank() >= 1 && to.getRank() >= 1 &&
           from.getDimSize(0) == net.batch && to.getDimSize(0) == net.batch);
      if (!from.hasStaticShape() || !to.hasStaticShape() || !keepsSamples)
        return def->emitError()
               << describeOp(def) << ": reshapes " << from << " to " << to
               << " across samples; the fabric streams the batch dimension ("
               << net.batch << " samples) and only reshapes within a sample";
      net.reshapes.push_back(def);
      v = def->getOperand(0);
    }
    return v;
  }

  /// Matches the layer producing `v` (already stripped) and, first, the
  /// layers it reads; nothing for a graph input.
  LogicalResult visit(Value v) {
    if (isa<BlockArgument>(v) || layerOf.count(v))
      return success();
    if (!visiting.insert(v).second)
      return v.getDefiningOp()->emitError() << "is on a cycle";
    Layer layer;
    if (failed(match(v, layer)))
      return failure();
    for (Value &in : layer.inputs) {
      FailureOr<Value> s = strip(in);
      if (failed(s) || failed(visit(*s)))
        return failure();
      in = *s;
    }
    layerOf[v] = int64_t(net.layers.size());
    net.layers.push_back(std::move(layer));
    return success();
  }

private:
  LogicalResult match(Value v, Layer &layer) {
    Operation *def = v.getDefiningOp();
    std::string poolWhy;
    FailureOr<conversion::PoolLayer> pool =
        conversion::matchPoolLayer(v, poolWhy);
    if (succeeded(pool)) {
      if (pool->batch != net.batch)
        return pool->namer->emitError()
               << describeOp(pool->namer) << ": its input has a batch of "
               << pool->batch << ", but the graph streams " << net.batch
               << " samples";
      layer.kind = Layer::Pool;
      layer.inputs = {pool->input};
      layer.result = v;
      layer.ops = pool->ops;
      layer.namer = pool->namer;
      layer.poolLayer = std::move(*pool);
      return success();
    }
    if (!poolWhy.empty())
      return def->emitError() << describeOp(def)
                              << ": not a pooling the fabric supports: "
                              << poolWhy;
    std::string convWhy;
    FailureOr<conversion::DenseLayer> conv =
        conversion::matchConvLayer(v, convWhy);
    if (succeeded(conv)) {
      Operation *convOp = nullptr;
      for (Operation *op : conv->ops)
        if (isa<linalg::LinalgOp>(op) && !isa<linalg::GenericOp>(op) &&
            !isa<linalg::FillOp>(op))
          convOp = op;
      if (conv->batch != net.batch)
        return convOp->emitError()
               << describeOp(convOp) << ": its input has a batch of "
               << conv->batch << ", but the graph streams " << net.batch
               << " samples";
      layer.kind = Layer::Conv;
      layer.inputs = {conv->input};
      layer.result = v;
      layer.ops = conv->ops;
      layer.namer = convOp;
      layer.denseLayer = std::move(*conv);
      return success();
    }
    if (isa_and_nonnull<linalg::Conv2DNchwFchwOp, linalg::Conv1DNcwFcwOp,
                        linalg::Conv2DNgchwGfchwOp, linalg::Conv2DNgchwFgchwOp,
                        linalg::DepthwiseConv2DNchwChwOp>(def) ||
        (isa_and_nonnull<tensor::CollapseShapeOp>(def) &&
         def->getOperand(0).getDefiningOp<linalg::Conv2DNgchwGfchwOp>()))
      return def->emitError() << describeOp(def)
                              << ": not a convolution the fabric supports: "
                              << convWhy;
    if (isa_and_nonnull<tensor::PadOp>(def))
      return def->emitError()
             << describeOp(def)
             << ": a pad of the sample is supported on the fabric only as a "
                "convolution's zero padding (or as a 0/1 matrix, when small)";
    std::string denseWhy;
    FailureOr<conversion::DenseLayer> dense =
        conversion::matchDenseLayer(v, denseWhy);
    if (succeeded(dense)) {
      for (Operation *op : dense->ops)
        if (auto g = dyn_cast<linalg::GenericOp>(op); g && !isSingleOpBody(g))
          return op->emitError()
                 << describeOp(op)
                 << ": not a dense layer the fabric supports: its elementwise "
                    "op computes more than x + bias or max(x, 0) (a Gemm "
                    "alpha or beta other than 1?)";
      Operation *matmul = nullptr;
      for (Operation *op : dense->ops)
        if (isa<linalg::MatmulOp>(op))
          matmul = op;
      if (dense->batch != net.batch)
        return matmul->emitError()
               << describeOp(matmul) << ": its input has " << dense->batch
               << " rows, but the graph streams " << net.batch
               << " samples; a dense layer takes one row per sample";
      layer.inputs = {dense->input};
      layer.result = v;
      layer.ops = dense->ops;
      layer.namer = matmul;
      layer.synthetic = matmul->hasAttr("weft.synthetic");
      layer.denseLayer = std::move(*dense);
      return success();
    }
    std::string joinWhy;
    bool swapped = false;
    // A ReLU of a join nothing else reads: the join, with the ReLU fused.
    wf::JoinKind reluOf = wf::JoinKind::add;
    if (Value joined = joinUnderRelu(v, reluOf, swapped)) {
      buildJoinLayer(joined, reluOf, swapped, net.batch, layer, def);
      return success();
    }
    int broadcast = -1;
    if (std::optional<wf::JoinKind> kind =
            matchJoin(v, swapped, joinWhy, &broadcast)) {
      buildJoinLayer(v, *kind, swapped, net.batch, layer, nullptr, broadcast);
      return success();
    }
    // An elementwise op of a matrix product that is no dense layer's
    // epilogue (a GELU after a Gemm, say) may still be a column kernel of
    // its own, with the product as the dense layer before it.
    std::string columnWhy;
    if (succeeded(matchColumnLayer(v, net.batch, layer, columnWhy)))
      return success();
    if (isDenseRooted(def))
      return def->emitError()
             << describeOp(def)
             << ": not a dense layer the fabric supports: " << denseWhy;
    return def->emitError()
           << describeOp(def)
           << ": not a layer the fabric supports: not a dense layer ("
           << denseWhy << "), nor an activation or softmax over the sample ("
           << columnWhy << "), nor an elementwise op of two streams ("
           << joinWhy << ")";
  }

  func::FuncOp fn;
  Network &net;
  llvm::DenseMap<Value, int64_t> layerOf;
  llvm::DenseSet<Value> visiting;
};
} // namespace

/// A Copy layer from graph input `arg` (an output that is an input,
/// perhaps reshaped: Identity, Dropout at inference, Flatten).
static Layer copyLayer(Value arg, int64_t batch, Operation *namer) {
  auto t = perSample(cast<RankedTensorType>(arg.getType()), batch);
  Layer copy;
  copy.kind = Layer::Column;
  copy.op = conversion::ColumnOp::Copy;
  copy.body = std::make_unique<Block>();
  copy.body->addArgument(t, arg.getLoc());
  OpBuilder b(arg.getContext());
  b.setInsertionPointToEnd(copy.body.get());
  Location loc = arg.getLoc();
  Value empty =
      tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType());
  AffineMap id = b.getMultiDimIdentityMap(unsigned(t.getRank()));
  SmallVector<utils::IteratorType> iters(size_t(t.getRank()),
                                         utils::IteratorType::parallel);
  copy.bodyResult =
      linalg::GenericOp::create(
          b, loc, TypeRange{t}, ValueRange{copy.body->getArgument(0)},
          ValueRange{empty}, ArrayRef<AffineMap>{id, id}, iters,
          [](OpBuilder &nb, Location l, ValueRange args) {
            linalg::YieldOp::create(nb, l, args[0]);
          })
          .getResult(0);
  copy.inputs = {arg};
  copy.result = arg;
  copy.namer = namer;
  return copy;
}

/// Matches the function's layers as a DAG from its inputs to its outputs
/// and returns it; emits the error otherwise.
static FailureOr<Network> matchGraph(func::FuncOp fn, bool wholeSample) {
  FunctionType type = fn.getFunctionType();
  if (type.getNumInputs() < 1 || type.getNumResults() < 1)
    return fn.emitError() << "the graph has " << type.getNumInputs()
                          << " inputs and " << type.getNumResults()
                          << " outputs; the fabric path needs at least one "
                             "of each";
  // Ops that can never be part of a layer are named first: that is the
  // most useful message for a network with convolutions, pooling...
  for (Operation &op : fn.getBody().front()) {
    // A concat the preparation could not split (docs/execution-model.md,
    // "Concat along the channels"): say where it goes.
    if (auto concat = dyn_cast<tensor::ConcatOp>(&op);
        concat && !concat->use_empty()) {
      Operation *user = *concat->user_begin();
      return op.emitError()
             << describeOp(&op) << ": a concat is mapped only along the "
             << "channels of feature maps ([N, C, ...], axis 1), read by "
                "convolutions or matrix products (directly or through "
                "poolings, depthwise convolutions, elementwise ops and "
                "flattenings); this one, along axis "
             << concat.getDim() << ", reaches "
             << (isa<func::ReturnOp>(user) ? std::string("a graph output")
                                           : describeOp(user));
    }
    if (!isFabricOp(&op))
      return op.emitError()
             << describeOp(&op) << ": '" << op.getName()
             << "' is not supported on the fabric yet; weft maps networks "
                "of dense layers (Gemm or MatMul, optional bias), "
                "elementwise activations and ops with scalar constants "
                "(Relu, Sigmoid, Tanh, Exp, Clip, LeakyRelu, ...), "
                "elementwise ops of two tensors (Add, Sub, Mul, Div, Max, "
                "Min), Softmax/LogSoftmax and reshapes of the sample";
  }

  Network net;
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    std::string name = onnxName(fn.getArgAttrDict(i), "input");
    auto t = dyn_cast<RankedTensorType>(type.getInput(i));
    if (!isStaticF32(type.getInput(i)) || t.getRank() == 0)
      return fn.emitError() << "graph input '" << name << "' has type "
                            << type.getInput(i)
                            << "; the fabric path takes static f32 tensors "
                               "whose first dimension is the batch";
    int64_t batch = t.getRank() >= 2 && !wholeSample ? t.getDimSize(0) : 1;
    if (i > 0 && batch != net.batch)
      return fn.emitError() << "graph input '" << name << "' has " << batch
                            << " samples but the first input has "
                            << net.batch
                            << "; inputs are streamed sample by sample "
                               "together (weights the model takes as inputs "
                               "are frozen with weftc --constant)";
    net.batch = batch;
  }
  for (unsigned i = 0; i < type.getNumResults(); ++i)
    if (!isStaticF32(type.getResult(i)))
      return fn.emitError() << "graph output '"
                            << onnxName(fn.getResultAttrDict(i), "output")
                            << "' has type " << type.getResult(i)
                            << "; the fabric path produces static f32 tensors";

  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  GraphMatcher matcher(fn, net);
  for (Value r : ret.getOperands()) {
    FailureOr<Value> v = matcher.strip(r);
    if (failed(v))
      return failure();
    if (isa<BlockArgument>(*v)) {
      // An output that is an input: one Copy kernel moves the sample
      // across.
      net.layers.push_back(copyLayer(*v, net.batch, ret));
      net.outputs.push_back(int64_t(net.layers.size()) - 1);
      continue;
    }
    if (failed(matcher.visit(*v)))
      return failure();
    auto it = llvm::find_if(net.layers, [&](const Layer &l) {
      return l.result == *v && l.namer != ret;
    });
    net.outputs.push_back(int64_t(it - net.layers.begin()));
  }

  // Everything that is not part of a layer (or a constant, empty or fill
  // feeding one) would be silently dropped: refuse it.
  llvm::SmallPtrSet<Operation *, 16> inLayers;
  for (Layer &l : net.layers)
    inLayers.insert(l.ops.begin(), l.ops.end());
  llvm::SmallPtrSet<Operation *, 16> used;
  SmallVector<Operation *> work(inLayers.begin(), inLayers.end());
  work.append(net.reshapes.begin(), net.reshapes.end());
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
                            << ": is not on a path from the graph's inputs "
                               "to its outputs; the fabric path would drop it";
  for (Operation *op : used)
    if (isa<linalg::MatmulOp, linalg::GenericOp>(op) && !inLayers.contains(op))
      return op->emitError() << describeOp(op)
                             << ": is used by the network but is not part "
                                "of any layer";
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    bool read = llvm::any_of(net.layers, [&](const Layer &l) {
      return llvm::is_contained(l.inputs, fn.getArgument(i));
    });
    if (!read)
      return fn.emitError() << "graph input '"
                            << onnxName(fn.getArgAttrDict(i), "input")
                            << "' is not read by any layer; the fabric "
                               "would wait for it forever";
  }
  return net;
}

/// Fuses into a convolution (or depthwise convolution) without a ReLU the
/// activation that is the only reader of its result
/// (docs/execution-model.md, "Fused activations"): the column layer
/// becomes the convolution's epilogue, an Expression program the PE that
/// sends each output row applies to it. Decided here, once: the scheme
/// carries it. Returns how many were fused.
static int64_t fuseActivations(Network &net) {
  int64_t fused = 0;
  for (size_t i = 0; i < net.layers.size(); ++i) {
    Layer &col = net.layers[i];
    if (col.kind != Layer::Column || col.inputs.size() != 1)
      continue;
    std::optional<std::vector<float>> program =
        conversion::epilogueProgram(col.op, col.params);
    if (!program || !conversion::compileEpilogue(*program).code.error.empty())
      continue;
    auto conv = llvm::find_if(net.layers, [&](const Layer &l) {
      return l.kind == Layer::Conv && l.result == col.inputs[0];
    });
    if (conv == net.layers.end() || conv->denseLayer.conv->relu ||
        conv->epilogueBody)
      continue;
    int64_t c = int64_t(conv - net.layers.begin()), readers = 0;
    for (const Layer &l : net.layers)
      readers += llvm::count(l.inputs, conv->result);
    if (readers != 1 || llvm::is_contained(net.outputs, c) ||
        col.body->getArgument(0).getType() !=
            perSample(cast<RankedTensorType>(conv->result.getType()),
                      net.batch))
      continue;
    conv->denseLayer.conv->epilogue = std::move(*program);
    conv->result = col.result;
    conv->ops.append(col.ops.begin(), col.ops.end());
    conv->epilogueBody = std::move(col.body);
    conv->epilogueResult = col.bodyResult;
    for (int64_t &o : net.outputs)
      o = o == int64_t(i) ? c : o > int64_t(i) ? o - 1 : o;
    net.layers.erase(net.layers.begin() + int64_t(i));
    --i;
    ++fused;
  }
  return fused;
}

/// matchGraph with the first dimension as the batch (dense layers take one
/// row per sample); if that fails, the whole tensor as one sample, which
/// elementwise chains whose reshapes mix the first dimension (Flatten with
/// axis 0 or 2, ...) need. The first attempt's errors are the ones
/// reported when both fail.
static FailureOr<Network> matchGraph(func::FuncOp fn) {
  MLIRContext *ctx = fn.getContext();
  SmallVector<std::pair<Location, std::string>> first;
  {
    ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &d) {
      first.push_back({d.getLocation(), d.str()});
      return success();
    });
    FailureOr<Network> net = matchGraph(fn, /*wholeSample=*/false);
    if (succeeded(net))
      return net;
  }
  auto inType = fn.getNumArguments() >= 1
                    ? dyn_cast<RankedTensorType>(fn.getArgument(0).getType())
                    : RankedTensorType();
  if (inType && inType.getRank() >= 2 && inType.getDimSize(0) > 1) {
    ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
    FailureOr<Network> net = matchGraph(fn, /*wholeSample=*/true);
    if (succeeded(net))
      return net;
  }
  for (auto &[loc, message] : first)
    emitError(loc) << message;
  return failure();
}

namespace {

/// The pixels of every node whose output is a feature-map stream: a
/// convolution's output and input; an elementwise kernel or join of one
/// (and, for a join, its other input too, back to a host input). Errors on
/// the layers that cannot take a feature map yet.
static LogicalResult
featureMaps(const Network &net, ArrayRef<wf::KernelOp> kernels,
            const llvm::DenseMap<Value, Operation *> &producer,
            llvm::DenseMap<Operation *, int64_t> &pixels) {
  auto set = [&](Operation *node, int64_t p, Operation *why) -> LogicalResult {
    int64_t &have = pixels[node];
    if (have && have != p)
      return why->emitError()
             << describeOp(why) << ": reads a feature map of " << have
             << " pixels as one of " << p;
    have = p;
    return success();
  };
  bool changed = true;
  while (changed) {
    changed = false;
    for (auto [layer, kernel] : llvm::zip(net.layers, kernels)) {
      size_t before = pixels.size();
      int64_t old = pixels.lookup(kernel);
      if (layer.kind == Layer::Conv) {
        const conversion::ConvShape &c = *layer.denseLayer.conv;
        if (failed(set(kernel, c.hout() * c.wout(), layer.namer)) ||
            failed(set(producer.lookup(layer.inputs[0]), c.hin * c.win,
                       layer.namer)))
          return failure();
      } else if (layer.kind == Layer::Pool) {
        const conversion::PoolShape &p = layer.poolLayer.shape;
        if (failed(set(kernel, p.hout() * p.wout(), layer.namer)) ||
            failed(set(producer.lookup(layer.inputs[0]), p.hin * p.win,
                       layer.namer)))
          return failure();
      } else if (layer.kind == Layer::Join ||
                 (layer.kind == Layer::Column &&
                  !conversion::columnTakesTensor(layer.op) &&
                  layer.op != conversion::ColumnOp::Softmax &&
                  layer.op != conversion::ColumnOp::LogSoftmax &&
                  !conversion::isAxisSoftmax(layer.op))) {
        // (A join's per-channel input is a map of its own, one pixel.)
        ArrayRef<Value> ins = layer.inputs;
        if (layer.joinBroadcast)
          ins = ins.take_front();
        int64_t p = 0;
        for (Value in : ins)
          p = std::max(p, pixels.lookup(producer.lookup(in)));
        if (p) {
          if (failed(set(kernel, p, layer.namer)))
            return failure();
          for (Value in : ins)
            if (failed(set(producer.lookup(in), p, layer.namer)))
              return failure();
        }
      } else if (layer.kind == Layer::Column) {
        for (Value in : layer.inputs)
          if (pixels.lookup(producer.lookup(in)))
            return layer.namer->emitError()
                   << describeOp(layer.namer)
                   << ": reads a feature map (a convolution's output), "
                      "which a softmax or an op with a constant tensor "
                      "cannot take on the fabric yet";
      }
      changed |= pixels.size() != before || pixels.lookup(kernel) != old;
    }
  }
  // A dense layer cannot send a feature map yet.
  for (auto [layer, kernel] : llvm::zip(net.layers, kernels))
    if (layer.kind == Layer::Dense && pixels.lookup(kernel))
      return layer.namer->emitError()
             << describeOp(layer.namer)
             << ": its output feeds a convolution, which takes a feature "
                "map; a dense layer sends its outputs in row-major order";
  return success();
}

struct ConvertToFabric : weft::impl::ConvertToFabricBase<ConvertToFabric> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string why;
    std::optional<machine::Target> t = machine::Target::parse(grid, &why);
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

  LogicalResult convert(func::FuncOp fn, const machine::Target &t) {
    FailureOr<Network> net = matchGraph(fn);
    if (failed(net))
      return failure();
    if (fuse)
      numFused += fuseActivations(*net);
    MLIRContext *ctx = &getContext();
    OpBuilder b(fn);
    Type f32 = b.getF32Type();
    int64_t batch = net->batch;

    auto program =
        wf::ProgramOp::create(b, fn.getLoc(), fn.getSymName(),
                              common::TargetAttr::get(ctx, t.config()),
                              /*training=*/nullptr);
    program->setAttr("weft.batch", b.getI64IntegerAttr(batch));
    Block *body = &program.getBody().emplaceBlock();
    SymbolTable symbols(program);
    b.setInsertionPointToEnd(body);

    // Host ports. Rows are the first row until partitioning chooses them.
    auto io = [&](StringRef name, common::PortDir dir, common::Edge edge,
                  RankedTensorType type, Location loc) {
      auto op = wf::IoOp::create(
          b, loc, b.getStringAttr(uniqueName(symbols, name)),
          common::PortDirAttr::get(ctx, dir), common::EdgeAttr::get(ctx, edge),
          b.getI64IntegerAttr(0), b.getI64IntegerAttr(1), TypeAttr::get(type),
          /*pixels=*/nullptr);
      symbols.insert(op);
      return op;
    };
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    FunctionType fnType = fn.getFunctionType();
    // The node producing each value a layer reads, with its elements per
    // sample: graph inputs, then the kernels.
    llvm::DenseMap<Value, Operation *> producer;
    llvm::DenseMap<Operation *, int64_t> elements;
    SmallVector<Operation *> sources;
    for (unsigned i = 0; i < fnType.getNumInputs(); ++i) {
      auto t = perSample(cast<RankedTensorType>(fnType.getInput(i)), batch);
      wf::IoOp in =
          io(onnxName(fn.getArgAttrDict(i), "input"), common::PortDir::input,
             common::Edge::west, t, fn.getLoc());
      producer[fn.getArgument(i)] = in;
      elements[in] = t.getNumElements();
      sources.push_back(in);
    }

    SmallVector<wf::IoOp> outs;
    for (unsigned i = 0; i < fnType.getNumResults(); ++i)
      outs.push_back(
          io(onnxName(fn.getResultAttrDict(i), "output"),
             common::PortDir::output, common::Edge::east,
             perSample(cast<RankedTensorType>(fnType.getResult(i)), batch),
             ret.getLoc()));

    // The kernels, producers first.
    SmallVector<wf::KernelOp> kernels;
    for (Layer &layer : net->layers) {
      SmallVector<Location> locs;
      for (Operation *op : layer.ops)
        locs.push_back(op->getLoc());
      Location kernelLoc =
          locs.empty() ? layer.namer->getLoc() : FusedLoc::get(ctx, locs);
      std::string base = nodeName(layer.namer->getLoc());
      std::string kernelName =
          uniqueName(symbols, base.empty() ? "layer" : base);
      SmallVector<Type> kin;
      RankedTensorType kout;
      if (layer.kind == Layer::Dense) {
        kin = {RankedTensorType::get({1, layer.denseLayer.K}, f32)};
        kout = RankedTensorType::get({1, layer.denseLayer.M}, f32);
      } else if (layer.kind == Layer::Conv || layer.kind == Layer::Pool) {
        kin = {perSample(cast<RankedTensorType>(layer.inputs[0].getType()),
                         batch)};
        kout = perSample(cast<RankedTensorType>(layer.result.getType()), batch);
      } else {
        kin = llvm::to_vector(layer.body->getArgumentTypes());
        kout = cast<RankedTensorType>(layer.bodyResult.getType());
      }
      // The scheme: decided here, once, from what the match found.
      ElementsAttr weights, bias;
      fabric::KernelSchemeAttrInterface scheme;
      if (layer.kind == Layer::Dense) {
        const conversion::DenseLayer &d = layer.denseLayer;
        weights = weft::makeF32(RankedTensorType::get({d.K, d.M}, f32), d.weights,
                                kernelName + "_weights");
        if (!d.bias.empty())
          bias = weft::makeF32(RankedTensorType::get({d.M}, f32), d.bias,
                               kernelName + "_bias");
        scheme = conversion::denseScheme(
            ctx, d.K, d.M, d.relu, layer.synthetic, weights, bias,
            layer.synthetic ? "" : d.weightsSource, d.weightsTransposed,
            layer.synthetic ? "" : d.biasSource);
      } else if (layer.kind == Layer::Conv) {
        const conversion::DenseLayer &d = layer.denseLayer;
        const conversion::ConvShape &c = *d.conv;
        weights = weft::makeF32(
            RankedTensorType::get({c.cout, c.groupIn(), c.kh, c.kw}, f32),
            d.weights, kernelName + "_weights");
        if (!d.bias.empty())
          bias = weft::makeF32(RankedTensorType::get({c.cout}, f32), d.bias,
                               kernelName + "_bias");
        ArrayAttr epilogue;
        if (!c.epilogue.empty()) {
          std::string why;
          FailureOr<fabric::KernelSchemeAttrInterface> e =
              conversion::columnScheme(ctx, conversion::ColumnOp::Expression,
                                       c.epilogue, kout, "", why);
          if (failed(e))
            return layer.namer->emitError()
                   << describeOp(layer.namer) << ": " << why;
          epilogue = cast<wf::ExpressionSchemeAttr>(*e).getNodes();
        }
        scheme =
            cast<fabric::KernelSchemeAttrInterface>(wf::ConvSchemeAttr::get(
                ctx, c.cin, c.cout, c.hin, c.win,
                b.getDenseI64ArrayAttr({c.kh, c.kw}),
                b.getDenseI64ArrayAttr({c.sh, c.sw}),
                b.getDenseI64ArrayAttr({c.dh, c.dw}),
                b.getDenseI64ArrayAttr({c.pt, c.pl, c.pb, c.pr}), c.groups,
                c.relu, c.reluMax ? b.getF32FloatAttr(*c.reluMax) : FloatAttr(),
                weights, bias, epilogue,
                d.weightsSource.empty() ? StringAttr()
                                        : b.getStringAttr(d.weightsSource),
                d.biasSource.empty() || d.bias.empty()
                    ? StringAttr()
                    : b.getStringAttr(d.biasSource)));
      } else if (layer.kind == Layer::Pool) {
        const conversion::PoolShape &p = layer.poolLayer.shape;
        scheme = cast<fabric::KernelSchemeAttrInterface>(wf::PoolSchemeAttr::get(
            ctx, p.max ? wf::PoolKind::max : wf::PoolKind::avg, p.c, p.hin,
            p.win, b.getDenseI64ArrayAttr({p.kh, p.kw}),
            b.getDenseI64ArrayAttr({p.sh, p.sw}),
            b.getDenseI64ArrayAttr({p.dh, p.dw}),
            b.getDenseI64ArrayAttr({p.pt, p.pl, p.pb, p.pr}), p.ceil,
            p.includePad));
      } else if (layer.kind == Layer::Join) {
        scheme = cast<fabric::KernelSchemeAttrInterface>(
            wf::JoinSchemeAttr::get(ctx, layer.join, layer.joinRelu, -1, 0, 0,
                                    layer.joinBroadcast ? 1 : -1));
      } else {
        std::string why;
        FailureOr<fabric::KernelSchemeAttrInterface> s =
            conversion::columnScheme(ctx, layer.op, layer.params, kout,
                                     kernelName + "_constant", why);
        if (failed(s))
          return layer.namer->emitError()
                 << describeOp(layer.namer) << ": " << why;
        scheme = *s;
      }
      auto kernel = wf::KernelOp::create(
          b, kernelLoc, b.getStringAttr(kernelName), scheme, /*rect=*/nullptr,
          /*smear=*/b.getI64IntegerAttr(1), /*tiles=*/b.getI64IntegerAttr(1),
          /*merge=*/b.getI64IntegerAttr(1), /*tile=*/nullptr,
          /*precision=*/nullptr,
          /*predicted_cycles=*/nullptr, /*lane_wait_cycles=*/nullptr,
          TypeAttr::get(b.getFunctionType(kin, {kout})), /*trained=*/nullptr,
          /*input_gradient=*/nullptr, /*checkpoint=*/nullptr,
          /*recompute_cycles=*/nullptr, /*lag=*/nullptr);
      symbols.insert(kernel);
      {
        OpBuilder::InsertionGuard guard(b);
        if (layer.kind == Layer::Dense) {
          Block *kb = b.createBlock(&kernel.getBody(), {}, kin, {kernelLoc});
          Value y = conversion::buildLayerBody(b, kernelLoc, kb->getArgument(0),
                                   layer.denseLayer, weights, bias);
          wf::YieldOp::create(b, kernelLoc, ValueRange{y});
        } else if (layer.kind == Layer::Conv) {
          Block *kb = b.createBlock(&kernel.getBody(), {}, kin, {kernelLoc});
          Value y = conversion::buildConvBody(b, kernelLoc, kb->getArgument(0), kout,
                                  *layer.denseLayer.conv, weights, bias);
          if (layer.epilogueBody) {
            // The fused activation's ops, on the convolution's result.
            IRMapping map;
            map.map(layer.epilogueBody->getArgument(0), y);
            for (Operation &op : *layer.epilogueBody)
              b.clone(op, map);
            y = map.lookup(layer.epilogueResult);
          }
          wf::YieldOp::create(b, kernelLoc, ValueRange{y});
        } else if (layer.kind == Layer::Pool) {
          Block *kb = b.createBlock(&kernel.getBody(), {}, kin, {kernelLoc});
          Value y = conversion::buildPoolBody(b, kernelLoc, kb->getArgument(0), kout,
                                  layer.poolLayer.shape);
          wf::YieldOp::create(b, kernelLoc, ValueRange{y});
        } else {
          Block *kb = layer.body.release();
          kernel.getBody().push_back(kb);
          b.setInsertionPointToEnd(kb);
          wf::YieldOp::create(b, kernelLoc, ValueRange{layer.bodyResult});
        }
      }
      kernels.push_back(kernel);
      elements[kernel] = kout.getNumElements();
      LDBG() << "kernel @" << kernelName << ": " << scheme.getSummary();
      ++numKernels;
    }

    // One stream per producer, to every node that reads it (a fork when
    // there are several), in the order of the nodes.
    llvm::MapVector<Operation *, SmallVector<std::pair<Operation *, int64_t>>>
        readers;
    for (Operation *src : sources)
      readers[src];
    for (auto [layer, kernel] : llvm::zip(net->layers, kernels)) {
      readers[kernel];
      // (A Copy kernel of an output that is an input: the input stays
      // the producer of what other layers read.)
      if (!isa<BlockArgument>(layer.result))
        producer[layer.result] = kernel;
    }
    for (auto [layer, kernel] : llvm::zip(net->layers, kernels))
      for (auto [port, in] : llvm::enumerate(layer.inputs))
        readers[producer.lookup(in)].push_back({kernel, int64_t(port)});
    for (auto [i, out] : llvm::enumerate(outs))
      readers[kernels[size_t(net->outputs[i])]].push_back({out, 0});
    // Feature-map streams (docs/execution-model.md, "Feature-map
    // streams"): what a convolution sends or receives, and what flows
    // through elementwise kernels and joins of them.
    llvm::DenseMap<Operation *, int64_t> pixels;
    if (failed(featureMaps(*net, kernels, producer, pixels)))
      return failure();
    for (wf::IoOp in : llvm::map_range(sources, [](Operation *op) {
           return cast<wf::IoOp>(op);
         }))
      if (int64_t p = pixels.lookup(in))
        in.setPixelsAttr(b.getI64IntegerAttr(p));
    for (auto [i, out] : llvm::enumerate(outs))
      if (int64_t p = pixels.lookup(kernels[size_t(net->outputs[i])]))
        out.setPixelsAttr(b.getI64IntegerAttr(p));
    for (auto &[src, dsts] : readers) {
      if (dsts.empty())
        continue; // (a graph input no layer reads is refused above)
      StringRef s = SymbolTable::getSymbolName(src).getValue();
      std::string name = (s + "_to_" +
                          SymbolTable::getSymbolName(dsts.front().first)
                              .getValue())
                             .str();
      if (dsts.size() > 1)
        name = (s + "_fork").str();
      SmallVector<Attribute> refs;
      SmallVector<int64_t> ports;
      for (auto [dst, port] : dsts) {
        refs.push_back(FlatSymbolRefAttr::get(SymbolTable::getSymbolName(dst)));
        ports.push_back(port);
      }
      auto op = wf::StreamOp::create(
          b, dsts.front().first->getLoc(),
          b.getStringAttr(uniqueName(symbols, name)),
          FlatSymbolRefAttr::get(ctx, s), b.getI64IntegerAttr(0),
          b.getArrayAttr(refs), b.getDenseI64ArrayAttr(ports),
          TypeAttr::get(wf::WaveletsType::get(ctx, f32, elements[src])),
          /*color=*/nullptr,
          pixels.lookup(src) ? b.getI64IntegerAttr(pixels.lookup(src))
                             : IntegerAttr(),
          /*gradient=*/nullptr, /*sparse=*/nullptr);
      symbols.insert(op);
    }
    fn.erase();
    return success();
  }
};

} // namespace
