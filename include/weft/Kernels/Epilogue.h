//===- Epilogue.h - A convolution's fused activation ------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). An activation fused into the convolution or
// depthwise convolution that produces its input (docs/execution-model.md,
// "Fused activations"): an Expression program (weft/Kernels/Expression.h)
// that the PE sending an output row applies to its output buffer before the
// send. It is compiled by the expression compiler into the same vector
// steps a column kernel runs, with `in` and `out` both the output buffer
// (the program reads x once and writes its result last, so the buffer is
// updated in place); its other buffers hold one output row each and its
// constants beyond the GPRs' sit in the kernel's memory map.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_EPILOGUE_H
#define WEFT_KERNELS_EPILOGUE_H

#include "weft/Kernels/Expression.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::conversion {

/// An epilogue compiled for output rows: the steps, and the vectors other
/// than the output buffer (kVecIn / kVecOut) they name, in increasing id
/// order (one DSD record each).
struct EpilogueCode {
  column::ExprCode code;
  std::vector<int32_t> vectors;
  /// Constants beyond the GPR pairs (a table in memory).
  int64_t memoryConstants() const;
};

/// Compiles an Expression program as an epilogue; code.error says why it
/// cannot be one.
EpilogueCode compileEpilogue(const std::vector<float> &program);

/// The Expression program of column op `op` with its `params` when it can
/// be fused as an epilogue (Sigmoid, Tanh, HardSigmoid, HardSwish,
/// LeakyRelu, Clip, Softplus, Softsign, an Expression, and the unary ops an
/// expression node applies), each with its kernel's instructions; nothing
/// for the others (softmax, the ops with a constant tensor, Elu, ...).
std::optional<std::vector<float>>
epilogueProgram(ColumnOp op, const std::vector<float> &params);

/// The DSR loads of each step (into the one scratch DSR): a register that
/// already holds the step's vector from the step before is not reloaded
/// (`in` and `out` are the same output buffer). Each row starts with none
/// loaded.
struct EpilogueLoads {
  bool d = false, s0 = false, s1 = false;
  int64_t count() const { return int64_t(d) + int64_t(s0) + int64_t(s1); }
};
std::vector<EpilogueLoads> epilogueLoads(const EpilogueCode &e);

/// DSD records the epilogue adds to its kernel.
int64_t epilogueRecords(const EpilogueCode &e);

/// Words of PE memory for rows of `rowLen` elements: its buffers (one row
/// each) and its memory constants.
int64_t epilogueWords(const EpilogueCode &e, int64_t rowLen);

/// Instructions per output row: every step's DSR loads (epilogueLoads),
/// then the step.
int64_t epilogueInstructions(const EpilogueCode &e);

/// Cycles per output row of `rowLen` elements.
int64_t epilogueCycles(const EpilogueCode &e, int64_t rowLen);

/// Of those, the cycles that leave the datapath to the microthreads (the
/// DSR loads and the vector instructions' startups).
int64_t epilogueFreeCycles(const EpilogueCode &e);

} // namespace weft::conversion

#endif // WEFT_KERNELS_EPILOGUE_H
