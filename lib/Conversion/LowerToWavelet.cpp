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
#include "weft/Conversion/Graph.h"
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
#include <set>

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
  int64_t in = 1;           // A: input chunk c along row c (the stream in)
  int64_t column = 2;       // B: input chunk c down column c
  int64_t psum[2] = {3, 4}; // the hop leaving column c has psum[(c + 1) % 2]
  int64_t out = 5;          // the last column's results (the stream out)
};

class Emitter : WaveletBuilder {
public:
  Emitter(OpBuilder &b, Location loc, const DenseLayer &layer,
          const DenseMapping &m, const DenseColors &colors, StringRef layerName,
          const RouteTable &routes)
      : WaveletBuilder(b, loc), layer(layer), m(m), colors(colors),
        layerName(layerName), routes(routes) {}

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
  const RouteTable &routes;
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
  role.columnIn = r == c  ? wt::Dir::Ramp
                  : r < c ? wt::Dir::South
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

void Emitter::emitGroup(int64_t c, int64_t r0, int64_t r1, const Role &role) {
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
  std::string name = (layerName + "_c" + Twine(c) + "_r" + Twine(r0) +
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

  // The router settings --weft-route-streams chose (PEs with equal roles
  // have equal ones).
  routesAt(routes, px, py);
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

/// Router-only PEs: every PE the routes pass that no kernel's program
/// covers gets its router settings alone (relays between kernels and to
/// the east edge). PEs with equal settings form rectangles: runs down a
/// column, merged with the same run of the column to the west.
static void emitRelays(OpBuilder &b, Location loc, Operation *wprog,
                       const RouteTable &table) {
  MLIRContext *ctx = b.getContext();
  std::set<std::pair<int64_t, int64_t>> covered;
  for (Operation &op : wprog->getRegion(0).front()) {
    if (auto g = dyn_cast<wv::PeGroupOp>(op)) {
      fab::RectAttr r = g.getRect();
      for (int64_t dx = 0; dx < int64_t(r.getWidth()); ++dx)
        for (int64_t dy = 0; dy < int64_t(r.getHeight()); ++dy)
          covered.insert({r.getX() + dx, r.getY() + dy});
    } else if (auto pe = dyn_cast<wv::PeOp>(op)) {
      covered.insert({int64_t(pe.getX()), int64_t(pe.getY())});
    }
  }
  auto same = [&](std::pair<int64_t, int64_t> a,
                  std::pair<int64_t, int64_t> c) {
    const auto &x = table.at(a), &y = table.at(c);
    if (x.size() != y.size())
      return false;
    for (auto [p, q] : llvm::zip(x, y))
      if (p.first != q.first || p.second.in != q.second.in ||
          p.second.out != q.second.out)
        return false;
    return true;
  };
  // Runs down each column: (x, y0, height), in column order.
  struct Run {
    int64_t x, y, w, h;
  };
  std::vector<Run> runs;
  for (auto it = table.begin(); it != table.end(); ++it) {
    auto [pe, colors] = *it;
    if (covered.count(pe))
      continue;
    if (!runs.empty()) {
      Run &last = runs.back();
      if (last.x == pe.first && last.y + last.h == pe.second &&
          same({last.x, last.y}, pe)) {
        ++last.h;
        continue;
      }
    }
    runs.push_back({pe.first, pe.second, 1, 1});
  }
  // Merge equal runs of neighbouring columns into rectangles.
  std::vector<Run> rects;
  for (const Run &r : runs) {
    auto prev = llvm::find_if(llvm::reverse(rects), [&](const Run &q) {
      return q.x + q.w == r.x && q.y == r.y && q.h == r.h;
    });
    if (prev != rects.rend()) {
      bool equal = true;
      for (int64_t dy = 0; dy < r.h && equal; ++dy)
        equal = same({prev->x, r.y + dy}, {r.x, r.y + dy});
      if (equal) {
        ++prev->w;
        continue;
      }
    }
    rects.push_back(r);
  }
  for (const Run &r : rects) {
    std::string name =
        ("relay_" + Twine(r.x) + "_" + Twine(r.y)).str();
    OperationState st(loc, r.w * r.h > 1 ? wv::PeGroupOp::getOperationName()
                                         : wv::PeOp::getOperationName());
    st.addAttribute(SymbolTable::getSymbolAttrName(), b.getStringAttr(name));
    if (r.w * r.h > 1) {
      st.addAttribute("rect", fab::RectAttr::get(ctx, r.x, r.y, r.w, r.h));
    } else {
      st.addAttribute("x", b.getI64IntegerAttr(r.x));
      st.addAttribute("y", b.getI64IntegerAttr(r.y));
    }
    st.addRegion()->emplaceBlock();
    Operation *pe = b.create(st);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&pe->getRegion(0).front());
    WaveletBuilder(b, loc).routesAt(table, r.x, r.y);
  }
}

struct LowerFabricToWaveletPass
    : PassWrapper<LowerFabricToWaveletPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerFabricToWaveletPass)

