//===- FoldElementwiseConstants.cpp - x with constants to column forms ----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// An elementwise linalg.generic of one streamed tensor x and constant
// tensors is rewritten into the forms the column kernels map
// (docs/execution-model.md, "Folding constants into elementwise ops"):
//
//   an affine body a(i) x + b(i)  ->  x * A, then + B  (A, B constants)
//   max(max(x, C1), C2) ...       ->  max(x, M)        (M = max(C1, C2, ...))
//   min(min(x, C1), C2) ...       ->  min(x, M)
//
// The body is first classified once, structurally (which values are
// constants, which are affine in x, which are a max/min chain of x), then
// evaluated per output element in double by a small interpreter. A and B
// (or M) are rounded to f32 once, at the end.
//
//===----------------------------------------------------------------------===//

#include "weft/Transforms/ConstantData.h"
#include "weft/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/DebugLog.h"

#include <cmath>

#define DEBUG_TYPE "weft-fold-elementwise-constants"

namespace weft {
#define GEN_PASS_DEF_FOLDELEMENTWISECONSTANTS
#include "weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace {

/// What a body value is, independent of the element.
enum class Kind {
  /// The same for every x (it may still differ per element).
  Const,
  /// x itself.
  X,
  /// a x + b.
  Affine,
  /// op(x, m) for the max/min op `chainOp` (m a constant per element).
  Chain,
};

/// One step of the interpreter: `result = opcode(operands)` on slots.
enum class Opcode {
  Add,
  Sub,
  Mul,
  Div,
  Neg,
  MaximumF,
  MinimumF,
  MaxNumF,
  MinNumF,
  Sqrt,
  Rsqrt,
  Exp,
  Log,
  Tanh,
  Abs
};

/// `result = opcode(operands)`, whose kind is known before evaluation.
struct Step {
  Opcode opcode;
  Kind kind;
  SmallVector<unsigned, 2> operands;
  unsigned result;
};

/// A constant input of the generic: its values (row-major in its own type)
/// and the map that reads it.
struct ConstInput {
  SmallVector<float> values;
  SmallVector<int64_t> shape;
  AffineMap map;
};

/// A generic this pass rewrites, classified.
struct Plan {
  /// The non-constant input.
  Value x;
  /// The body's slots: one per block argument of an input, one per body
  /// constant, one per computed value.
  unsigned numSlots = 0;
  /// Slot of each input's block argument; constant inputs.
  SmallVector<unsigned> inputSlot;
  SmallVector<std::optional<ConstInput>> inputs;
  /// Slots holding a scalar constant (body or enclosing arith.constant).
  SmallVector<std::pair<unsigned, double>> scalars;
  SmallVector<Step> steps;
  /// The kind of every slot.
  SmallVector<Kind> kinds;
  unsigned yielded = 0;
  Kind yieldedKind = Kind::Const;
  /// For a chain: the max/min op (kept in the rewrite).
  std::optional<Opcode> chainOp;
};

/// The values of a constant tensor `v` (an arith.constant, a reshape of
/// one, or a linalg.fill of a scalar constant), or std::nullopt, with
/// `isConstant` set when `v` is a constant whose values cannot be read (an
/// elided blob).
static std::optional<SmallVector<float>> constantValues(Value v,
                                                        bool &isConstant) {
  isConstant = false;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
    return std::nullopt;
  // Reshapes keep the row-major order: the source's values are the result's.
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    FloatAttr f;
    if (!matchPattern(fill.getInputs()[0], m_Constant(&f)))
      return std::nullopt;
    isConstant = true;
    return SmallVector<float>(type.getNumElements(),
                              float(f.getValueAsDouble()));
  }
  ElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  isConstant = true;
  std::string why;
  FailureOr<SmallVector<float>> data = weft::readF32(attr, why);
  if (failed(data) || int64_t(data->size()) != type.getNumElements()) {
    LDBG() << "constant not read: " << why;
    return std::nullopt;
  }
  return std::move(*data);
}

