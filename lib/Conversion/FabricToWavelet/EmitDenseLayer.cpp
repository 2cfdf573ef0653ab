//===- EmitDenseLayer.cpp - Dense layers to per-PE wavelet programs -----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits the per-PE programs of docs/execution-model.md ("Dense layer") for
// one placed dense layer: routes, DSD records, weights as per-PE segments,
// and the init, multiply-accumulate, closeout and input-copy tasks. PEs
// with the same role form one wavelet.pe_group, so the binary shares their
// code.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/DenseLayer.h"

#include "SmearedLayout.h"
#include "WaveletBuilder.h"

#include "fabric/FabricOps.h"
#include "wavelet/WaveletOps.h"

#include "weft/Machine/ISA.h"
#include "weft/Machine/Numerics.h"
#include "weft/Machine/Sliced.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
namespace wt = weft::machine;
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
/// A sparse output's last column: the sends of the even and odd samples'
/// results, and the task that sends a chunk's closeout after them.
constexpr int64_t kSparseSendTask[2] = {38, 39}, kResultsCloseoutTask = 37;
/// A sparse output's last column: the samples whose send or closeout is
/// not out yet.
constexpr int32_t kGprPendingSends = 6;

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
  kDsdSendCloseout,
};

using Role = SmearedRole;

/// Geometry of one group of PEs of column c, rows [r0, r1): chunk sizes and
/// word addresses.
struct Group {
  int64_t c = 0, r0 = 0, r1 = 0, h = 1;
  bool first = false, last = false, mixed = false, hasBias = false;
  bool sparseIn = false, sparseOut = false, sliced = false;
  /// Words per weight element and per weight column (a sliced column has
  /// its lane masks after the packed slots).
  int64_t lk = 0, lm = 0, kb = 0, wWords = 2, colWords = 0;
  int64_t accBase = 0, biasBase = 0, wBase = 0, outBase = 0;
  int64_t pin = 0, pout = 0; // partial sums in, results out
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
  Group groupOf(int64_t c, int64_t r0, int64_t r1, const Role &role) const;
  void emitGroup(int64_t c, int64_t r0, int64_t r1, const Role &role);
  /// The weights (and bias) of every PE of the group, as per-PE segments.
  void emitSegments(const Group &grp);
  void emitComputeDsds(const Group &grp, const Role &role);
  void emitComputeTasks(const Group &grp, const Role &role);
  /// The diagonal PE's input-to-column copy: its DSDs and tasks.
  void emitCopyDsds(int64_t lk);
  /// (DSR 11 and the closeout task of a sparse output's last column.)
  void loadCopyDsrs();
  void emitCopyTasks();
  void dsd(StringRef name, int64_t index, const DsdFields &fields) {
    dsdAt(name, kDsdBase + 4 * index, fields);
  }
  ElementsAttr blob(StringRef name, ArrayRef<int64_t> shape, Type elem,
                    ArrayRef<char> bytes);

  const DenseLayer &layer;
  const DenseMapping &m;
  DenseColors colors;
  StringRef layerName;
  const RouteTable &routes;
  unsigned blobs = 0;
};

ElementsAttr Emitter::blob(StringRef name, ArrayRef<int64_t> shape, Type elem,
                           ArrayRef<char> bytes) {
  auto type = RankedTensorType::get(shape, elem);
  std::string key = (layerName + "_" + name + "_" + Twine(blobs++)).str();
  return DenseResourceElementsAttr::get(
      type, key, HeapAsmResourceBlob::allocateAndCopyInferAlign(bytes));
}

