//===- DenseLayer.cpp - Dense layers: matching and the cost model ---------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/DenseLayer.h"

#include "../Transforms/ConstantData.h"

#include "weft/Target/ISA.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

using namespace mlir;
namespace wt = weft::target;

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
    ops.push_back(bc);
  } else if (acc.getDefiningOp<arith::ConstantOp>()) {
    if (failed(readBias(acc, layer.M, layer.bias, why)))
      return failure();
  } else {
    why = "its accumulator is neither zeros nor a constant bias";
    return failure();
  }
  if (biasValue && failed(readBias(biasValue, layer.M, layer.bias, why)))
    return failure();
  layer.input = x;
  std::reverse(ops.begin(), ops.end());
  layer.ops = ops;
  return layer;
}

//===----------------------------------------------------------------------===//
// Chunks, cost model, memory, choice
//===----------------------------------------------------------------------===//

int64_t chunkBegin(int64_t n, int64_t parts, int64_t i) {
  int64_t l = (n + parts - 1) / parts;
  return std::min(n, i * l);
}

int64_t chunkSize(int64_t n, int64_t parts, int64_t i) {
  return chunkBegin(n, parts, i + 1) - chunkBegin(n, parts, i);
}

/// Cycles of one vector instruction of n elements, from the cost table.
static int64_t vec(wt::Opcode op, int64_t n) {
  return int64_t(wt::instructionCycles(op, uint64_t(n), true));
}

int64_t predictCyclesPerSample(int64_t K, int64_t M, const DenseMapping &m,
                               bool bias) {
  int64_t lm = chunkSize(M, m.rows, 0);
  // Per input element, a data task (docs/execution-model.md): the pick,
  // (the fp16 conversion of x,) the multiply-accumulate over the PE's
  // neurons, and the weight-index increment that ends the task.
  int64_t perElement =
      m.precision == Precision::Mixed
          ? 1 + 1 + vec(wt::Opcode::FMACHS, lm) + 1
          : 1 + vec(wt::Opcode::FMAC, lm) + 1;
  // Per sample, the closeout's control task: pick, the entry's jump, the
  // index reset, then Lm-long vector instructions: forward (or add and
  // forward) and clear on the first and middle columns; partial-sum add,
  // bias add, activation to the output and clear on the last.
  int64_t vecLm = vec(wt::Opcode::FADD, lm);
  int64_t last = m.smear - 1;
  int64_t lastOps = (m.smear > 1) + bias + 2;
  // (+1: the launch of the output send on a microthread.)
  int64_t lkLast = chunkSize(K, m.smear, last);
  int64_t tLast = lkLast * perElement + 3 + lastOps * vecLm + 1;
  int64_t tMid =
      m.smear > 1 ? chunkSize(K, m.smear, 0) * perElement + 3 + 2 * vecLm : 0;
  // The send itself needs Lm datapath cycles, which its microthread only
  // gets while the main thread leaves the datapath free: two cycles per
  // input element (the pick and the multiply-accumulate's startup) plus the
  // last column's idle time when other columns set the pace; what is
  // missing stretches the last column's period.
  int64_t idle = std::max<int64_t>(0, tMid - tLast);
  int64_t deficit = std::max<int64_t>(0, lm - 2 * lkLast - idle);
  // Every column's PE that turns the input chunk into the column also picks
  // the two tasks that send the closeout and restart the copy (4 cycles).
  return std::max(tMid, tLast + deficit) + 4;
}

/// Word addresses of the PE memory map (docs/execution-model.md).
constexpr int64_t kDescriptorBase = 1024; // DSD records
constexpr int64_t kDataBase = 1152;       // accumulator, bias, weights

int64_t memoryPerPE(int64_t K, int64_t M, const DenseMapping &m) {
  int64_t lk = chunkSize(K, m.smear, 0), lm = chunkSize(M, m.rows, 0);
  int64_t wordsPerWeight = m.precision == Precision::Mixed ? 1 : 2;
  // Accumulator, bias, weights, and the last column's two output buffers.
  return 2 * (kDataBase + 2 * lm + 2 * lm + lk * lm * wordsPerWeight +
              2 * 2 * lm);
}

FailureOr<DenseMapping> chooseDenseMapping(int64_t K, int64_t M, Precision p,
                                           const wt::Target &target,
                                           std::string &why) {
  std::optional<DenseMapping> best;
  int64_t bestT = 0;
  // Input chunk c turns into column c at row c, so the layer's footprint is
  // max(smear, rows) rows high.
  int64_t maxS = std::min<int64_t>({K, target.width(), target.height()});
  int64_t maxR = std::min<int64_t>(M, target.height());
  for (int64_t s = 1; s <= maxS; ++s) {
    if (chunkSize(K, s, s - 1) == 0)
      continue; // the last column would get no input
    for (int64_t r = 1; r <= maxR; ++r) {
      if (chunkSize(M, r, r - 1) == 0)
        continue; // the last row would get no neuron
      DenseMapping m;
      m.smear = s;
      m.rows = r;
      m.precision = p;
      if (memoryPerPE(K, M, m) > int64_t(target.memoryBytes()))
        continue;
      int64_t t = predictCyclesPerSample(K, M, m);
      if (!best || t < bestT ||
          (t == bestT && s * r < best->smear * best->rows)) {
        best = m;
        bestT = t;
      }
    }
  }
  if (best)
    return *best;
  // Say what would be needed: the PEs the weights need at the best density.
  int64_t bytesPerWeight = p == Precision::Mixed ? 2 : 4;
  int64_t usable = int64_t(target.memoryBytes()) - 2 * kDataBase;
  int64_t perPE = std::max<int64_t>(1, usable / bytesPerWeight);
  int64_t pes = (K * M + perPE - 1) / perPE;
  why = "a dense layer of " + std::to_string(K) + " inputs and " +
        std::to_string(M) + " neurons needs " +
        std::to_string(K * M * bytesPerWeight) +
        " bytes of weights: at least " + std::to_string(pes) + " PEs of " +
        std::to_string(target.memoryBytes()) +
        " bytes, but the " +
        std::to_string(target.width()) + "x" +
        std::to_string(target.height()) + " fabric has no such rectangle";
  return failure();
}

} // namespace weft::conversion
