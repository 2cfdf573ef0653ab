//===- ColumnKernels.cpp - Per-row layers on one column of PEs ------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Elementwise activations and Softmax/LogSoftmax on one column of PEs
// (docs/execution-model.md, "Column kernels"): the matcher for the
// importer's linalg forms, the per-PE programs and the cost model.
//
// Every PE runs one task that never ends: it loads its DSRs once and then
// loops over samples (a `jump` back costs one cycle; re-activating a task
// would cost an activate and a pick). The main thread only ever waits for
// wavelets that other PEs (or the host) send, and only ever sends wavelets
// that other PEs consume, so no send can wait on its own CE.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/DenseLayer.h"

#include "fabric/FabricOps.h"
#include "wavelet/WaveletOps.h"

#include "weft/Target/ISA.h"
#include "weft/Target/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
namespace wt = weft::target;
namespace fab = weft::fabric;
namespace wv = weft::wavelet;

namespace weft::conversion {

const char *columnOpName(ColumnOp op) {
  switch (op) {
  case ColumnOp::Relu:
    return "Relu";
  case ColumnOp::Sigmoid:
    return "Sigmoid";
  case ColumnOp::Tanh:
    return "Tanh";
  case ColumnOp::Softmax:
    return "Softmax";
  case ColumnOp::LogSoftmax:
    return "LogSoftmax";
  }
  return "?";
}

static bool isSoftmax(ColumnOp op) {
  return op == ColumnOp::Softmax || op == ColumnOp::LogSoftmax;
}

int64_t internalColors(ColumnOp op) { return isSoftmax(op) ? 3 : 0; }

//===----------------------------------------------------------------------===//
// Matching
//===----------------------------------------------------------------------===//

namespace {

/// What the body of a linalg.generic yields, seen from its block arguments.
struct Body {
  Block *block = nullptr;
  Value yielded;
  bool isArg(Value v, unsigned i) const {
    return i < block->getNumArguments() && v == block->getArgument(i);
  }
  /// `v` is produced by an op named `name` inside the body.
  Operation *def(Value v, StringRef name) const {
    Operation *op = v.getDefiningOp();
    if (!op || op->getBlock() != block || op->getName().getStringRef() != name)
      return nullptr;
    return op;
  }
};

} // namespace

static Body bodyOf(linalg::GenericOp g) {
  Body b;
  b.block = &g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(b.block->getTerminator());
  if (yield.getNumOperands() == 1)
    b.yielded = yield.getOperand(0);
  return b;
}

static bool isFloatConst(Value v, double value) {
  FloatAttr f;
  if (!matchPattern(v, m_Constant(&f)))
    return false;
  return f.getValueAsDouble() == value;
}

/// Looks through the reshapes the importer puts around keep-dims reductions.
static Value throughReshapes(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
      v = op->getOperand(0);
    else
      break;
  }
  return v;
}

/// Ops of the body other than constants and the terminator.
static int64_t computeOps(const Body &b) {
  int64_t n = 0;
  for (Operation &o : b.block->without_terminator())
    if (!isa<arith::ConstantOp>(o))
      ++n;
  return n;
}

static bool allParallel(linalg::GenericOp g) {
  return llvm::all_of(g.getIteratorTypesArray(), [](utils::IteratorType t) {
    return t == utils::IteratorType::parallel;
  });
}

/// A one-input, one-output elementwise generic with identity maps.
static bool isUnaryElementwise(linalg::GenericOp g) {
  return g.getNumDpsInputs() == 1 && g.getNumDpsInits() == 1 &&
         g->getNumResults() == 1 && allParallel(g) &&
         llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); });
}

/// `yield op(arg0)` for a unary op named `name`, nothing else computed.
static bool unaryOfArg(const Body &b, StringRef name) {
  Operation *op = b.yielded ? b.def(b.yielded, name) : nullptr;
  return op && op->getNumOperands() == 1 && b.isArg(op->getOperand(0), 0) &&
         computeOps(b) == 1;
}

/// `op(x, y)` or `op(y, x)` with one side `isX`; returns the other side.
template <typename Pred> static Value commuted(Operation *op, Pred isX) {
  if (!op || op->getNumOperands() != 2)
    return {};
  if (isX(op->getOperand(0)))
    return op->getOperand(1);
  if (isX(op->getOperand(1)))
    return op->getOperand(0);
  return {};
}

