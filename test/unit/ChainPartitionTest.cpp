//===- ChainPartitionTest.cpp - The balanced-pipeline partitioner ---------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// partitionChain against the contract of the chain lowering (contiguous
// rectangles from column 0 at row 0, S_{l+1} = R_l, footprints and widths
// inside the fabric, the cost model's cycles), against a brute force over
// every layout on small fabrics, and against chooseDenseMapping on one
// layer; chooseGrid against its documented rule.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ChainPartition.h"
#include "weft/Kernels/JoinKernel.h"

#include "weft/Machine/ISA.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>

using namespace weft;
using namespace weft::conversion;
using Kind = ChainLayer::Kind;

static machine::Target grid(unsigned w, unsigned h, unsigned mem = 48 * 1024) {
  machine::TargetConfig c;
  c.width = w;
  c.height = h;
  c.memoryBytes = mem;
  return *machine::Target::create(c);
}

static int64_t cost(const ChainLayer &l, int64_t s, int64_t r, Precision p) {
  if (l.kind == Kind::Column) {
    ColumnKernel k;
    k.op = l.op;
    k.layout = RowChunks{l.K, r, 0};
    return predictColumnKernelCycles(k);
  }
  DenseMapping m;
  m.smear = s;
  m.rows = r;
  m.precision = p;
  return predictCyclesPerSample(l.K, l.M, m, l.bias);
}

/// Checks `m` is a valid layout of `chain` on `t` (the lowering's
/// contract) with the cost model's cycles.
static void expectValid(const std::vector<ChainLayer> &chain,
                        const ChainMapping &m, const machine::Target &t,
                        Precision p) {
  ASSERT_EQ(m.kernels.size(), chain.size());
  int64_t x = 0, rowsIn = m.inputRows, bottleneck = 0, pes = 0, height = 0;
  for (size_t l = 0; l < chain.size(); ++l) {
    const ChainPlacement &k = m.kernels[l];
    SCOPED_TRACE("kernel " + std::to_string(l));
    EXPECT_EQ(k.x0, x);
    if (chain[l].kind == Kind::Dense) {
      EXPECT_EQ(k.width, rowsIn) << "S_l must be the rows of the kernel before";
      EXPECT_EQ(k.footprint, std::max(k.width, k.rows));
      EXPECT_GT(chunkSize(chain[l].K, k.width, k.width - 1), 0);
      EXPECT_GT(chunkSize(chain[l].M, k.rows, k.rows - 1), 0);
      DenseMapping dm;
      dm.smear = k.width;
      dm.rows = k.rows;
      dm.precision = p;
      EXPECT_LE(memoryPerPE(chain[l].K, chain[l].M, dm),
                int64_t(t.memoryBytes()));
    } else {
      EXPECT_EQ(k.width, 1);
      EXPECT_EQ(k.rows, rowsIn) << "a column kernel keeps its rows";
      EXPECT_EQ(k.footprint, k.rows);
    }
    EXPECT_LE(k.footprint, int64_t(t.height()));
    EXPECT_EQ(k.predictedCycles, cost(chain[l], k.width, k.rows, p));
    bottleneck = std::max(bottleneck, k.predictedCycles);
    pes += k.width * k.rows;
    height = std::max(height, k.footprint);
    x += k.width;
    rowsIn = k.rows;
  }
  EXPECT_LE(x, int64_t(t.width()));
  EXPECT_EQ(m.width, x);
  EXPECT_EQ(m.height, height);
  EXPECT_EQ(m.outputRows, rowsIn);
  EXPECT_EQ(m.bottleneckCycles, bottleneck);
  EXPECT_EQ(m.pes, pes);
}

