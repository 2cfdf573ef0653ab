//===- JoinKernel.h - Elementwise ops of two streams -------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The join kernel (docs/execution-model.md, "Join kernels"): y = a op b of
// two non-constant, row-chunked streams on one column of PEs, where the
// program is a DAG (a residual add, a gated product). Both inputs arrive
// from the west on their own colors, the result leaves to the east, chunk
// for chunk, as a column kernel's.
//
// The two inputs usually come from one fork upstream, one of them through a
// long branch, so the kernel takes the input the caller names `buffered` off
// the fabric eagerly, on a microthread, into a FIFO in PE memory of
// `fifoSamples` whole chunks; the other one is read from the fabric as the
// result is computed. A FIFO of at least one chunk lets the fork always
// finish a sample, which is what keeps the DAG free of deadlock.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_JOINKERNEL_H
#define WEFT_CONVERSION_JOINKERNEL_H

#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/Routing.h"

#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>

namespace weft::conversion {

enum class JoinOp {
  Add, ///< a + b
  Sub, ///< a - b
  Mul, ///< a b
  Div, ///< a / b, computed as a (1 / b)
  Max, ///< maxNum(a, b)
  Min, ///< minNum(a, b)
};
const char *joinOpName(JoinOp op);

struct JoinKernel {
  JoinOp op = JoinOp::Add;
  int64_t x = 0;    ///< the fabric column
  RowChunks layout; ///< n, rows, y0 (y0 = 0 in the chains of today)
  /// a (stream 0), b (stream 1) and the result's colors, all different.
  int64_t colorA = 0, colorB = 0, outColor = 0;
  /// Which input goes through the FIFO: 0 = a, 1 = b.
  int buffered = 0;
  /// The FIFO's depth in whole chunks (>= 1).
  int64_t fifoSamples = 1;
};

/// Steady-state cycles per sample with both inputs always at hand and the
/// output always drained, from the ISA cost table (a replay of the PE's
/// picker, microthreads and datapath; equal to the simulator's).
int64_t predictJoinKernelCycles(const JoinKernel &k);

/// Bytes of PE memory the most loaded PE needs: the task table, code and
/// DSD records below kDataBase, the FIFO and, for the two-step ops (Div, and
/// Sub with a buffered), one chunk of scratch.
int64_t joinMemoryPerPE(const JoinKernel &k);

/// The largest fifoSamples that fits `memoryBytes` per PE and the FIFO's
/// 32767-element capacity field (0 if not even one chunk does).
int64_t maxJoinFifoSamples(const JoinKernel &k, int64_t memoryBytes);

/// The FIFO depth, in samples, that keeps a fork feeding both branches at
/// full rate: ceil(latencyDifference / interval) + 1 samples, the longer
/// branch's extra latency over the shorter one's in cycles and the
/// pipeline's interval per sample (>= 1 each), capped by
/// maxJoinFifoSamples(k, memoryBytes).
int64_t joinFifoSamplesFor(const JoinKernel &k, int64_t latencyDifference,
                           int64_t interval, int64_t memoryBytes);

/// Emits the kernel's wavelet.pe / wavelet.pe_group ops at `b`'s insertion
/// point (inside a wavelet.program), PEs with equal chunk length sharing one
/// group, named after `name`, with the layer attribute `layer`. Every PE
/// gets the router settings `routes` gives it (a routed program's
/// fabric.route switches: both inputs from the west to the ramp, the output
/// from the ramp to the east); without `routes`, Routing.h's columnInputs
/// for colorA and colorB and columnResults for outColor. An empty chunk, a
/// FIFO of no chunk or one that does not fit, a chunk longer than a DSD
/// describes, bad colors or a column off the fabric fail with a diagnostic
/// at `loc`.
mlir::LogicalResult emitJoinKernel(mlir::OpBuilder &b, mlir::Location loc,
                                   const JoinKernel &k, llvm::StringRef name,
                                   llvm::StringRef layer,
                                   const RouteTable *routes = nullptr);

} // namespace weft::conversion

#endif // WEFT_CONVERSION_JOINKERNEL_H
