//===- LowerToWavelet.cpp - Placed dense layers to per-PE programs --------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits the per-PE programs of docs/execution-model.md ("Dense layer") for a
// partitioned fabric.program: routes, DSD records, weights as per-PE
// segments, and the init, multiply-accumulate, closeout and input-copy
// tasks. PEs with the same role form one wavelet.pe_group, so the binary
// shares their code.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/LowerToWavelet.h"

#include "WaveletBuilder.h"
#include "weft/Conversion/ColorAllocation.h"
#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/DenseLayer.h"

#include "fabric/FabricOps.h"
#include "wavelet/WaveletOps.h"

#include "weft/Target/ISA.h"
#include "weft/Target/Numerics.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Pass/Pass.h"

#include <map>

#include "llvm/ADT/StringMap.h"

using namespace mlir;
namespace wt = weft::target;
namespace fab = weft::fabric;
namespace wv = weft::wavelet;

namespace weft::conversion {
namespace {

/// Control entries of the closeouts of even and odd samples: the last
/// column alternates between two output buffers by them.
constexpr int64_t kCloseoutIndex[2] = {1, 2};
constexpr int64_t kInitTask = 32;
/// The diagonal PE's cycle of four tasks: copy the chunk of an even sample,
/// send its closeout (index 1), copy the next chunk, send its closeout
/// (index 2), and around again.
constexpr int64_t kCopyTask[2] = {33, 35}, kCloseTask[2] = {34, 36};

// PE memory map, in words (records must lie in the first 16 KiB).
constexpr int64_t kDsdBase = 1024;
constexpr int64_t kDataBase = 1152;

enum Dsd : int64_t {
  kDsdW = 0,
  kDsdAcc,
  kDsdPsumIn,
  kDsdPsumOut,
  kDsdBias,
  kDsdIn,
  kDsdColumnOut0,
  kDsdColumnOut1,
  kDsdClose0,
  kDsdClose1,
  kDsdOutBuf0,
  kDsdOutBuf1,
  kDsdSend0,
  kDsdSend1,
};

using DirSet = uint8_t;
constexpr DirSet bit(wt::Dir d) { return DirSet(1u << unsigned(d)); }

/// The role of a PE in the scheme; PEs with equal roles share code.
struct Role {
  int64_t column = 0;                // c
  bool compute = false;              // holds weights (row < rows)
  bool diagonal = false;             // turns input chunk c into column c
  bool relayIn = false;              // passes a row's input chunk east
  bool hasColumn = false;            // on column c's multicast
  wt::Dir columnIn = wt::Dir::Ramp;  // where the multicast comes from
  bool north = false, south = false; // the multicast continues north/south
  int64_t lm = 0;                    // neurons of its row chunk
  bool empty() const { return !compute && !diagonal && !relayIn && !hasColumn; }
  bool operator==(const Role &o) const {
    return column == o.column && compute == o.compute &&
           diagonal == o.diagonal && relayIn == o.relayIn &&
           hasColumn == o.hasColumn && columnIn == o.columnIn &&
           north == o.north && south == o.south && lm == o.lm;
  }
};

/// The colors of one dense layer (docs/execution-model.md, "Colors"),
/// chosen by the color allocator.
struct DenseColors {
  int64_t in = 1;         // A: input chunk c along row c (the stream in)
  int64_t column = 2;     // B: input chunk c down column c
  int64_t psum[2] = {3, 4}; // the hop leaving column c has psum[(c + 1) % 2]
  int64_t out = 5;        // the last column's results (the stream out)
};

class Emitter : WaveletBuilder {
public:
  Emitter(OpBuilder &b, Location loc, const DenseLayer &layer,
          const DenseMapping &m, const DenseColors &colors,
          StringRef layerName)
      : WaveletBuilder(b, loc), layer(layer), m(m), colors(colors),
        layerName(layerName) {}

  void emitGroups();

private:
  Role roleOf(int64_t c, int64_t r) const;
  void emitGroup(int64_t c, int64_t r0, int64_t r1, const Role &role);
  /// The diagonal PE's input-to-column copy: its DSDs and tasks.
  void emitCopyDsds(int64_t lk);
  void loadCopyDsrs();
  void emitCopyTasks();
  void dsd(StringRef name, int64_t index, wv::DsdKind kind,
           ArrayRef<NamedAttribute> fields) {
    dsdAt(name, kDsdBase + 4 * index, kind, fields);
  }
  ElementsAttr blob(StringRef name, ArrayRef<int64_t> shape, Type elem,
                    ArrayRef<char> bytes);

  int32_t op(wt::OperandKind k) { return int32_t(k); }