  StringRef getArgument() const final { return "weft-lower-fabric-to-wavelet"; }
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

  LogicalResult lower(fab::ProgramOp program) {
    MLIRContext *ctx = program.getContext();
    FailureOr<Graph> graph = analyzeGraph(program, /*placed=*/true);
    if (failed(graph))
      return failure();
    std::vector<Stage> &stages = graph->stages;
    auto target = program.getTargetAttr();

    // The routes and colors --weft-route-streams and --weft-allocate-colors
    // chose: the router settings by PE, the color of every stream (channel
    // "") and kernel channel by (symbol, channel).
    RouteTable table;
    std::map<std::pair<std::string, std::string>, int64_t> colorOf;
    llvm::DenseMap<std::tuple<int64_t, int64_t, int64_t>, std::string> owner;
    Block &body = program.getBody().front();
    for (auto r : body.getOps<fab::RouteOp>()) {
      fab::ColorAttr c = r.getColorAttr();
      if (!c)
        return r.emitOpError("has no color: run --weft-allocate-colors "
                             "first");
      colorOf[{r.getStream().str(), r.getChannel().value_or("").str()}] =
          c.getValue();
      for (auto sw : r.getBody().front().getOps<fab::SwitchOp>()) {
        int64_t px = sw.getX(), py = sw.getY();
        table[{px, py}][c.getValue()] =
            Switch{DirSet(sw.getInputs()), DirSet(sw.getOutputs())};
        owner[{px, py, int64_t(c.getValue())}] = r.getRouteName();
      }
    }
    for (auto s : body.getOps<fab::StreamOp>())
      if (!colorOf.count({s.getSymName().str(), ""}))
        return s.emitOpError("has no route: run --weft-route-streams and "
                             "--weft-allocate-colors first");
    auto colorOfStream = [&](fab::StreamOp s) -> int64_t {
      return colorOf.at({s.getSymName().str(), ""});
    };
    auto streamColor = [&](int64_t stream) {
      return colorOfStream(graph->streams[size_t(stream)].op);
    };
    auto channelColor = [&](StringRef node, StringRef channel) -> int64_t {
      auto it = colorOf.find({node.str(), channel.str()});
      return it == colorOf.end() ? -1 : it->second;
    };

    OpBuilder b(program);
    Location loc = program.getLoc();
    OperationState st(loc, wv::ProgramOp::getOperationName());
    st.addAttribute(SymbolTable::getSymbolAttrName(), program.getSymNameAttr());
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
    // The rows a stream arrives in: its producer's, or (a host input) its
    // consumers'.
    auto streamRows = [&](int64_t stream) -> int64_t {
      const GraphStream &gs = graph->streams[size_t(stream)];
      if (gs.producer >= 0)
        return stages[size_t(gs.producer)].outRows;
      return stages[size_t(gs.consumers.front().first)].inRows;
    };
    for (fab::IoOp in : graph->inputs) {
      int64_t st = graph->streamOf(in);
      io(in, false, streamRows(st), streamColor(st));
    }
    for (fab::IoOp out : graph->outputs) {
      int64_t st = graph->streamOf(out);
      io(out, true, streamRows(st), streamColor(st));
    }

    for (Stage &s : stages) {
      StringRef name = s.kernel.getSymName();
      int64_t cout = streamColor(s.output);
      if (s.dense) {
        if (!s.turn)
          return s.kernel.emitOpError("has no redistribution in front: run "
                                      "--weft-route-streams first");
        fab::RedistributeOp t = s.turn;
        auto rowChunks =
            fab::LayoutAttr::get(ctx, fab::LayoutKind::row_chunks, s.m.smear);
        auto colChunks =
            fab::LayoutAttr::get(ctx, fab::LayoutKind::col_chunks, s.m.smear);
        if (t.getFrom() != rowChunks || t.getTo() != colChunks ||
            t.getRectAttr() !=
                fab::RectAttr::get(ctx, s.m.x0, s.m.y0, s.m.smear, s.m.smear))
          return t.emitOpError("is not the diagonal turn of @")
                 << name << " (from " << rowChunks << " to " << colChunks
                 << " at the " << s.m.smear << "x" << s.m.smear
                 << " square where its columns start); other "
                    "redistributions are not implemented";
        DenseColors dc;
        dc.in = streamColor(s.inputs[0]);
        dc.column = colorOfStream(s.turnStream);
        dc.out = cout;
        // (-1 for a parity no hop uses: a layer of one or two columns.)
        dc.psum[0] = channelColor(name, "psum_even");
        dc.psum[1] = channelColor(name, "psum_odd");
        Emitter emitter(b, s.kernel.getLoc(), s.layer, s.m, dc, name, table);
        emitter.emitGroups();
      } else if (s.join) {
        return s.kernel.emitOpError("JOIN LOWERING PENDING");
      } else {
        s.column.inColor = streamColor(s.inputs[0]);
        s.column.outColor = cout;
        // (-1 for a channel no PE uses, e.g. the even reduction over two
        // rows.)
        for (StringRef ch : {"reduce_even", "reduce_odd", "broadcast"})
          s.column.internal.push_back(channelColor(name, ch));
        if (failed(emitColumnKernel(b, s.kernel.getLoc(), s.column, name, name,
                                    &table)))
          return failure();
      }
    }
    emitRelays(b, loc, wprog, table);
    if (failed(checkRoutes(wprog, table, owner, program)))
      return failure();
    program.erase();
    return success();
  }