void Emitter::emitCopyDsds(int64_t lk) {
  // A sparse input is copied with its indices (a sparse send forwards
  // them) until the producer's closeout ends it: at most lk values and the
  // closeout, which the copy consumes.
  if (layer.sparseIn) {
    DsdFields in = DsdFields::fabin(lk + 1, colors.in).withFormat("sparse16");
    in.term = true;
    dsd("in", kDsdIn, in);
  } else {
    dsd("in", kDsdIn, DsdFields::fabin(lk, colors.in));
  }
  // The copy runs on microthread 0 and starts the task that sends the
  // closeout when its last wavelet has entered the on-ramp; the closeout
  // goes out on microthread 1 and starts the next copy. So no send ever
  // blocks the main thread, which must keep consuming the column's data (its
  // own CE queue is one of the multicast's destinations), and a chunk never
  // overtakes the previous closeout.
  for (int k = 0; k < 2; ++k) {
    DsdFields out = DsdFields::fabout(layer.sparseIn ? lk + 1 : lk,
                                      colors.column)
                        .withUtid(0)
                        .withAc(kCloseTask[k]);
    if (layer.sparseIn)
      out.withFormat("sparse16").withSkipZeros();
    dsd(k ? "column_out_odd" : "column_out_even",
        k ? kDsdColumnOut1 : kDsdColumnOut0, out);
    dsd(k ? "close_odd" : "close_even", k ? kDsdClose1 : kDsdClose0,
        DsdFields::fabout(1, colors.column)
            .withFormat("sparse16")
            .withCtrl()
            .withIndex(kCloseoutIndex[k])
            .withUtid(1)
            .withAc(kCopyTask[1 - k]));
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
  for (int k = 0; k < 2; ++k) {
    {
      wv::TaskOp t = task(k ? "copy_odd" : "copy_even", wv::TaskKind::local,
                          kCopyTask[k], false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&t.getBody().front());
      int32_t d = k ? 7 : 5;
      inst(layer.sparseIn ? Opcode::MOV16 : Opcode::MOV32, {ddsr(d), s0(d)},
           true);
    }
    {
      wv::TaskOp t = task(k ? "send_closeout_odd" : "send_closeout_even",
                          wv::TaskKind::local, kCloseTask[k], false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&t.getBody().front());
      inst(Opcode::MOV16, {ddsr(k ? 10 : 6), imm(wt::SmallImm::Zero)}, true);
    }
  }
}

Group Emitter::groupOf(int64_t c, int64_t r0, int64_t r1,
                       const Role &role) const {
  Group grp;
  grp.c = c;
  grp.r0 = r0;
  grp.r1 = r1;
  grp.h = r1 - r0;
  int64_t S = m.smear;
  grp.first = c == 0;
  grp.last = c == S - 1;
  grp.mixed = m.precision == Precision::Mixed;
  grp.lk = chunkSize(layer.K, S, c);
  grp.lm = role.lm;
  grp.kb = chunkBegin(layer.K, S, c);
  grp.wWords = grp.mixed ? 1 : 2;
  grp.accBase = kDataBase;
  grp.biasBase = grp.accBase + 2 * grp.lm;
  grp.wBase = grp.biasBase + 2 * grp.lm;
  grp.sliced = layer.slicedWeights;
  grp.colWords = weightColumnWords(grp.lm, grp.mixed, grp.sliced);
  grp.outBase = grp.wBase + grp.lk * grp.colWords;
  grp.hasBias = grp.last && !layer.bias.empty();
  grp.sparseIn = layer.sparseIn;
  grp.sparseOut = grp.last && layer.sparseOut;
  grp.pin = colors.psum[c % 2];
  grp.pout = grp.last ? colors.out : colors.psum[(c + 1) % 2];
  return grp;
}

void Emitter::emitGroup(int64_t c, int64_t r0, int64_t r1, const Role &role) {
  const Group grp = groupOf(c, r0, r1, role);
  int64_t lk = grp.lk;

  // The group (or a single PE), with the router settings
  // --weft-route-streams chose (PEs with equal roles have equal ones).
  Block *body =
      columnGroup(layerName, c, m.x0 + c, m.y0, r0, r1, routes);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(body);
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
      inst(Opcode::ACTIVATE, {lit(kCopyTask[0])});
      inst(Opcode::NOP, {}, true);
    }
    emitCopyTasks();
    return;
  }
  // Per-PE parameters: gpr 5 = words per weight column.
  { constParam(5, grp.colWords); }

  emitSegments(grp);
  emitComputeDsds(grp, role);
  emitComputeTasks(grp, role);
}