  const DenseLayer &layer;
  const DenseMapping &m;
  DenseColors colors;
  StringRef layerName;
  unsigned blobs = 0;
};

Role Emitter::roleOf(int64_t c, int64_t r) const {
  Role role;
  role.column = c;
  role.compute = r < m.rows;
  role.diagonal = r == c;
  role.relayIn = c < r && r < m.smear;
  // Column c's multicast starts at the diagonal PE (c, c) and reaches rows
  // 0 .. rows-1; between a diagonal below the rectangle and its last row it
  // only passes north.
  role.hasColumn = r <= c || r < m.rows;
  role.columnIn = r == c ? wt::Dir::Ramp : r < c ? wt::Dir::South
                                                 : wt::Dir::North;
  role.north = r > 0 && r <= c;
  role.south = r >= c && r + 1 < m.rows;
  role.lm = role.compute ? chunkSize(layer.M, m.rows, r) : 0;
  return role;
}

ElementsAttr Emitter::blob(StringRef name, ArrayRef<int64_t> shape, Type elem,
                           ArrayRef<char> bytes) {
  auto type = RankedTensorType::get(shape, elem);
  std::string key = (layerName + "_" + name + "_" + Twine(blobs++)).str();
  return DenseResourceElementsAttr::get(
      type, key, HeapAsmResourceBlob::allocateAndCopyInferAlign(bytes));
}

void Emitter::emitCopyDsds(int64_t lk) {
  auto i64 = [&](StringRef n, int64_t v) {
    return b.getNamedAttr(n, b.getI64IntegerAttr(v));
  };
  auto unit = [&](StringRef n) { return b.getNamedAttr(n, b.getUnitAttr()); };
  dsd("in", kDsdIn, wv::DsdKind::fabin,
      {i64("length", lk), i64("color", colors.in)});
  // The copy runs on microthread 0 and starts the task that sends the
  // closeout when its last wavelet has entered the on-ramp; the closeout
  // goes out on microthread 1 and starts the next copy. So no send ever
  // blocks the main thread, which must keep consuming the column's data (its
  // own CE queue is one of the multicast's destinations), and a chunk never
  // overtakes the previous closeout.
  for (int k = 0; k < 2; ++k) {
    dsd(k ? "column_out_odd" : "column_out_even",
        k ? kDsdColumnOut1 : kDsdColumnOut0, wv::DsdKind::fabout,
        {i64("length", lk), i64("color", colors.column), i64("utid", 0),
         i64("ac", kCloseTask[k])});
    dsd(k ? "close_odd" : "close_even", k ? kDsdClose1 : kDsdClose0,
        wv::DsdKind::fabout,
        {i64("length", 1), i64("color", colors.column),
         b.getNamedAttr("format", b.getStringAttr("sparse16")), unit("ctrl"),
         i64("index", kCloseoutIndex[k]), i64("utid", 1),
         i64("ac", kCopyTask[1 - k])});
  }
}

/// DSRs of the diagonal's copy: 5 (column_out_even <- in), 7 (column_out_odd
/// <- in), 6 and 10 (the two closeouts).
void Emitter::loadCopyDsrs() {
  dsrLoad(wv::RegFile::s0dsr, 5, "in");
  dsrLoad(wv::RegFile::ddsr, 5, "column_out_even");
  dsrLoad(wv::RegFile::s0dsr, 7, "in");
  dsrLoad(wv::RegFile::ddsr, 7, "column_out_odd");
  dsrLoad(wv::RegFile::ddsr, 6, "close_even");
  dsrLoad(wv::RegFile::ddsr, 10, "close_odd");
}

void Emitter::emitCopyTasks() {
  using K = wt::OperandKind;
  const int32_t imm = op(K::Imm), ddsr = op(K::Ddsr), s0 = op(K::S0dsr);
  const int32_t zero = int32_t(wt::SmallImm::Zero);
  for (int k = 0; k < 2; ++k) {
    {
      wv::TaskOp t = task(k ? "copy_odd" : "copy_even", wv::TaskKind::local,
                          kCopyTask[k], false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&t.getBody().front());
      int32_t d = k ? 7 : 5;
      inst("mov32", {ddsr, d, s0, d}, true);
    }
    {
      wv::TaskOp t = task(k ? "send_closeout_odd" : "send_closeout_even",
                          wv::TaskKind::local, kCloseTask[k], false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&t.getBody().front());
      inst("mov16", {ddsr, k ? 10 : 6, imm, zero}, true);
    }
  }
}

void Emitter::emitGroup(int64_t c, int64_t r0, int64_t r1,
                        const Role &role) {
  MLIRContext *ctx = b.getContext();
  int64_t S = m.smear;
  bool first = c == 0, last = c == S - 1;
  bool mixed = m.precision == Precision::Mixed;
  int64_t lk = chunkSize(layer.K, S, c), lm = role.lm;
  int64_t kb = chunkBegin(layer.K, S, c);
  int64_t wWords = mixed ? 1 : 2;
  int64_t accBase = kDataBase, biasBase = accBase + 2 * lm,
          wBase = biasBase + 2 * lm, outBase = wBase + lk * lm * wWords;
  bool hasBias = last && !layer.bias.empty();
  int64_t h = r1 - r0;
  int64_t px = m.x0 + c, py = m.y0 + r0;

  // The group (or a single PE).
  std::string name =
      (layerName + "_c" + Twine(c) + "_r" + Twine(r0) +
       (h > 1 ? "_" + Twine(r1 - 1) : Twine()))
          .str();
  OperationState st(loc, h > 1 ? wv::PeGroupOp::getOperationName()
                               : wv::PeOp::getOperationName());
  st.addAttribute(SymbolTable::getSymbolAttrName(), b.getStringAttr(name));
  if (h > 1) {
    st.addAttribute("rect", fab::RectAttr::get(ctx, px, py, 1, h));
  } else {
    st.addAttribute("x", b.getI64IntegerAttr(px));
    st.addAttribute("y", b.getI64IntegerAttr(py));
  }
  st.addAttribute("layer", b.getStringAttr(layerName));
  st.addRegion()->emplaceBlock();
  Operation *pe = b.create(st);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&pe->getRegion(0).front());

