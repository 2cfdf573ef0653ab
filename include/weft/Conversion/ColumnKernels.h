//===- ColumnKernels.h - Per-row layers on one column of PEs ----*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Layers that work on a row-chunked vector in place: elementwise
// activations and Softmax/LogSoftmax (docs/execution-model.md, "Column
// kernels"). Such a layer occupies one column of PEs, one PE per row chunk
// of its input; each PE receives its chunk from the west, computes, and sends
// the result east, chunk for chunk, so the layout is unchanged. Softmax
// reduces the row maxima and sums across the column and broadcasts them back;
// a softmax over an axis of the sample keeps whole groups on every PE.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_COLUMNKERNELS_H
#define WEFT_CONVERSION_COLUMNKERNELS_H

#include "weft/Conversion/Routing.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>
#include <vector>

namespace weft::conversion {

/// n elements cut into `rows` chunks of ceil(n / rows), chunk r on fabric
/// row y0 + r (the I/O map's and the dense layer's chunking).
struct RowChunks {
  int64_t n = 0, rows = 1, y0 = 0;
};

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
const char *columnOpName(ColumnOp op);

/// How many constants (ColumnKernel::params) `op` takes; for the ops with a
/// constant tensor (columnTakesTensor) it is the sample's element count
/// instead, and for Expression the length of its program; this returns 0
/// for both.
int64_t columnParamCount(ColumnOp op);

/// Whether `op` combines x with a constant tensor (AddTensor .. PRelu),
/// whose n elements are ColumnKernel::params.
bool columnTakesTensor(ColumnOp op);

/// Whether `op` is AxisSoftmax or AxisLogSoftmax.
bool isAxisSoftmax(ColumnOp op);

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

/// Recognises a per-sample elementwise activation or (log-)softmax whose
/// result is `result` (the importer's linalg form): over the whole sample
/// (Softmax, LogSoftmax) or over one axis, or adjacent axes, of it
/// (AxisSoftmax, AxisLogSoftmax, with {G, I} in `*params`).
/// Returns the op and sets `input` to its operand and, if `params` is
/// given, `*params` to its constants (columnParamCount(op) of them); fails
/// with a sentence in `why` otherwise. Scalar constants may be arith
/// constants in the body or splat constant tensors (arith.constant, or a
/// linalg.fill of one) read through extra inputs of the generic.
mlir::FailureOr<ColumnOp>
matchColumnKernel(mlir::Value result, mlir::Value &input, std::string &why,
                  std::vector<float> *params = nullptr);

/// Checks an Expression program (ColumnKernel::params of an Expression):
/// its ops, constants, buffers and DSD records fit a PE. Returns the
/// number of steps per sample, or fails with a sentence in `why`.
mlir::FailureOr<int64_t> checkExpression(const std::vector<float> &params,
                                         std::string &why);

/// The tensor operand of a per-row elementwise op whose result is `result`:
/// the one input of its linalg.generic that is not a splat constant; null
/// if there is not exactly one.
mlir::Value columnKernelOperand(mlir::Value result);

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

/// Emits the kernel's wavelet.pe / wavelet.pe_group ops at `b`'s insertion
/// point (inside a wavelet.program), named after `name`, with the layer
/// attribute `layer`. Every PE gets the router settings `routes` gives it
/// (a routed program's fabric.route ops); without `routes`, the column's
/// own from weft/Conversion/Routing.h and the kernel's colors.
mlir::LogicalResult emitColumnKernel(mlir::OpBuilder &b, mlir::Location loc,
                                     const ColumnKernel &k,
                                     llvm::StringRef name,
                                     llvm::StringRef layer,
                                     const RouteTable *routes = nullptr);

/// Steady-state cycles per sample of the kernel, from the ISA cost table.
int64_t predictColumnKernelCycles(const ColumnKernel &k);

} // namespace weft::conversion

#endif // WEFT_CONVERSION_COLUMNKERNELS_H