/// The best (bottleneck, PEs) over every layout, by enumeration; with
/// `latency`, the best (summed cycles, PEs), a dense kernel's cycles with
/// kLatencyPerHop for each of its columns and rows.
static std::pair<int64_t, int64_t>
bruteForce(const std::vector<ChainLayer> &chain, const machine::Target &t,
           Precision p, bool latency = false) {
  auto combine = [latency](int64_t acc, int64_t c) {
    return latency ? acc + c : std::max(acc, c);
  };
  int64_t H = t.height(), W = t.width();
  std::pair<int64_t, int64_t> best = {INT64_MAX, INT64_MAX};
  std::function<void(size_t, int64_t, int64_t, int64_t, int64_t)> go =
      [&](size_t l, int64_t rowsIn, int64_t width, int64_t worst, int64_t pes) {
        if (width > W)
          return;
        if (l == chain.size()) {
          best = std::min(best, std::make_pair(worst, pes));
          return;
        }
        const ChainLayer &c = chain[l];
        if (rowsIn > std::min(c.K, H) ||
            chunkSize(c.K, rowsIn, rowsIn - 1) == 0)
          return;
        if (c.kind == Kind::Column) {
          go(l + 1, rowsIn, width + 1, combine(worst, cost(c, 1, rowsIn, p)),
             pes + rowsIn);
          return;
        }
        for (int64_t r = 1; r <= std::min(c.M, H); ++r) {
          if (chunkSize(c.M, r, r - 1) == 0 || std::max(rowsIn, r) > H)
            continue;
          DenseMapping m;
          m.smear = rowsIn;
          m.rows = r;
          m.precision = p;
          if (memoryPerPE(c.K, c.M, m) > int64_t(t.memoryBytes()))
            continue;
          int64_t k = cost(c, rowsIn, r, p);
          if (latency)
            k += kLatencyPerHop * (rowsIn + r);
          go(l + 1, r, width + rowsIn, combine(worst, k), pes + rowsIn * r);
        }
      };
  for (int64_t s = 1; s <= H; ++s)
    go(0, s, 0, 0, 0);
  return best;
}

TEST(ChainPartition, OneLayerAgreesWithChooseDenseMapping) {
  for (auto [K, M] : std::vector<std::pair<int64_t, int64_t>>{
           {784, 256}, {1000, 10}, {37, 129}, {64, 32}, {5, 3}}) {
    SCOPED_TRACE(std::to_string(K) + " -> " + std::to_string(M));
    machine::Target t = grid(16, 16);
    std::string why;
    auto single = chooseDenseMapping(K, M, Precision::FP32, t, why);
    ASSERT_TRUE(single.has_value()) << why;
    std::vector<ChainLayer> chain = {ChainLayer::dense(K, M, true)};
    auto m = partitionChain(chain, Precision::FP32, t, why);
    ASSERT_TRUE(m) << why;
    expectValid(chain, *m, t, Precision::FP32);
    EXPECT_EQ(m->bottleneckCycles, predictCyclesPerSample(K, M, *single));
    EXPECT_EQ(m->pes, single->smear * single->rows);
  }
}

TEST(ChainPartition, Mlp784On16x16) {
  std::vector<ChainLayer> chain = {ChainLayer::dense(784, 256, true),
                                   ChainLayer::dense(256, 128, true),
                                   ChainLayer::dense(128, 10, true),
                                   ChainLayer::column(ColumnOp::Softmax, 10)};
  for (Precision p : {Precision::FP32, Precision::Mixed}) {
    machine::Target t = grid(16, 16);
    std::string why;
    auto m = partitionChain(chain, p, t, why);
    ASSERT_TRUE(m) << why;
    expectValid(chain, *m, t, p);
    // The first layer has by far the most MACs: it gets the most PEs.
    EXPECT_GT(m->kernels[0].width * m->kernels[0].rows,
              m->kernels[2].width * m->kernels[2].rows);
  }
}

