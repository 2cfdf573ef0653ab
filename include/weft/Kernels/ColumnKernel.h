//===- ColumnKernel.h - Per-row layers on one column of PEs -----*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). Layers that work on a row-chunked vector in place:
// elementwise activations, ops with constants, fused expressions and
// Softmax/LogSoftmax (docs/execution-model.md, "Column kernels"). Such a
// layer occupies one column of PEs, one PE per row chunk of its input; each
// PE receives its chunk from the west, computes, and sends the result east,
// chunk for chunk, so the layout is unchanged. Softmax reduces the row
// maxima and sums across the column and broadcasts them back; a softmax
// over an axis of the sample keeps whole groups on every PE.
//
// This header has the ops, their properties and the cost model; the
// instruction sequences are in weft/Kernels/ColumnSequences.h, the
// expression compiler in weft/Kernels/Expression.h, the linalg matcher and
// the emitter in weft/Conversion/ColumnKernels.h.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_COLUMNKERNEL_H
#define WEFT_KERNELS_COLUMNKERNEL_H

#include "weft/Kernels/Chunks.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace weft::conversion {

enum class ColumnOp {
  Relu,       ///< max(x, 0)
  Sigmoid,    ///< 1 / (1 + exp(-x))
  Tanh,       ///< 2 * sigmoid(2x) - 1
  Softmax,    ///< exp(x - max) / sum(exp(x - max)) over the whole vector
  LogSoftmax, ///< x - max - log(sum(exp(x - max)))
  // Elementwise ops whose constants are `params` (docs/execution-model.md,
  // "Column kernels", has each one's instruction sequence and accuracy).
  Copy,            ///< x (Identity, Dropout at inference, a lone reshape)
  Abs,             ///< |x|
  Neg,             ///< -x
  Exp,             ///< exp(x)
  Log,             ///< log(x)
  Sqrt,            ///< sqrt(x)
  Reciprocal,      ///< 1 / x
  LeakyRelu,       ///< x < 0 ? alpha x : x; params {alpha}
  ThresholdedRelu, ///< x > alpha ? x : 0; params {alpha}
  Elu,             ///< x < 0 ? alpha (exp(x) - 1) : x; params {alpha}
  Selu,            ///< gamma (x > 0 ? x : alpha exp(x) - alpha); {alpha, gamma}
  Softplus,        ///< log(exp(x) + 1)
  Softsign,        ///< x / (1 + |x|)
  HardSigmoid,     ///< max(0, min(1, alpha x + beta)); params {alpha, beta}
  HardSwish,       ///< x max(0, min(1, alpha x + beta)); params {alpha, beta}
  Clip,            ///< min(max(x, lo), hi); params {lo, hi}, -inf/inf if absent
  AddScalar,       ///< x + c; params {c}
  SubScalar,       ///< x - c; params {c}
  ScalarSub,       ///< c - x; params {c}
  MulScalar,       ///< x c; params {c}
  DivScalar,       ///< x / c, computed as x (1 / c); params {c}
  Sign,            ///< x > 0 ? 1 : x < 0 ? -1 : 0
  Floor,           ///< floor(x), exact
  Ceil,            ///< ceil(x), exact
  Round,           ///< x rounded to the nearest integer, ties to even; exact
  Sin,             ///< sin(x): Cody-Waite reduction by pi, odd polynomial
  Cos,             ///< cos(x): as Sin, shifted by half a period
  Erf,             ///< erf(x): odd polynomial below 0.75, 1 - t Q(t) e^-x^2
  Celu,            ///< max(0, x) + min(0, alpha (exp(x / alpha) - 1)); {alpha}
  Square,          ///< x x
  PowScalar,       ///< x^c for a constant c; params {c}
  // Elementwise ops with a constant tensor C (a frozen non-splat operand,
  // broadcast to the sample's shape at compile time): params holds C's n
  // elements and each PE keeps its chunk of them in memory.
  AddTensor, ///< x + C
  SubTensor, ///< x - C
  TensorSub, ///< C - x
  MulTensor, ///< x C
  DivTensor, ///< x / C, computed as x (1 / C)
  MaxTensor, ///< max(x, C)
  MinTensor, ///< min(x, C)
  PRelu,     ///< x < 0 ? C x : x (a per-element slope)
  // Softmax / LogSoftmax over one axis of the sample: the sample is cut into
  // groups of params[0] = G elements, consecutive elements of a group
  // params[1] = I apart (I = 1: the axis is the last non-unit one; I > 1:
  // the product of the dimensions after it). Each PE's chunk holds whole
  // blocks of G I elements (columnRowsAllowed), so no PE talks to another.
  AxisSoftmax,    ///< exp(x - max) / sum(exp(x - max)) per group
  AxisLogSoftmax, ///< x - max - log(sum(exp(x - max))) per group
  // A fused elementwise body of x and scalar constants that no op above
  // matches (SiLU, GELU, Mish...): params encode its SSA ops, four floats
  // per node (docs/execution-model.md, "Expressions"), compiled into one
  // sequence of vector steps over at most kExpressionBuffers buffers.
  Expression,
};