/// A keep-dims reduction of `kind` ("arith.maximumf" or "arith.addf") over
/// some dimensions of a single input whose other dimensions are all 1, with
/// the accumulator filled with `init`. Returns the reduced input.
static Value wholeReduction(Value v, StringRef kind, double init,
                            std::string &what) {
  auto g = throughReshapes(v).getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1) {
    what = "is not a linalg.generic reduction";
    return {};
  }
  Body b = bodyOf(g);
  Operation *op = b.yielded ? b.def(b.yielded, kind) : nullptr;
  bool argsOk =
      op && computeOps(b) == 1 &&
      ((b.isArg(op->getOperand(0), 0) && b.isArg(op->getOperand(1), 1)) ||
       (b.isArg(op->getOperand(0), 1) && b.isArg(op->getOperand(1), 0)));
  if (!argsOk) {
    what = ("is not a reduction with " + kind).str();
    return {};
  }
  auto fill = g.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !isFloatConst(fill.getInputs()[0], init)) {
    what = "does not start its reduction from " +
           std::string(init < 0 ? "-inf" : "0");
    return {};
  }
  Value in = g.getDpsInputs()[0];
  auto type = dyn_cast<RankedTensorType>(in.getType());
  if (!type || !type.hasStaticShape()) {
    what = "reduces a tensor without a static shape";
    return {};
  }
  SmallVector<utils::IteratorType> its = g.getIteratorTypesArray();
  AffineMap inMap = g.getIndexingMapsArray()[0];
  if (!inMap.isIdentity() || int64_t(its.size()) != type.getRank()) {
    what = "does not read its input with an identity map";
    return {};
  }
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (its[d] == utils::IteratorType::parallel && type.getDimSize(d) != 1) {
      what = "keeps dimension " + std::to_string(d) + " of size " +
             std::to_string(type.getDimSize(d)) +
             ", so it is not one softmax over the whole sample";
      return {};
    }
  return in;
}

/// A two-input elementwise generic `f(a, b)` with a identity-mapped;
/// returns the body and both inputs.
static bool broadcastBinary(linalg::GenericOp g, Body &body, Value &a,
                            Value &b) {
  if (!g || g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1 ||
      !allParallel(g))
    return false;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!maps[0].isIdentity() || !maps[2].isIdentity())
    return false;
  // The reduction that feeds b decides whether it is one value per sample.
  auto bt = dyn_cast<RankedTensorType>(g.getDpsInputs()[1].getType());
  if (!bt || !bt.hasStaticShape())
    return false;
  body = bodyOf(g);
  a = g.getDpsInputs()[0];
  b = g.getDpsInputs()[1];
  return bool(body.yielded);
}