/// Both objectives against the brute force: the interval objective's
/// bottleneck, then PEs; the latency objective's (SGD: one sample in flight)
/// summed cycles, each dense kernel's with a hop latency per column and
/// row, then PEs. The latency layout never has a larger sum than the
/// interval layout, nor a faster slowest kernel, and on some of these
/// chains the two differ.
TEST(ChainPartition, OptimalAgainstBruteForce) {
  std::vector<std::vector<ChainLayer>> chains = {
      {ChainLayer::dense(64, 48, true), ChainLayer::column(ColumnOp::Relu, 48),
       ChainLayer::dense(48, 10, false)},
      {ChainLayer::dense(200, 100, true), ChainLayer::dense(100, 30, true),
       ChainLayer::column(ColumnOp::Softmax, 30)},
      {ChainLayer::column(ColumnOp::Sigmoid, 40),
       ChainLayer::dense(40, 90, true), ChainLayer::column(ColumnOp::Tanh, 90),
       ChainLayer::dense(90, 7, true)},
      {ChainLayer::dense(300, 300, true), ChainLayer::dense(300, 300, true)},
      {ChainLayer::dense(20, 16, true), ChainLayer::dense(16, 12, true),
       ChainLayer::dense(12, 5, true)},
  };
  bool differs = false;
  for (size_t i = 0; i < chains.size(); ++i)
    for (auto [w, h, mem] :
         std::vector<std::tuple<unsigned, unsigned, unsigned>>{
             {8, 8, 48 * 1024},
             {12, 5, 48 * 1024},
             {6, 9, 16 * 1024},
             {20, 3, 48 * 1024}}) {
      SCOPED_TRACE("chain " + std::to_string(i) + " on " + std::to_string(w) +
                   "x" + std::to_string(h) + " mem " + std::to_string(mem));
      machine::Target t = grid(w, h, mem);
      auto latencyOf = [&](const ChainMapping &mm) {
        int64_t sum = 0;
        for (size_t l = 0; l < chains[i].size(); ++l) {
          const ChainPlacement &k = mm.kernels[l];
          sum += k.predictedCycles;
          if (chains[i][l].kind == Kind::Dense)
            sum += kLatencyPerHop * (k.width + k.rows);
        }
        return sum;
      };
      std::optional<ChainMapping> byObjective[2];
      for (bool latency : {false, true}) {
        SCOPED_TRACE(latency ? "latency" : "interval");
        NetworkShape net = NetworkShape::chain(chains[i]);
        if (latency)
          net.objective = NetworkShape::Objective::Latency;
        std::string why;
        auto m = partitionNetwork(net, Precision::FP32, t, why);
        auto best = bruteForce(chains[i], t, Precision::FP32, latency);
        if (best.first == INT64_MAX) {
          EXPECT_FALSE(m);
          EXPECT_FALSE(why.empty());
          continue;
        }
        ASSERT_TRUE(m) << why;
        expectValid(chains[i], *m, t, Precision::FP32);
        EXPECT_EQ(latency ? latencyOf(*m) : m->bottleneckCycles, best.first);
        EXPECT_EQ(m->pes, best.second);
        byObjective[latency] = std::move(m);
      }
      if (!byObjective[0] || !byObjective[1])
        continue;
      EXPECT_LE(latencyOf(*byObjective[1]), latencyOf(*byObjective[0]));
      EXPECT_GE(byObjective[1]->bottleneckCycles,
                byObjective[0]->bottleneckCycles);
      differs |= byObjective[1]->pes != byObjective[0]->pes;
    }
  EXPECT_TRUE(differs) << "the objectives never chose different layouts";
}