  // Routes.
  using wt::Dir;
  if (role.relayIn)
    route(colors.in, bit(Dir::West), bit(Dir::East));
  if (role.diagonal)
    route(colors.in, bit(Dir::West), bit(Dir::Ramp));
  if (role.hasColumn)
    route(colors.column, bit(role.columnIn),
          (role.compute ? bit(Dir::Ramp) : 0) |
              (role.north ? bit(Dir::North) : 0) |
              (role.south ? bit(Dir::South) : 0));
  if (!role.compute && !role.diagonal)
    return; // a router-only PE
  if (!role.compute) {
    // A diagonal below the rectangle only turns its chunk north.
    emitCopyDsds(lk);
    wv::TaskOp t = task("init", wv::TaskKind::local, kInitTask, true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&t.getBody().front());
      loadCopyDsrs();
      inst("activate", {0, int32_t(kCopyTask[0])});
      inst("nop", {}, true);
    }
    emitCopyTasks();
    return;
  }
  int64_t pin = colors.psum[c % 2];
  int64_t pout = last ? colors.out : colors.psum[(c + 1) % 2];
  if (!first)
    route(pin, bit(Dir::West), bit(Dir::Ramp));
  route(pout, bit(Dir::Ramp), bit(Dir::East));

  // Per-PE parameters: gpr 5 = words per weight column.
  {
    OperationState p(loc, wv::ParamOp::getOperationName());
    p.addAttribute("gpr", b.getI64IntegerAttr(5));
    p.addAttribute("map", AffineMapAttr::get(AffineMap::get(
                              2, 0, b.getAffineConstantExpr(lm * wWords))));
    b.create(p);
  }

  // Weights (and bias) of every PE of the group, as per-PE segments.
  auto put = [&](std::vector<char> &bytes, float v) {
    if (mixed) {
      uint16_t h16 = wt::f32ToF16(v);
      bytes.push_back(char(h16 & 0xff));
      bytes.push_back(char(h16 >> 8));
      return;
    }
    uint32_t bits = wt::f32ToBits(v);
    for (int i = 0; i < 4; ++i)
      bytes.push_back(char((bits >> (8 * i)) & 0xff));
  };
  auto segment = [&](StringRef sym, int64_t address, StringRef blobName,
                     int64_t per, Type elem, const std::vector<char> &bytes) {
    OperationState s(loc, wv::SegmentOp::getOperationName());
    s.addAttribute(SymbolTable::getSymbolAttrName(), b.getStringAttr(sym));
    s.addAttribute("address", b.getI64IntegerAttr(address));
    s.addAttribute("per_pe", b.getUnitAttr());
    s.addAttribute("value", blob(blobName, {h, 1, per}, elem, bytes));
    b.create(s);
  };
  {
    std::vector<char> bytes;
    bytes.reserve(size_t(h * lk * lm * (mixed ? 2 : 4)));
    for (int64_t r = r0; r < r1; ++r) {
      int64_t mb = chunkBegin(layer.M, m.rows, r);
      for (int64_t t = 0; t < lk; ++t)
        for (int64_t n = 0; n < lm; ++n)
          put(bytes, layer.weights[size_t((kb + t) * layer.M + mb + n)]);
    }
    segment("weights", wBase, "w", lk * lm,
            mixed ? Type(b.getF16Type()) : Type(b.getF32Type()), bytes);
  }
  if (hasBias) {
    // The bias stays fp32 (it is added to the fp32 accumulator).
    std::vector<char> bytes;
    for (int64_t r = r0; r < r1; ++r) {
      int64_t mb = chunkBegin(layer.M, m.rows, r);
      for (int64_t n = 0; n < lm; ++n) {
        uint32_t bits = wt::f32ToBits(layer.bias[size_t(mb + n)]);
        for (int i = 0; i < 4; ++i)
          bytes.push_back(char((bits >> (8 * i)) & 0xff));
      }
    }
    segment("bias_data", biasBase, "b", lm, b.getF32Type(), bytes);
  }