FailureOr<ColumnOp> matchColumnKernel(Value result, Value &input,
                                      std::string &why) {
  auto g = result.getDefiningOp<linalg::GenericOp>();
  if (!g) {
    why = "it is not computed by a linalg.generic";
    return failure();
  }
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32()) {
    why = "its result is not a statically shaped f32 tensor";
    return failure();
  }
  Body body = bodyOf(g);
  if (isUnaryElementwise(g) && body.yielded) {
    Value x = g.getDpsInputs()[0];
    // Relu: maximumf(x, 0) (the importer's form), either order.
    for (StringRef max : {"arith.maximumf", "arith.maxnumf"}) {
      Operation *op = body.def(body.yielded, max);
      if (op && computeOps(body) == 1 &&
          commuted(op, [&](Value v) { return body.isArg(v, 0); }) &&
          isFloatConst(commuted(op, [&](Value v) { return body.isArg(v, 0); }),
                       0.0)) {
        input = x;
        return ColumnOp::Relu;
      }
    }
    if (unaryOfArg(body, "math.tanh")) {
      input = x;
      return ColumnOp::Tanh;
    }
    // Sigmoid: 1 / (1 + exp(-x)), the sum in either order.
    if (Operation *div = body.def(body.yielded, "arith.divf")) {
      Operation *add = body.def(div->getOperand(1), "arith.addf");
      Value e = commuted(add, [](Value v) { return isFloatConst(v, 1.0); });
      Operation *exp = e ? body.def(e, "math.exp") : nullptr;
      Operation *neg =
          exp ? body.def(exp->getOperand(0), "arith.negf") : nullptr;
      if (isFloatConst(div->getOperand(0), 1.0) && neg &&
          body.isArg(neg->getOperand(0), 0) && computeOps(body) == 4) {
        input = x;
        return ColumnOp::Sigmoid;
      }
    }
    why = "its elementwise body is not Relu (maximumf with 0), Sigmoid "
          "(1 / (1 + exp(-x))) or Tanh (math.tanh)";
    return failure();
  }

  // Softmax: e / sum(e); LogSoftmax: d - log(sum(e)); with
  // d = x - max(x), e = exp(d).
  Body last;
  Value a, s;
  if (!broadcastBinary(g, last, a, s)) {
    why = "it is neither a one-input elementwise linalg.generic nor the "
          "last step of a softmax (a two-input elementwise generic)";
    return failure();
  }
  ColumnOp op;
  Operation *div = last.def(last.yielded, "arith.divf");
  Operation *sub = last.def(last.yielded, "arith.subf");
  if (div && last.isArg(div->getOperand(0), 0) &&
      last.isArg(div->getOperand(1), 1) && computeOps(last) == 1) {
    op = ColumnOp::Softmax;
  } else if (Operation *log =
                 sub ? last.def(sub->getOperand(1), "math.log") : nullptr;
             log && last.isArg(sub->getOperand(0), 0) &&
             last.isArg(log->getOperand(0), 1) && computeOps(last) == 2) {
    op = ColumnOp::LogSoftmax;
  } else {
    why = "its two-input body is neither a / b (Softmax) nor "
          "a - log(b) (LogSoftmax)";
    return failure();
  }
  std::string what;
  Value e = wholeReduction(s, "arith.addf", 0.0, what);
  if (!e) {
    why = "the normalizer of its " + std::string(columnOpName(op)) + " " + what;
    return failure();
  }
  auto expG = e.getDefiningOp<linalg::GenericOp>();
  if (!expG || !isUnaryElementwise(expG) ||
      !unaryOfArg(bodyOf(expG), "math.exp")) {
    why = "its sum does not add up math.exp of the shifted input";
    return failure();
  }
  Value d = expG.getDpsInputs()[0];
  if ((op == ColumnOp::Softmax && a != e) ||
      (op == ColumnOp::LogSoftmax && a != d)) {
    why = std::string("the ") + columnOpName(op) +
          " does not normalise the values it summed";
    return failure();
  }
  Body shift;
  Value x, m;
  auto subG = d.getDefiningOp<linalg::GenericOp>();
  Operation *subOp;
  if (!broadcastBinary(subG, shift, x, m) ||
      !(subOp = shift.def(shift.yielded, "arith.subf")) ||
      !shift.isArg(subOp->getOperand(0), 0) ||
      !shift.isArg(subOp->getOperand(1), 1) || computeOps(shift) != 1) {
    why = "its exponent is not x - max(x) with the maximum broadcast";
    return failure();
  }
  Value reduced = wholeReduction(m, "arith.maximumf", -INFINITY, what);
  if (!reduced) {
    why = "the maximum of its " + std::string(columnOpName(op)) + " " + what;
    return failure();
  }
  if (reduced != x) {
    why = "it subtracts the maximum of another tensor";
    return failure();
  }
  auto xt = cast<RankedTensorType>(x.getType());
  if (!xt.getElementType().isF32() || xt != type) {
    why = "its input is not an f32 tensor of the result's shape";
    return failure();
  }
  input = x;
  return op;
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

namespace {

// PE memory map, in words: task table 0..639, code from slot 320, DSD
// records from word 1024, data from 1152 (as the dense layer).
constexpr int64_t kDsdBase = 1024;
constexpr int64_t kDataBase = 1152;
constexpr int64_t kMainTask = 32;

// GPR pairs: the running maximum and the running sum.
constexpr int32_t kGprMax = 6, kGprSum = 8;

// DSD records (index i is at kDsdBase + 4 i).
enum Rec : int64_t {
  kRecIn = 0, // fabin L on inColor
  kRecOut,    // fabout L on outColor
  kRecBuf,    // mem1d L at buf
  kRecBuf2,   // mem1d L at buf2 (LogSoftmax: the exponentials; Tanh: ones)
  kRecRedIn,  // fabin 1: the partial max/sum from the row below
  kRecRedOut, // fabout 1: this row's partial max/sum to the row above
  kRecBcIn,   // fabin 1: the global max/sum from row 0
  kRecBcOut,  // fabout 1: row 0's broadcast
};

using DirSet = uint8_t;
constexpr DirSet bit(wt::Dir d) { return DirSet(1u << unsigned(d)); }

/// What distinguishes the program of one PE of the column.
struct Role {
  int64_t len = 0;    // chunk length
  bool first = false; // row 0 of a multi-row softmax
  bool last = false;  // last row of a multi-row softmax
  int64_t parity = 0; // row parity (softmax reduction colors)
  bool operator==(const Role &o) const {
    return len == o.len && first == o.first && last == o.last &&
           parity == o.parity;
  }
};

class Emitter {
public:
  Emitter(OpBuilder &b, Location loc, const ColumnKernel &k, StringRef name,
          StringRef layer)
      : b(b), loc(loc), k(k), name(name), layer(layer) {}