TEST(ChainPartition, TooBigSaysWhatItNeeds) {
  std::string why;
  // One layer that fits no rectangle: chooseDenseMapping's sentence.
  EXPECT_FALSE(partitionChain({ChainLayer::dense(784, 256, true)},
                              Precision::FP32, grid(4, 4), why));
  EXPECT_NE(why.find("kernel 0 (dense 784 -> 256): a dense layer of 784 "
                     "inputs and 256 neurons needs 802816 bytes of weights"),
            std::string::npos)
      << why;
  // Every layer fits alone, not side by side: the columns it needs.
  std::vector<ChainLayer> chain = {ChainLayer::dense(784, 256, true),
                                   ChainLayer::dense(256, 256, true),
                                   ChainLayer::dense(256, 256, true)};
  EXPECT_FALSE(partitionChain(chain, Precision::FP32, grid(4, 16), why));
  EXPECT_NE(why.find("the network of 3 kernels needs at least"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("columns of at most 16 rows"), std::string::npos) << why;
  EXPECT_NE(why.find("but the 4x16 fabric has 4 columns"), std::string::npos)
      << why;
  auto m = partitionChain(chain, Precision::FP32, grid(16, 16), why);
  ASSERT_TRUE(m) << why;
  expectValid(chain, *m, grid(16, 16), Precision::FP32);
}

TEST(ChainPartition, CandidateGridSizes) {
  std::vector<int64_t> s = candidateGridSizes(64);
  EXPECT_EQ(s.front(), 1);
  EXPECT_EQ(s.back(), 64);
  EXPECT_TRUE(std::count(s.begin(), s.end(), 16));
  EXPECT_TRUE(std::count(s.begin(), s.end(), 20));
  EXPECT_FALSE(std::count(s.begin(), s.end(), 18));
  std::vector<int64_t> big = candidateGridSizes(200);
  EXPECT_TRUE(std::count(big.begin(), big.end(), 72));
  EXPECT_FALSE(std::count(big.begin(), big.end(), 140));
  EXPECT_TRUE(std::count(big.begin(), big.end(), 144));
  EXPECT_EQ(big.back(), 200);
}

TEST(ChainPartition, ChooseGridFollowsItsRule) {
  std::vector<ChainLayer> chain = {ChainLayer::dense(784, 256, true),
                                   ChainLayer::dense(256, 128, true),
                                   ChainLayer::dense(128, 10, true),
                                   ChainLayer::column(ColumnOp::Softmax, 10)};
  const double tolerance = 0.05;
  std::string why;
  auto choice =
      chooseGrid(chain, Precision::FP32, grid(32, 32), tolerance, why);
  ASSERT_TRUE(choice) << why;
  machine::Target chosen =
      grid(unsigned(choice->width), unsigned(choice->height));
  expectValid(chain, choice->mapping, chosen, Precision::FP32);
  double macs = double(chainMacsPerSample(chain));
  EXPECT_EQ(macs, 784 * 256 + 256 * 128 + 128 * 10);
  EXPECT_DOUBLE_EQ(choice->utilization,
                   macs / (double(choice->width * choice->height) *
                           double(choice->mapping.bottleneckCycles)));
  EXPECT_GE(choice->utilization, (1 - tolerance) * choice->bestUtilization);
  // No considered grid with fewer PEs qualifies, and none is better than
  // the best.
  for (int64_t w : candidateGridSizes(32))
    for (int64_t h : candidateGridSizes(32)) {
      auto m = partitionChain(chain, Precision::FP32,
                              grid(unsigned(w), unsigned(h)), why);
      if (!m)
        continue;
      double u = macs / (double(w * h) * double(m->bottleneckCycles));
      EXPECT_LE(u, choice->bestUtilization * (1 + 1e-12));
      if (w * h < choice->width * choice->height) {
        EXPECT_LT(u, (1 - tolerance) * choice->bestUtilization)
            << w << "x" << h << " has fewer PEs";
      }
    }
  // Nothing fits: the sentence for the largest grid.
  EXPECT_FALSE(chooseGrid(chain, Precision::FP32, grid(2, 2), tolerance, why));
  EXPECT_NE(why.find("needs 802816 bytes of weights"), std::string::npos)
      << why;
}

TEST(ChainPartition, ChooseGridCountsHeightsItDoesNotSearch) {
  // A 64 -> 32 layer uses at most 64 rows: chooseGrid does not search the
  // taller heights, yet they count and compare as if it had (what
  // partitionChain finds on every candidate grid).
  std::vector<ChainLayer> chain = {ChainLayer::dense(64, 32, true),
                                   ChainLayer::column(ColumnOp::Softmax, 32)};
  std::string why;
  auto choice = chooseGrid(chain, Precision::FP32, grid(32, 200), 0.05, why);
  ASSERT_TRUE(choice) << why;
  double macs = double(chainMacsPerSample(chain));
  int64_t fitting = 0;
  double best = 0;
  for (int64_t w : candidateGridSizes(32))
    for (int64_t h : candidateGridSizes(200)) {
      auto m = partitionChain(chain, Precision::FP32,
                              grid(unsigned(w), unsigned(h)), why);
      if (!m)
        continue;
      ++fitting;
      best = std::max(best, macs / (double(w * h) *
                                    double(m->bottleneckCycles)));
    }
  EXPECT_EQ(choice->gridsFitting, fitting);
  EXPECT_DOUBLE_EQ(choice->bestUtilization, best);
  EXPECT_LE(choice->height, 64);
}

//===----------------------------------------------------------------------===//
// Networks (DAGs)
//===----------------------------------------------------------------------===//

static int64_t networkCost(const ChainLayer &l, int64_t s, int64_t r,
                           Precision p) {
  if (l.kind == Kind::Join) {
    JoinKernel k;
    k.layout = RowChunks{l.K, r, 0};
    k.buffered = 1;
    k.fifoSamples = 1;
    return predictJoinKernelCycles(k);
  }
  return cost(l, s, r, p);
}

/// The best (bottleneck, PEs) over every layout of `net`, by enumeration of
/// every stream's rows.
static std::pair<int64_t, int64_t> bruteForce(const NetworkShape &net,
                                              const machine::Target &t,
                                              Precision p) {
  int64_t H = t.height(), W = t.width();
  std::pair<int64_t, int64_t> best = {INT64_MAX, INT64_MAX};
  std::vector<int64_t> rows(size_t(net.numStreams), 0);
  std::function<void(size_t, int64_t, int64_t, int64_t)> go =
      [&](size_t l, int64_t width, int64_t worst, int64_t pes) {
        if (width > W)
          return;
        if (l == net.layers.size()) {
          best = std::min(best, std::make_pair(worst, pes));
          return;
        }
        const NetworkLayer &nl = net.layers[l];
        const ChainLayer &c = nl.layer;
        int64_t in = 0;
        for (int64_t s : nl.inputs) {
          if (in && rows[size_t(s)] != in)
            return; // a join's inputs must agree
          in = rows[size_t(s)];
        }
        if (in > std::min(c.K, H) || chunkSize(c.K, in, in - 1) == 0)
          return;
        if (c.kind != Kind::Dense) {
          int64_t L = chunkSize(c.K, in, 0);
          if (c.kind == Kind::Join) {
            JoinKernel k;
            k.layout = RowChunks{c.K, in, 0};
            k.fifoSamples = 1;
            k.buffered = 1;
            if (joinMemoryPerPE(k) > int64_t(t.memoryBytes()) || L > 32767)
              return;
          }
          rows[size_t(nl.output)] = in;
          go(l + 1, width + 1, std::max(worst, networkCost(c, 1, in, p)),
             pes + in);
          return;
        }
        for (int64_t r = 1; r <= std::min(c.M, H); ++r) {
          if (chunkSize(c.M, r, r - 1) == 0 || std::max(in, r) > H)
            continue;
          DenseMapping m;
          m.smear = in;
          m.rows = r;
          m.precision = p;
          if (memoryPerPE(c.K, c.M, m) > int64_t(t.memoryBytes()))
            continue;
          rows[size_t(nl.output)] = r;
          go(l + 1, width + in, std::max(worst, networkCost(c, in, r, p)),
             pes + in * r);
        }
      };
  // The host streams (no kernel writes them) take every row count.
  std::vector<int64_t> hosts;
  for (int64_t s = 0; s < net.numStreams; ++s)
    if (std::none_of(net.layers.begin(), net.layers.end(),
                     [&](const NetworkLayer &l) { return l.output == s; }))
      hosts.push_back(s);
  std::function<void(size_t)> assign = [&](size_t i) {
    if (i == hosts.size())
      return go(0, 0, 0, 0);
    for (int64_t r = 1; r <= H; ++r) {
      rows[size_t(hosts[i])] = r;
      assign(i + 1);
    }
  };
  assign(0);
  return best;
}

/// x -> dense -> Relu -> dense -> (+ x) -> dense: a residual block.
static NetworkShape residual(int64_t n, int64_t out) {
  NetworkShape net;
  net.layers = {{ChainLayer::dense(n, n, true), {0}, 1},
                {ChainLayer::column(ColumnOp::Relu, n), {1}, 2},
                {ChainLayer::dense(n, n, true), {2}, 3},
                {ChainLayer::join(n), {3, 0}, 4},
                {ChainLayer::dense(n, out, true), {4}, 5}};
  net.numStreams = 6;
  return net;
}

TEST(NetworkPartition, ResidualOptimalAgainstBruteForce) {
  std::vector<NetworkShape> nets = {residual(32, 10), residual(60, 7)};
  // Two inputs joined, then a head: a, b -> dense each -> join -> dense.
  NetworkShape two;
  two.layers = {{ChainLayer::dense(20, 12, true), {0}, 2},
                {ChainLayer::dense(16, 12, true), {1}, 3},
                {ChainLayer::join(12), {2, 3}, 4},
                {ChainLayer::dense(12, 5, true), {4}, 5}};
  two.numStreams = 6;
  nets.push_back(two);
  for (size_t i = 0; i < nets.size(); ++i)
    for (auto [w, h] : std::vector<std::pair<unsigned, unsigned>>{
             {8, 8}, {16, 6}, {30, 4}, {12, 12}}) {
      SCOPED_TRACE("network " + std::to_string(i) + " on " +
                   std::to_string(w) + "x" + std::to_string(h));
      machine::Target t = grid(w, h);
      std::string why;
      auto m = partitionNetwork(nets[i], Precision::FP32, t, why);
      auto best = bruteForce(nets[i], t, Precision::FP32);
      if (best.first == INT64_MAX) {
        EXPECT_FALSE(m);
        EXPECT_FALSE(why.empty());
        continue;
      }
      ASSERT_TRUE(m) << why;
      EXPECT_EQ(m->bottleneckCycles, best.first);
      EXPECT_EQ(m->pes, best.second);
      // Every stream's rows are what its readers take; a join's two
      // streams agree; kernels side by side from column 0.
      int64_t x = 0;
      for (size_t l = 0; l < nets[i].layers.size(); ++l) {
        const NetworkLayer &nl = nets[i].layers[l];
        const ChainPlacement &k = m->kernels[l];
        EXPECT_EQ(k.x0, x);
        x += k.width;
        int64_t in = m->streamRows[size_t(nl.inputs[0])];
        for (int64_t s : nl.inputs)
          EXPECT_EQ(m->streamRows[size_t(s)], in);
        EXPECT_EQ(nl.layer.kind == Kind::Dense ? k.width : k.rows, in);
        EXPECT_EQ(m->streamRows[size_t(nl.output)], k.rows);
      }
    }
}

TEST(NetworkPartition, ChainShapeIsTheChain) {
  std::vector<ChainLayer> chain = {ChainLayer::dense(64, 48, true),
                                   ChainLayer::column(ColumnOp::Relu, 48),
                                   ChainLayer::dense(48, 10, false)};
  std::string why;
  auto a = partitionChain(chain, Precision::FP32, grid(12, 8), why);
  auto b = partitionNetwork(NetworkShape::chain(chain), Precision::FP32,
                            grid(12, 8), why);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->bottleneckCycles, b->bottleneckCycles);
  EXPECT_EQ(a->pes, b->pes);
  for (size_t l = 0; l < chain.size(); ++l) {
    EXPECT_EQ(a->kernels[l].x0, b->kernels[l].x0);
    EXPECT_EQ(a->kernels[l].rows, b->kernels[l].rows);
  }
  EXPECT_EQ(b->streamRows.front(), b->inputRows);
  EXPECT_EQ(b->streamRows.back(), b->outputRows);
}