static std::optional<Opcode> opcodeOf(Operation &op) {
  return llvm::TypeSwitch<Operation *, std::optional<Opcode>>(&op)
      .Case([](arith::AddFOp) { return Opcode::Add; })
      .Case([](arith::SubFOp) { return Opcode::Sub; })
      .Case([](arith::MulFOp) { return Opcode::Mul; })
      .Case([](arith::DivFOp) { return Opcode::Div; })
      .Case([](arith::NegFOp) { return Opcode::Neg; })
      .Case([](arith::MaximumFOp) { return Opcode::MaximumF; })
      .Case([](arith::MinimumFOp) { return Opcode::MinimumF; })
      .Case([](arith::MaxNumFOp) { return Opcode::MaxNumF; })
      .Case([](arith::MinNumFOp) { return Opcode::MinNumF; })
      .Case([](math::SqrtOp) { return Opcode::Sqrt; })
      .Case([](math::RsqrtOp) { return Opcode::Rsqrt; })
      .Case([](math::ExpOp) { return Opcode::Exp; })
      .Case([](math::LogOp) { return Opcode::Log; })
      .Case([](math::TanhOp) { return Opcode::Tanh; })
      .Case([](math::AbsFOp) { return Opcode::Abs; })
      .Default([](Operation *) { return std::nullopt; });
}

static bool isMaxMin(Opcode o) {
  return o == Opcode::MaximumF || o == Opcode::MinimumF ||
         o == Opcode::MaxNumF || o == Opcode::MinNumF;
}

/// The kind of `opcode` applied to operands of kinds `k`, or std::nullopt
/// when the result is neither constant, affine in x nor a max/min chain.
/// `chainOp` is the chain's op (set by the first max/min of x).
static std::optional<Kind> kindOf(Opcode opcode, ArrayRef<Kind> k,
                                  std::optional<Opcode> &chainOp) {
  if (llvm::all_of(k, [](Kind x) { return x == Kind::Const; }))
    return Kind::Const;
  auto affine = [](Kind x) { return x == Kind::X || x == Kind::Affine; };
  auto cst = [](Kind x) { return x == Kind::Const; };
  switch (opcode) {
  case Opcode::Add:
  case Opcode::Sub:
    // x appears linearly in a sum of affine terms and constants.
    if ((affine(k[0]) || cst(k[0])) && (affine(k[1]) || cst(k[1])))
      return Kind::Affine;
    return std::nullopt;
  case Opcode::Mul:
    if ((affine(k[0]) && cst(k[1])) || (cst(k[0]) && affine(k[1])))
      return Kind::Affine;
    return std::nullopt;
  case Opcode::Div:
    if (affine(k[0]) && cst(k[1]))
      return Kind::Affine;
    return std::nullopt;
  case Opcode::Neg:
    return affine(k[0]) ? std::optional(Kind::Affine) : std::nullopt;
  default:
    break;
  }
  if (!isMaxMin(opcode))
    return std::nullopt;
  // max(x, C) or max(C, x), then max(chain, C): one op throughout.
  bool chainable = (k[0] == Kind::X || k[0] == Kind::Chain) && cst(k[1]);
  chainable |= cst(k[0]) && (k[1] == Kind::X || k[1] == Kind::Chain);
  if (!chainable || (chainOp && *chainOp != opcode))
    return std::nullopt;
  chainOp = opcode;
  return Kind::Chain;
}