  // DSD records.
  auto i64 = [&](StringRef n, int64_t v) {
    return b.getNamedAttr(n, b.getI64IntegerAttr(v));
  };
  auto unit = [&](StringRef n) { return b.getNamedAttr(n, b.getUnitAttr()); };
  dsd("w", kDsdW, wv::DsdKind::mem1d,
      {i64("length", lm), i64("base", wBase), unit("ix")});
  dsd("acc", kDsdAcc, wv::DsdKind::mem1d,
      {i64("length", lm), i64("base", accBase)});
  if (!first)
    dsd("psum_in", kDsdPsumIn, wv::DsdKind::fabin,
        {i64("length", lm), i64("color", pin)});
  if (!last) {
    dsd("psum_out", kDsdPsumOut, wv::DsdKind::fabout,
        {i64("length", lm), i64("color", pout)});
  } else {
    // The last column's results go to one of two buffers, alternating by
    // sample, and out on microthread 3, so the next sample's work overlaps
    // the send (docs/execution-model.md, "Chains of layers").
    for (int k = 0; k < 2; ++k) {
      dsd(k ? "out_buf_odd" : "out_buf_even", k ? kDsdOutBuf1 : kDsdOutBuf0,
          wv::DsdKind::mem1d,
          {i64("length", lm), i64("base", outBase + 2 * lm * k)});
      dsd(k ? "send_odd" : "send_even", k ? kDsdSend1 : kDsdSend0,
          wv::DsdKind::fabout,
          {i64("length", lm), i64("color", pout), i64("utid", 3)});
    }
  }
  if (hasBias)
    dsd("bias", kDsdBias, wv::DsdKind::mem1d,
        {i64("length", lm), i64("base", biasBase)});
  if (role.diagonal)
    emitCopyDsds(lk);

  using K = wt::OperandKind;
  const int32_t gpr = op(K::Gpr), imm = op(K::Imm), dsrK = op(K::Dsr),
                ddsr = op(K::Ddsr), s0 = op(K::S0dsr), s1 = op(K::S1dsr);
  const int32_t zero = int32_t(wt::SmallImm::Zero);