TEST(NetworkPartition, MalformedShapesAreRefused) {
  std::string why;
  NetworkShape oneInputJoin;
  oneInputJoin.layers = {{ChainLayer::join(8), {0}, 1}};
  oneInputJoin.numStreams = 2;
  EXPECT_FALSE(partitionNetwork(oneInputJoin, Precision::FP32, grid(8, 8), why));
  EXPECT_NE(why.find("reads 1 streams, not 2"), std::string::npos) << why;

  NetworkShape readsLater;
  readsLater.layers = {{ChainLayer::column(ColumnOp::Relu, 8), {2}, 1},
                       {ChainLayer::column(ColumnOp::Relu, 8), {0}, 2}};
  readsLater.numStreams = 3;
  EXPECT_FALSE(partitionNetwork(readsLater, Precision::FP32, grid(8, 8), why));
  EXPECT_NE(why.find("reads a stream no earlier kernel writes"),
            std::string::npos)
      << why;

  NetworkShape twoWriters;
  twoWriters.layers = {{ChainLayer::column(ColumnOp::Relu, 8), {0}, 1},
                       {ChainLayer::column(ColumnOp::Relu, 8), {0}, 1}};
  twoWriters.numStreams = 2;
  EXPECT_FALSE(partitionNetwork(twoWriters, Precision::FP32, grid(8, 8), why));
  EXPECT_NE(why.find("writes an invalid stream"), std::string::npos) << why;
}

