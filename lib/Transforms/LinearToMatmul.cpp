//===- LinearToMatmul.cpp - Linear sample ops as dense layers -------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-linear-to-matmul: ops that are affine maps of one sample,
// y = W x + b with W and b known at compile time (sums over non-batch
// axes, transposes, pads, concats with constants, slices, broadcasts and
// copies within a sample), become the importer's dense-layer form: the
// sample collapsed to [B, K], a linalg.matmul with a constant [K, M] weight
// whose accumulator is a broadcast bias (or zeros), and the result expanded
// back to the op's shape. --weft-convert-to-fabric maps that as a dense
// layer (docs/execution-model.md, "Linear sample ops as dense layers").
//
// W is computed by index arithmetic over each op's iteration space, as a
// sparse matrix; consecutive such ops (and the reshapes, and scalings by a
// constant such as ReduceMean's division, between them) are composed into
// one matrix, so that a chain becomes one dense layer.
//
// When an op mixes batch rows (a transpose moving axis 0, a sum over it, a
// concat along it, a constant that differs per row), the whole tensor is
// one sample: every linear op of the function is then rewritten as a layer
// of one row, [1, B*K] x [B*K, B*M], which --weft-convert-to-fabric maps
// on its retry with batch 1. Per sample stays the default.
//
//===----------------------------------------------------------------------===//

#include "weft/Transforms/ConstantData.h"

#include "weft/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/DebugLog.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

#define DEBUG_TYPE "weft-linear-to-matmul"

namespace weft {
#define GEN_PASS_DEF_LINEARTOMATMUL
#include "weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace {

/// An affine map of one sample, y = W x + b, with W as a sparse M x K
/// matrix in compressed rows (row m: entries rowStart[m] ... rowStart[m+1]
/// of cols/vals, sorted by column, no column twice). Coefficients and bias
/// are kept in double while maps are composed and rounded to f32 once.
struct LinearMap {
  int64_t K = 0, M = 0;
  std::vector<int64_t> rowStart, cols;
  std::vector<double> vals, bias;
};

/// Builds a LinearMap from (m, k, c) triplets; duplicates are summed.
struct LinearMapBuilder {
  int64_t K, M;
  std::vector<std::tuple<int64_t, int64_t, double>> entries;
  std::vector<double> bias;

  LinearMapBuilder(int64_t K, int64_t M) : K(K), M(M), bias(size_t(M), 0.0) {}

  void add(int64_t m, int64_t k, double c) { entries.emplace_back(m, k, c); }

  LinearMap finish() {
    llvm::sort(entries, [](const auto &a, const auto &b) {
      return std::make_pair(std::get<0>(a), std::get<1>(a)) <
             std::make_pair(std::get<0>(b), std::get<1>(b));
    });
    LinearMap map;
    map.K = K;
    map.M = M;
    map.rowStart.assign(size_t(M + 1), 0);
    for (size_t i = 0; i < entries.size();) {
      auto [m, k, c] = entries[i];
      double sum = 0;
      for (; i < entries.size() && std::get<0>(entries[i]) == m &&
             std::get<1>(entries[i]) == k;
           ++i)
        sum += std::get<2>(entries[i]);
      map.cols.push_back(k);
      map.vals.push_back(sum);
      ++map.rowStart[size_t(m + 1)];
    }
    for (int64_t m = 0; m < M; ++m)
      map.rowStart[size_t(m + 1)] += map.rowStart[size_t(m)];
    map.bias = std::move(bias);
    return map;
  }
};

/// `second` after `first`: W = W2 W1, b = W2 b1 + b2.
static LinearMap compose(const LinearMap &first, const LinearMap &second) {
  LinearMapBuilder builder(first.K, second.M);
  for (int64_t m = 0; m < second.M; ++m) {
    double b = second.bias[size_t(m)];
    for (int64_t i = second.rowStart[size_t(m)];
         i < second.rowStart[size_t(m + 1)]; ++i) {
      int64_t j = second.cols[size_t(i)];
      double c = second.vals[size_t(i)];
      b += c * first.bias[size_t(j)];
      for (int64_t e = first.rowStart[size_t(j)];
           e < first.rowStart[size_t(j + 1)]; ++e)
        builder.add(m, first.cols[size_t(e)], c * first.vals[size_t(e)]);
    }
    builder.bias[size_t(m)] = b;
  }
  return builder.finish();
}

/// How an op takes part in a chain: a structural op is worth a dense layer
/// on its own; a reshape or a scaling by a constant only joins one.
enum class Role { Structural, Reshape, Scale };

/// One linear op: its sample input, its result and its map.
struct LinearOp {
  Operation *op = nullptr;
  Value input;
  Role role = Role::Structural;
  LinearMap map;
};

/// What one sample is. Normally the first dimension is the batch and a
/// sample is one row of it; when an op mixes batch rows (a transpose that
/// moves axis 0, a sum over it, a concat along it, a constant that differs
/// per row) the whole tensor is one sample, and --weft-convert-to-fabric
/// maps the network with batch 1 (docs/execution-model.md, "Linear sample
/// ops as dense layers").
enum class Sample { Row, Whole };

/// The first dimension of a sample: 1 past the batch, or 0 for the whole
/// tensor.
static size_t firstDim(Sample s) { return s == Sample::Whole ? 0 : 1; }

/// Whether `type` is a statically shaped f32 tensor that holds samples:
/// of rank >= 1 (the first dimension is the batch), or of any rank when
/// the whole tensor is one sample.
static bool isSampledF32(Type type, Sample s) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.hasStaticShape() && t.getRank() >= int64_t(firstDim(s)) &&
         t.getElementType().isF32();
}

/// The number of elements of one sample of `type` (all dimensions but the
/// batch), saturated at INT64_MAX (which no size guard lets through).
static int64_t sampleSize(RankedTensorType type, Sample s) {
  int64_t n = 1;
  for (int64_t d : type.getShape().drop_front(firstDim(s)))
    if (llvm::MulOverflow(n, d, n))
      return std::numeric_limits<int64_t>::max();
  return n;
}

/// Whether a K x M matrix has at most `maxEntries` entries (K * M computed
/// without overflow).
static bool fitsEntries(int64_t K, int64_t M, int64_t maxEntries) {
  int64_t n;
  return K >= 0 && M >= 0 && !llvm::MulOverflow(K, M, n) && n <= maxEntries;
}