void Emitter::emitSegments(const Group &grp) {
  const bool mixed = grp.mixed;
  const int64_t h = grp.h, lk = grp.lk, lm = grp.lm, kb = grp.kb, r0 = grp.r0,
                r1 = grp.r1;
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
    wv::SegmentOp::create(b, loc, sym, address, /*per_pe=*/true,
                          blob(blobName, {h, 1, per}, elem, bytes));
  };
  // Input element t of the chunk is x[kb + t], or (a feature-map input,
  // pixel-major per chunk of whole channels) pixel t / Lc of channel
  // c Lc + t % Lc.
  auto inputIndex = [&](int64_t t) {
    if (!layer.inputPixels)
      return kb + t;
    return featureMapIndex(grp.c, lk, layer.inputPixels, t);
  };
  if (grp.sliced) {
    // Each column t (the lm weights input element t meets) packed as a
    // sliced vector: its words as raw i16.
    std::vector<char> bytes;
    bytes.reserve(size_t(h * lk * grp.colWords * 2));
    for (int64_t r = r0; r < r1; ++r) {
      int64_t mb = chunkBegin(layer.M, m.rows, r);
      for (int64_t t = 0; t < lk; ++t) {
        std::vector<uint32_t> column;
        column.reserve(size_t(lm));
        for (int64_t n = 0; n < lm; ++n) {
          float v = layer.weights[size_t(inputIndex(t) * layer.M + mb + n)];
          column.push_back(mixed ? uint32_t(wt::f32ToF16(v))
                                 : wt::f32ToBits(v));
        }
        for (uint16_t word : wt::packSliced(column, mixed ? 1 : 2)) {
          bytes.push_back(char(word & 0xff));
          bytes.push_back(char(word >> 8));
        }
      }
    }
    segment("weights", grp.wBase, "w", lk * grp.colWords,
            b.getIntegerType(16), bytes);
  } else {
    std::vector<char> bytes;
    bytes.reserve(size_t(h * lk * lm * (mixed ? 2 : 4)));
    for (int64_t r = r0; r < r1; ++r) {
      int64_t mb = chunkBegin(layer.M, m.rows, r);
      for (int64_t t = 0; t < lk; ++t)
        for (int64_t n = 0; n < lm; ++n)
          put(bytes,
              layer.weights[size_t(inputIndex(t) * layer.M + mb + n)]);
    }
    segment("weights", grp.wBase, "w", lk * lm,
            mixed ? Type(b.getF16Type()) : Type(b.getF32Type()), bytes);
  }
  if (grp.hasBias) {
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
    segment("bias_data", grp.biasBase, "b", lm, b.getF32Type(), bytes);
  }
}

void Emitter::emitComputeDsds(const Group &grp, const Role &role) {
  const int64_t lm = grp.lm;
  DsdFields w = DsdFields::mem1d(lm, grp.wBase).withIx();
  if (grp.sliced)
    w.withSliced();
  dsd("w", kDsdW, w);
  dsd("acc", kDsdAcc, DsdFields::mem1d(lm, grp.accBase));
  if (!grp.first)
    dsd("psum_in", kDsdPsumIn, DsdFields::fabin(lm, grp.pin));
  if (!grp.last) {
    dsd("psum_out", kDsdPsumOut, DsdFields::fabout(lm, grp.pout));
  } else {
    // The last column's results go to one of two buffers, alternating by
    // sample, and out on microthread 3, so the next sample's work overlaps
    // the send (docs/execution-model.md, "Chains of layers").
    // A sparse output: fp16 buffers, sent by a sparse send (only the
    // non-zero results, with their index in the chunk), whose completion
    // starts the task that sends the closeout on the same microthread.
    for (int k = 0; k < 2; ++k) {
      int64_t bufWords = grp.sparseOut ? lm : 2 * lm;
      dsd(k ? "out_buf_odd" : "out_buf_even", k ? kDsdOutBuf1 : kDsdOutBuf0,
          DsdFields::mem1d(lm, grp.outBase + bufWords * k));
      DsdFields send = DsdFields::fabout(lm, grp.pout).withUtid(3);
      if (grp.sparseOut)
        send.withFormat("sparse16").withSkipZeros().withAc(
            kResultsCloseoutTask);
      dsd(k ? "send_odd" : "send_even", k ? kDsdSend1 : kDsdSend0, send);
    }
    if (grp.sparseOut)
      dsd("results_closeout", kDsdSendCloseout,
          DsdFields::fabout(1, grp.pout)
              .withFormat("sparse16")
              .withCtrl()
              .withIndex(kCloseoutIndex[0])
              .withUtid(3));
  }
  if (grp.hasBias)
    dsd("bias", kDsdBias, DsdFields::mem1d(lm, grp.biasBase));
  if (role.diagonal)
    emitCopyDsds(grp.lk);
}