/// x -> `branches` dense layers side by side, each result kept until a
/// chain of joins adds them all up: up to `branches` streams live at once,
/// each with up to H row counts (H^branches states for the exact
/// programs).
static NetworkShape wideFork(int64_t branches, int64_t n) {
  NetworkShape net;
  int64_t next = 1;
  std::vector<int64_t> outs;
  for (int64_t b = 0; b < branches; ++b) {
    net.layers.push_back({ChainLayer::dense(n, n, true), {0}, next});
    outs.push_back(next++);
  }
  int64_t sum = outs[0];
  for (int64_t b = 1; b < branches; ++b) {
    net.layers.push_back({ChainLayer::join(n), {sum, outs[size_t(b)]}, next});
    sum = next++;
  }
  net.layers.push_back({ChainLayer::dense(n, 10, true), {sum}, next++});
  net.numStreams = next;
  return net;
}

TEST(NetworkPartition, WideForkIsBoundedAndValid) {
  // 12 branches on 64 rows: 64^12 row assignments; the exact programs ran
  // out of memory, the bounded search finishes in well under a second.
  NetworkShape net = wideFork(12, 256);
  machine::Target t = grid(200, 64);
  std::string why;
  auto m = partitionNetwork(net, Precision::FP32, t, why);
  ASSERT_TRUE(m) << why;
  int64_t x = 0, worst = 0;
  for (size_t l = 0; l < net.layers.size(); ++l) {
    const NetworkLayer &nl = net.layers[l];
    const ChainPlacement &k = m->kernels[l];
    EXPECT_EQ(k.x0, x);
    x += k.width;
    int64_t in = m->streamRows[size_t(nl.inputs[0])];
    for (int64_t s : nl.inputs)
      EXPECT_EQ(m->streamRows[size_t(s)], in) << "kernel " << l;
    EXPECT_EQ(nl.layer.kind == Kind::Dense ? k.width : k.rows, in);
    EXPECT_EQ(m->streamRows[size_t(nl.output)], k.rows);
    EXPECT_EQ(k.predictedCycles,
              networkCost(nl.layer, k.width, k.rows, Precision::FP32));
    worst = std::max(worst, k.predictedCycles);
  }
  EXPECT_LE(x, 200);
  EXPECT_EQ(m->width, x);
  EXPECT_EQ(m->bottleneckCycles, worst);
  // Deterministic: the same input gives the same layout.
  auto again = partitionNetwork(net, Precision::FP32, t, why);
  ASSERT_TRUE(again);
  for (size_t l = 0; l < net.layers.size(); ++l) {
    EXPECT_EQ(again->kernels[l].width, m->kernels[l].width);
    EXPECT_EQ(again->kernels[l].rows, m->kernels[l].rows);
  }
}