/// Row-major strides of the sample dimensions of `shape` (dimension 0,
/// the batch, gets stride 0 when a sample is a row: every sample is indexed
/// from its own start).
static SmallVector<int64_t> sampleStrides(ArrayRef<int64_t> shape, Sample s) {
  SmallVector<int64_t> strides(shape.size(), 0);
  int64_t stride = 1;
  for (int64_t d = int64_t(shape.size()) - 1; d >= int64_t(firstDim(s)); --d) {
    strides[size_t(d)] = stride;
    stride *= shape[size_t(d)];
  }
  return strides;
}

/// Calls `fn(index)` for every index of one sample of `shape` (index[0] = 0
/// when a sample is a row), in row-major order.
static void forEachSampleIndex(ArrayRef<int64_t> shape, Sample s,
                               llvm::function_ref<void(ArrayRef<int64_t>)> fn) {
  int64_t first = int64_t(firstDim(s));
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t d : shape.drop_front(size_t(first)))
    if (d == 0)
      return;
  while (true) {
    fn(index);
    int64_t d = int64_t(shape.size()) - 1;
    for (; d >= first; --d) {
      if (++index[size_t(d)] < shape[size_t(d)])
        break;
      index[size_t(d)] = 0;
    }
    if (d < first)
      return;
  }
}

static int64_t linearize(ArrayRef<int64_t> index, ArrayRef<int64_t> strides) {
  int64_t l = 0;
  for (auto [i, s] : llvm::zip_equal(index, strides))
    l += i * s;
  return l;
}

/// The f32 value of a constant scalar, or failure.
static FailureOr<double> scalarConstant(Value v) {
  FloatAttr f;
  if (!v || !matchPattern(v, m_Constant(&f)) || !f.getType().isF32())
    return failure();
  return f.getValueAsDouble();
}

/// The per-sample values of a constant tensor typed on the batch (shape
/// [B, ...]): the first row, if every row holds the same values; all of
/// them when the whole tensor is one sample.
static FailureOr<SmallVector<float>> perSampleConstant(Value v, Sample s) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  auto attr = cst ? dyn_cast<ElementsAttr>(cst.getValue()) : ElementsAttr();
  if (!attr || !isSampledF32(attr.getType(), s))
    return failure();
  std::string why;
  FailureOr<SmallVector<float>> values = weft::readF32(attr, why);
  if (failed(values) || s == Sample::Whole)
    return values;
  int64_t n = sampleSize(cast<RankedTensorType>(attr.getType()), s);
  if (n == 0)
    return SmallVector<float>();
  for (size_t i = size_t(n); i < values->size(); ++i)
    if (llvm::bit_cast<uint32_t>((*values)[i]) !=
        llvm::bit_cast<uint32_t>((*values)[i % size_t(n)]))
      return failure();
  values->resize(size_t(n));
  return values;
}

/// What the body of a one-input linalg op computes from its input `in`
/// and its accumulator `out`.
enum class Body { Copy, Accumulate, Scale };

/// Classifies the body of `op` (a one-input, one-init linalg op); `scale`
/// receives the factor of a Scale body.
static FailureOr<Body> classifyBody(linalg::LinalgOp op, double &scale) {
  Block *body = op.getBlock();
  if (!body || body->getNumArguments() != 2)
    return failure();
  Value in = body->getArgument(0), out = body->getArgument(1);
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return failure();
  for (Operation &o : body->without_terminator())
    if (!isa<arith::ConstantOp, arith::AddFOp, arith::MulFOp, arith::DivFOp>(o))
      return failure();
  Value y = yield.getOperand(0);
  if (y == in)
    return Body::Copy;
  Operation *def = y.getDefiningOp();
  if (!def || def->getBlock() != body)
    return failure();
  // Exactly one computing op in the body.
  for (Operation &o : body->without_terminator())
    if (&o != def && !isa<arith::ConstantOp>(o))
      return failure();
  if (auto add = dyn_cast<arith::AddFOp>(def)) {
    if ((add.getLhs() == in && add.getRhs() == out) ||
        (add.getLhs() == out && add.getRhs() == in))
      return Body::Accumulate;
    return failure();
  }
  if (auto mul = dyn_cast<arith::MulFOp>(def)) {
    Value other = mul.getLhs() == in   ? mul.getRhs()
                  : mul.getRhs() == in ? mul.getLhs()
                                       : Value();
    FailureOr<double> c = scalarConstant(other);
    if (failed(c))
      return failure();
    scale = *c;
    return Body::Scale;
  }
  if (auto div = dyn_cast<arith::DivFOp>(def)) {
    FailureOr<double> c = scalarConstant(div.getRhs());
    if (div.getLhs() != in || failed(c) || *c == 0)
      return failure();
    // x / c is applied as x * (1/c) rounded to f32, as the x / c column
    // kernel does.
    scale = double(float(1.0 / *c));
    return Body::Scale;
  }
  return failure();
}

