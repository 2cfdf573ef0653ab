//===- JoinKernel.h - Elementwise ops of two streams ------------*- C++ -*-===//
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
// With `relu` the kernel computes max(a op b, 0), the ReLU that followed the
// join in the model: the op pushes its results into a second, small FIFO
// and one more microthread sends max(0, each) on, element by element, so
// the join still streams (a feature map's rows leave as they arrive).
//
// With `broadcast` (a squeeze-and-excitation block's y = x s) input b is
// per channel: a feature map's chunk of L = P Lc elements meets the Lc
// values of its channels, which step 1 receives into memory each sample
// and step 2 reads through a 4-D DSD that repeats them for every pixel.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_JOINKERNEL_H
#define WEFT_KERNELS_JOINKERNEL_H

#include "weft/Kernels/Chunks.h"
#include "weft/Machine/ISA.h"

#include <vector>

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
  /// y = max(a op b, 0). Not for the two-step ops (isTwoStep), whose ReLU
  /// would be a third step on memory alone, which no microthread runs.
  bool relu = false;
  int64_t x = 0;    ///< the fabric column
  RowChunks layout; ///< n, rows, y0 (y0 = 0 in the chains of today)
  /// a (stream 0), b (stream 1) and the result's colors, all different.
  int64_t colorA = 0, colorB = 0, outColor = 0;
  /// Which input goes through the FIFO: 0 = a, 1 = b.
  int buffered = 0;
  /// The FIFO's depth in whole chunks (>= 1), for vectors.
  int64_t fifoSamples = 1;
  /// Feature maps: the FIFO holds `fifoPixels` pixels of the PE's channels
  /// (when > 0, instead of whole chunks); `pixels` is the map's pixels per
  /// channel, so a chunk of L elements has L / pixels channels.
  int64_t fifoPixels = 0, pixels = 0;
  /// The input that is per channel (a squeeze-and-excitation scale), or
  /// -1: with 1, b has `pixels` times fewer elements than a and y, and
  /// chunk r of b holds the channels of a's chunk r, one value each
  /// (`layout` describes a and y). Only Mul, with a buffered (b waits for
  /// a whole sample of a upstream) and no ReLU.
  int broadcast = -1;
};

/// The per-channel input's chunk on the PE of the longest chunk (the
/// chunk's channels, L / pixels), or 0 without a broadcast input.
int64_t joinBroadcastLength(const JoinKernel &k);

/// The lengths of the 4-D DSD that repeats a broadcast chunk of Lc values
/// for each of the `pixels` pixels: {Lc, p1, p2, p3} with p1 p2 p3 =
/// pixels, each within the XDSD's 8-bit fields (Lc within its 12-bit
/// one); empty when no such split exists (a prime above 255 pixels).
std::vector<int64_t> joinBroadcastDims(const JoinKernel &k);

/// The FIFO's capacity in elements on the PE of the longest chunk.
int64_t joinFifoCapacity(const JoinKernel &k);

/// The feature-map rows a join must buffer of its input `fast` so that the
/// fork both inputs come from never waits on it while the other input
/// `slow` is computed (docs/execution-model.md, "Join kernels"): `ready[h]`
/// is, for row h of an input, how many rows of the fork's source must have
/// arrived before that row can be produced (the line buffers of the
/// convolutions and poolings between them). While the join waits for row h
/// of `slow`, `fast` has produced every row whose readiness is at most
/// slow's, and those from row h on sit in the FIFO; three rows more cover
/// the row in flight and keep the pipeline at its pace. 0 when `fast` never runs ahead (no row of it is ready
/// strictly before the row of `slow` it meets).
int64_t joinFifoRows(const std::vector<int64_t> &slow,
                     const std::vector<int64_t> &fast);

/// Steady-state cycles per sample with both inputs always at hand and the
/// output always drained, from the ISA cost table (a replay of the PE's
/// picker, microthreads and datapath; equal to the simulator's).
int64_t predictJoinKernelCycles(const JoinKernel &k);

/// Bytes of PE memory the most loaded PE needs: the task table, code and
/// DSD records below kDataBase, the FIFO, for the two-step ops (Div, and
/// Sub with a buffered) one chunk of scratch, and with a ReLU its FIFO of
/// kReluFifo elements and the one word of its zero.
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