/// The buffers an Expression kernel may use (columnBuffers(Expression)).
constexpr int64_t kExpressionBuffers = 8;

/// The op's name ("Relu", "AxisLogSoftmax", ...), as diagnostics print it.
const char *columnOpName(ColumnOp op);

/// The op named `name` (the inverse of columnOpName), if there is one.
std::optional<ColumnOp> parseColumnOp(std::string_view name);

/// How many constants (ColumnKernel::params) `op` takes; for the ops with a
/// constant tensor (columnTakesTensor) it is the sample's element count
/// instead, and for Expression the length of its program; this returns 0
/// for both.
int64_t columnParamCount(ColumnOp op);

/// Whether `op` combines x with a constant tensor (AddTensor .. PRelu),
/// whose n elements are ColumnKernel::params.
bool columnTakesTensor(ColumnOp op);

/// Whether `op` is Softmax or LogSoftmax over the whole vector (the ops
/// whose rows all-reduce over the column).
bool isSoftmax(ColumnOp op);

/// Whether `op` is AxisSoftmax or AxisLogSoftmax.
bool isAxisSoftmax(ColumnOp op);

/// AxisSoftmax's group length G and stride I from its params ({1, 1} for a
/// malformed kernel, which the emitter rejects).
std::pair<int64_t, int64_t> axisGroups(const std::vector<float> &params);

/// The elements a row chunk of the kernel must be a multiple of: G I for
/// AxisSoftmax/AxisLogSoftmax (whole blocks of groups), 1 otherwise.
int64_t columnChunkMultiple(ColumnOp op, const std::vector<float> &params);

/// Whether `rows` row chunks of `n` elements suit the kernel: no chunk is
/// empty and every chunk holds whole blocks (columnChunkMultiple).
bool columnRowsAllowed(ColumnOp op, const std::vector<float> &params, int64_t n,
                       int64_t rows);

/// The largest stride between the elements of a group (AxisSoftmax's
/// params[1]) a PE's DSDs reach: the 9-bit signed mem1d stride.
constexpr int64_t kMaxAxisStride = 255;

struct ColumnKernel {
  ColumnOp op = ColumnOp::Relu;
  int64_t x = 0; ///< the fabric column
  RowChunks layout;
  int64_t inColor = 0, outColor = 0;
  /// Colors used inside the column (internalColors(op) of them), distinct
  /// from inColor and outColor; -1 for a channel no PE uses.
  std::vector<int64_t> internal;
  /// The op's constants (columnParamCount(op) of them, e.g. LeakyRelu's
  /// alpha). Every PE holds them in GPR pairs, set at load time. For the
  /// ops with a constant tensor, its layout.n elements in row-major order;
  /// PE r holds its chunk in a per-PE memory segment.
  std::vector<float> params;
};

/// How many colors the kernel needs besides its input and output.
int64_t internalColors(ColumnOp op);

/// How many L-element buffers a PE of the kernel keeps in memory (the
/// partitioner's memory bound): 2 L words each.
int64_t columnBuffers(ColumnOp op);

/// Checks an Expression program (ColumnKernel::params of an Expression):
/// its ops, constants, buffers and DSD records fit a PE. Returns the
/// number of steps per sample, or nothing with a sentence in `why`.
std::optional<int64_t> checkExpression(const std::vector<float> &params,
                                       std::string &why);

/// Steady-state cycles per sample of the kernel, from the ISA cost table.
int64_t predictColumnKernelCycles(const ColumnKernel &k);

} // namespace weft::conversion

#endif // WEFT_KERNELS_COLUMNKERNEL_H