  // init: load the DSRs once (they are never modified), clear the
  // accumulator and the weight index, start the input copy.
  {
    wv::TaskOp t = task("init", wv::TaskKind::local, kInitTask, true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&t.getBody().front());
    dsrLoad(wv::RegFile::s0dsr, 0, "w");
    dsrLoad(wv::RegFile::ddsr, 0, "acc");
    if (first && !last) {
      dsrLoad(wv::RegFile::s0dsr, 1, "acc");
      dsrLoad(wv::RegFile::ddsr, 1, "psum_out");
    } else if (!last) {
      dsrLoad(wv::RegFile::s0dsr, 1, "acc");
      dsrLoad(wv::RegFile::s1dsr, 1, "psum_in");
      dsrLoad(wv::RegFile::ddsr, 1, "psum_out");
    } else {
      if (!first) {
        dsrLoad(wv::RegFile::s0dsr, 1, "acc");
        dsrLoad(wv::RegFile::s1dsr, 1, "psum_in");
        dsrLoad(wv::RegFile::ddsr, 1, "acc");
      }
      if (hasBias) {
        dsrLoad(wv::RegFile::s0dsr, 2, "acc");
        dsrLoad(wv::RegFile::s1dsr, 2, "bias");
        dsrLoad(wv::RegFile::ddsr, 2, "acc");
      }
      dsrLoad(wv::RegFile::s0dsr, 3, "acc");
      dsrLoad(wv::RegFile::ddsr, 3, "out_buf_even");
      dsrLoad(wv::RegFile::s0dsr, 4, "acc");
      dsrLoad(wv::RegFile::ddsr, 4, "out_buf_odd");
      dsrLoad(wv::RegFile::s0dsr, 8, "out_buf_even");
      dsrLoad(wv::RegFile::ddsr, 8, "send_even");
      dsrLoad(wv::RegFile::s0dsr, 9, "out_buf_odd");
      dsrLoad(wv::RegFile::ddsr, 9, "send_odd");
    }
    if (role.diagonal) {
      loadCopyDsrs();
    }
    inst("movi", {4, 0});
    inst("mov32", {ddsr, 0, imm, zero});
    if (role.diagonal)
      inst("activate", {0, int32_t(kCopyTask[0])});
    inst("nop", {}, true);
  }
  // One input element x (in gpr 0/1): acc += W[:, t] * x; t += 1.
  {
    wv::TaskOp t = task("mac", wv::TaskKind::data, colors.column, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&t.getBody().front());
    if (mixed) {
      inst("ff2h", {gpr, 2, gpr, 0});
      inst("fmachs", {dsrK, 0, gpr, 2});
    } else {
      inst("fmac", {dsrK, 0, gpr, 0});
    }
    inst("add16", {gpr, 4, gpr, 5}, true);
  }
  // The closeouts after each chunk (index 1 after even samples, 2 after
  // odd ones): reduce the partial sums along the row.
  for (int k = 0; k < 2; ++k) {
    wv::TaskOp t = task(k ? "closeout_odd" : "closeout_even",
                        wv::TaskKind::control, kCloseoutIndex[k], false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&t.getBody().front());
    inst("movi", {4, 0});
    if (first && !last) {
      inst("mov32", {ddsr, 1, s0, 1});
    } else if (!last) {
      inst("fadd", {dsrK, 1, s1, 1});
    } else {
      if (!first)
        inst("fadd", {dsrK, 1, s1, 1});
      if (hasBias)
        inst("fadd", {dsrK, 2, s1, 2});
      int32_t buf = 3 + k, send = 8 + k;
      if (layer.relu)
        inst("fmax", {dsrK, buf, imm, zero});
      else
        inst("mov32", {ddsr, buf, s0, buf});
      // Launches the send on microthread 3 (it waits for the previous one).
      inst("mov32", {ddsr, send, s0, send});
    }
    inst("mov32", {ddsr, 0, imm, zero}, true);
  }
  if (role.diagonal)
    emitCopyTasks();
}

void Emitter::emitGroups() {
  int64_t height = std::max(m.smear, m.rows);
  for (int64_t c = 0; c < m.smear; ++c) {
    int64_t r0 = 0;
    for (int64_t r = 1; r <= height; ++r) {
      if (r < height && roleOf(c, r) == roleOf(c, r0))
        continue;
      if (!roleOf(c, r0).empty())
        emitGroup(c, r0, r, roleOf(c, r0));
      r0 = r;
    }
  }
}

/// One kernel of the chain, analysed.
struct Stage {
  fab::KernelOp kernel;
  bool dense = false;
  DenseLayer layer;     // dense
  DenseMapping m;       // dense
  ColumnKernel column;  // column kernels
  int64_t x = 0, width = 1, height = 1;
  int64_t inRows = 1, outRows = 1; // row chunks received and sent
  int64_t inN = 0, outN = 0;       // elements per sample in and out
  // Stream classes (indices into the allocator's requests).
  int64_t bStream = -1, pStream[2] = {-1, -1};
  std::vector<int64_t> internalStreams;
};

