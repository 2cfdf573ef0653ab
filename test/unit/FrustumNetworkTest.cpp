//===- FrustumNetworkTest.cpp - Frustum groups at the network's pace ------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The per-layer hops of a placed kernel (its input along the rows, the
// multicast down a smeared kernel's rows, its partial sums east), a network
// without a group's kernels, and the decision that weighs each group
// against the network per layer (docs/frustum.md, "The network's pace").
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/FrustumNetwork.h"
#include "weft/Kernels/FrustumChain.h"
#include "weft/Machine/Target.h"

#include <gtest/gtest.h>

using namespace weft::conversion;

namespace {

ConvShape convShape(int64_t cin, int64_t cout, int64_t h) {
  ConvShape s;
  s.cin = cin, s.cout = cout, s.hin = s.win = h;
  s.kh = s.kw = 3;
  s.pt = s.pl = s.pb = s.pr = 1;
  s.relu = true;
  return s;
}

FrustumLayer layerOf(const ConvShape &s) {
  FrustumLayer l;
  l.cin = s.cin, l.cout = s.cout, l.hin = s.hin, l.win = s.win;
  l.kh = s.kh, l.kw = s.kw;
  l.pt = s.pt, l.pl = s.pl, l.pb = s.pb, l.pr = s.pr;
  return l;
}

weft::machine::Target fabric(unsigned w, unsigned h) {
  weft::machine::TargetConfig c;
  c.width = w;
  c.height = h;
  return *weft::machine::Target::create(c);
}

TEST(FrustumNetworkTest, PlacedKernelHops) {
  // host -> conv (S = 2 columns, R = 4 rows, at column 0) -> conv (S = 4,
  // R = 2, in 3 bands: 12 columns, at column 2).
  ConvShape a = convShape(8, 16, 10), b = convShape(16, 8, 10);
  NetworkShape net = NetworkShape::chain(
      {ChainLayer::convolution(a), ChainLayer::convolution(b)});
  ChainMapping m;
  m.kernels.resize(2);
  m.kernels[0].x0 = 0, m.kernels[0].width = 2, m.kernels[0].rows = 4;
  m.kernels[1].x0 = 2, m.kernels[1].width = 12, m.kernels[1].rows = 2;
  m.kernels[1].tiles = 3;
  // From the west edge (column -1) to column 0, then half of the second
  // column; down 3 more rows; the partial sums across 1 link.
  EXPECT_EQ(placedKernelHops(net, m, 0),
            800 * 1 + 800 * 1 / 2 + 800 * 3 + 1600 * 1);
  // From column 1 to column 2, then along half of the 12 columns; down 1
  // more row; the partial sums across the band's 3 inner links.
  EXPECT_EQ(placedKernelHops(net, m, 1),
            1600 * 1 + 1600 * 11 / 2 + 1600 * 1 + 800 * 3);
}

TEST(FrustumNetworkTest, WithGroups) {
  ConvShape a = convShape(8, 8, 8);
  NetworkShape net = NetworkShape::chain({ChainLayer::convolution(a),
                                          ChainLayer::convolution(a),
                                          ChainLayer::convolution(a)});
  const std::vector<int64_t> rows = {1, 4, 2, 1};
  // Tiles beside the rest: the group's kernels leave, streams keep their
  // numbers, and the stream it wrote keeps rows dividing its rows per
  // layer.
  NetworkShape rest = withGroups(net, {{{1, 0}, std::nullopt}}, rows);
  ASSERT_EQ(rest.layers.size(), 1u);
  EXPECT_EQ(rest.layers[0].inputs, std::vector<int64_t>{2});
  EXPECT_EQ(rest.numStreams, net.numStreams);
  EXPECT_EQ(rest.streamChannels[2], 2);
  // Fused: one layer from the first kernel's input to the last's output,
  // at the first kernel's place.
  ChainLayer fused = ChainLayer::convolution(a);
  int64_t at = -1;
  NetworkShape lowered = withGroups(net, {{{1, 2}, fused}}, rows, &at);
  ASSERT_EQ(lowered.layers.size(), 2u);
  EXPECT_EQ(at, 1);
  EXPECT_EQ(lowered.layers[1].inputs, std::vector<int64_t>{1});
  EXPECT_EQ(lowered.layers[1].output, 3);
}

/// The group of the network's first two convolutions, as
/// --weft-frustum-tile passes it.
NetworkFrustumGroup firstTwo(const std::vector<ConvShape> &convs,
                             const weft::machine::Target &t, int64_t side) {
  NetworkFrustumGroup ng;
  ng.group.layers = {layerOf(convs[0]), layerOf(convs[1])};
  for (int i = 0; i < 2; ++i)
    ng.base.cycles.push_back(fastestConvCycles(convs[size_t(i)], t.width(),
                                               t.height(), t.memoryBytes()));
  ng.kernels = {0, 1};
  FrustumBudget b = frustumBudget(t, 500, 4);
  std::optional<FrustumTiling> bound = largestTile(ng.group, side, b);
  EXPECT_TRUE(bound);
  if (bound)
    ng.bound = *bound;
  return ng;
}

TEST(FrustumNetworkTest, GroupsAtTheNetworksPace) {
  std::vector<ConvShape> convs = {convShape(8, 16, 24), convShape(16, 16, 24),
                                  convShape(16, 64, 24)};
  std::vector<ChainLayer> layers;
  for (const ConvShape &s : convs)
    layers.push_back(ChainLayer::convolution(s));
  NetworkShape net = NetworkShape::chain(layers);
  weft::machine::Target wide = fabric(64, 8);
  std::string why;
  std::optional<NetworkFrustumPlan> plan = decideNetworkFrustums(
      net, {firstTwo(convs, wide, 1)}, Precision::FP32, wide, 4, why);
  ASSERT_TRUE(plan) << why;
  ASSERT_EQ(plan->decisions.size(), 1u);
  // The network per layer is the partitioner's interval on the fabric.
  std::optional<ChainMapping> perLayer =
      partitionNetwork(net, Precision::FP32, wide, why);
  ASSERT_TRUE(perLayer);
  EXPECT_EQ(plan->perLayerCycles, perLayer->bottleneckCycles);
  const FrustumDecision &d = plan->decisions[0];
  EXPECT_EQ(d.networkCycles, plan->perLayerCycles);
  // Its per-layer hops are the placed kernels'.
  EXPECT_EQ(d.perLayer.hops, placedKernelHops(net, *perLayer, 0) +
                                 placedKernelHops(net, *perLayer, 1));
  if (d.chosen) {
    // Never slower than the network per layer, and fewer hops.
    EXPECT_LE(d.frustum.cycles, plan->perLayerCycles);
    EXPECT_LE(d.fusedNetworkCycles, plan->perLayerCycles);
    EXPECT_GE(d.fusedNetworkCycles, d.frustum.cycles);
    EXPECT_LT(d.frustum.hops, d.perLayer.hops);
    EXPECT_EQ(plan->fusedCycles, d.fusedNetworkCycles);
    EXPECT_EQ(plan->columns, (d.frustum.pes + 7) / 8);
    // The rest of the network on the columns left gives the figure.
    std::optional<ChainMapping> rest = partitionNetwork(
        withGroups(net, {{{0, 1}, std::nullopt}}, perLayer->streamRows),
        Precision::FP32, fabric(unsigned(64 - plan->columns), 8), why);
    ASSERT_TRUE(rest);
    EXPECT_EQ(d.fusedNetworkCycles,
              std::max(d.frustum.cycles, rest->bottleneckCycles));
  } else {
    EXPECT_FALSE(d.reason.empty());
  }

  // A heavy third layer sets the pace on a narrow fabric. Per layer, the
  // first two layers take columns of their own; their tiles take 2 of the
  // 16 columns (9 PEs) and leave the third layer more: the network gets
  // faster, and the figure is the slower of the tiles and the rest.
  std::vector<ConvShape> heavy = {convShape(8, 16, 24), convShape(16, 16, 24),
                                  convShape(16, 256, 24)};
  NetworkShape heavyNet = NetworkShape::chain(
      {ChainLayer::convolution(heavy[0]), ChainLayer::convolution(heavy[1]),
       ChainLayer::convolution(heavy[2])});
  weft::machine::Target narrow = fabric(16, 8);
  plan = decideNetworkFrustums(heavyNet, {firstTwo(heavy, narrow, 1)},
                               Precision::FP32, narrow, 4, why);
  ASSERT_TRUE(plan) << why;
  const FrustumDecision &h = plan->decisions[0];
  ASSERT_TRUE(h.chosen) << h.reason;
  EXPECT_LT(plan->fusedCycles, plan->perLayerCycles);
  EXPECT_EQ(plan->columns, (h.frustum.pes + 7) / 8);
  std::optional<ChainMapping> heavyPerLayer =
      partitionNetwork(heavyNet, Precision::FP32, narrow, why);
  ASSERT_TRUE(heavyPerLayer);
  std::optional<ChainMapping> rest = partitionNetwork(
      withGroups(heavyNet, {{{0, 1}, std::nullopt}}, heavyPerLayer->streamRows),
      Precision::FP32, fabric(unsigned(16 - plan->columns), 8), why);
  ASSERT_TRUE(rest);
  EXPECT_EQ(plan->fusedCycles,
            std::max(h.frustum.cycles, rest->bottleneckCycles));

  // A network that fits no fabric per layer: no plan, and why.
  weft::machine::Target tiny = fabric(1, 1);
  EXPECT_FALSE(decideNetworkFrustums(net, {firstTwo(convs, tiny, 1)},
                                     Precision::FP32, tiny, 4, why));
  EXPECT_FALSE(why.empty());
}

TEST(FrustumNetworkTest, TheWholeNetworkAsOneGroup) {
  // A group that is the whole network: nothing else needs the fabric, so
  // the tiles may take every column; the choice is the fastest tiling that
  // cuts hops, never slower than per layer.
  std::vector<ConvShape> convs = {convShape(8, 16, 24), convShape(16, 16, 24)};
  NetworkShape net = NetworkShape::chain(
      {ChainLayer::convolution(convs[0]), ChainLayer::convolution(convs[1])});
  weft::machine::Target t = fabric(32, 16);
  std::string why;
  NetworkFrustumGroup ng = firstTwo(convs, t, 1);
  std::optional<NetworkFrustumPlan> plan =
      decideNetworkFrustums(net, {ng}, Precision::FP32, t, 4, why);
  ASSERT_TRUE(plan) << why;
  const FrustumDecision &d = plan->decisions[0];
  // Every tiling that cuts hops and fits the fabric's columns is at least
  // as slow as the choice.
  for (const FrustumTiling &tl : tilingsUpTo(ng.group, ng.bound, 4)) {
    FrustumDecision e = decideFrustum(ng.group, ng.base, tl, hopsToTiles(tl));
    bool admissible = e.frustum.cycles <= plan->perLayerCycles &&
                      e.frustum.hops < d.perLayer.hops &&
                      e.frustum.pes <= 32 * 16;
    if (admissible) {
      ASSERT_TRUE(d.chosen) << tl.th;
      EXPECT_GE(e.frustum.cycles, d.frustum.cycles) << tl.th;
    }
  }
  if (d.chosen) {
    EXPECT_EQ(d.fusedNetworkCycles, d.frustum.cycles);
  }
}

TEST(FrustumNetworkTest, ALoweredChainIsWeighedInTheWholeLayout) {
  // Two convolutions that run as the band lowering: each tiling is weighed
  // as the fused kernel in the partitioner's layout of the whole network.
  // On a row of 4 PEs the heavy third convolution sets the pace per layer;
  // the fused pair in one band leaves it more columns.
  std::vector<ConvShape> convs = {convShape(4, 8, 16), convShape(8, 8, 16),
                                  convShape(8, 64, 16)};
  NetworkShape net = NetworkShape::chain({ChainLayer::convolution(convs[0]),
                                          ChainLayer::convolution(convs[1]),
                                          ChainLayer::convolution(convs[2])});
  weft::machine::Target t = fabric(4, 1);
  NetworkFrustumGroup ng = firstTwo(convs, t, 1);
  ng.lowered = {convs[0], convs[1]};
  std::string why;
  std::optional<NetworkFrustumPlan> plan =
      decideNetworkFrustums(net, {ng}, Precision::FP32, t, 4, why);
  ASSERT_TRUE(plan) << why;
  const FrustumDecision &d = plan->decisions[0];
  ASSERT_TRUE(d.chosen) << d.reason;
  // The chosen tiling's figures are those of the fused kernel laid out
  // with the third convolution, and the network is no slower.
  ChainLayer fused = ChainLayer::convolution(frustumEnvelope(ng.lowered));
  fused.frustum = ng.lowered;
  fused.frustumTiles = frustumBandsForTile(ng.lowered, d.tiling->tw);
  NetworkShape withFused;
  withFused.numStreams = net.numStreams;
  withFused.streamChannels = net.streamChannels;
  withFused.layers = {{fused, net.layers[0].inputs, net.layers[1].output},
                      net.layers[2]};
  std::optional<ChainMapping> m =
      partitionNetwork(withFused, Precision::FP32, t, why);
  ASSERT_TRUE(m) << why;
  EXPECT_EQ(d.fusedNetworkCycles, m->bottleneckCycles);
  EXPECT_LE(d.fusedNetworkCycles, plan->perLayerCycles);
  EXPECT_EQ(d.frustum.cycles, m->kernels[0].predictedCycles);
  EXPECT_EQ(d.frustum.hops, placedKernelHops(withFused, *m, 0));
  EXPECT_LT(d.frustum.hops, d.perLayer.hops);
  EXPECT_EQ(d.policy, HaloPolicy::Overlap);
  // Fused in the layout, it takes no columns beside it.
  EXPECT_EQ(plan->columns, 0);
}

} // namespace