  Role roleOf(int64_t r) const;
  void emitGroup(int64_t r0, int64_t r1, const Role &role);

private:
  void route(int64_t color, DirSet in, DirSet out);
  void dsd(StringRef sym, Rec index, wv::DsdKind kind,
           ArrayRef<NamedAttribute> fields);
  void dsrLoad(wv::RegFile f, int64_t reg, StringRef rec);
  void inst(StringRef opcode, ArrayRef<int32_t> args, bool term = false);
  void label(StringRef l);
  void jump(StringRef l);
  NamedAttribute i64(StringRef n, int64_t v) {
    return b.getNamedAttr(n, b.getI64IntegerAttr(v));
  }

  OpBuilder &b;
  Location loc;
  const ColumnKernel &k;
  StringRef name, layer;
};

Role Emitter::roleOf(int64_t r) const {
  Role role;
  role.len = chunkSize(k.layout.n, k.layout.rows, r);
  if (isSoftmax(k.op) && k.layout.rows > 1) {
    role.first = r == 0;
    role.last = r == k.layout.rows - 1;
    role.parity = r % 2;
  }
  return role;
}

void Emitter::route(int64_t color, DirSet in, DirSet out) {
  OperationState st(loc, wv::RouteOp::getOperationName());
  st.addAttribute("color", b.getI64IntegerAttr(color));
  st.addAttribute("inputs", b.getI32IntegerAttr(in));
  st.addAttribute("outputs", b.getI32IntegerAttr(out));
  b.create(st);
}

void Emitter::dsd(StringRef sym, Rec index, wv::DsdKind kind,
                  ArrayRef<NamedAttribute> fields) {
  OperationState st(loc, wv::DsdOp::getOperationName());
  st.addAttribute(SymbolTable::getSymbolAttrName(), b.getStringAttr(sym));
  st.addAttribute("address", b.getI64IntegerAttr(kDsdBase + 4 * index));
  st.addAttribute("kind", wv::DsdKindAttr::get(b.getContext(), kind));
  st.addAttributes(fields);
  b.create(st);
}

void Emitter::dsrLoad(wv::RegFile f, int64_t reg, StringRef rec) {
  OperationState st(loc, wv::DsrOp::getOperationName());
  st.addAttribute("file", wv::RegFileAttr::get(b.getContext(), f));
  st.addAttribute("reg", b.getI64IntegerAttr(reg));
  st.addAttribute("record", FlatSymbolRefAttr::get(b.getContext(), rec));
  b.create(st);
}

void Emitter::inst(StringRef opcode, ArrayRef<int32_t> args, bool term) {
  OperationState st(loc, wv::InstOp::getOperationName());
  st.addAttribute("opcode", b.getStringAttr(opcode));
  st.addAttribute("args", b.getDenseI32ArrayAttr(args));
  if (term)
    st.addAttribute("term", b.getUnitAttr());
  b.create(st);
}

void Emitter::label(StringRef l) {
  OperationState st(loc, wv::LabelOp::getOperationName());
  st.addAttribute("name", b.getStringAttr(l));
  b.create(st);
}

void Emitter::jump(StringRef l) {
  OperationState st(loc, wv::JumpOp::getOperationName());
  st.addAttribute("label", b.getStringAttr(l));
  b.create(st);
}

void Emitter::emitGroup(int64_t r0, int64_t r1, const Role &role) {
  MLIRContext *ctx = b.getContext();
  int64_t h = r1 - r0, L = role.len;
  int64_t y = k.layout.y0 + r0;
  bool reduce = isSoftmax(k.op) && k.layout.rows > 1;

  std::string sym =
      (name + "_r" + Twine(r0) + (h > 1 ? "_" + Twine(r1 - 1) : Twine())).str();
  OperationState st(loc, h > 1 ? wv::PeGroupOp::getOperationName()
                               : wv::PeOp::getOperationName());
  st.addAttribute(SymbolTable::getSymbolAttrName(), b.getStringAttr(sym));
  if (h > 1) {
    st.addAttribute("rect", fab::RectAttr::get(ctx, k.x, y, 1, h));
  } else {
    st.addAttribute("x", b.getI64IntegerAttr(k.x));
    st.addAttribute("y", b.getI64IntegerAttr(y));
  }
  st.addAttribute("layer", b.getStringAttr(layer));
  st.addRegion()->emplaceBlock();
  Operation *pe = b.create(st);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&pe->getRegion(0).front());