/// A linalg op with one input (the sample), one init and a copy, sum or
/// scaling body, whose indexing maps are projected permutations that keep
/// the batch dimension in place (any, when the whole tensor is one sample):
/// linalg.generic, linalg.reduce, linalg.transpose, linalg.broadcast,
/// linalg.copy.
static FailureOr<LinearOp> matchLinalg(linalg::LinalgOp op, int64_t maxEntries,
                                       Sample s) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || !op.hasPureTensorSemantics())
    return failure();
  Value x = op.getDpsInputOperand(0)->get();
  Value init = op.getDpsInitOperand(0)->get();
  if (!isSampledF32(x.getType(), s) || !isSampledF32(init.getType(), s))
    return failure();
  auto inType = cast<RankedTensorType>(x.getType());
  auto outType = cast<RankedTensorType>(init.getType());
  double scale = 1;
  FailureOr<Body> body = classifyBody(op, scale);
  if (failed(body))
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap inMap = maps[0], outMap = maps[1];
  if (!inMap.isProjectedPermutation() || !outMap.isProjectedPermutation())
    return failure();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  bool reduces = llvm::any_of(iters, [](utils::IteratorType t) {
    return t == utils::IteratorType::reduction;
  });
  // The batch: the same parallel loop is the first dimension of the input
  // and of the output, and indexes nothing else.
  auto batchDim = [](AffineMap m) {
    auto d = dyn_cast<AffineDimExpr>(m.getResult(0));
    return d ? int64_t(d.getPosition()) : int64_t(-1);
  };
  int64_t bd = -1;
  if (s == Sample::Row) {
    bd = batchDim(inMap);
    if (bd < 0 || batchDim(outMap) != bd ||
        iters[size_t(bd)] != utils::IteratorType::parallel ||
        inType.getDimSize(0) != outType.getDimSize(0))
      return failure();
    for (AffineMap m : {inMap, outMap})
      for (AffineExpr e : m.getResults().drop_front())
        if (e.isFunctionOfDim(unsigned(bd)))
          return failure();
  }
  // The output is written once per element (copy, scaling) or accumulated
  // over exactly the reduction loops, which all read the input (so the
  // iteration space has at most K * M points).
  for (auto [i, t] : llvm::enumerate(iters))
    if ((t == utils::IteratorType::parallel) !=
            outMap.isFunctionOfDim(unsigned(i)) ||
        (t == utils::IteratorType::reduction &&
         !inMap.isFunctionOfDim(unsigned(i))))
      return failure();
  if (*body != Body::Accumulate && reduces)
    return failure();
  int64_t K = sampleSize(inType, s), M = sampleSize(outType, s);
  if (K == 0 || M == 0 || !fitsEntries(K, M, maxEntries))
    return failure();

  LinearOp lin;
  lin.op = op;
  lin.input = x;
  // With identity maps a copy changes nothing (a Copy column kernel, or
  // nothing at all after --weft-drop-identity, is cheaper than a layer)
  // and a scaling is an elementwise op: both only join a chain.
  bool moves = reduces ||
               llvm::any_of(maps, [](AffineMap m) { return !m.isIdentity(); });
  lin.role = moves                  ? Role::Structural
             : *body == Body::Scale ? Role::Scale
                                    : Role::Reshape;
  LinearMapBuilder builder(K, M);
  if (*body == Body::Accumulate) {
    if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
      FailureOr<double> c = scalarConstant(fill.getDpsInputOperand(0)->get());
      if (failed(c))
        return failure();
      std::fill(builder.bias.begin(), builder.bias.end(), *c);
    } else {
      FailureOr<SmallVector<float>> values = perSampleConstant(init, s);
      if (failed(values))
        return failure();
      for (int64_t m = 0; m < M; ++m)
        builder.bias[size_t(m)] = (*values)[size_t(m)];
    }
  }
  // Walk the iteration space of one sample.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return failure();
  if (bd >= 0)
    ranges[size_t(bd)] = 1;
  SmallVector<int64_t> inStrides = sampleStrides(inType.getShape(), s);
  SmallVector<int64_t> outStrides = sampleStrides(outType.getShape(), s);
  SmallVector<int64_t> point(ranges.size(), 0);
  auto offset = [&](AffineMap m, ArrayRef<int64_t> strides) {
    int64_t l = 0;
    for (auto [r, s] : llvm::zip_equal(m.getResults(), strides))
      l += point[cast<AffineDimExpr>(r).getPosition()] * s;
    return l;
  };
  if (llvm::any_of(ranges, [](int64_t r) { return r == 0; }))
    return failure();
  while (true) {
    builder.add(offset(outMap, outStrides), offset(inMap, inStrides), scale);
    int64_t d = int64_t(ranges.size()) - 1;
    for (; d >= 0; --d) {
      if (++point[size_t(d)] < ranges[size_t(d)])
        break;
      point[size_t(d)] = 0;
    }
    if (d < 0)
      break;
  }
  lin.map = builder.finish();
  return lin;
}

/// Evaluates the index computation of a gather body (linalg.index, integer
/// constants and arith's integer add, sub, mul, div, rem, min, max, cmpi and
/// select) at the loop point `point`; fails on anything else and on a
/// result that does not fit in int64_t. `memo` holds the values computed at
/// this point, so that each op is evaluated once.
static FailureOr<int64_t> evalIndex(Value v, ArrayRef<int64_t> point,
                                    llvm::DenseMap<Value, int64_t> &memo) {
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant))) {
    if (constant.getSignificantBits() > 64)
      return failure();
    return constant.getSExtValue();
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return failure();
  SmallVector<int64_t> args;
  if (!isa<linalg::IndexOp>(def))
    for (Value operand : def->getOperands()) {
      FailureOr<int64_t> a = evalIndex(operand, point, memo);
      if (failed(a))
        return failure();
      args.push_back(*a);
    }
  std::optional<int64_t> r;
  int64_t v64;
  // INT64_MIN / -1 (and % -1) overflows.
  auto divisible = [&] {
    return args[1] != 0 &&
           !(args[0] == std::numeric_limits<int64_t>::min() && args[1] == -1);
  };
  if (auto index = dyn_cast<linalg::IndexOp>(def)) {
    if (index.getDim() < point.size())
      r = point[index.getDim()];
  } else if (isa<arith::AddIOp>(def)) {
    if (!llvm::AddOverflow(args[0], args[1], v64))
      r = v64;
  } else if (isa<arith::SubIOp>(def)) {
    if (!llvm::SubOverflow(args[0], args[1], v64))
      r = v64;
  } else if (isa<arith::MulIOp>(def)) {
    if (!llvm::MulOverflow(args[0], args[1], v64))
      r = v64;
  } else if (isa<arith::DivSIOp>(def) && divisible())
    r = args[0] / args[1];
  else if (isa<arith::RemSIOp>(def) && divisible())
    r = args[0] % args[1];
  else if (isa<arith::MinSIOp>(def))
    r = std::min(args[0], args[1]);
  else if (isa<arith::MaxSIOp>(def))
    r = std::max(args[0], args[1]);
  else if (isa<arith::SelectOp>(def))
    r = args[0] ? args[1] : args[2];
  else if (auto cmp = dyn_cast<arith::CmpIOp>(def)) {
    int64_t a = args[0], b = args[1];
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::eq:
      r = a == b;
      break;
    case arith::CmpIPredicate::ne:
      r = a != b;
      break;
    case arith::CmpIPredicate::slt:
      r = a < b;
      break;
    case arith::CmpIPredicate::sle:
      r = a <= b;
      break;
    case arith::CmpIPredicate::sgt:
      r = a > b;
      break;
    case arith::CmpIPredicate::sge:
      r = a >= b;
      break;
    default:
      break; // Unsigned comparisons: not in the importer's bodies.
    }
  }
  if (!r)
    return failure();
  // A narrower integer would have wrapped (i1, a comparison, holds 0 or 1).
  if (auto t = dyn_cast<IntegerType>(v.getType());
      t && t.getWidth() > 1 && t.getWidth() < 64 &&
      !llvm::isIntN(t.getWidth(), *r))
    return failure();
  memo[v] = *r;
  return *r;
}