/// Classifies `g`, or std::nullopt when it is not one this pass rewrites
/// (which is not an error: the generic is left alone).
static std::optional<Plan> classify(linalg::GenericOp g) {
  if (g.getNumDpsInits() != 1 || g->getNumResults() != 1 ||
      g.getNumReductionLoops() != 0)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(g->getResult(0).getType());
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32() ||
      !maps.back().isIdentity())
    return std::nullopt;
  Plan p;
  Block &body = g.getRegion().front();
  // The output's block argument is only a placeholder (elementwise).
  if (!body.getArguments().back().use_empty())
    return std::nullopt;
  DenseMap<Value, unsigned> slot;
  SmallVector<Kind> &kinds = p.kinds;
  auto newSlot = [&](Value v, Kind k) {
    slot[v] = p.numSlots++;
    kinds.push_back(k);
    return slot[v];
  };
  int numX = 0, numConst = 0;
  for (auto [i, in] : llvm::enumerate(g.getDpsInputs())) {
    auto inType = dyn_cast<RankedTensorType>(in.getType());
    if (!inType || !inType.getElementType().isF32())
      return std::nullopt;
    bool isConstant;
    std::optional<SmallVector<float>> values = constantValues(in, isConstant);
    if (isConstant && !values)
      return std::nullopt;
    if (!values) {
      if (!maps[i].isIdentity())
        return std::nullopt;
      ++numX;
      p.x = in;
      p.inputs.push_back(std::nullopt);
      p.inputSlot.push_back(newSlot(body.getArgument(i), Kind::X));
      continue;
    }
    // Read through dims of the same size or in-range constants (what
    // broadcasting produces), so every element read is in bounds.
    for (auto [r, e] : llvm::enumerate(maps[i].getResults())) {
      int64_t size = inType.getDimSize(r);
      auto dim = dyn_cast<AffineDimExpr>(e);
      auto cst = dyn_cast<AffineConstantExpr>(e);
      if (!(dim && type.getDimSize(dim.getPosition()) == size) &&
          !(cst && cst.getValue() >= 0 && cst.getValue() < size))
        return std::nullopt;
    }
    ++numConst;
    p.inputs.push_back(ConstInput{std::move(*values),
                                  llvm::to_vector(inType.getShape()), maps[i]});
    p.inputSlot.push_back(newSlot(body.getArgument(i), Kind::Const));
  }
  if (numX != 1 || numConst == 0)
    return std::nullopt;

  // A scalar constant, from the body or from outside the generic.
  auto scalarSlot = [&](Value v) -> std::optional<unsigned> {
    FloatAttr f;
    if (!matchPattern(v, m_Constant(&f)) || !f.getType().isF32())
      return std::nullopt;
    unsigned s = newSlot(v, Kind::Const);
    p.scalars.push_back({s, f.getValueAsDouble()});
    return s;
  };
  int xOps = 0;
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions() || op.getNumResults() != 1)
      return std::nullopt;
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      if (!scalarSlot(c.getResult()))
        return std::nullopt;
      continue;
    }
    std::optional<Opcode> opcode = opcodeOf(op);
    if (!opcode || !op.getResult(0).getType().isF32())
      return std::nullopt;
    Step step{*opcode, Kind::Const, {}, 0};
    SmallVector<Kind, 2> operandKinds;
    for (Value v : op.getOperands()) {
      auto it = slot.find(v);
      if (it == slot.end()) {
        std::optional<unsigned> s = scalarSlot(v);
        if (!s)
          return std::nullopt;
        it = slot.find(v);
      }
      step.operands.push_back(it->second);
      operandKinds.push_back(kinds[it->second]);
    }
    std::optional<Kind> kind = kindOf(*opcode, operandKinds, p.chainOp);
    if (!kind)
      return std::nullopt;
    xOps += *kind != Kind::Const;
    step.kind = *kind;
    step.result = newSlot(op.getResult(0), *kind);
    p.steps.push_back(step);
  }
  Value y = body.getTerminator()->getOperand(0);
  auto it = slot.find(y);
  if (it == slot.end())
    return std::nullopt;
  p.yielded = it->second;
  p.yieldedKind = kinds[p.yielded];
  if (p.yieldedKind == Kind::Const)
    return std::nullopt;
  // x combined with one constant input by one op is already a column
  // kernel's form (x + C, max(x, C), ...): nothing to gain.
  if (xOps == 1 && p.steps.size() == 1 && numConst == 1 && p.scalars.empty())
    return std::nullopt;
  return p;
}

/// Evaluates a constant-only step in double.
static double evalConst(Opcode o, ArrayRef<double> a) {
  switch (o) {
  case Opcode::Add:
    return a[0] + a[1];
  case Opcode::Sub:
    return a[0] - a[1];
  case Opcode::Mul:
    return a[0] * a[1];
  case Opcode::Div:
    return a[0] / a[1];
  case Opcode::Neg:
    return -a[0];
  case Opcode::MaximumF:
    return std::isnan(a[0]) || std::isnan(a[1]) ? NAN : std::fmax(a[0], a[1]);
  case Opcode::MinimumF:
    return std::isnan(a[0]) || std::isnan(a[1]) ? NAN : std::fmin(a[0], a[1]);
  case Opcode::MaxNumF:
    return std::fmax(a[0], a[1]);
  case Opcode::MinNumF:
    return std::fmin(a[0], a[1]);
  case Opcode::Sqrt:
    return std::sqrt(a[0]);
  case Opcode::Rsqrt:
    return 1 / std::sqrt(a[0]);
  case Opcode::Exp:
    return std::exp(a[0]);
  case Opcode::Log:
    return std::log(a[0]);
  case Opcode::Tanh:
    return std::tanh(a[0]);
  case Opcode::Abs:
    return std::fabs(a[0]);
  }
  llvm_unreachable("unknown opcode");
}

/// The per-element constants of the rewrite: A and B of a x + b (rounded
/// to f32 once), or M of op(x, M).
struct Coefficients {
  SmallVector<float> a, b;
};

