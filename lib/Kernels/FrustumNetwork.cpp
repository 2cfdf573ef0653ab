//===- FrustumNetwork.cpp - Frustum groups at the network pace ------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/FrustumNetwork.h"
#include "weft/Kernels/FrustumChain.h"

#include <algorithm>
#include <limits>
#include <set>

namespace weft::conversion {

int64_t placedKernelHops(const NetworkShape &net, const ChainMapping &m,
                         size_t k) {
  const NetworkLayer &nl = net.layers[k];
  const ChainLayer &l = nl.layer;
  const ChainPlacement &at = m.kernels[k];
  int64_t hops = 0;
  for (int64_t s : nl.inputs) {
    // The producer's last column, or the west edge for the host.
    int64_t from = -1;
    for (size_t p = 0; p < k; ++p)
      if (net.layers[p].output == s)
        from = m.kernels[p].x0 + m.kernels[p].width - 1;
    // A join's inputs and every other kernel's one input are K long.
    const int64_t elements = l.K;
    // Along the row to the kernel's middle column (bands side by side
    // take their columns off the lane in turn).
    hops += elements * (at.x0 - from) + elements * (at.width - 1) / 2;
    // A smeared kernel's input chunk c turns at (c, c) and is multicast
    // to every row of column c.
    if (l.smeared())
      hops += elements * (at.rows - 1);
  }
  // A smeared kernel's partial sums cross its S - 1 inner links east.
  if (l.smeared())
    hops += l.M * (at.width / std::max<int64_t>(1, at.tiles) - 1);
  return hops;
}

/// The target's fabric `columns` narrower.
static std::optional<machine::Target> narrower(const machine::Target &t,
                                               int64_t columns) {
  if (columns >= int64_t(t.width()))
    return std::nullopt;
  machine::TargetConfig c = t.config();
  c.width = unsigned(int64_t(t.width()) - columns);
  return machine::Target::create(c);
}

NetworkShape withGroups(const NetworkShape &net,
                        const std::vector<FusedGroup> &taken,
                        const std::vector<int64_t> &rows, int64_t *fusedAt) {
  NetworkShape out = net;
  out.layers.clear();
  out.streamChannels.resize(size_t(net.numStreams), 0);
  std::vector<int64_t> owner(net.layers.size(), -1);
  for (size_t t = 0; t < taken.size(); ++t)
    for (size_t k : taken[t].kernels)
      owner[k] = int64_t(t);
  for (size_t k = 0; k < net.layers.size(); ++k) {
    if (owner[k] < 0) {
      out.layers.push_back(net.layers[k]);
      continue;
    }
    const FusedGroup &t = taken[size_t(owner[k])];
    if (!t.fused) {
      out.streamChannels[size_t(net.layers[k].output)] =
          rows[size_t(net.layers[k].output)];
      continue;
    }
    if (k != t.kernels.front())
      continue;
    if (fusedAt && owner[k] == int64_t(taken.size()) - 1)
      *fusedAt = int64_t(out.layers.size());
    out.layers.push_back({*t.fused, net.layers[t.kernels.front()].inputs,
                          net.layers[t.kernels.back()].output});
  }
  return out;
}

std::optional<NetworkFrustumPlan>
decideNetworkFrustums(const NetworkShape &net,
                      const std::vector<NetworkFrustumGroup> &groups,
                      Precision precision, const machine::Target &target,
                      int64_t elementBytes, std::string &why) {
  std::optional<ChainMapping> perLayer =
      partitionNetwork(net, precision, target, why);
  if (!perLayer)
    return std::nullopt;
  NetworkFrustumPlan plan;
  plan.perLayerCycles = perLayer->bottleneckCycles;
  plan.fusedCycles = plan.perLayerCycles;
  const int64_t height = int64_t(target.height());
  // The groups taken so far: all of them (what a later group beside the
  // rest is weighed with: the plan), and those that will run as the band
  // lowering (what a later band group is weighed with: the network
  // --weft-frustum-fuse will make, the others per layer).
  std::vector<FusedGroup> taken, lowered;
  // The slowest group taken so far that runs beside the partitioned rest.
  int64_t groupsCycles = 0;
  for (const NetworkFrustumGroup &ng : groups) {
    const FrustumGroup &g = ng.group;
    // Its layers per layer as the network's layout places them: their
    // PEs, memory and wavelet hops (the cycles stay each layer's fastest
    // on the whole fabric).
    PerLayerCost base = ng.base;
    base.pes.clear();
    base.memoryPerPE.clear();
    int64_t perLayerHops = 0;
    for (size_t k : ng.kernels) {
      const ChainPlacement &at = perLayer->kernels[k];
      base.pes.push_back(at.width * at.rows);
      base.memoryPerPE.push_back(at.memoryPerPE);
      perLayerHops += placedKernelHops(net, *perLayer, k);
    }
    base.internalHops = {perLayerHops};
    base.hopsBetweenLayers = 0;
    // The memory bound's figures stand when no tiling is taken.
    FrustumDecision best =
        decideFrustum(g, base, ng.bound, hopsToTiles(ng.bound));
    best.chosen = false;
    int64_t bestNetwork = 0, bestColumns = 0;
    std::optional<ChainLayer> bestFused;
    // The fewest hops of any tiling, and the fastest tiling that cuts
    // the group's hops.
    std::optional<FrustumCost> fewestHops, fastestCutting;
    std::string restWhy;
    auto tooSlow = [&](int64_t cycles) {
      if (restWhy.empty())
        restWhy = std::string(ng.lowered.empty()
                                  ? "beside its tiles the rest of the network"
                                  : "with it fused the network") +
                  " is predicted slower than the network per layer (" +
                  std::to_string(cycles) + " against " +
                  std::to_string(plan.perLayerCycles) + " cycles per image)";
    };
    int64_t failsFrom = std::numeric_limits<int64_t>::max();
    std::vector<FusedGroup> with = ng.lowered.empty() ? taken : lowered;
    with.push_back({ng.kernels, std::nullopt});
    std::set<int64_t> bandsTried;
    // The fastest bands skipped because the fused kernel alone is slower
    // than the network per layer.
    int64_t fastestAlone = std::numeric_limits<int64_t>::max();
    for (const FrustumTiling &tiling : tilingsUpTo(g, ng.bound, elementBytes)) {
      FrustumDecision d = decideFrustum(g, base, tiling, hopsToTiles(tiling));
      int64_t network = 0, columns = 0;
      if (!ng.lowered.empty()) {
        // The band lowering (docs/frustum.md, "The lowering"): the group
        // becomes one kernel in the network the partitioner lays out.
        // (Tilings the partitioner places in the same bands are one.)
        const int64_t bands = frustumBandsForTile(ng.lowered, tiling.tw);
        const int64_t placed =
            placedFrustumBands(ng.lowered, bands, target.memoryBytes());
        if (!bandsTried.insert(placed ? placed : -bands).second)
          continue;
        // No bands of one PE hold it: the partitioner could not place it.
        if (!placed) {
          if (restWhy.empty()) {
            std::string problem =
                frustumMappingProblem(ng.lowered, bands, target.memoryBytes());
            restWhy = "no band of one PE holds it in " + std::to_string(bands) +
                      " bands" + (problem.empty() ? "" : ": " + problem);
          }
          continue;
        }
        // The fused kernel alone slower than the network: no layout needed
        // (the partitioner costs it so, in the bands it places it in).
        const int64_t alone = predictFrustumCycles(ng.lowered, placed);
        if (alone > plan.perLayerCycles) {
          fastestAlone = std::min(fastestAlone, alone);
          continue;
        }
        ChainLayer fused = ChainLayer::convolution(frustumEnvelope(ng.lowered));
        fused.frustum = ng.lowered;
        fused.frustumTiles = bands;
        with.back().fused = fused;
        int64_t at = -1;
        NetworkShape cand = withGroups(net, with, perLayer->streamRows, &at);
        std::string fails;
        std::optional<ChainMapping> m =
            partitionNetwork(cand, precision, target, fails);
        if (!m || at < 0) {
          if (restWhy.empty())
            restWhy = "the network with it fused in " + std::to_string(bands) +
                      " bands fits no layout: " + fails;
          continue;
        }
        const ChainPlacement &kernel = m->kernels[size_t(at)];
        d.policy = HaloPolicy::Overlap;
        d.frustum.hops = placedKernelHops(cand, *m, size_t(at));
        d.frustum.cycles = kernel.predictedCycles;
        d.frustum.pes = kernel.width * kernel.rows;
        d.frustum.memoryPerPE = kernel.memoryPerPE;
        network = m->bottleneckCycles;
      }
      if (!fewestHops || d.frustum.hops < fewestHops->hops)
        fewestHops = d.frustum;
      // A group is fused to cut traffic, never to add it, and never to
      // slow the network down.
      if (d.frustum.hops >= d.perLayer.hops)
        continue;
      if (!fastestCutting || d.frustum.cycles < fastestCutting->cycles)
        fastestCutting = d.frustum;
      if (d.frustum.cycles > plan.perLayerCycles)
        continue;
      if (!ng.lowered.empty()) {
        if (network > plan.perLayerCycles) {
          tooSlow(network);
          continue;
        }
      } else {
        // The tiles take whole columns of the fabric's height beside the
        // rest of the network.
        columns = (d.frustum.pes + height - 1) / height;
        const int64_t left = int64_t(target.width()) - plan.columns - columns;
        NetworkShape rest = withGroups(net, with, perLayer->streamRows);
        if (left < 0 || (left == 0 && !rest.layers.empty())) {
          if (restWhy.empty())
            restWhy = "its tiles fast enough to cut its hops need " +
                      std::to_string(columns) + " columns of the " +
                      std::to_string(int64_t(target.width()) - plan.columns) +
                      " left";
          continue;
        }
        // It can only win on a lower bound of the network's cycles no
        // worse than the best's.
        const int64_t atLeast = std::max(d.frustum.cycles, groupsCycles);
        if (best.chosen &&
            (atLeast > bestNetwork ||
             (atLeast == bestNetwork && d.frustum.hops > best.frustum.hops)))
          continue;
        // A narrower fabric never makes the rest faster, so from the first
        // width that fails, every narrower one is skipped.
        if (columns >= failsFrom)
          continue;
        int64_t restCycles = 0;
        if (!rest.layers.empty()) {
          std::optional<machine::Target> narrow =
              narrower(target, plan.columns + columns);
          std::string fails;
          std::optional<ChainMapping> m =
              narrow ? partitionNetwork(rest, precision, *narrow, fails)
                     : std::nullopt;
          if (!m) {
            failsFrom = columns;
            if (restWhy.empty())
              restWhy = "the rest of the network does not fit the " +
                        std::to_string(left) + " columns its tiles leave";
            continue;
          }
          restCycles = m->bottleneckCycles;
          if (restCycles > plan.perLayerCycles) {
            failsFrom = columns;
            tooSlow(restCycles);
            continue;
          }
        }
        network = std::max({d.frustum.cycles, restCycles, groupsCycles});
      }
      // The network's cycles first, then the group's hops and PEs.
      bool better =
          !best.chosen || network < bestNetwork ||
          (network == bestNetwork && (d.frustum.hops < best.frustum.hops ||
                                      (d.frustum.hops == best.frustum.hops &&
                                       d.frustum.pes < best.frustum.pes)));
      if (!better)
        continue;
      d.chosen = true;
      d.reason.clear();
      best = d;
      bestNetwork = network;
      bestColumns = columns;
      bestFused = with.back().fused;
    }
    best.networkCycles = plan.perLayerCycles;
    if (best.chosen) {
      best.fusedNetworkCycles = bestNetwork;
      plan.fusedCycles = bestNetwork;
      plan.columns += bestColumns;
      if (!bestFused)
        groupsCycles = std::max(groupsCycles, best.frustum.cycles);
      taken.push_back({ng.kernels, bestFused});
      if (bestFused)
        lowered.push_back(taken.back());
    } else if (!fewestHops &&
               fastestAlone < std::numeric_limits<int64_t>::max()) {
      best.reason = "its bands are predicted slower than the network per "
                    "layer (" +
                    std::to_string(fastestAlone) + " against " +
                    std::to_string(plan.perLayerCycles) +
                    " cycles per image at the fastest)";
    } else if (!fewestHops) {
      // No tiling could even be laid out.
      best.reason = restWhy;
    } else if (!fastestCutting) {
      best.reason = "none of its tilings cuts its wavelet hops (" +
                    std::to_string(fewestHops->hops) +
                    " at the fewest, against " +
                    std::to_string(best.perLayer.hops) + " per layer)";
    } else if (fastestCutting->cycles > plan.perLayerCycles) {
      best.reason = "its tilings that cut its wavelet hops are predicted "
                    "slower than the network per layer (" +
                    std::to_string(fastestCutting->cycles) + " against " +
                    std::to_string(plan.perLayerCycles) +
                    " cycles per image at the fastest)";
    } else {
      best.reason = restWhy;
    }
    plan.decisions.push_back(best);
  }
  return plan;
}

} // namespace weft::conversion
