//===- MatchDenseLayer.cpp - Dense layers in the imported linalg IR -------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/DenseLayer.h"

#include "weft/Transforms/ConstantData.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

using namespace mlir;

namespace weft::conversion {

//===----------------------------------------------------------------------===//
// Matching
//===----------------------------------------------------------------------===//

/// The f32 values of a constant-producing value, or failure.
static FailureOr<SmallVector<float>> constantValues(Value v,
                                                    std::string &why) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  if (!cst) {
    why = "its weight or bias is not a constant";
    return failure();
  }
  auto attr = dyn_cast<ElementsAttr>(cst.getValue());
  if (!attr) {
    why = "its constant is not a tensor";
    return failure();
  }
  return readF32(attr, why);
}

/// Whether `g`'s body is exactly `yield Op(arg0, x)` (or `Op(x, arg0)`),
/// nothing else computed; returns x. For a two-input generic, x must be the
/// second block argument.
template <typename Op>
static Value binaryBody(linalg::GenericOp g) {
  Block &b = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(b.getTerminator());
  if (yield.getNumOperands() != 1)
    return {};
  auto op = yield.getOperand(0).getDefiningOp<Op>();
  if (!op || op->getBlock() != &b)
    return {};
  // Only the op itself (and constants it uses) may be in the body: a scaled
  // product (Gemm alpha/beta) is not a plain bias add.
  for (Operation &o : b.without_terminator())
    if (&o != op.getOperation() && !isa<arith::ConstantOp>(o))
      return {};
  Value arg0 = b.getArgument(0);
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Value other = lhs == arg0 ? rhs : rhs == arg0 ? lhs : Value();
  if (!other)
    return {};
  if (g.getNumDpsInputs() == 2 && other != b.getArgument(1))
    return {};
  return other;
}

static bool allParallel(linalg::GenericOp g) {
  return llvm::all_of(g.getIteratorTypesArray(), [](utils::IteratorType t) {
    return t == utils::IteratorType::parallel;
  });
}

static bool isZeroF32(Value v) {
  FloatAttr f;
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    f = dyn_cast<FloatAttr>(c.getValue());
  return f && f.getValue().isZero() && !f.getValue().isNegative();
}

/// The ONNX initializer a constant is: the importer names each
/// initializer's constant with a NameLoc; a constant that canonicalization
/// merged or folded from others has another location and no source.
std::string initializerName(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  if (!cst)
    return "";
  // One name, perhaps fused from the ops a folded constant came from.
  std::string found;
  bool ambiguous = false;
  cst.getLoc()->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l)) {
      std::string n = name.getName().str();
      ambiguous |= !found.empty() && found != n;
      found = n;
      return WalkResult::skip(); // not the node's name inside it
    }
    return WalkResult::advance();
  });
  return ambiguous ? "" : found;
}

/// Reads a bias of M values from a constant of shape [M], [1, M] or [N, M]
/// (all rows equal).
static LogicalResult readBias(Value v, int64_t M, std::vector<float> &bias,
                              std::string &why) {
  auto values = constantValues(v, why);
  if (failed(values))
    return failure();
  auto type = cast<RankedTensorType>(v.getType());
  int64_t n = int64_t(values->size());
  if (type.getRank() == 0 || type.getShape().back() != M || n % M) {
    why = "its bias does not have one value per neuron";
    return failure();
  }
  for (int64_t r = 1; r < n / M; ++r)
    for (int64_t m = 0; m < M; ++m)
      if ((*values)[r * M + m] != (*values)[m]) {
        why = "its bias differs between batch rows";
        return failure();
      }
  std::vector<float> b(values->begin(), values->begin() + M);
  if (bias.empty()) {
    bias = std::move(b);
  } else {
    for (int64_t m = 0; m < M; ++m)
      bias[m] += b[m];
  }
  return success();
}