static Coefficients evaluate(const Plan &p, RankedTensorType type) {
  ArrayRef<int64_t> shape = type.getShape();
  int64_t n = type.getNumElements();
  Coefficients c;
  bool chain = p.yieldedKind == Kind::Chain;
  c.b.resize(size_t(n));
  if (!chain)
    c.a.resize(size_t(n));
  // Slot values: a value a x + b is (a, b); a constant is (0, b); a chain
  // op(x, m) keeps m in b.
  SmallVector<double> sa(p.numSlots, 0.0), sb(p.numSlots, 0.0);
  SmallVector<int64_t> idx(shape.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    for (auto [i, in] : llvm::enumerate(p.inputs)) {
      unsigned s = p.inputSlot[i];
      if (!in) {
        sa[s] = 1;
        sb[s] = 0;
        continue;
      }
      SmallVector<int64_t, 4> at = in->map.compose(idx);
      int64_t lin = 0;
      for (auto [d, k] : llvm::enumerate(at))
        lin = lin * in->shape[d] + k;
      sa[s] = 0;
      sb[s] = in->values[size_t(lin)];
    }
    for (auto [s, v] : p.scalars) {
      sa[s] = 0;
      sb[s] = v;
    }
    for (const Step &st : p.steps) {
      unsigned r = st.result, x = st.operands[0];
      unsigned y = st.operands.size() > 1 ? st.operands[1] : x;
      if (st.kind == Kind::Const) {
        SmallVector<double, 2> args;
        for (unsigned o : st.operands)
          args.push_back(sb[o]);
        sa[r] = 0;
        sb[r] = evalConst(st.opcode, args);
        continue;
      }
      if (st.kind == Kind::Chain) {
        // op(x or the chain so far, C): x alone is the chain of the
        // identity element, so m = op(m, C) throughout.
        bool isMax =
            st.opcode == Opcode::MaximumF || st.opcode == Opcode::MaxNumF;
        SmallVector<double, 2> args;
        for (unsigned o : st.operands)
          args.push_back(p.kinds[o] == Kind::X ? (isMax ? -INFINITY : INFINITY)
                                               : sb[o]);
        sb[r] = evalConst(st.opcode, args);
        continue;
      }
      switch (st.opcode) {
      case Opcode::Add:
        sa[r] = sa[x] + sa[y];
        sb[r] = sb[x] + sb[y];
        break;
      case Opcode::Sub:
        sa[r] = sa[x] - sa[y];
        sb[r] = sb[x] - sb[y];
        break;
      case Opcode::Mul:
        // One side is a constant (a = 0).
        sa[r] = sa[x] * sb[y] + sb[x] * sa[y];
        sb[r] = sb[x] * sb[y];
        break;
      case Opcode::Div:
        sa[r] = sa[x] / sb[y];
        sb[r] = sb[x] / sb[y];
        break;
      case Opcode::Neg:
        sa[r] = -sa[x];
        sb[r] = -sb[x];
        break;
      default:
        llvm_unreachable("not an affine step");
      }
    }
    c.b[size_t(e)] = float(sb[p.yielded]);
    if (!chain)
      c.a[size_t(e)] = float(sa[p.yielded]);
    for (int64_t d = int64_t(idx.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
  return c;
}

static bool sameBits(float a, float b) {
  return llvm::bit_cast<uint32_t>(a) == llvm::bit_cast<uint32_t>(b);
}

/// `opcode`(x, c) as a one-op elementwise generic of `type`, where c holds
/// one value per element of `type`: a scalar constant in the body when
/// they are all equal, otherwise an input tensor that keeps only the
/// dimensions along which the values vary (size 1 and map result 0 for the
/// others), so a per-channel constant stays per channel and a constant
/// that does not vary with the batch dimension is not typed on the batch.
static Value buildBinary(OpBuilder &b, Location loc, Opcode opcode, Value x,
                         ArrayRef<float> c, RankedTensorType type) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = type.getRank();
  auto apply = [&](OpBuilder &nb, Location l, Value lhs, Value rhs) -> Value {
    switch (opcode) {
    case Opcode::Add:
      return arith::AddFOp::create(nb, l, lhs, rhs);
    case Opcode::Mul:
      return arith::MulFOp::create(nb, l, lhs, rhs);
    case Opcode::MaximumF:
      return arith::MaximumFOp::create(nb, l, lhs, rhs);
    case Opcode::MinimumF:
      return arith::MinimumFOp::create(nb, l, lhs, rhs);
    case Opcode::MaxNumF:
      return arith::MaxNumFOp::create(nb, l, lhs, rhs);
    case Opcode::MinNumF:
      return arith::MinNumFOp::create(nb, l, lhs, rhs);
    default:
      llvm_unreachable("not a rewrite op");
    }
  };
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  bool splat = llvm::all_of(c, [&](float v) { return sameBits(v, c[0]); });
  if (splat) {
    float v = c.empty() ? 0.0f : c[0];
    auto g = linalg::GenericOp::create(
        b, loc, TypeRange{type}, ValueRange{x}, ValueRange{init},
        ArrayRef<AffineMap>{id, id}, iters,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value k = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(v));
          linalg::YieldOp::create(nb, l, apply(nb, l, args[0], k));
        });
    return g.getResult(0);
  }
  // Dimensions along which c varies.
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  SmallVector<bool> varies(rank, false);
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t i = 0, n = int64_t(c.size()); i < n; ++i) {
    for (int64_t d = 0; d < rank; ++d)
      if (!varies[d] && idx[d] != 0 &&
          !sameBits(c[size_t(i)], c[size_t(i - idx[d] * strides[d])]))
        varies[d] = true;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
  SmallVector<int64_t> cshape;
  SmallVector<AffineExpr> results;
  for (int64_t d = 0; d < rank; ++d) {
    bool keep = varies[d] || shape[d] == 1;
    cshape.push_back(keep ? shape[d] : 1);
    results.push_back(keep ? getAffineDimExpr(d, ctx)
                           : getAffineConstantExpr(0, ctx));
  }
  auto ctype = RankedTensorType::get(cshape, type.getElementType());
  SmallVector<float> values;
  values.reserve(size_t(ctype.getNumElements()));
  SmallVector<int64_t> at(rank, 0);
  for (int64_t i = 0, n = ctype.getNumElements(); i < n; ++i) {
    int64_t lin = 0;
    for (int64_t d = 0; d < rank; ++d)
      lin += at[d] * strides[d];
    values.push_back(c[size_t(lin)]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++at[d] < cshape[d])
        break;
      at[d] = 0;
    }
  }
  Value cst = arith::ConstantOp::create(
      b, loc, ctype,
      cast<TypedAttr>(weft::makeF32(ctype, values, "elementwise_constant")));
  AffineMap cmap = AffineMap::get(rank, 0, results, ctx);
  auto g = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{x, cst}, ValueRange{init},
      ArrayRef<AffineMap>{id, cmap, id}, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, apply(nb, l, args[0], args[1]));
      });
  return g.getResult(0);
}

