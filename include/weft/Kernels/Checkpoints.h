//===- Checkpoints.h - Reverse-checkpoint selection -------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). Reverse checkpoints (docs/training.md, "Reverse
// checkpoints"): every trained node of a chain either stores the
// activations its backward pass needs or drops them and has them
// recomputed, in the backward pass, from the nearest activations still
// available upstream. Each node lives on its own PEs, so a node fits or not
// on its own; what couples the nodes is the recompute cost: a dropped
// node's activations are rebuilt by re-running the forward of every node
// between the nearest available input and it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_CHECKPOINTS_H
#define WEFT_KERNELS_CHECKPOINTS_H

#include <cstdint>
#include <string>
#include <vector>

namespace weft::conversion {

/// One node of the chain: a trained layer, or a residual block taken as a
/// whole (its memory is its fullest PE's, its forward cycles the block's).
struct CheckpointNode {
  std::string name;
  /// Bytes its fullest PE needs without the stored activations (code,
  /// records, weights, buffers).
  int64_t fixedBytes = 0;
  /// Bytes the fullest PE adds to store the activations (0: nothing to
  /// store, e.g. a node whose backward needs no input).
  int64_t activationBytes = 0;
  /// CE cycles (summed over its PEs) of running its forward again, which a
  /// dropped node after it pays when its input is rebuilt through it.
  int64_t forwardCycles = 0;
  /// CE cycles the node itself spends taking its input again when it drops
  /// it.
  int64_t receiveCycles = 0;
  /// Whether the node may drop its activations (the first node's input
  /// comes from the host, which sends it once).
  bool mayDrop = false;
  /// Whether the node's input is still in its memory when its backward
  /// pass starts even when it drops it (it is overwritten only during that
  /// backward pass): the forward of this node can then be re-run for the
  /// node after it without going further upstream.
  bool inputLiveUntilBackward = false;
};

/// How the checkpoints are chosen (`--checkpoints`).
struct CheckpointPolicy {
  enum class Kind { None, Auto, EveryK };
  Kind kind = Kind::None;
  int64_t k = 1; ///< EveryK: nodes 0, K, 2K, ... store (and all that must)
  /// Parses `none`, `auto` or `every-K` (K >= 1); std::nullopt-like failure
  /// through `error`.
  static bool parse(const std::string &text, CheckpointPolicy &out,
                    std::string &error);
  std::string str() const;
};

/// The choice: which nodes store, the recompute cycles per sample it costs
/// and the bytes of the fullest PE.
struct CheckpointPlan {
  std::vector<bool> store;
  /// Per node: the recompute cycles per sample its dropping costs (0 for a
  /// node that stores).
  std::vector<int64_t> recomputeCycles;
  int64_t totalRecomputeCycles = 0;
  int64_t peakBytes = 0;
};

/// The recompute cycles per sample of `store` over `nodes`: for every
/// dropped node i, its receiveCycles plus the forwardCycles of nodes j ..
/// i - 1, where j is the nearest node before i that stores or whose input
/// lives until its backward pass.
std::vector<int64_t> recomputeCost(const std::vector<CheckpointNode> &nodes,
                                   const std::vector<bool> &store);

/// Chooses under `policy` with every node's fullest PE within `budget`
/// bytes. Auto minimises the recompute cycles (dynamic programming over the
/// chain; among equal costs it stores more). None stores everything,
/// EveryK the nodes it names. Fails with `error` naming the node and the
/// bytes it needs when nothing the policy allows fits.
bool selectCheckpoints(const std::vector<CheckpointNode> &nodes,
                       int64_t budget, const CheckpointPolicy &policy,
                       CheckpointPlan &plan, std::string &error);

} // namespace weft::conversion

#endif // WEFT_KERNELS_CHECKPOINTS_H