TEST(NetworkPartition, SmallForkStaysExact) {
  // 3 branches on 6 rows are within the state budget: the brute force's
  // optimum.
  NetworkShape net = wideFork(3, 24);
  machine::Target t = grid(24, 6);
  std::string why;
  auto m = partitionNetwork(net, Precision::FP32, t, why);
  auto best = bruteForce(net, t, Precision::FP32);
  ASSERT_TRUE(m) << why;
  EXPECT_EQ(m->bottleneckCycles, best.first);
  EXPECT_EQ(m->pes, best.second);
}

TEST(NetworkPartition, ChooseGridAboveTheBudgetIsFastAndDeterministic) {
  // 12 branches: every height from 3 up exceeds the state budget, so
  // --grid auto compares heights with the bounded search (a narrow beam,
  // each height's bisection starting from the previous height's
  // bottleneck) and searches the grid it picks again with the full beam.
  NetworkShape net = wideFork(12, 256);
  std::string why;
  auto start = std::chrono::steady_clock::now();
  auto g = chooseGrid(net, Precision::FP32, grid(40, 16), 0.05, why);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  ASSERT_TRUE(g) << why;
  // About a second here; the bound only catches a return to a search per
  // height that is orders of magnitude slower.
  EXPECT_LT(seconds, 60.0);
  // Heights 1 and 2 (exact) fit in no 40 columns (each branch's 256 x 256
  // weights need 6 PEs); the bounded heights 3 .. 16 all fit on the full
  // width, the only one they are tried on.
  EXPECT_EQ(g->width, 40);
  EXPECT_GE(g->height, 3);
  EXPECT_EQ(g->gridsFitting, 14);
  const ChainMapping &m = g->mapping;
  EXPECT_LE(m.width, g->width);
  EXPECT_LE(m.height, g->height);
  EXPECT_GT(g->utilization, 0.0);
  EXPECT_LE(g->utilization, g->bestUtilization);
  // A valid layout: streams agree, the slowest kernel is the bottleneck.
  int64_t worst = 0;
  for (size_t l = 0; l < net.layers.size(); ++l) {
    const NetworkLayer &nl = net.layers[l];
    int64_t in = m.streamRows[size_t(nl.inputs[0])];
    for (int64_t s : nl.inputs)
      EXPECT_EQ(m.streamRows[size_t(s)], in) << "kernel " << l;
    EXPECT_EQ(m.streamRows[size_t(nl.output)], m.kernels[l].rows);
    worst = std::max(worst, m.kernels[l].predictedCycles);
  }
  EXPECT_EQ(m.bottleneckCycles, worst);
  // Deterministic: the same input picks the same grid and layout.
  auto again = chooseGrid(net, Precision::FP32, grid(40, 16), 0.05, why);
  ASSERT_TRUE(again) << why;
  EXPECT_EQ(again->width, g->width);
  EXPECT_EQ(again->height, g->height);
  EXPECT_EQ(again->mapping.bottleneckCycles, m.bottleneckCycles);
  ASSERT_EQ(again->mapping.kernels.size(), m.kernels.size());
  for (size_t l = 0; l < m.kernels.size(); ++l) {
    EXPECT_EQ(again->mapping.kernels[l].width, m.kernels[l].width);
    EXPECT_EQ(again->mapping.kernels[l].rows, m.kernels[l].rows);
  }
}

