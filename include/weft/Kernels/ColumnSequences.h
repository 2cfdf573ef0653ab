//===- ColumnSequences.h - A column kernel's PE program as data -*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). What a PE of a column kernel holds and runs
// (docs/execution-model.md, "Column kernels"): its memory map, its GPRs,
// and, for the elementwise ops with constants and the expressions, the
// instruction sequence as a list of vector steps over named vectors. The
// emitter (weft/Conversion/ColumnKernels.h) turns the steps into wavelet
// ops; the cost model (predictColumnKernelCycles) prices the same steps.
//
// Every PE runs one task that never ends: it loads its DSRs once and then
// loops over samples (a `jump` back costs one cycle; re-activating a task
// would cost an activate and a pick). The main thread only ever waits for
// wavelets that other PEs (or the host) send, and only ever sends wavelets
// that other PEs consume, so no send can wait on its own CE.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_COLUMNSEQUENCES_H
#define WEFT_KERNELS_COLUMNSEQUENCES_H

#include "weft/Kernels/ColumnKernel.h"
#include "weft/Machine/ISA.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace weft::conversion::column {

//===----------------------------------------------------------------------===//
// Memory map and registers
//===----------------------------------------------------------------------===//

// PE memory map, in words: task table 0..639, code from slot 320, DSD
// records from word 1024, data from 1152 (as the dense layer).
inline constexpr int64_t kDsdBase = 1024;
inline constexpr int64_t kDataBase = 1152;
inline constexpr int64_t kMainTask = 32;

// GPR pairs: the running maximum and the running sum.
inline constexpr int32_t kGprMax = 6, kGprSum = 8;
// AxisSoftmax's loop registers (16-bit word offsets into the chunk; GPR 4
// is the group's offset, which the `ix` DSD adds to its base): the end of
// the chunk, the end of the current block's first row and its initial
// value, the step to the next block after its I groups (or to the next
// group when I = 1), and a block's length.
inline constexpr int32_t kGprEnd = 10, kGprInnerEnd = 11, kGprInnerEnd0 = 12,
                         kGprSkip = 13, kGprBlock = 14;

/// The shape of AxisSoftmax's loops on a chunk of L elements.
struct AxisLoop {
  int64_t group = 1, stride = 1;  // G, I
  int64_t groups = 0, blocks = 0; // per chunk
};
AxisLoop axisLoop(const ColumnKernel &k, int64_t L);

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
  kRecBuf3,   // mem1d L at buf3 (the elementwise sequences' third vector)
  kRecConst,  // mem1d L: this PE's chunk of the constant tensor
};

/// The ops of the original five (Relu, Sigmoid, Tanh, Softmax, LogSoftmax),
/// emitted and costed by their own code rather than as steps.
bool isClassic(ColumnOp op);

/// The buffer slot of the constant tensor's chunk (after the sequence's).
inline int64_t constSlot(ColumnOp op) { return columnBuffers(op) - 1; }

//===----------------------------------------------------------------------===//
// Instruction sequences of the elementwise ops with constants
//===----------------------------------------------------------------------===//

/// Where an operand of a sequence step lives: one of the kernel's vectors
/// (in, out, buf, buf2, buf3), a GPR pair holding a constant, or a small
/// immediate.
struct Opnd {
  enum Kind { Vec, Gpr, Imm } kind = Vec;
  int32_t value = 0; // Vec: a Rec; Gpr: the pair's first GPR; Imm: SmallImm
};

/// One vector instruction over the chunk: dst = op(src0[, src1]).
struct Step {
  machine::Opcode op;
  int32_t dst, src0; // Recs
  std::optional<Opnd> src1;
};

// The buffers of the sequences (DSD record indices after the softmax ones).
inline constexpr int32_t kVecIn = 0, kVecOut = 1, kVecBuf = 2, kVecBuf2 = 3,
                         kVecBuf3 = 8, kVecConst = 9;
// Vectors beyond those: buffers 4 and 5, 16-bit views of a buffer's low
// and high halves (stride 2), and the constants kept in memory. Their DSD
// records are numbered from kRecFirstFree in the order of these ids.
inline constexpr int32_t kVecBuf4 = 10, kVecBuf5 = 11;
// An Expression's buffers beyond buf5 (ids 12 .. 19, slots 5 ..).
inline constexpr int32_t kVecBuf6 = 12;
inline constexpr int32_t kVecLo0 = 20, kVecHi0 = 30, kVecMem0 = 40;
inline constexpr int32_t kRecFirstFree = 10;
/// The low (high) 16-bit halves of buffer `b`'s elements.
constexpr int32_t lowHalves(int32_t slot) { return kVecLo0 + slot; }
constexpr int32_t highHalves(int32_t slot) { return kVecHi0 + slot; }
// The constants: the first six live in GPR pairs 10/11, 12/13, 14/15, 2/3,
// 6/7 and 8/9 (GPRs 0/1 take picked wavelets, 4 is the index register; the
// elementwise ops use no softmax registers); the others in a table at
// kConstTable, each read through a mem1d DSD of stride 0, which gives the
// same value for every element. Records end below the table.
inline constexpr int32_t kGprConst[] = {10, 12, 14, 2, 6, 8};
inline constexpr int64_t kNumGprConsts = 6;
inline constexpr int64_t kConstTable = 1120;
inline constexpr int64_t kMaxMemConsts = (kDsdBase + 128 - kConstTable) / 2;
inline constexpr int64_t kMaxRecords = (kConstTable - kDsdBase) / 4;

/// The buffer slot of a buffer id (buf .. buf5, then an Expression's).
int64_t slotOf(int32_t id);

/// The kernel's params with a default for a missing one (0).
float param(const ColumnKernel &k, size_t i);

/// The constants the sequence keeps in GPR pairs kGprConst[i] (and, beyond
/// kNumGprConsts, in the table at kConstTable).
std::vector<float> registerConstants(const ColumnKernel &k);

/// Constant i of registerConstants: a GPR pair or a memory constant.
Opnd constant(int64_t i);

inline constexpr Opnd kZero{Opnd::Imm, int32_t(machine::SmallImm::Zero)},
    kOne{Opnd::Imm, int32_t(machine::SmallImm::One)},
    kMinusOne{Opnd::Imm, int32_t(machine::SmallImm::MinusOne)},
    kHalf{Opnd::Imm, int32_t(machine::SmallImm::Half)},
    kTwo{Opnd::Imm, int32_t(machine::SmallImm::Two)};
inline Opnd vec(int32_t id) { return {Opnd::Vec, id}; }

/// The steps of a kernel that is not classic (isClassic) nor an axis
/// softmax: per sample, every step runs once over the PE's chunk.
std::vector<Step> sequenceOf(const ColumnKernel &k);

/// Which DSRs the steps use. A (dst, src0) pair is `dsr n` (DDSR n and
/// S0DSR n) and a vector second source S1DSR n. Up to 12 of each are
/// loaded once before the loop; with more, the first 11 are, and the
/// others share DSR 11, loaded again before each step that needs another
/// one than it holds (2 cycles for a pair, 1 for a second source).
struct DsrPlan {
  struct Use {
    int32_t pair = 0, s1 = 0;
    bool loadPair = false, loadS1 = false;
  };
  std::vector<std::pair<int32_t, int32_t>> pairs; ///< loaded before the loop
  std::vector<int32_t> s1;                        ///< loaded before the loop
  std::vector<Use> uses;                          ///< per step
};
DsrPlan planDsrs(const std::vector<Step> &steps);

} // namespace weft::conversion::column

#endif // WEFT_KERNELS_COLUMNSEQUENCES_H