/// Whether `v` depends on `linalg.index dim` (each op visited once).
static bool readsLoop(Value v, unsigned dim) {
  llvm::DenseSet<Operation *> visited;
  SmallVector<Value> work = {v};
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !visited.insert(def).second)
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(def)) {
      if (index.getDim() == dim)
        return true;
      continue;
    }
    llvm::append_range(work, def->getOperands());
  }
  return false;
}

/// A gather: a linalg.generic without inputs whose body reads one element
/// of the sample with `tensor.extract` at indices computed from the loop
/// indices (the importer's reflect and edge Pad), the batch index passed
/// through unchanged (or read like any other index when the whole tensor is
/// one sample).
static FailureOr<LinearOp> matchGather(linalg::GenericOp g, int64_t maxEntries,
                                       Sample s) {
  if (g.getNumDpsInputs() != 0 || g.getNumDpsInits() != 1 ||
      g.getNumReductionLoops() != 0 || !g.hasPureTensorSemantics())
    return failure();
  auto outType = dyn_cast<RankedTensorType>(g->getResult(0).getType());
  if (!outType || !isSampledF32(outType, s) ||
      !g.getIndexingMapsArray()[0].isIdentity())
    return failure();
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto extract = yield.getNumOperands() == 1
                     ? yield.getOperand(0).getDefiningOp<tensor::ExtractOp>()
                     : tensor::ExtractOp();
  if (!extract || extract->getBlock() != &body)
    return failure();
  for (Operation &op : body.without_terminator())
    if (&op != extract.getOperation() &&
        (op.getNumRegions() || op.getNumResults() != 1 ||
         !op.getResult(0).getType().isSignlessIntOrIndex()))
      return failure();
  Value x = extract.getTensor();
  if (!isSampledF32(x.getType(), s) || x.getParentBlock() == &body)
    return failure();
  auto inType = cast<RankedTensorType>(x.getType());
  ValueRange indices = extract.getIndices();
  if (s == Sample::Row) {
    int64_t B = outType.getDimSize(0);
    if (inType.getDimSize(0) != B)
      return failure();
    // The batch index is loop 0's, and no other index reads it.
    auto first = indices[0].getDefiningOp<linalg::IndexOp>();
    APInt zero;
    bool batchKept =
        (first && first.getDim() == 0) ||
        (B == 1 && matchPattern(indices[0], m_ConstantInt(&zero)) &&
         zero.isZero());
    if (!batchKept || llvm::any_of(indices.drop_front(),
                                   [](Value v) { return readsLoop(v, 0); }))
      return failure();
  }
  int64_t K = sampleSize(inType, s), M = sampleSize(outType, s);
  if (K == 0 || M == 0 || !fitsEntries(K, M, maxEntries))
    return failure();
  LinearOp lin;
  lin.op = g;
  lin.input = x;
  LinearMapBuilder builder(K, M);
  SmallVector<int64_t> inStrides = sampleStrides(inType.getShape(), s);
  SmallVector<int64_t> outStrides = sampleStrides(outType.getShape(), s);
  bool ok = true;
  forEachSampleIndex(outType.getShape(), s, [&](ArrayRef<int64_t> point) {
    if (!ok)
      return;
    llvm::DenseMap<Value, int64_t> memo;
    int64_t k = 0;
    for (auto [d, v] : llvm::enumerate(indices)) {
      if (d < firstDim(s))
        continue;
      FailureOr<int64_t> i = evalIndex(v, point, memo);
      if (failed(i) || *i < 0 || *i >= inType.getDimSize(d)) {
        ok = false;
        return;
      }
      k += *i * inStrides[d];
    }
    builder.add(linearize(point, outStrides), k, 1.0);
  });
  if (!ok)
    return failure();
  lin.map = builder.finish();
  return lin;
}

/// tensor.pad with static, non-negative pads, none on the batch, and a
/// constant value.
static FailureOr<LinearOp> matchPad(tensor::PadOp pad, int64_t maxEntries,
                                    Sample s) {
  Value x = pad.getSource();
  if (!isSampledF32(x.getType(), s) || !isSampledF32(pad.getResultType(), s))
    return failure();
  auto inType = cast<RankedTensorType>(x.getType());
  auto outType = pad.getResultType();
  ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
  // A negative pad crops (tensor.pad allows it): not matched, like a
  // dynamic one.
  auto negative = [](int64_t p) { return ShapedType::isDynamic(p) || p < 0; };
  if (llvm::any_of(low, negative) || llvm::any_of(high, negative) ||
      (s == Sample::Row && (low[0] != 0 || high[0] != 0)))
    return failure();
  FailureOr<double> value = scalarConstant(pad.getConstantPaddingValue());
  if (failed(value))
    return failure();
  int64_t K = sampleSize(inType, s), M = sampleSize(outType, s);
  if (M == 0 || !fitsEntries(K, M, maxEntries))
    return failure();
  LinearOp lin;
  lin.op = pad;
  lin.input = x;
  LinearMapBuilder builder(K, M);
  std::fill(builder.bias.begin(), builder.bias.end(), *value);
  SmallVector<int64_t> inStrides = sampleStrides(inType.getShape(), s);
  SmallVector<int64_t> outStrides = sampleStrides(outType.getShape(), s);
  forEachSampleIndex(inType.getShape(), s, [&](ArrayRef<int64_t> i) {
    int64_t m = 0;
    for (size_t d = firstDim(s); d < i.size(); ++d)
      m += (i[d] + low[d]) * outStrides[d];
    builder.add(m, linearize(i, inStrides), 1.0);
    builder.bias[size_t(m)] = 0;
  });
  lin.map = builder.finish();
  return lin;
}