namespace join {
// The plan both the cost model and the emitter
// (lib/Conversion/FabricToWavelet/EmitJoinKernel.cpp) follow.

// Local tasks.
constexpr int64_t kInitTask = 32, kCopyTask = 33, kStep1Task = 34,
                  kStep2Task = 35;

// The FIFOs a step pushes to or pops from: the buffered input's, and (a
// fused ReLU) the op's results on their way to the ReLU, of kReluFifo
// elements, the fewest with which neither step waits on the other's
// relaunch (with one, a sample takes a cycle more than the datapath's 3 L;
// docs/execution-model.md, "Join kernels").
enum Fifo : int { kNoFifo = -1, kFifoIn = 0, kFifoRelu = 1 };
constexpr int64_t kReluFifo = 2;

// DSD records (index i at kDsdBase + 4 i) and the DSR numbers they go to.
enum Rec : int64_t {
  kRecFifo = 0, // fifo: DDSR 0 (push, the copy) and S1DSR 0 (pop)
  kRecIn,       // fabin: the buffered input, S0DSR 1 (utid 0, ac 33)
  kRecOut,      // fabout: the result, DDSR 2 (the last step's utid)
  kRecOther,    // fabin: the unbuffered input, S0DSR 2 or 3
  kRecBuf,      // mem1d: one chunk of scratch (two-step ops), DDSR 3 / S0DSR 2
  kRecRelu,     // fifo: the op's results (ReLU), DDSR 4 (push), S1DSR 4 (pop)
  kRecZero,     // mem1d, stride 0: +0 for the ReLU's fmax, S0DSR 2
  kRecScale,    // mem4d: the broadcast chunk repeated per pixel, S0DSR 2
  kRecXScale,   // its XDSD, XDSR 0
};
constexpr int32_t kXdsrScale = 0;
constexpr int32_t kDsrFifo = 0, kDsrCopy = 1, kDsrLast = 2, kDsrFirst = 3,
                  kDsrRelu = 4;

/// One vector instruction of the kernel, run on microthread `utid`, which
/// its task launches; its completion activates `next`.
struct Step {
  machine::Opcode op;
  int utid = 0;
  int64_t task = 0, next = 0;
  /// The FIFO the step pushes to (as its destination) and the one it pops
  /// (as its second source), or kNoFifo.
  Fifo push = kNoFifo, pop = kNoFifo;
  /// Elements per sample; 0 for the chunk's L (a broadcast input's receive
  /// takes its Lc).
  int64_t length = 0;
};

/// The copy and the compute steps of a kernel. The result is a op b
/// whichever input is buffered: the compute's first source is the
/// unbuffered input (or step 1's scratch), its second source the FIFO, and
/// the ops that do not commute with that order are rewritten exactly:
///   Sub, a buffered:  (-b) + a    (x - y is defined as x + (-y))
///   Div, b buffered:  the copy pushes 1/b; a * fifo
///   Div, a buffered:  step 1 1/b into scratch; (1/b) * a
///   Mul, b broadcast: step 1 receives b's Lc values into scratch; step 2
///                     multiplies the scratch, repeated per pixel, by a
/// With `relu`, step 1 pushes the one-step op's results into the ReLU's
/// FIFO and step 2 sends fmax(+0, each) (a Vec instruction's first source
/// is a DSR: a stride-0 vector of one word of zero; the FIFO the second).
/// The copy and the steps of one-step ops relaunch themselves; the two
/// steps of Sub and Div with a buffered (and of a broadcast) hand over to
/// each other (step 2 reads the scratch step 1 wrote).
struct JoinPlan {
  Step copy;
  std::vector<Step> compute;
  /// The tasks `init` activates.
  std::vector<int64_t> start;
};

/// Sub and Div with a buffered, and broadcasts: two compute steps.
bool isTwoStep(const JoinKernel &k);
bool isBroadcast(const JoinKernel &k);
JoinPlan planOf(const JoinKernel &k);
/// The longest chunk.
int64_t chunkLength(const JoinKernel &k);
} // namespace join

} // namespace weft::conversion

#endif // WEFT_KERNELS_JOINKERNEL_H