void Emitter::emitComputeTasks(const Group &grp, const Role &role) {
  const bool first = grp.first, last = grp.last, mixed = grp.mixed,
             hasBias = grp.hasBias, sparseIn = grp.sparseIn,
             sparseOut = grp.sparseOut;
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
      // DSRs 3 and 4: acc -> buffer (fp32 ReLU); sparse: buffer -> buffer
      // (fp16 ReLU), with S0DSR 11 the accumulator for the conversion and
      // DDSR 11 the closeout.
      dsrLoad(wv::RegFile::s0dsr, 3, grp.sparseOut ? "out_buf_even" : "acc");
      dsrLoad(wv::RegFile::ddsr, 3, "out_buf_even");
      dsrLoad(wv::RegFile::s0dsr, 4, grp.sparseOut ? "out_buf_odd" : "acc");
      dsrLoad(wv::RegFile::ddsr, 4, "out_buf_odd");
      if (grp.sparseOut) {
        dsrLoad(wv::RegFile::s0dsr, 11, "acc");
        dsrLoad(wv::RegFile::ddsr, 11, "results_closeout");
      }
      dsrLoad(wv::RegFile::s0dsr, 8, "out_buf_even");
      dsrLoad(wv::RegFile::ddsr, 8, "send_even");
      dsrLoad(wv::RegFile::s0dsr, 9, "out_buf_odd");
      dsrLoad(wv::RegFile::ddsr, 9, "send_odd");
    }
    if (role.diagonal) {
      loadCopyDsrs();
    }
    inst(Opcode::MOVI, {gpr(4), lit(0)});
    if (sparseOut)
      inst(Opcode::MOVI, {gpr(kGprPendingSends), lit(0)});
    inst(Opcode::MOV32, {ddsr(0), imm(wt::SmallImm::Zero)});
    if (role.diagonal)
      inst(Opcode::ACTIVATE, {lit(kCopyTask[0])});
    inst(Opcode::NOP, {}, true);
  }
  // One input element x (in gpr 0/1): acc += W[:, t] * x; t += 1. A sparse
  // input's element is an fp16 x in gpr 0 and its index t in gpr 1: the
  // weight column is t times the column stride, and zeros never come.
  {
    wv::TaskOp t = task("mac", wv::TaskKind::data, colors.column, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&t.getBody().front());
    if (sparseIn) {
      inst(Opcode::MOV16, {gpr(4), gpr(1)});
      inst(Opcode::MUL16, {gpr(4), gpr(5)});
      inst(Opcode::FMACHS, {dsr(0), gpr(0)}, true);
    } else if (mixed) {
      inst(Opcode::FF2H, {gpr(2), gpr(0)});
      inst(Opcode::FMACHS, {dsr(0), gpr(2)});
    } else {
      inst(Opcode::FMAC, {dsr(0), gpr(0)});
    }
    if (!sparseIn)
      inst(Opcode::ADD16, {gpr(4), gpr(5)}, true);
  }
  // The closeouts after each chunk (index 1 after even samples, 2 after
  // odd ones): reduce the partial sums along the row.
  for (int k = 0; k < 2; ++k) {
    wv::TaskOp t = task(k ? "closeout_odd" : "closeout_even",
                        wv::TaskKind::control, kCloseoutIndex[k], false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&t.getBody().front());
    inst(Opcode::MOVI, {gpr(4), lit(0)});
    if (first && !last) {
      inst(Opcode::MOV32, {ddsr(1), s0(1)});
    } else if (!last) {
      inst(Opcode::FADD, {dsr(1), s1(1)});
    } else {
      if (!first)
        inst(Opcode::FADD, {dsr(1), s1(1)});
      if (hasBias)
        inst(Opcode::FADD, {dsr(2), s1(2)});
      int32_t buf = 3 + k, send = 8 + k;
      if (sparseOut) {
        // fp16 first, then the ReLU in fp16: the same values (the
        // conversion keeps signs and order), half the cycles.
        inst(Opcode::FF2H, {ddsr(buf), s0(11)});
        inst(Opcode::FMAXH, {dsr(buf), imm(wt::SmallImm::Zero)});
      } else if (layer.relu) {
        inst(Opcode::FMAX, {dsr(buf), imm(wt::SmallImm::Zero)});
      } else {
        inst(Opcode::MOV32, {ddsr(buf), s0(buf)});
      }
      // Launches the send on microthread 3 (it waits for the previous one).
      // A sparse output's send is a task of its own, which waits (blocked)
      // until the previous chunk's closeout is out.
      if (sparseOut) {
        // One more sample waits for its send. With two (the previous one's
        // send or closeout still out), block the column's color until that
        // closeout is out: the next sample's closeout would overwrite the
        // previous buffer of this parity and re-activate its send task
        // before it ran.
        inst(Opcode::ACTIVATE, {lit(kSparseSendTask[k])});
        inst(Opcode::ADD16, {gpr(kGprPendingSends), imm(wt::SmallImm::One)});
        inst(Opcode::CEQ16, {gpr(kGprPendingSends), imm(wt::SmallImm::Two)});
        wv::JumpOp::create(b, loc, "open", wv::JumpCond::if_false);
        inst(Opcode::BLOCK, {lit(colors.column)});
        label("open");
      } else {
        inst(Opcode::MOV32, {ddsr(send), s0(send)});
      }
    }
    inst(Opcode::MOV32, {ddsr(0), imm(wt::SmallImm::Zero)}, true);
  }
  if (sparseOut) {
    // send_even / send_odd: block both sends until this chunk's closeout is
    // out, then launch the sparse send on microthread 3; its completion
    // starts results_closeout, which launches the closeout on the same
    // microthread and unblocks the sends. So the next sample's send never
    // comes between a chunk and its closeout, and no task waits for a send.
    for (int k = 0; k < 2; ++k) {
      wv::TaskOp t = task(k ? "sparse_send_odd" : "sparse_send_even",
                          wv::TaskKind::local, kSparseSendTask[k], false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&t.getBody().front());
      inst(Opcode::BLOCK, {lit(kSparseSendTask[0])});
      inst(Opcode::BLOCK, {lit(kSparseSendTask[1])});
      inst(Opcode::MOV16, {ddsr(8 + k), s0(8 + k)}, true);
    }
    wv::TaskOp t = task("results_closeout_send", wv::TaskKind::local,
                        kResultsCloseoutTask, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&t.getBody().front());
    inst(Opcode::UNBLOCK, {lit(kSparseSendTask[0])});
    inst(Opcode::UNBLOCK, {lit(kSparseSendTask[1])});
    inst(Opcode::SUB16, {gpr(kGprPendingSends), imm(wt::SmallImm::One)});
    inst(Opcode::UNBLOCK, {lit(colors.column)});
    inst(Opcode::MOV16, {ddsr(11), imm(wt::SmallImm::Zero)}, true);
  }
  if (role.diagonal)
    emitCopyTasks();
}

void Emitter::emitGroups() {
  forEachSmearedGroup(m, layer.M, routes,
                      [&](int64_t c, int64_t r0, int64_t r1, const Role &role) {
                        emitGroup(c, r0, r1, role);
                      });
}

} // namespace

void emitDenseLayer(OpBuilder &b, Location loc, const DenseLayer &layer,
                    const DenseMapping &m, const DenseColors &colors,
                    StringRef name, const RouteTable &routes) {
  Emitter(b, loc, layer, m, colors, name, routes).emitGroups();
}

} // namespace weft::conversion