/// tensor.concat along a non-batch dimension of the sample (perhaps more
/// than once) and constants the same for every sample (along any
/// dimension, and any constants, when the whole tensor is one sample).
static FailureOr<LinearOp> matchConcat(tensor::ConcatOp concat,
                                       int64_t maxEntries, Sample s) {
  auto outType = concat.getResultType();
  int64_t dim = int64_t(concat.getDim());
  if (!isSampledF32(outType, s) || dim < int64_t(firstDim(s)))
    return failure();
  Value x;
  for (Value v : concat.getInputs()) {
    if (v.getDefiningOp<arith::ConstantOp>())
      continue;
    if (x && v != x)
      return failure();
    x = v;
  }
  if (!x || !isSampledF32(x.getType(), s))
    return failure();
  auto inType = cast<RankedTensorType>(x.getType());
  int64_t K = sampleSize(inType, s), M = sampleSize(outType, s);
  if (K == 0 || !fitsEntries(K, M, maxEntries))
    return failure();
  LinearOp lin;
  lin.op = concat;
  lin.input = x;
  LinearMapBuilder builder(K, M);
  SmallVector<int64_t> outStrides = sampleStrides(outType.getShape(), s);
  int64_t at = 0;
  for (Value v : concat.getInputs()) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> strides = sampleStrides(type.getShape(), s);
    auto outIndex = [&](ArrayRef<int64_t> i) {
      int64_t m = 0;
      for (size_t d = firstDim(s); d < i.size(); ++d)
        m += (i[d] + (int64_t(d) == dim ? at : 0)) * outStrides[d];
      return m;
    };
    if (v == x) {
      forEachSampleIndex(type.getShape(), s, [&](ArrayRef<int64_t> i) {
        builder.add(outIndex(i), linearize(i, strides), 1.0);
      });
    } else {
      FailureOr<SmallVector<float>> values = perSampleConstant(v, s);
      if (failed(values))
        return failure();
      forEachSampleIndex(type.getShape(), s, [&](ArrayRef<int64_t> i) {
        builder.bias[size_t(outIndex(i))] =
            (*values)[size_t(linearize(i, strides))];
      });
    }
    at += type.getDimSize(dim);
  }
  lin.map = builder.finish();
  return lin;
}

/// tensor.extract_slice with static offsets, sizes and strides that takes
/// every sample whole along the batch (rank-reducing allowed; any slice when
/// the whole tensor is one sample).
static FailureOr<LinearOp> matchSlice(tensor::ExtractSliceOp slice,
                                      int64_t maxEntries, Sample s) {
  Value x = slice.getSource();
  if (!isSampledF32(x.getType(), s) || !isSampledF32(slice.getResultType(), s))
    return failure();
  auto inType = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> offsets = slice.getStaticOffsets(),
                    sizes = slice.getStaticSizes(),
                    strides = slice.getStaticStrides();
  auto dynamic = [](ArrayRef<int64_t> a) {
    return llvm::any_of(a, ShapedType::isDynamic);
  };
  if (dynamic(offsets) || dynamic(sizes) || dynamic(strides))
    return failure();
  if (s == Sample::Row &&
      (offsets[0] != 0 || sizes[0] != inType.getDimSize(0) || strides[0] != 1 ||
       slice.getResultType().getDimSize(0) != sizes[0]))
    return failure();
  int64_t K = sampleSize(inType, s);
  int64_t M = sampleSize(slice.getResultType(), s);
  if (K == 0 || M == 0 || !fitsEntries(K, M, maxEntries))
    return failure();
  LinearOp lin;
  lin.op = slice;
  lin.input = x;
  LinearMapBuilder builder(K, M);
  SmallVector<int64_t> inStrides = sampleStrides(inType.getShape(), s);
  SmallVector<int64_t> outStrides = sampleStrides(sizes, s);
  forEachSampleIndex(sizes, s, [&](ArrayRef<int64_t> i) {
    int64_t k = 0;
    for (size_t d = firstDim(s); d < i.size(); ++d)
      k += (offsets[d] + i[d] * strides[d]) * inStrides[d];
    builder.add(linearize(i, outStrides), k, 1.0);
  });
  lin.map = builder.finish();
  return lin;
}

/// A reshape that keeps the batch first (any reshape when the whole tensor
/// is one sample): the identity on the sample's row-major elements.
static FailureOr<LinearOp> matchReshape(Operation *op, int64_t maxEntries,
                                        Sample s) {
  if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ReshapeOp>(
          op))
    return failure();
  Value x = op->getOperand(0);
  Type resultType = op->getResult(0).getType();
  if (!isSampledF32(x.getType(), s) || !isSampledF32(resultType, s))
    return failure();
  auto from = cast<RankedTensorType>(x.getType());
  auto to = cast<RankedTensorType>(resultType);
  int64_t n = sampleSize(from, s);
  if ((s == Sample::Row && from.getDimSize(0) != to.getDimSize(0)) ||
      n != sampleSize(to, s) || n == 0 || !fitsEntries(1, n, maxEntries))
    return failure();
  LinearOp lin;
  lin.op = op;
  lin.input = x;
  lin.role = Role::Reshape;
  LinearMapBuilder builder(n, n);
  for (int64_t i = 0; i < n; ++i)
    builder.add(i, i, 1.0);
  lin.map = builder.finish();
  return lin;
}

/// The linear map of `op` if it is an affine map of one sample `s` (a row
/// of the batch, the first dimension, or the whole tensor), of at most
/// `maxEntries` matrix entries.
static FailureOr<LinearOp> matchLinear(Operation *op, int64_t maxEntries,
                                       Sample s) {
  FailureOr<LinearOp> lin = failure();
  if (auto g = dyn_cast<linalg::GenericOp>(op); g && !g.getNumDpsInputs())
    lin = matchGather(g, maxEntries, s);
  else if (auto l = dyn_cast<linalg::LinalgOp>(op))
    lin = matchLinalg(l, maxEntries, s);
  else if (auto pad = dyn_cast<tensor::PadOp>(op))
    lin = matchPad(pad, maxEntries, s);
  else if (auto concat = dyn_cast<tensor::ConcatOp>(op))
    lin = matchConcat(concat, maxEntries, s);
  else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    lin = matchSlice(slice, maxEntries, s);
  else
    lin = matchReshape(op, maxEntries, s);
  if (failed(lin))
    return failure();
  // A constant input is for --weft-fold-constants, not a layer.
  if (lin->input.getDefiningOp<arith::ConstantOp>())
    return failure();
  // The batch of the input and of the result agree.
  auto in = cast<RankedTensorType>(lin->input.getType());
  auto out = cast<RankedTensorType>(op->getResult(0).getType());
  if (s == Sample::Row && in.getDimSize(0) != out.getDimSize(0))
    return failure();
  return lin;
}

/// The value a one-input linalg.generic `g` yields when it is `op(in)` of
/// its input `in`, with `Op` the only computing op of the body; else null.
template <typename Op> static Op unaryBody(linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1 ||
      !llvm::hasSingleElement(body.without_terminator()))
    return Op();
  auto op = yield.getOperand(0).getDefiningOp<Op>();
  if (!op || op->getBlock() != &body)
    return Op();
  return op;
}