  // Routes: the chunk in from the west, the result out to the east; for a
  // column softmax the partial results go north on the sender's parity
  // color and row 0's totals are multicast south on the third color.
  using wt::Dir;
  route(k.inColor, bit(Dir::West), bit(Dir::Ramp));
  route(k.outColor, bit(Dir::Ramp), bit(Dir::East));
  int64_t redOut = 0, redIn = 0, bc = 0;
  if (reduce) {
    redOut = k.internal[role.parity];
    redIn = k.internal[1 - role.parity];
    bc = k.internal[2];
    if (!role.first)
      route(redOut, bit(Dir::Ramp), bit(Dir::North));
    if (!role.last)
      route(redIn, bit(Dir::South), bit(Dir::Ramp));
    if (role.first)
      route(bc, bit(Dir::Ramp), bit(Dir::South));
    else
      route(bc, bit(Dir::North),
            bit(Dir::Ramp) | (role.last ? 0 : bit(Dir::South)));
  }

  // Data: buf (and buf2) of L fp32 each.
  int64_t buf = kDataBase, buf2 = kDataBase + 2 * L;
  if (k.op == ColumnOp::Tanh) {
    // A vector of ones for 1 - 2r (Vec ops take their first source from a
    // DSR, never from an immediate).
    auto type = RankedTensorType::get({L}, b.getF32Type());
    OperationState s(loc, wv::SegmentOp::getOperationName());
    s.addAttribute(SymbolTable::getSymbolAttrName(),
                   b.getStringAttr("ones_data"));
    s.addAttribute("address", b.getI64IntegerAttr(buf2));
    s.addAttribute("value", DenseElementsAttr::get(type, 1.0f));
    b.create(s);
  }

  // DSD records.
  dsd("in", kRecIn, wv::DsdKind::fabin,
      {i64("length", L), i64("color", k.inColor)});
  dsd("out", kRecOut, wv::DsdKind::fabout,
      {i64("length", L), i64("color", k.outColor)});
  if (k.op != ColumnOp::Relu)
    dsd("buf", kRecBuf, wv::DsdKind::mem1d,
        {i64("length", L), i64("base", buf)});
  if (k.op == ColumnOp::Tanh || k.op == ColumnOp::LogSoftmax)
    dsd(k.op == ColumnOp::Tanh ? "ones" : "exps", kRecBuf2, wv::DsdKind::mem1d,
        {i64("length", L), i64("base", buf2)});
  if (reduce) {
    if (!role.last)
      dsd("red_in", kRecRedIn, wv::DsdKind::fabin,
          {i64("length", 1), i64("color", redIn)});
    if (!role.first) {
      dsd("red_out", kRecRedOut, wv::DsdKind::fabout,
          {i64("length", 1), i64("color", redOut)});
      dsd("bc_in", kRecBcIn, wv::DsdKind::fabin,
          {i64("length", 1), i64("color", bc)});
    } else {
      dsd("bc_out", kRecBcOut, wv::DsdKind::fabout,
          {i64("length", 1), i64("color", bc)});
    }
  }

  using K = wt::OperandKind;
  const int32_t gpr = int32_t(K::Gpr), imm = int32_t(K::Imm),
                dsrK = int32_t(K::Dsr), ddsr = int32_t(K::Ddsr),
                s0 = int32_t(K::S0dsr), s1 = int32_t(K::S1dsr);
  const int32_t zero = int32_t(wt::SmallImm::Zero),
                one = int32_t(wt::SmallImm::One),
                two = int32_t(wt::SmallImm::Two);