// A layer whose input arrives sparse (mixed precision) is costed at its
// expected density: at 30 % non-zeros the network's bottleneck falls, the
// sparse layer is predicted no slower than the layout's bottleneck, and in
// `auto` never costs more than dense (the faster of the two); fp32 layers
// ignore it (their streams stay dense).
TEST(ChainPartition, SparseInputsArePlacedAtTheirCost) {
  std::vector<ChainLayer> dense = {ChainLayer::dense(784, 256, true),
                                   ChainLayer::dense(256, 256, true),
                                   ChainLayer::dense(256, 10, true)};
  machine::Target t = grid(24, 16);
  std::string why;
  auto base = partitionChain(dense, Precision::Mixed, t, why);
  ASSERT_TRUE(base) << why;
  for (bool on : {false, true}) {
    std::vector<ChainLayer> sparse = dense;
    for (size_t l = 0; l < sparse.size(); ++l) {
      sparse[l].sparseInput = true;
      sparse[l].sparseOn = on;
      sparse[l].inputDensity = ExpectedDensity(l == 0 ? 0.15 : 0.3);
    }
    auto m = partitionChain(sparse, Precision::Mixed, t, why);
    ASSERT_TRUE(m) << why;
    // (expectValid's costs are dense; the layout's shape is the same.)
    EXPECT_LE(m->width, 24);
    for (const ChainPlacement &k : m->kernels)
      EXPECT_LE(k.predictedCycles, m->bottleneckCycles);
    EXPECT_LT(m->bottleneckCycles, base->bottleneckCycles) << on;
    auto fp32 = partitionChain(sparse, Precision::FP32, t, why);
    auto fp32Dense = partitionChain(dense, Precision::FP32, t, why);
    ASSERT_TRUE(fp32 && fp32Dense);
    EXPECT_EQ(fp32->bottleneckCycles, fp32Dense->bottleneckCycles);
  }
  // At a density of 1 nothing is skipped: auto places as dense.
  std::vector<ChainLayer> full = dense;
  for (ChainLayer &l : full) {
    l.sparseInput = true;
    l.inputDensity = ExpectedDensity(1.0);
  }
  auto m = partitionChain(full, Precision::Mixed, t, why);
  ASSERT_TRUE(m) << why;
  EXPECT_EQ(m->bottleneckCycles, base->bottleneckCycles);
}