/// Whether the body of `r` (a linalg op with one input and one init)
/// yields max(in, acc) (either operand order, maximumf or maxnumf).
static bool isMaxBody(linalg::LinalgOp r) {
  Block *body = r.getBlock();
  if (!body || body->getNumArguments() != 2 ||
      !llvm::hasSingleElement(body->without_terminator()))
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  Operation *max = yield && yield.getNumOperands() == 1
                       ? yield.getOperand(0).getDefiningOp()
                       : nullptr;
  if (!max || max->getBlock() != body ||
      !isa<arith::MaximumFOp, arith::MaxNumFOp>(max))
    return false;
  Value in = body->getArgument(0), acc = body->getArgument(1);
  return (max->getOperand(0) == in && max->getOperand(1) == acc) ||
         (max->getOperand(0) == acc && max->getOperand(1) == in);
}

/// Whether `lin` is the sum of Softmax or LogSoftmax in the importer's form:
/// a sum reduction of exp(x - m), with m = max(x) over the same axes
/// (perhaps reshaped or broadcast back to x's shape). The column kernels
/// map those whole, so the sum stays as it is.
static bool isSoftmaxSum(const LinearOp &lin) {
  // A sum: a reduction (matchLinalg then required an accumulating body).
  auto sum = dyn_cast<linalg::LinalgOp>(lin.op);
  if (!sum || sum.getNumReductionLoops() == 0)
    return false;
  // Of exp(d).
  auto exp = lin.input.getDefiningOp<linalg::GenericOp>();
  if (!exp || exp.getNumDpsInputs() != 1 || !unaryBody<math::ExpOp>(exp) ||
      unaryBody<math::ExpOp>(exp).getOperand() !=
          exp.getRegion().front().getArgument(0))
    return false;
  // d = x - m.
  auto shift =
      exp.getDpsInputOperand(0)->get().getDefiningOp<linalg::GenericOp>();
  if (!shift || shift.getNumDpsInputs() != 2 || shift.getNumDpsInits() != 1)
    return false;
  Block &shiftBody = shift.getRegion().front();
  auto yield = dyn_cast<linalg::YieldOp>(shiftBody.getTerminator());
  auto sub = yield && yield.getNumOperands() == 1
                 ? yield.getOperand(0).getDefiningOp<arith::SubFOp>()
                 : arith::SubFOp();
  if (!sub || sub->getBlock() != &shiftBody ||
      !llvm::hasSingleElement(shiftBody.without_terminator()) ||
      sub.getLhs() != shiftBody.getArgument(0) ||
      sub.getRhs() != shiftBody.getArgument(1))
    return false;
  Value x = shift.getDpsInputOperand(0)->get();
  // m = max(x), through reshapes and broadcasts.
  Value m = shift.getDpsInputOperand(1)->get();
  while (Operation *def = m.getDefiningOp()) {
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ReshapeOp>(
            def))
      m = def->getOperand(0);
    else if (auto b = dyn_cast<linalg::BroadcastOp>(def))
      m = b.getInput();
    else
      break;
  }
  auto max = m.getDefiningOp<linalg::LinalgOp>();
  if (!max || max.getNumDpsInputs() != 1 || max.getNumDpsInits() != 1 ||
      max.getDpsInputOperand(0)->get() != x || !isMaxBody(max))
    return false;
  // Over the same axes.
  return max.getIteratorTypesArray() == sum.getIteratorTypesArray() &&
         max.getIndexingMapsArray() == sum.getIndexingMapsArray();
}

/// `v` ([B, ...]) reshaped to [B, n] (n = the sample's size), or back.
static Value reshapeTo(OpBuilder &b, Location loc, Value v,
                       RankedTensorType to) {
  auto from = cast<RankedTensorType>(v.getType());
  if (from == to)
    return v;
  // One of the two is [B, n]; the other is [B] or [B, d1, ..., dr].
  bool collapse = from.getRank() > to.getRank();
  RankedTensorType big = collapse ? from : to;
  SmallVector<ReassociationIndices> groups;
  if (big.getRank() == 2) {
    // [B] <-> [B, 1].
    groups.push_back({0, 1});
  } else {
    groups.push_back({0});
    ReassociationIndices rest;
    for (int64_t d = 1; d < big.getRank(); ++d)
      rest.push_back(d);
    groups.push_back(rest);
  }
  if (collapse)
    return tensor::CollapseShapeOp::create(b, loc, to, v, groups);
  return tensor::ExpandShapeOp::create(b, loc, to, v, groups);
}

/// `v` collapsed to the dense layer's [rows, n]: [B, n] when a sample is a
/// row, [1, n] (n = all elements) for the whole tensor.
static Value toMatrix(OpBuilder &b, Location loc, Value v, Sample s) {
  auto from = cast<RankedTensorType>(v.getType());
  Type f32 = from.getElementType();
  if (s == Sample::Row || (from.getRank() >= 1 && from.getDimSize(0) == 1))
    return reshapeTo(
        b, loc, v,
        RankedTensorType::get({from.getRank() ? from.getDimSize(0) : 1,
                               sampleSize(from, Sample::Row)},
                              f32));
  int64_t n = from.getNumElements();
  auto matrix = RankedTensorType::get({1, n}, f32);
  if (from.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, matrix, v,
                                         ArrayRef<ReassociationIndices>{});
  // [B, d1, ...] -> [n] -> [1, n].
  if (from.getRank() > 1) {
    ReassociationIndices all;
    for (int64_t d = 0; d < from.getRank(); ++d)
      all.push_back(d);
    v = tensor::CollapseShapeOp::create(b, loc, RankedTensorType::get({n}, f32),
                                        v, ArrayRef<ReassociationIndices>{all});
  }
  return tensor::ExpandShapeOp::create(b, loc, matrix, v,
                                       ArrayRef<ReassociationIndices>{{0, 1}});
}

/// The dense layer's [rows, n] result `v` reshaped to `to`; the inverse of
/// toMatrix.
static Value fromMatrix(OpBuilder &b, Location loc, Value v,
                        RankedTensorType to, Sample s) {
  if (s == Sample::Row || (to.getRank() >= 1 && to.getDimSize(0) == 1))
    return reshapeTo(b, loc, v, to);
  Type f32 = to.getElementType();
  int64_t n = to.getNumElements();
  if (to.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, to, v,
                                           ArrayRef<ReassociationIndices>{});
  // [1, n] -> [n] -> [B, d1, ...].
  v = tensor::CollapseShapeOp::create(b, loc, RankedTensorType::get({n}, f32),
                                      v,
                                      ArrayRef<ReassociationIndices>{{0, 1}});
  if (to.getRank() == 1)
    return v;
  ReassociationIndices all;
  for (int64_t d = 0; d < to.getRank(); ++d)
    all.push_back(d);
  return tensor::ExpandShapeOp::create(b, loc, to, v,
                                       ArrayRef<ReassociationIndices>{all});
}

