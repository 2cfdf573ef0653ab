//===- FrustumNetwork.h - Frustum groups at the network pace ----*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). The decision of docs/frustum.md, "The network's
// pace": a pipeline runs at its slowest kernel, so a frustum group may be
// slower than its own layers per layer at no cost to the network as long
// as the network, with the group's tiles taking their PEs, is predicted no
// slower than per layer. The figures come from the partitioner itself
// (partitionNetwork): the network per layer on the whole fabric, and the
// rest of the network on the columns the chosen groups leave.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_FRUSTUMNETWORK_H
#define WEFT_KERNELS_FRUSTUMNETWORK_H

#include "weft/Kernels/ChainPartition.h"
#include "weft/Kernels/Frustum.h"

#include <optional>
#include <string>
#include <vector>

namespace weft::conversion {

/// A candidate group of a network: its layers, what they cost per layer
/// (each on its fastest rectangle of the whole fabric), the largest tile
/// that fits a PE (the memory bound), and the kernels of the network it
/// replaces when fused (its layers, and a residual block's add and
/// projection).
struct NetworkFrustumGroup {
  FrustumGroup group;
  PerLayerCost base;
  FrustumTiling bound;
  std::vector<size_t> kernels;
  /// When the group runs as the band lowering (a chain of plain
  /// convolutions and max pools on one PE a band: docs/frustum.md, "The
  /// lowering"), its levels as that lowering takes them; each tiling is
  /// then weighed as the fused kernel in the partitioner's layout of the
  /// whole network. Empty: the group is weighed as tiles beside the rest.
  std::vector<ConvShape> lowered;
};

/// The network per layer against the network with the chosen groups
/// fused.
struct NetworkFrustumPlan {
  /// The partitioner's predicted interval of the network per layer on the
  /// whole fabric (cycles per image): what no choice may exceed.
  int64_t perLayerCycles = 0;
  /// The predicted interval with the chosen groups fused, as the last
  /// chosen group was weighed: for a band group, the partitioner's layout
  /// with the band groups fused (the others run per layer, as
  /// --weft-frustum-fuse leaves them); for tiles beside the rest, the
  /// slowest of the groups and of the rest on the columns they leave.
  int64_t fusedCycles = 0;
  /// Columns of the fabric the chosen groups' tiles take (a group's tiles
  /// as whole columns of the fabric's height).
  int64_t columns = 0;
  /// One per group, in order. A chosen decision's tiling is the one that
  /// gives the network the fewest cycles, then its group the fewest hops,
  /// then the fewest PEs; an unchosen one is the memory bound's, its
  /// reason saying why no tiling was taken.
  std::vector<FrustumDecision> decisions;
};

/// Decides the groups in order, greedily: a tiling of group i is
/// admissible when it cuts the group's hops, its tiles are predicted no
/// slower than the network per layer, and the network with it is predicted
/// no slower either: a band group (`lowered`) as the fused kernel in the
/// partitioner's layout with the band groups chosen before it; any other
/// group as tiles beside the rest (without its kernels and those of every
/// group chosen before it) on the columns they all leave. std::nullopt (with
/// `why`) when the network per layer does not fit `target`: the caller then
/// weighs each group against its own layers (decideFastestFrustum).
std::optional<NetworkFrustumPlan>
decideNetworkFrustums(const NetworkShape &net,
                      const std::vector<NetworkFrustumGroup> &groups,
                      Precision precision, const machine::Target &target,
                      int64_t elementBytes, std::string &why);

/// The cost model's wavelet hops per image of kernel `k` of `net` placed
/// by `m` (docs/frustum.md, "Cost model"): each input element from its
/// producer's last column (the west edge for the host) along its row to
/// the kernel's middle column, and for a smeared kernel the multicast of
/// its input chunks down its R rows and its partial sums across its S − 1
/// inner links east. The output is its consumers' input.
int64_t placedKernelHops(const NetworkShape &net, const ChainMapping &m,
                         size_t k);

/// A group taken into the network: its kernels, and the fused layer that
/// replaces them when it runs as the band lowering (none: the kernels
/// leave the network and the group's tiles run beside it).
struct FusedGroup {
  std::vector<size_t> kernels;
  std::optional<ChainLayer> fused;
};

/// `net` with `groups` taken in, streams keeping their numbers: a lowered
/// group's kernels become its fused layer (at its first kernel's place,
/// reading the first kernel's inputs and writing the last one's output);
/// another group's kernels leave it, and the streams they wrote reach the
/// rest as host streams whose rows divide their rows per layer (`rows`:
/// the group's tiles may send any rows, and a free choice of 1..H rows for
/// each such stream would multiply the partitioner's states). `fusedAt`,
/// when given, is set to the index of the last group's fused layer.
NetworkShape withGroups(const NetworkShape &net,
                        const std::vector<FusedGroup> &groups,
                        const std::vector<int64_t> &rows,
                        int64_t *fusedAt = nullptr);

} // namespace weft::conversion

#endif // WEFT_KERNELS_FRUSTUMNETWORK_H