  /// Every PE's emitted router settings must be exactly the fabric.route
  /// switches (the emitters share PEs' code by groups, and the column
  /// kernels still state their own routes): an internal error otherwise.
  static LogicalResult checkRoutes(
      Operation *wprog, const RouteTable &table,
      const llvm::DenseMap<std::tuple<int64_t, int64_t, int64_t>, std::string>
          &owner,
      fab::ProgramOp program) {
    RouteTable emitted;
    for (Operation &op : wprog->getRegion(0).front()) {
      fab::RectAttr rect;
      if (auto g = dyn_cast<wv::PeGroupOp>(op))
        rect = g.getRect();
      else if (auto pe = dyn_cast<wv::PeOp>(op))
        rect = fab::RectAttr::get(op.getContext(), pe.getX(), pe.getY(), 1, 1);
      else
        continue;
      for (auto r : op.getRegion(0).getOps<wv::RouteOp>())
        for (int64_t dx = 0; dx < int64_t(rect.getWidth()); ++dx)
          for (int64_t dy = 0; dy < int64_t(rect.getHeight()); ++dy)
            emitted[{rect.getX() + dx, rect.getY() + dy}][r.getColor()] =
                Switch{DirSet(r.getInputs()), DirSet(r.getOutputs())};
    }
    auto describe = [&](std::pair<int64_t, int64_t> pe, int64_t c) {
      auto it = owner.find({pe.first, pe.second, c});
      return it == owner.end() ? std::string("no route")
                               : "the route of " + it->second;
    };
    for (const auto &[pe, colors] : table)
      for (const auto &[c, sw] : colors) {
        auto at = emitted.find(pe);
        const Switch *e = nullptr;
        if (at != emitted.end())
          if (auto it = at->second.find(c); it != at->second.end())
            e = &it->second;
        if (!e || e->in != sw.in || e->out != sw.out)
          return program.emitOpError("lowering error: PE (")
                 << pe.first << ", " << pe.second << ") was not given "
                 << describe(pe, c) << " on color " << c;
      }
    for (const auto &[pe, colors] : emitted)
      for (const auto &[c, sw] : colors) {
        auto at = table.find(pe);
        if (at == table.end() || !at->second.count(c))
          return program.emitOpError("lowering error: PE (")
                 << pe.first << ", " << pe.second << ") routes color " << c
                 << ", which no fabric.route gives it";
      }
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