/// The kernel's layer and placement, or an error on the kernel.
static LogicalResult analyzeKernel(fab::KernelOp kernel, Stage &st) {
  st.kernel = kernel;
  auto yield = cast<fab::YieldOp>(kernel.getBody().front().getTerminator());
  if (yield->getNumOperands() != 1)
    return kernel.emitOpError("must yield exactly one value to be lowered");
  std::optional<fab::RectAttr> rect = kernel.getRect();
  if (!rect)
    return kernel.emitOpError("is not placed: run --weft-partition-dense "
                              "first");
  Precision precision = Precision::FP32;
  if (auto p = kernel->getAttrOfType<StringAttr>("weft.precision"))
    precision = p.getValue() == "mixed" ? Precision::Mixed : Precision::FP32;
  std::string whyDense, whyColumn;
  FailureOr<DenseLayer> layer = matchDenseLayer(yield->getOperand(0), whyDense);
  if (succeeded(layer)) {
    st.dense = true;
    DenseMapping &m = st.m;
    m.x0 = rect->getX();
    m.y0 = rect->getY();
    m.smear = int64_t(kernel.getSmear());
    m.rows = rect->getHeight();
    m.precision = precision;
    if (int64_t(rect->getWidth()) != m.smear)
      return kernel.emitOpError("rectangle is ")
             << rect->getWidth() << " columns wide but the smear factor is "
             << m.smear << "; a dense layer uses one column per input chunk";
    if (m.y0 != 0)
      return kernel.emitOpError("must start at row 0, where input chunk 0 "
                                "enters");
    if (m.smear > layer->K || chunkSize(layer->K, m.smear, m.smear - 1) == 0)
      return kernel.emitOpError("smear factor ")
             << m.smear << " leaves an input chunk of " << layer->K
             << " inputs empty";
    if (m.rows > layer->M || chunkSize(layer->M, m.rows, m.rows - 1) == 0)
      return kernel.emitOpError("")
             << m.rows << " rows leave a neuron chunk of " << layer->M
             << " neurons empty";
    st.layer = std::move(*layer);
    st.x = m.x0;
    st.width = m.smear;
    st.height = std::max(m.smear, m.rows);
    st.inRows = m.smear;
    st.outRows = m.rows;
    st.inN = st.layer.K;
    st.outN = st.layer.M;
    return success();
  }
  Value input;
  std::vector<float> params;
  FailureOr<ColumnOp> op =
      matchColumnKernel(yield->getOperand(0), input, whyColumn, &params);
  if (failed(op))
    return kernel.emitOpError("is neither a dense layer (")
           << whyDense << ") nor a per-row layer (" << whyColumn << ")";
  int64_t n = cast<ShapedType>(yield->getOperand(0).getType()).getNumElements();
  if (rect->getWidth() != 1 || rect->getY() != 0)
    return kernel.emitOpError("is a ")
           << columnOpName(*op)
           << " layer and must occupy one column from row 0, not "
           << rect->getWidth() << " columns from row " << rect->getY();
  int64_t rows = rect->getHeight();
  if (rows > n || chunkSize(n, rows, rows - 1) == 0)
    return kernel.emitOpError("")
           << rows << " rows leave a chunk of its " << n << " elements empty";
  st.column.op = *op;
  st.column.params = std::move(params);
  st.column.x = rect->getX();
  st.column.layout = RowChunks{n, rows, 0};
  st.x = rect->getX();
  st.width = 1;
  st.height = rows;
  st.inRows = st.outRows = rows;
  st.inN = st.outN = n;
  return success();
}

