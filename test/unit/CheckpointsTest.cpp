//===- CheckpointsTest.cpp - Reverse-checkpoint selection -----------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/Checkpoints.h"

#include <gtest/gtest.h>

#include <random>

using namespace weft::conversion;

namespace {

CheckpointNode node(const std::string &name, int64_t fixed, int64_t act,
                    int64_t fwd, int64_t recv, bool mayDrop, bool live) {
  CheckpointNode n;
  n.name = name;
  n.fixedBytes = fixed;
  n.activationBytes = act;
  n.forwardCycles = fwd;
  n.receiveCycles = recv;
  n.mayDrop = mayDrop;
  n.inputLiveUntilBackward = live;
  return n;
}

CheckpointPolicy policy(const std::string &s) {
  CheckpointPolicy p;
  std::string error;
  EXPECT_TRUE(CheckpointPolicy::parse(s, p, error)) << error;
  return p;
}

/// The least cost over every assignment that fits (-1: none fits).
int64_t bruteForce(const std::vector<CheckpointNode> &nodes, int64_t budget) {
  const size_t n = nodes.size();
  int64_t bestCost = -1;
  for (uint64_t mask = 0; mask < (uint64_t(1) << n); ++mask) {
    std::vector<bool> store(n);
    bool ok = true;
    bool anyAvail = false;
    for (size_t i = 0; i < n && ok; ++i) {
      store[i] = (mask >> i) & 1;
      if (!store[i] && (!nodes[i].mayDrop || !anyAvail))
        ok = false;
      int64_t bytes =
          nodes[i].fixedBytes + (store[i] ? nodes[i].activationBytes : 0);
      if (bytes > budget)
        ok = false;
      anyAvail |= store[i] || nodes[i].inputLiveUntilBackward;
    }
    if (!ok)
      continue;
    int64_t cost = 0;
    for (int64_t c : recomputeCost(nodes, store))
      cost += c;
    if (bestCost < 0 || cost < bestCost)
      bestCost = cost;
  }
  return bestCost;
}

TEST(Checkpoints, ParsesPolicies) {
  EXPECT_EQ(policy("none").kind, CheckpointPolicy::Kind::None);
  EXPECT_EQ(policy("auto").kind, CheckpointPolicy::Kind::Auto);
  CheckpointPolicy p = policy("every-4");
  EXPECT_EQ(p.kind, CheckpointPolicy::Kind::EveryK);
  EXPECT_EQ(p.k, 4);
  EXPECT_EQ(p.str(), "every-4");
  std::string error;
  for (const char *bad : {"every-0", "every-", "every-x", "sometimes", ""}) {
    CheckpointPolicy q;
    EXPECT_FALSE(CheckpointPolicy::parse(bad, q, error)) << bad;
    EXPECT_NE(error.find("none, auto or every-K"), std::string::npos);
  }
}

TEST(Checkpoints, RecomputeCostWalksBackToTheNearestAvailableInput) {
  // a stores; b, c, d drop; c's input lives until its backward, b's does
  // not.
  std::vector<CheckpointNode> nodes = {
      node("a", 0, 10, 100, 1, false, false),
      node("b", 0, 10, 200, 2, true, false),
      node("c", 0, 10, 300, 3, true, true),
      node("d", 0, 10, 400, 4, true, true)};
  std::vector<int64_t> cost =
      recomputeCost(nodes, {true, false, false, false});
  EXPECT_EQ(cost[0], 0);
  EXPECT_EQ(cost[1], 2 + 100);       // a's forward
  EXPECT_EQ(cost[2], 3 + 100 + 200); // a's and b's: b's input is gone
  EXPECT_EQ(cost[3], 4 + 300);       // c's input is still there
}

TEST(Checkpoints, NoneStoresEverythingOrNamesTheBytes) {
  std::vector<CheckpointNode> nodes = {node("fc1", 1000, 100, 50, 5, false, true),
                                       node("fc2", 900, 300, 60, 6, true, true)};
  CheckpointPlan plan;
  std::string error;
  ASSERT_TRUE(selectCheckpoints(nodes, 1200, policy("none"), plan, error));
  EXPECT_EQ(plan.store, (std::vector<bool>{true, true}));
  EXPECT_EQ(plan.totalRecomputeCycles, 0);
  EXPECT_EQ(plan.peakBytes, 1200);
  EXPECT_FALSE(selectCheckpoints(nodes, 1199, policy("none"), plan, error));
  EXPECT_EQ(error, "node 'fc2' needs 1200 bytes per PE storing its "
                   "activations (none), more than the budget of 1199 bytes");
}

TEST(Checkpoints, AutoDropsWhatDoesNotFit) {
  std::vector<CheckpointNode> nodes = {node("fc1", 1000, 100, 50, 5, false, true),
                                       node("fc2", 900, 300, 60, 6, true, true),
                                       node("fc3", 800, 100, 70, 7, true, true)};
  CheckpointPlan plan;
  std::string error;
  ASSERT_TRUE(selectCheckpoints(nodes, 1100, policy("auto"), plan, error));
  EXPECT_EQ(plan.store, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(plan.recomputeCycles, (std::vector<int64_t>{0, 6 + 50, 0}));
  EXPECT_EQ(plan.totalRecomputeCycles, 56);
  EXPECT_EQ(plan.peakBytes, 1100);
  // A budget the first node (which cannot drop) exceeds.
  EXPECT_FALSE(selectCheckpoints(nodes, 1099, policy("auto"), plan, error));
  EXPECT_EQ(error, "node 'fc1' needs 1100 bytes per PE storing its "
                   "activations, which it cannot recompute, more than the "
                   "budget of 1099 bytes");
  // One that fc2 exceeds even dropping.
  nodes[0].fixedBytes = 100;
  EXPECT_FALSE(selectCheckpoints(nodes, 899, policy("auto"), plan, error));
  EXPECT_EQ(error, "node 'fc2' needs 900 bytes per PE even recomputing its "
                   "activations, more than the budget of 899 bytes");
}

TEST(Checkpoints, EveryKStoresItsNodesAndThoseThatMust) {
  std::vector<CheckpointNode> nodes;
  for (int i = 0; i < 6; ++i)
    nodes.push_back(node("n" + std::to_string(i), 100, 10, 10 * (i + 1), 1,
                         i != 0 && i != 3, true));
  CheckpointPlan plan;
  std::string error;
  ASSERT_TRUE(selectCheckpoints(nodes, 200, policy("every-2"), plan, error));
  EXPECT_EQ(plan.store,
            (std::vector<bool>{true, false, true, true, true, false}));
  EXPECT_EQ(plan.totalRecomputeCycles, (1 + 10) + (1 + 50));
  ASSERT_TRUE(selectCheckpoints(nodes, 200, policy("every-1"), plan, error));
  EXPECT_EQ(plan.totalRecomputeCycles, 0);
}

TEST(Checkpoints, AutoIsOptimalAndDominatesTheFixedPolicies) {
  std::mt19937 rng(7);
  int solved = 0, infeasible = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    size_t n = 1 + rng() % 8;
    std::vector<CheckpointNode> nodes;
    for (size_t i = 0; i < n; ++i)
      nodes.push_back(node("n" + std::to_string(i), 100 + rng() % 100,
                           rng() % 60, 1 + rng() % 500, rng() % 40,
                           i > 0 && rng() % 5 != 0, rng() % 2 == 0));
    int64_t budget = 100 + rng() % 180;
    CheckpointPlan plan;
    std::string error;
    int64_t expected = bruteForce(nodes, budget);
    bool ok = selectCheckpoints(nodes, budget, policy("auto"), plan, error);
    ASSERT_EQ(ok, expected >= 0) << "trial " << trial << ": " << error;
    if (!ok) {
      ++infeasible;
      EXPECT_NE(error.find("bytes"), std::string::npos);
      continue;
    }
    ++solved;
    EXPECT_EQ(plan.totalRecomputeCycles, expected) << "trial " << trial;
    EXPECT_LE(plan.peakBytes, budget);
    // Every fixed policy that fits some budget is dominated by auto run on
    // that budget (its own peak): no more bytes, no more recompute.
    for (const char *fixed : {"none", "every-2", "every-3", "every-4"}) {
      CheckpointPlan f, a;
      if (!selectCheckpoints(nodes, 1 << 20, policy(fixed), f, error))
        continue;
      ASSERT_TRUE(
          selectCheckpoints(nodes, f.peakBytes, policy("auto"), a, error))
          << error;
      EXPECT_LE(a.peakBytes, f.peakBytes);
      EXPECT_LE(a.totalRecomputeCycles, f.totalRecomputeCycles);
    }
  }
  EXPECT_GT(solved, 1000);
  EXPECT_GT(infeasible, 100);
}

} // namespace