FailureOr<DenseLayer> matchDenseLayer(Value result, std::string &why) {
  DenseLayer layer;
  layer.result = result;
  Value v = result;
  SmallVector<Operation *> ops;
  // Optional ReLU: maximumf(x, 0).
  if (auto g = v.getDefiningOp<linalg::GenericOp>()) {
    if (g.getNumDpsInputs() == 1 && allParallel(g)) {
      Value other = binaryBody<arith::MaximumFOp>(g);
      if (other && isZeroF32(other)) {
        layer.relu = true;
        ops.push_back(g);
        v = g.getDpsInputOperand(0)->get();
      }
    }
  }
  // Optional bias add: addf(x, bias) with a constant bias operand.
  Value biasValue;
  if (auto g = v.getDefiningOp<linalg::GenericOp>()) {
    if (g.getNumDpsInputs() == 2 && allParallel(g) &&
        binaryBody<arith::AddFOp>(g)) {
      Value a = g.getDpsInputOperand(0)->get(),
            b = g.getDpsInputOperand(1)->get();
      if (b.getDefiningOp<arith::ConstantOp>()) {
        biasValue = b;
        ops.push_back(g);
        v = a;
      } else if (a.getDefiningOp<arith::ConstantOp>()) {
        biasValue = a;
        ops.push_back(g);
        v = b;
      }
    }
  }
  auto mm = v.getDefiningOp<linalg::MatmulOp>();
  // A product scaled by Gemm's alpha (or a bias scaled by beta): an
  // elementwise multiply of the matmul's result.
  auto scalesProduct = [](linalg::GenericOp g) {
    return g &&
           llvm::any_of(g.getDpsInputs(),
                        [](Value in) {
                          return in.getDefiningOp<linalg::MatmulOp>() !=
                                 nullptr;
                        }) &&
           !g.getRegion().front().getOps<arith::MulFOp>().empty();
  };
  if (!mm && scalesProduct(v.getDefiningOp<linalg::GenericOp>())) {
    why = "its elementwise op computes more than x + bias or max(x, 0) (a "
          "Gemm alpha or beta other than 1?)";
    return failure();
  }
  if (!mm) {
    why = "it is not a matrix product (linalg.matmul) with optional bias "
          "and ReLU";
    return failure();
  }
  ops.push_back(mm);
  Value x = mm.getDpsInputOperand(0)->get();
  Value w = mm.getDpsInputOperand(1)->get();
  auto xt = cast<RankedTensorType>(x.getType());
  auto wtype = cast<RankedTensorType>(w.getType());
  if (xt.getRank() != 2 || wtype.getRank() != 2 ||
      !xt.getElementType().isF32()) {
    why = "only 2-D fp32 matrix products are supported";
    return failure();
  }
  SmallVector<AffineMap> maps = mm.getIndexingMapsArray();
  MLIRContext *ctx = mm.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
             d2 = getAffineDimExpr(2, ctx);
  auto map = [&](AffineExpr a, AffineExpr b) {
    return AffineMap::get(3, 0, {a, b}, ctx);
  };
  if (maps[0] != map(d0, d2) || maps[2] != map(d0, d1)) {
    why = "its matrix product transposes the input";
    return failure();
  }
  bool transposed;
  if (maps[1] == map(d2, d1))
    transposed = false;
  else if (maps[1] == map(d1, d2))
    transposed = true;
  else {
    why = "its weight indexing is neither W nor W^T";
    return failure();
  }
  layer.batch = xt.getDimSize(0);
  layer.K = xt.getDimSize(1);
  layer.M = transposed ? wtype.getDimSize(0) : wtype.getDimSize(1);
  auto wv = constantValues(w, why);
  if (failed(wv))
    return failure();
  layer.weightsSource = initializerName(w);
  layer.weightsTransposed = transposed;
  layer.weights.resize(size_t(layer.K * layer.M));
  for (int64_t k = 0; k < layer.K; ++k)
    for (int64_t m = 0; m < layer.M; ++m)
      layer.weights[k * layer.M + m] =
          transposed ? (*wv)[m * layer.K + k] : (*wv)[k * layer.M + m];
  // The accumulator: zeros, or a broadcast constant bias.
  Value acc = mm.getDpsInitOperand(0)->get();
  if (auto fill = acc.getDefiningOp<linalg::FillOp>()) {
    if (!isZeroF32(fill.getDpsInputOperand(0)->get())) {
      why = "its accumulator starts from a non-zero value";
      return failure();
    }
    ops.push_back(fill);
  } else if (auto bc = acc.getDefiningOp<linalg::BroadcastOp>()) {
    if (failed(readBias(bc.getInput(), layer.M, layer.bias, why)))
      return failure();
    layer.biasSource = initializerName(bc.getInput());
    ops.push_back(bc);
  } else if (acc.getDefiningOp<arith::ConstantOp>()) {
    if (failed(readBias(acc, layer.M, layer.bias, why)))
      return failure();
    layer.biasSource = initializerName(acc);
  } else {
    why = "its accumulator is neither zeros nor a constant bias";
    return failure();
  }
  if (biasValue) {
    bool had = !layer.bias.empty();
    if (failed(readBias(biasValue, layer.M, layer.bias, why)))
      return failure();
    // A bias in the accumulator and another added after: their sum is no
    // one initializer.
    layer.biasSource = had ? "" : initializerName(biasValue);
  }
  layer.input = x;
  std::reverse(ops.begin(), ops.end());
  layer.ops = ops;
  return layer;
}

} // namespace weft::conversion