/// Cuts `chain` into runs whose composed matrix has at most `maxEntries`
/// entries, drops reshapes at their ends, and appends to `chains` the runs
/// with a structural op.
static void splitChain(ArrayRef<LinearOp> ops, ArrayRef<size_t> chain,
                       int64_t maxEntries,
                       SmallVector<SmallVector<size_t>> &chains) {
  auto keep = [&](SmallVector<size_t> run) {
    while (!run.empty() && ops[run.front()].role == Role::Reshape)
      run.erase(run.begin());
    while (!run.empty() && ops[run.back()].role == Role::Reshape)
      run.pop_back();
    if (llvm::any_of(run,
                     [&](size_t i) { return ops[i].role == Role::Structural; }))
      chains.push_back(std::move(run));
  };
  SmallVector<size_t> run;
  for (size_t i : chain) {
    if (!run.empty() &&
        !fitsEntries(ops[run.front()].map.K, ops[i].map.M, maxEntries)) {
      keep(std::move(run));
      run.clear();
    }
    run.push_back(i);
  }
  keep(std::move(run));
}

/// The linear ops of a block on samples `s`, in order, and the chains of
/// them that become dense layers (indices into `ops`).
struct Chains {
  SmallVector<LinearOp> ops;
  SmallVector<SmallVector<size_t>> chains;
};

/// Whether `v` is a feature map: a graph input, or what a convolution or
/// pooling produces, perhaps through elementwise ops (a residual Add's
/// operands included: one of them must be a feature map).
static bool isFeatureMap(Value v) {
  SmallVector<Value> work = {v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value u = work.pop_back_val();
    if (!seen.insert(u).second)
      continue;
    if (isa<BlockArgument>(u))
      return true;
    Operation *def = u.getDefiningOp();
    if (def && isa<linalg::ConvolutionOpInterface>(def))
      return true;
    // A grouped convolution's result reshaped back to [N, M, H, W].
    if (auto c = dyn_cast_or_null<tensor::CollapseShapeOp>(def);
        c && c.getSrc().getDefiningOp<linalg::ConvolutionOpInterface>())
      return true;
    auto g = dyn_cast_or_null<linalg::GenericOp>(def);
    if (!g || g.getNumReductionLoops() != 0 ||
        !llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      continue;
    llvm::append_range(work, g.getDpsInputs());
  }
  return false;
}

/// Whether `op` is GlobalAveragePool's sum in the importer's form (an addf
/// reduction of every spatial dimension of a [N, C, spatial...] feature
/// map, reshaped, then divided by a constant): the fabric pools it
/// (docs/execution-model.md, "Pooling") rather than multiplying by a 0/1
/// matrix.
static bool isGlobalPoolSum(Operation &op) {
  auto g = dyn_cast<linalg::GenericOp>(op);
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1)
    return false;
  auto in = dyn_cast<RankedTensorType>(g.getDpsInputs()[0].getType());
  if (!in || (in.getRank() != 3 && in.getRank() != 4))
    return false;
  for (auto [i, t] : llvm::enumerate(g.getIteratorTypesArray()))
    if ((t == utils::IteratorType::reduction) != (i >= 2))
      return false;
  Block &body = g.getRegion().front();
  if (!isa_and_nonnull<arith::AddFOp>(
          body.getTerminator()->getOperand(0).getDefiningOp()))
    return false;
  Value r = g->getResult(0);
  while (r.hasOneUse() &&
         isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
             *r.getUsers().begin()))
    r = r.getUsers().begin()->getResult(0);
  if (!r.hasOneUse())
    return false;
  auto div = dyn_cast<linalg::GenericOp>(*r.getUsers().begin());
  if (!div || div.getNumDpsInputs() != 1)
    return false;
  Block &db = div.getRegion().front();
  auto d = db.getTerminator()->getOperand(0).getDefiningOp<arith::DivFOp>();
  return d && d.getLhs() == db.getArgument(0) &&
         d.getRhs().getDefiningOp<arith::ConstantOp>() &&
         isFeatureMap(g.getDpsInputs()[0]);
}

/// Matches the linear ops of `block` on samples `s` and groups them into
/// chains: each op followed by the only user of its result, trimmed of
/// ops whose input other ops read too, cut to `maxEntries` and kept when
/// a structural op remains.
static Chains buildChains(Block &block, Sample s, int64_t maxEntries) {
  Chains result;
  SmallVector<LinearOp> &ops = result.ops;
  llvm::DenseMap<Value, size_t> producer;
  for (Operation &op : block) {
    if (op.getNumResults() != 1)
      continue;
    // A convolution's zero pad is the convolution's own (the fabric reads
    // the window around it), not a layer; so is a grouped convolution's,
    // which it reads reshaped to [N, G, C/G, H, W].
    auto isConv = [](Operation *u) {
      return isa<linalg::ConvolutionOpInterface>(u);
    };
    if (isa<tensor::PadOp>(op) &&
        llvm::any_of(op.getUsers(), [&](Operation *u) {
          return isConv(u) || (isa<tensor::ExpandShapeOp>(u) &&
                               llvm::any_of(u->getUsers(), isConv));
        }))
      continue;
    if (isGlobalPoolSum(op))
      continue;
    FailureOr<LinearOp> lin = matchLinear(&op, maxEntries, s);
    if (failed(lin) || isSoftmaxSum(*lin))
      continue;
    producer[op.getResult(0)] = ops.size();
    ops.push_back(std::move(*lin));
  }
  llvm::DenseSet<size_t> inChain;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (inChain.contains(i))
      continue;
    // A head: its input is not the single-use result of a linear op.
    auto it = producer.find(ops[i].input);
    if (it != producer.end() && ops[i].input.hasOneUse())
      continue;
    SmallVector<size_t> chain = {i};
    inChain.insert(i);
    while (true) {
      Value r = ops[chain.back()].op->getResult(0);
      if (!r.hasOneUse())
        break;
      // The op of this block that reads r (a gather reads it in its body).
      Operation *user = block.findAncestorOpInBlock(**r.getUsers().begin());
      if (!user || user->getNumResults() != 1)
        break;
      auto next = producer.find(user->getResult(0));
      if (next == producer.end() || ops[next->second].input != r)
        break;
      chain.push_back(next->second);
      inChain.insert(next->second);
    }
    // The fabric maps chains: a sample that other ops read too (the
    // exponentials of a Softmax) is not a layer's input.
    while (
        !chain.empty() &&
        !llvm::all_of(ops[chain.front()].input.getUsers(), [&](Operation *u) {
          // A gather reads it inside its body.
          return ops[chain.front()].op->isAncestor(u);
        }))
      chain.erase(chain.begin());
    splitChain(ops, chain, maxEntries, result.chains);
  }
  return result;
}