struct LowerFabricToWaveletPass
    : PassWrapper<LowerFabricToWaveletPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerFabricToWaveletPass)

  StringRef getArgument() const final {
    return "weft-lower-fabric-to-wavelet";
  }
  StringRef getDescription() const final {
    return "Emit the per-PE wavelet programs of a placed chain of layers";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<wv::WaveletDialect, fab::FabricDialect>();
  }

  void runOnOperation() override {
    SmallVector<fab::ProgramOp> programs(
        getOperation().getOps<fab::ProgramOp>());
    for (fab::ProgramOp program : programs)
      if (failed(lower(program)))
        return signalPassFailure();
  }

  /// The chain @in -> k0 -> ... -> kn -> @out the streams describe.
  LogicalResult chainOf(fab::ProgramOp program, fab::IoOp &in, fab::IoOp &out,
                        SmallVectorImpl<fab::KernelOp> &kernels) {
    Block &body = program.getBody().front();
    llvm::StringMap<StringRef> next;
    for (auto s : body.getOps<fab::StreamOp>()) {
      if (!next.try_emplace(s.getSrc(), s.getDst()).second)
        return s.emitOpError("leaves @")
               << s.getSrc()
               << ", which already has a stream out; the lowering handles a "
                  "single chain of layers";
    }
    for (auto io : body.getOps<fab::IoOp>()) {
      if (io.getDirection() == fab::PortDir::input) {
        if (in)
          return io.emitOpError("is a second host input; the lowering "
                                "handles one");
        in = io;
      } else {
        if (out)
          return io.emitOpError("is a second host output; the lowering "
                                "handles one");
        out = io;
      }
    }
    if (!in || !out)
      return program.emitOpError("needs a stream from a host input and one "
                                 "to a host output");
    StringRef at = in.getSymName();
    while (at != out.getSymName()) {
      auto it = next.find(at);
      if (it == next.end())
        return program.emitOpError("has no stream out of @")
               << at << "; the chain from @" << in.getSymName()
               << " does not reach @" << out.getSymName();
      at = it->second;
      if (at == out.getSymName())
        break;
      auto k = SymbolTable::lookupNearestSymbolFrom<fab::KernelOp>(
          program, StringAttr::get(program.getContext(), at));
      if (!k)
        return program.emitOpError("has a stream into @")
               << at << ", which is not a kernel";
      if (kernels.size() > 1000 || llvm::is_contained(kernels, k))
        return k.emitOpError("is on a cycle of streams");
      kernels.push_back(k);
    }
    if (kernels.empty())
      return program.emitOpError("has no kernel between its host ports");
    size_t all = llvm::range_size(body.getOps<fab::KernelOp>());
    if (all != kernels.size())
      return program.emitOpError("has ")
             << all << " kernels but only " << kernels.size()
             << " are on the chain from the input to the output";
    return success();
  }

  LogicalResult lower(fab::ProgramOp program) {
    MLIRContext *ctx = program.getContext();
    fab::IoOp in, out;
    SmallVector<fab::KernelOp> kernels;
    if (failed(chainOf(program, in, out, kernels)))
      return failure();
    auto target = program.getTargetAttr();
    int64_t gridW = target.getWidth(), gridH = target.getHeight();

    std::vector<Stage> stages(kernels.size());
    for (size_t i = 0; i < kernels.size(); ++i)
      if (failed(analyzeKernel(kernels[i], stages[i])))
        return failure();
    // Placement and layouts must line up along the chain.
    int64_t x = 0;
    for (size_t i = 0; i < stages.size(); ++i) {
      Stage &st = stages[i];
      if (st.x != x)
        return st.kernel.emitOpError("starts at column ")
               << st.x << " but the previous layer ends at column " << x
               << "; layers are placed side by side from column 0";
      if (st.height > gridH || st.x + st.width > gridW)
        return st.kernel.emitOpError("rectangle does not fit the ")
               << gridW << "x" << gridH << " fabric (it needs " << st.width
               << " columns and " << st.height << " rows at column " << st.x
               << ")";
      if (i > 0 && (stages[i - 1].outRows != st.inRows ||
                    stages[i - 1].outN != st.inN))
        return st.kernel.emitOpError("receives ")
               << st.inN << " elements in " << st.inRows
               << " row chunks, but @" << stages[i - 1].kernel.getSymName()
               << " sends " << stages[i - 1].outN << " in "
               << stages[i - 1].outRows << " rows";
      x += st.width;
    }
    auto inType = cast<RankedTensorType>(in.getType());
    auto outType = cast<RankedTensorType>(out.getType());
    if (inType.getNumElements() != stages.front().inN ||
        outType.getNumElements() != stages.back().outN)
      return stages.front().kernel.emitOpError("host tensors ")
             << inType << " and " << outType
             << " do not carry one sample in and out of the chain";

    // Colors: every stream with the PEs that carry it.
    std::vector<StreamRequest> req;
    auto add = [&](std::string name) {
      req.push_back(StreamRequest{std::move(name), {}, -1});
      return int64_t(req.size() - 1);
    };
    // links[i]: the row chunks entering stage i (i = stages.size(): out).
    std::vector<int64_t> links;
    for (size_t i = 0; i <= stages.size(); ++i)
      links.push_back(add(i < stages.size()
                              ? ("into @" + stages[i].kernel.getSymName()).str()
                              : ("out of @" + stages.back().kernel.getSymName())
                                    .str()));
    for (size_t i = 0; i < stages.size(); ++i) {
      Stage &st = stages[i];
      std::string k = st.kernel.getSymName().str();
      // (`add` may grow `req`: take references only after it.)
      if (st.dense) {
        st.bStream = add("@" + k + " columns");
        st.pStream[0] = add("@" + k + " partial sums (even hops)");
        st.pStream[1] = add("@" + k + " partial sums (odd hops)");
      } else {
        for (int64_t j = 0; j < internalColors(st.column.op); ++j)
          st.internalStreams.push_back(
              add("@" + k + " internal " + std::to_string(j)));
      }
      auto &inPes = req[links[i]].pes, &outPes = req[links[i + 1]].pes;
      if (st.dense) {
        const DenseMapping &m = st.m;
        for (int64_t c = 0; c < m.smear; ++c) {
          for (int64_t r = 0; r < std::max(m.smear, m.rows); ++r) {
            if (c <= r && r < m.smear)
              inPes.push_back({st.x + c, r}); // A relays and the turn
            if (r <= c || r < m.rows)
              req[st.bStream].pes.push_back({st.x + c, r});
          }
          for (int64_t r = 0; r < m.rows; ++r) {
            // The hop leaving column c: sent at c, received at c + 1.
            if (c + 1 < m.smear) {
              auto &hop = req[st.pStream[(c + 1) % 2]].pes;
              hop.push_back({st.x + c, r});
              hop.push_back({st.x + c + 1, r});
            } else {
              outPes.push_back({st.x + c, r});
            }
          }
        }
      } else {
        for (int64_t r = 0; r < st.height; ++r) {
          inPes.push_back({st.x, r});
          outPes.push_back({st.x, r});
        }
        for (int64_t s : st.internalStreams)
          for (int64_t r = 0; r < st.height; ++r)
            req[s].pes.push_back({st.x, r});
      }
    }
    // PEs east of the chain relay the results to the east edge.
    for (int64_t px = x; px < gridW; ++px)
      for (int64_t r = 0; r < stages.back().outRows; ++r)
        req[links.back()].pes.push_back({px, r});
    std::string why;
    std::optional<std::vector<int64_t>> colors =
        allocateColors(req, target.getRoutableColors(), {}, why);
    if (!colors)
      return program.emitOpError("needs more colors than the fabric has: ")
             << why;

    OpBuilder b(program);
    Location loc = program.getLoc();
    OperationState st(loc, wv::ProgramOp::getOperationName());
    st.addAttribute(SymbolTable::getSymbolAttrName(),
                    program.getSymNameAttr());
    st.addAttribute("target", target);
    SmallVector<Attribute> names;
    for (Stage &s : stages)
      names.push_back(s.kernel.getSymNameAttr());
    st.addAttribute("layers", b.getArrayAttr(names));
    for (NamedAttribute a : program->getDiscardableAttrs())
      st.addAttribute(a.getName(), a.getValue());
    st.addRegion()->emplaceBlock();
    Operation *wprog = b.create(st);
    b.setInsertionPointToStart(&wprog->getRegion(0).front());

    auto io = [&](fab::IoOp op, bool output, int64_t end, int64_t color) {
      OperationState s(op.getLoc(), wv::IoOp::getOperationName());
      s.addAttribute(SymbolTable::getSymbolAttrName(), op.getSymNameAttr());
      s.addAttribute("direction",
                     fab::PortDirAttr::get(ctx, output ? fab::PortDir::output
                                                       : fab::PortDir::input));
      s.addAttribute("edge", fab::EdgeAttr::get(ctx, output ? fab::Edge::east
                                                            : fab::Edge::west));
      s.addAttribute("first_row", b.getI64IntegerAttr(0));
      s.addAttribute("end_row", b.getI64IntegerAttr(end));
      s.addAttribute("color", b.getI64IntegerAttr(color));
      s.addAttribute("format", b.getStringAttr("dense32"));
      s.addAttribute("type", TypeAttr::get(op.getType()));
      b.create(s);
    };
    io(in, false, stages.front().inRows, (*colors)[links.front()]);
    io(out, true, stages.back().outRows, (*colors)[links.back()]);

    for (size_t i = 0; i < stages.size(); ++i) {
      Stage &s = stages[i];
      int64_t cin = (*colors)[links[i]], cout = (*colors)[links[i + 1]];
      StringRef name = s.kernel.getSymName();
      if (s.dense) {
        DenseColors dc;
        dc.in = cin;
        dc.out = cout;
        dc.column = (*colors)[s.bStream];
        dc.psum[0] = (*colors)[s.pStream[0]];
        dc.psum[1] = (*colors)[s.pStream[1]];
        Emitter emitter(b, s.kernel.getLoc(), s.layer, s.m, dc, name);
        emitter.emitGroups();
      } else {
        s.column.inColor = cin;
        s.column.outColor = cout;
        for (int64_t j : s.internalStreams)
          s.column.internal.push_back((*colors)[j]);
        if (failed(emitColumnKernel(b, s.kernel.getLoc(), s.column, name,
                                    name)))
          return failure();
      }
    }
    if (x < gridW) {
      int64_t rows = stages.back().outRows, w = gridW - x;
      OperationState r(loc, rows * w > 1 ? wv::PeGroupOp::getOperationName()
                                         : wv::PeOp::getOperationName());
      r.addAttribute(SymbolTable::getSymbolAttrName(),
                     b.getStringAttr("relay_east"));
      if (rows * w > 1) {
        r.addAttribute("rect", fab::RectAttr::get(ctx, x, 0, w, rows));
      } else {
        r.addAttribute("x", b.getI64IntegerAttr(x));
        r.addAttribute("y", b.getI64IntegerAttr(0));
      }
      r.addRegion()->emplaceBlock();
      Operation *pe = b.create(r);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&pe->getRegion(0).front());
      OperationState rt(loc, wv::RouteOp::getOperationName());
      rt.addAttribute("color", b.getI64IntegerAttr((*colors)[links.back()]));
      rt.addAttribute("inputs", b.getI32IntegerAttr(bit(wt::Dir::West)));
      rt.addAttribute("outputs", b.getI32IntegerAttr(bit(wt::Dir::East)));
      b.create(rt);
    }
    program.erase();
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> createLowerFabricToWaveletPass() {
  return std::make_unique<LowerFabricToWaveletPass>();
}

void registerLowerFabricToWaveletPass() {
  PassRegistration<LowerFabricToWaveletPass>();
}

} // namespace weft::conversion