  OperationState ts(loc, wv::TaskOp::getOperationName());
  ts.addAttribute(SymbolTable::getSymbolAttrName(), b.getStringAttr("main"));
  ts.addAttribute("kind", wv::TaskKindAttr::get(ctx, wv::TaskKind::local));
  ts.addAttribute("id", b.getI64IntegerAttr(kMainTask));
  ts.addAttribute("active", b.getUnitAttr());
  ts.addRegion()->emplaceBlock();
  Operation *task = b.create(ts);
  b.setInsertionPointToStart(&task->getRegion(0).front());

  // DSR numbers: `dsr n` pairs DDSR n with S0DSR n.
  using RF = wv::RegFile;
  switch (k.op) {
  case ColumnOp::Relu:
    // out = max(in, 0), straight from the fabric to the fabric.
    dsrLoad(RF::ddsr, 0, "out");
    dsrLoad(RF::s0dsr, 0, "in");
    label("sample");
    inst("fmax", {dsrK, 0, imm, zero});
    break;
  case ColumnOp::Sigmoid:
    // buf = -in; buf = exp(buf); buf += 1; out = 1 / buf.
    dsrLoad(RF::ddsr, 0, "buf");
    dsrLoad(RF::s0dsr, 0, "in");
    dsrLoad(RF::ddsr, 1, "buf");
    dsrLoad(RF::s0dsr, 1, "buf");
    dsrLoad(RF::ddsr, 2, "out");
    label("sample");
    inst("fneg", {ddsr, 0, s0, 0});
    inst("fexp", {ddsr, 1, s0, 1});
    inst("fadd", {dsrK, 1, imm, one});
    inst("frcp", {ddsr, 2, s0, 1});
    break;
  case ColumnOp::Tanh:
    // r = 1 / (1 + exp(2 in)); out = 1 - 2 r.
    dsrLoad(RF::ddsr, 0, "buf");
    dsrLoad(RF::s0dsr, 0, "in");
    dsrLoad(RF::ddsr, 1, "buf");
    dsrLoad(RF::s0dsr, 1, "buf");
    dsrLoad(RF::s1dsr, 1, "buf");
    dsrLoad(RF::ddsr, 2, "out");
    dsrLoad(RF::s0dsr, 2, "ones");
    label("sample");
    inst("fmul", {dsrK, 0, imm, two});
    inst("fexp", {ddsr, 1, s0, 1});
    inst("fadd", {dsrK, 1, imm, one});
    inst("frcp", {ddsr, 1, s0, 1});
    inst("fadd", {dsrK, 1, s1, 1});
    inst("fsub", {dsrK, 2, s1, 1});
    break;
  case ColumnOp::Softmax:
  case ColumnOp::LogSoftmax: {
    bool log = k.op == ColumnOp::LogSoftmax;
    dsrLoad(RF::ddsr, 0, "buf");
    dsrLoad(RF::s0dsr, 0, "in");
    dsrLoad(RF::ddsr, 1, "buf");
    dsrLoad(RF::s0dsr, 1, "buf");
    dsrLoad(RF::ddsr, 2, log ? "exps" : "buf");
    if (log)
      dsrLoad(RF::s0dsr, 2, "exps");
    dsrLoad(RF::ddsr, 3, "out");
    dsrLoad(RF::s0dsr, 3, "buf");
    if (reduce) {
      if (!role.last)
        dsrLoad(RF::s1dsr, 4, "red_in");
      if (!role.first) {
        dsrLoad(RF::ddsr, 5, "red_out");
        dsrLoad(RF::s0dsr, 6, "bc_in");
      } else {
        dsrLoad(RF::ddsr, 6, "bc_out");
      }
    }
    // Combines this row's partial value in `g` with the rows below, sends
    // it north and receives the column's total from row 0.
    auto allReduce = [&](StringRef combine, int32_t g) {
      if (!reduce)
        return;
      if (!role.last)
        inst(combine, {gpr, g, s1, 4});
      if (!role.first) {
        inst("mov32", {ddsr, 5, gpr, g});
        inst("mov32", {gpr, g, s0, 6});
      } else {
        inst("mov32", {ddsr, 6, gpr, g});
      }
    };
    label("sample");
    inst("mov32", {ddsr, 0, s0, 0});      // buf = in
    inst("mov32", {gpr, kGprMax, s0, 1}); // m = buf[0]
    inst("fmaxr", {gpr, kGprMax, s0, 1}); // m = max(m, buf...)
    allReduce("fmax", kGprMax);
    inst("fsub", {dsrK, 1, gpr, kGprMax}); // buf = buf - m
    inst("fexp", {ddsr, 2, s0, 1});        // e = exp(buf)
    inst("mov32", {gpr, kGprSum, imm, zero});
    inst("fsum", {gpr, kGprSum, s0, log ? 2 : 1}); // s = sum(e)
    allReduce("fadd", kGprSum);
    if (log) {
      inst("flog", {gpr, kGprSum, gpr, kGprSum});
      inst("fsub", {dsrK, 3, gpr, kGprSum}); // out = (x - m) - log(s)
    } else {
      inst("frcp", {gpr, kGprSum, gpr, kGprSum});
      inst("fmul", {dsrK, 3, gpr, kGprSum}); // out = e * (1 / s)
    }
    break;
  }
  }
  jump("sample");
}

} // namespace