/// Whether the ops of `fn` need the whole tensor as one sample: some op
/// of a chain that becomes a layer on the whole tensor is structural and
/// mixes batch rows (it is an affine map of the whole tensor but not of
/// each row). Ops that chain trimming drops (their input is read by other
/// ops too) or the size guard leaves alone do not count. Then every linear
/// op of the function is rewritten on the whole tensor, since
/// --weft-convert-to-fabric maps a network with one batch: per-row layers
/// next to a whole-tensor one would map neither way.
static bool needsWholeTensor(func::FuncOp fn, int64_t maxEntries) {
  for (Block &block : fn.getBody()) {
    Chains whole = buildChains(block, Sample::Whole, maxEntries);
    for (ArrayRef<size_t> chain : whole.chains)
      for (size_t i : chain) {
        const LinearOp &lin = whole.ops[i];
        if (lin.role != Role::Structural ||
            succeeded(matchLinear(lin.op, maxEntries, Sample::Row)))
          continue;
        LDBG() << "the whole tensor is one sample: " << lin.op->getName()
               << " mixes batch rows";
        return true;
      }
  }
  return false;
}

struct LinearToMatmul : weft::impl::LinearToMatmulBase<LinearToMatmul> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    Sample s = needsWholeTensor(fn, maxEntries) ? Sample::Whole : Sample::Row;
    for (Block &block : fn.getBody()) {
      // Matched after the earlier blocks' rewrites, whose results this
      // block may read.
      Chains c = buildChains(block, s, maxEntries);
      // Last chain first: a chain's input may be the result of an earlier
      // chain, which that chain's rewrite then replaces.
      for (ArrayRef<size_t> chain : llvm::reverse(c.chains))
        rewrite(c.ops, chain, s);
    }
  }

  /// Replaces the ops of `chain` by one dense layer on samples `s`.
  void rewrite(MutableArrayRef<LinearOp> ops, ArrayRef<size_t> chain,
               Sample s) {
    LinearMap map = ops[chain.front()].map;
    for (size_t i : chain.drop_front())
      map = compose(map, ops[i].map);
    Value x = ops[chain.front()].input;
    Operation *last = ops[chain.back()].op;
    Value y = last->getResult(0);
    SmallVector<Location> locs;
    for (size_t i : llvm::reverse(chain))
      locs.push_back(ops[i].op->getLoc());
    Location loc = FusedLoc::get(&getContext(), locs);

    auto outType = cast<RankedTensorType>(y.getType());
    int64_t K = map.K, M = map.M;
    OpBuilder b(last);
    Type f32 = b.getF32Type();
    std::vector<float> weights(size_t(K * M), 0.0f);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t e = map.rowStart[size_t(m)]; e < map.rowStart[size_t(m + 1)];
           ++e)
        weights[size_t(map.cols[size_t(e)] * M + m)] =
            float(map.vals[size_t(e)]);
    SmallVector<float> bias;
    for (double v : map.bias)
      bias.push_back(float(v));

    Value x2 = toMatrix(b, loc, x, s);
    // The rows of the layer: the batch, or 1 for the whole tensor.
    int64_t rows = cast<RankedTensorType>(x2.getType()).getDimSize(0);
    auto yType = RankedTensorType::get({rows, M}, f32);
    Value w = arith::ConstantOp::create(
        b, loc,
        weft::makeF32(RankedTensorType::get({K, M}, f32), weights,
                      "linear_weights"));
    Value acc = tensor::EmptyOp::create(b, loc, yType.getShape(), f32);
    bool zeroBias = llvm::all_of(
        bias, [](float v) { return llvm::bit_cast<uint32_t>(v) == 0; });
    if (zeroBias) {
      Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
      acc = linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{acc})
                .getResult(0);
    } else {
      Value bv = arith::ConstantOp::create(
          b, loc,
          weft::makeF32(RankedTensorType::get({M}, f32), bias, "linear_bias"));
      acc = linalg::BroadcastOp::create(b, loc, bv, acc, ArrayRef<int64_t>{0})
                .getResult()[0];
    }
    auto matmul = linalg::MatmulOp::create(b, loc, TypeRange{yType},
                                           ValueRange{x2, w}, ValueRange{acc});
    // The matrix is weft's, not the model's: its MACs are executed, but are
    // none of the model's (KernelSchemeAttrInterface::getModelMacs).
    matmul->setAttr("weft.synthetic", b.getUnitAttr());
    Value product = matmul.getResult(0);
    Value result = fromMatrix(b, loc, product, outType, s);
    y.replaceAllUsesWith(result);
    LDBG() << "rewrote " << chain.size() << " ops " << K << " -> " << M
           << " into a dense layer"
           << (s == Sample::Whole ? " on the whole tensor" : "");

    // Erase the chain, last op first, and what only it used (its empty
    // and fill inits).
    SmallVector<Operation *> dead;
    for (size_t i : llvm::reverse(chain))
      dead.push_back(ops[i].op);
    for (size_t n = 0; n < dead.size(); ++n) {
      Operation *op = dead[n];
      SmallVector<Value> operands(op->getOperands());
      // The constants a body uses (a pad value, the divisor of a mean).
      llvm::SetVector<Value> above;
      getUsedValuesDefinedAbove(op->getRegions(), above);
      operands.append(above.begin(), above.end());
      op->erase();
      for (Value v : operands)
        if (Operation *def = v.getDefiningOp();
            def && def->use_empty() && !llvm::is_contained(dead, def) &&
            isa<tensor::EmptyOp, linalg::FillOp, arith::ConstantOp>(def))
          dead.push_back(def);
    }
    numRewritten += chain.size();
    ++numLayers;
  }
};

} // namespace