struct FoldElementwiseConstants
    : weft::impl::FoldElementwiseConstantsBase<FoldElementwiseConstants> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp g) { generics.push_back(g); });
    for (linalg::GenericOp g : generics) {
      std::optional<Plan> plan = classify(g);
      if (!plan)
        continue;
      auto type = cast<RankedTensorType>(g->getResult(0).getType());
      Coefficients c = evaluate(*plan, type);
      OpBuilder b(g);
      Location loc = g.getLoc();
      Value result = plan->x;
      if (plan->yieldedKind == Kind::Chain) {
        result = buildBinary(b, loc, *plan->chainOp, result, c.b, type);
        ++numChains;
      } else {
        // Infinite or NaN coefficients (a zero variance without epsilon,
        // say) would turn finite results into NaN: leave the generic.
        auto finite = [](float v) { return std::isfinite(v); };
        if (!llvm::all_of(c.a, finite) || !llvm::all_of(c.b, finite)) {
          LDBG() << "non-finite coefficients, left alone: " << g;
          continue;
        }
        if (!llvm::all_of(c.a, [](float v) { return v == 1.0f; }))
          result = buildBinary(b, loc, Opcode::Mul, result, c.a, type);
        if (!llvm::all_of(c.b, [](float v) { return v == 0.0f; }))
          result = buildBinary(b, loc, Opcode::Add, result, c.b, type);
        ++numAffine;
      }
      g->getResult(0).replaceAllUsesWith(result);
      // The constants only the generic read (each once, though the generic
      // may list one constant several times).
      llvm::SetVector<Operation *> defs;
      for (Value v : g->getOperands())
        if (Operation *d = v.getDefiningOp())
          defs.insert(d);
      g->erase();
      for (Operation *d : defs)
        if (d->use_empty() && isa<arith::ConstantOp, tensor::EmptyOp>(d))
          d->erase();
    }
  }
};

} // namespace