LogicalResult emitColumnKernel(OpBuilder &b, Location loc,
                               const ColumnKernel &k, StringRef name,
                               StringRef layer) {
  const RowChunks &lay = k.layout;
  if (lay.n < 1 || lay.rows < 1 || lay.y0 < 0 || k.x < 0)
    return emitError(loc) << "column kernel " << name << " has " << lay.n
                          << " elements on " << lay.rows << " rows at (" << k.x
                          << ", " << lay.y0
                          << "); it needs at least one of each";
  if (chunkSize(lay.n, lay.rows, lay.rows - 1) < 1)
    return emitError(loc) << "column kernel " << name << ": " << lay.rows
                          << " rows leave the last chunk of " << lay.n
                          << " elements (chunks of "
                          << chunkSize(lay.n, lay.rows, 0) << ") empty";
  int64_t L = chunkSize(lay.n, lay.rows, 0);
  if (L > 32767)
    return emitError(loc) << "column kernel " << name << ": a chunk of " << L
                          << " elements exceeds the 32767-element vector "
                             "length";
  // The enclosing wavelet.program's target bounds colors, rows and memory.
  auto program = dyn_cast_or_null<wv::ProgramOp>(
      b.getInsertionBlock() ? b.getInsertionBlock()->getParentOp() : nullptr);
  if (!program)
    return emitError(loc) << "column kernel " << name
                          << " must be emitted inside a wavelet.program";
  wt::Target target = program.getTargetAttr().getModel();
  if (k.x >= int64_t(target.width()) ||
      lay.y0 + lay.rows > int64_t(target.height()))
    return emitError(loc) << "column kernel " << name << " at column " << k.x
                          << ", rows " << lay.y0 << ".." << lay.y0 + lay.rows
                          << " does not fit the " << target.width() << "x"
                          << target.height() << " fabric";
  int64_t words =
      2 * L *
      (k.op == ColumnOp::Relu                                   ? 0
       : k.op == ColumnOp::Tanh || k.op == ColumnOp::LogSoftmax ? 2
                                                                : 1);
  if (kDataBase + words > int64_t(target.memoryWords()))
    return emitError(loc) << "column kernel " << name << ": a chunk of " << L
                          << " elements needs " << 2 * (kDataBase + words)
                          << " bytes of PE memory, more than the "
                          << 2 * target.memoryWords() << " available";
  bool reduce = isSoftmax(k.op) && lay.rows > 1;
  SmallVector<int64_t> colors = {k.inColor, k.outColor};
  if (reduce) {
    if (int64_t(k.internal.size()) < internalColors(k.op))
      return emitError(loc)
             << "column kernel " << name << " (" << columnOpName(k.op)
             << " over " << lay.rows << " rows) needs " << internalColors(k.op)
             << " internal colors, got " << k.internal.size();
    colors.append(k.internal.begin(),
                  k.internal.begin() + internalColors(k.op));
  }
  for (size_t i = 0; i < colors.size(); ++i) {
    if (!target.isRoutableColor(colors[i]))
      return emitError(loc) << "column kernel " << name << ": color "
                            << colors[i] << " is not routable on a target "
                            << "with " << target.routableColors() << " colors";
    for (size_t j = 0; j < i; ++j)
      if (colors[i] == colors[j])
        return emitError(loc) << "column kernel " << name << " uses color "
                              << colors[i] << " twice (input, output and "
                              << "internal colors must differ)";
  }

  Emitter e(b, loc, k, name, layer);
  int64_t r0 = 0;
  for (int64_t r = 1; r <= lay.rows; ++r) {
    if (r < lay.rows && e.roleOf(r) == e.roleOf(r0))
      continue;
    e.emitGroup(r0, r, e.roleOf(r0));
    r0 = r;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Cost model
//===----------------------------------------------------------------------===//

static int64_t cyc(wt::Opcode op, int64_t n) {
  return int64_t(wt::instructionCycles(op, uint64_t(n), true));
}
static int64_t scalar(wt::Opcode op) {
  return int64_t(wt::instructionCycles(op, 1, false));
}

int64_t predictColumnKernelCycles(const ColumnKernel &k) {
  using O = wt::Opcode;
  const RowChunks &lay = k.layout;
  const int64_t jump = scalar(O::JMP);
  if (!isSoftmax(k.op)) {
    // Every PE loops on its own; the longest chunk sets the pace.
    int64_t L = chunkSize(lay.n, lay.rows, 0);
    switch (k.op) {
    case ColumnOp::Relu:
      return cyc(O::FMAX, L) + jump;
    case ColumnOp::Sigmoid:
      return cyc(O::FNEG, L) + cyc(O::FEXP, L) + cyc(O::FADD, L) +
             cyc(O::FRCP, L) + jump;
    default:
      return cyc(O::FMUL, L) + cyc(O::FEXP, L) + cyc(O::FADD, L) +
             cyc(O::FRCP, L) + cyc(O::FADD, L) + cyc(O::FSUB, L) + jump;
    }
  }
  // Softmax: the rows wait for each other twice per sample, so the model
  // replays the column's schedule (docs/execution-model.md, "Column
  // kernels") for a few samples and returns the steady-state interval.
  // Times are the cycles at which each PE's next instruction starts; a
  // wavelet sent by an instruction starting at t is in the CE queue one
  // hop north at t + 4, and r hops south of row 0 at t + 3 + r.
  const int64_t R = lay.rows;
  const bool log = k.op == ColumnOp::LogSoftmax;
  std::vector<int64_t> t(size_t(R), 0), sent(size_t(R), 0);
  const int64_t recvScalar = 1;                // fmax/fadd/mov32 gpr, fabin
  const int64_t sendScalar = cyc(O::MOV32, 1); // mov32 fabout(1), gpr
  auto allReduce = [&]() {
    if (R == 1)
      return;
    // Up the column, last row first.
    for (int64_t r = R - 1; r >= 0; --r) {
      if (r < R - 1)
        t[r] = std::max(t[r], sent[r + 1] + 4) + recvScalar;
      if (r > 0) {
        sent[r] = t[r];
        t[r] += sendScalar;
      }
    }
    // Row 0 multicasts the total down.
    int64_t bcStart = t[0];
    t[0] += sendScalar;
    for (int64_t r = 1; r < R; ++r)
      t[r] = std::max(t[r], bcStart + 3 + r) + recvScalar;
  };
  const int samples = 12;
  std::vector<int64_t> ends;
  for (int s = 0; s < samples; ++s) {
    for (int64_t r = 0; r < R; ++r) {
      int64_t L = chunkSize(lay.n, R, r);
      t[r] += cyc(O::MOV32, L) + scalar(O::MOV32) + cyc(O::FMAXR, L);
    }
    allReduce();
    for (int64_t r = 0; r < R; ++r) {
      int64_t L = chunkSize(lay.n, R, r);
      t[r] += cyc(O::FSUB, L) + cyc(O::FEXP, L) + scalar(O::MOV32) +
              cyc(O::FSUM, L);
    }
    allReduce();
    for (int64_t r = 0; r < R; ++r) {
      int64_t L = chunkSize(lay.n, R, r);
      t[r] += (log ? scalar(O::FLOG) + cyc(O::FSUB, L)
                   : scalar(O::FRCP) + cyc(O::FMUL, L)) +
              jump;
    }
    ends.push_back(t[0]);
  }
  // The schedule becomes periodic after a few samples.
  return (ends[samples - 1] - ends[samples / 2]) / (samples - 1 - samples / 2);
}

} // namespace weft::conversion
