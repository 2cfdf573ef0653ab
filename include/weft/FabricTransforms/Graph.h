//===- Graph.h - A placed network of kernels, analysed ----------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// What partitioning, routing, color allocation and the lowering to wavelet
// programs need to know of a fabric.program: its kernels in a topological
// order (producers first), each with its scheme read off the IR
// (kernelInfo) and, once placed, its mapping; the streams between them (a
// stream has one producer, a kernel or a host input, and one or more
// consumers: a fork when several); and the checks that the placement and
// the layouts line up. Redistributions (inserted by routing) are seen
// through: the stream into a dense layer's turn is the layer's input.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_GRAPH_H
#define WEFT_CONVERSION_GRAPH_H

#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/DenseLayer.h"
#include "weft/FabricTransforms/KernelScheme.h"

#include "fabric/FabricOps.h"

#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>
#include <vector>

namespace weft::conversion {

/// One stream: a producer's output carried to every consumer.
struct GraphStream {
  fabric::StreamOp op;
  /// The producing stage, or -1 for a host input (`input`).
  int64_t producer = -1;
  fabric::IoOp input;
  /// Consuming stages with the input port they feed, and host outputs.
  std::vector<std::pair<int64_t, int64_t>> consumers;
  std::vector<fabric::IoOp> outputs;
  /// Elements per sample.
  int64_t n = 0;
};

/// One kernel, analysed (and, when the program is placed, its mapping).
struct Stage {
  fabric::KernelOp kernel;
  KernelInfo info;
  /// The stream feeding each input port, and the stream of the output.
  std::vector<int64_t> inputs;
  int64_t output = -1;
  /// The redistribution feeding a dense kernel, once routing has inserted
  /// it, and the stream from it to the kernel.
  fabric::RedistributeOp turn;
  fabric::StreamOp turnStream;
  bool dense = false, join = false, pool = false, depthwise = false;
  DenseLayer layer;    // dense and depthwise (a grouped convolution)
  DenseMapping m;      // dense
  ColumnKernel column; // column kernels (colors unset)
  fabric::JoinKind joinKind = fabric::JoinKind::add; // join
  int64_t x = 0, width = 1, height = 1;
  int64_t inRows = 1, outRows = 1; // row chunks received and sent
  int64_t inN = 0, outN = 0;       // elements per sample in and out
};

struct Graph {
  std::vector<fabric::IoOp> inputs, outputs;
  /// Producers first; ties in the order of the program's body.
  std::vector<Stage> stages;
  std::vector<GraphStream> streams;
  /// The gradient streams of a training program (docs/training.md), kept
  /// apart: they flow west and take no part in the forward order.
  std::vector<fabric::StreamOp> gradients;
  /// The first column east of the last kernel (placed programs).
  int64_t endX = 0;
  /// The stream a host output or input belongs to.
  int64_t streamOf(fabric::IoOp io) const;
};

/// The predicted latency of every stream (indexed as Graph::streams): 0
/// for a host input, else the producer's latest input's plus the
/// producer's predicted cycles per sample (a kernel completes a sample's
/// result only after the whole sample has arrived). A join buffers the
/// input of smaller latency (docs/execution-model.md, "Networks of
/// layers").
std::vector<int64_t> streamLatencies(const Graph &g);

/// How far feature-map streams run behind the stream `source`, row by
/// row: for row h of a stream computed from `source` alone, `ready[h]`
/// rows of `source` must have arrived before it can be produced: a
/// convolution's or pooling's output row needs the last input row its
/// window reads, an elementwise op's or join's row the same rows of its
/// inputs. `ready` is empty for the other streams (no feature map streamed
/// by rows, a dense layer or another source upstream).
struct StreamRows {
  int64_t source = -1;
  std::vector<int64_t> ready;
};
std::vector<StreamRows> streamRowReadiness(const Graph &g, int64_t source);

/// A join's two inputs, each as it runs behind the fork they share (their
/// common ancestor produced last); empty when they are no feature maps
/// computed from it alone.
std::pair<StreamRows, StreamRows> joinRowReadiness(const Graph &g,
                                                   const Stage &st);

/// The graph of `program`: its streams, and its kernels in topological
/// order with their schemes (dense weights only with `withData`). Without
/// `placed`, a kernel port no stream connects gets a stream of its own
/// with no op (an open end, as a host port). With `placed`, also every kernel's mapping and the placement checked
/// (kernels side by side from column 0 in that order, inside the fabric,
/// each stream received in the row chunks its producer sends). Errors on
/// the offending op.
mlir::FailureOr<Graph> analyzeGraph(fabric::ProgramOp program, bool placed,
                                    bool withData = true);

/// A join of two feature maps that run behind one source by rows: the
/// input it buffers (the one that runs ahead, b when neither does) and the
/// pixels its FIFO holds (at least one row); std::nullopt for joins of
/// vectors and per-channel joins, which buffer whole samples.
struct MapJoin {
  int buffered = 1;
  int64_t fifoPixels = 0, pixels = 0;
};
std::optional<MapJoin> mapJoinOf(const Graph &g, const Stage &st);

/// What the partitioner sees of a program's graph: its kernels' layers
/// (joins of feature maps with their FIFOs) and streams, numbered as the
/// graph's, and the channels a feature-map stream's rows must divide.
NetworkShape networkShapeOf(const Graph &g);

/// Why the stream into dense stage `c` of a placed graph cannot be sent
/// sparse, or "" when it can (docs/execution-model.md, "Sparse
/// activations"): it must carry a dense layer's ReLU results, as row chunks,
/// to that one dense layer computing in mixed precision.
std::string sparseIneligible(const Graph &g, const Stage &c);

} // namespace weft::conversion

#endif // WEFT_CONVERSION_GRAPH_H
