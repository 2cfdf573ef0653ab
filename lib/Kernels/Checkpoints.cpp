//===- Checkpoints.cpp - Reverse-checkpoint selection ---------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/Checkpoints.h"

#include <algorithm>
#include <limits>

namespace weft::conversion {

bool CheckpointPolicy::parse(const std::string &text, CheckpointPolicy &out,
                             std::string &error) {
  if (text == "none") {
    out = {Kind::None, 1};
    return true;
  }
  if (text == "auto") {
    out = {Kind::Auto, 1};
    return true;
  }
  const std::string prefix = "every-";
  if (text.compare(0, prefix.size(), prefix) == 0 &&
      text.size() > prefix.size() && text.size() <= prefix.size() + 6 &&
      text.find_first_not_of("0123456789", prefix.size()) ==
          std::string::npos) {
    int64_t k = std::stoll(text.substr(prefix.size()));
    if (k >= 1) {
      out = {Kind::EveryK, k};
      return true;
    }
  }
  error = "the checkpoint policy must be none, auto or every-K with K >= 1, "
          "not '" +
          text + "'";
  return false;
}

std::string CheckpointPolicy::str() const {
  switch (kind) {
  case Kind::None:
    return "none";
  case Kind::Auto:
    return "auto";
  case Kind::EveryK:
    return "every-" + std::to_string(k);
  }
  return "";
}

std::vector<int64_t> recomputeCost(const std::vector<CheckpointNode> &nodes,
                                   const std::vector<bool> &store) {
  std::vector<int64_t> cost(nodes.size(), 0);
  int64_t avail = -1; // the nearest node whose input is available
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!store[i]) {
      int64_t c = nodes[i].receiveCycles;
      for (int64_t k = std::max<int64_t>(avail, 0); k < int64_t(i); ++k)
        c += nodes[size_t(k)].forwardCycles;
      cost[i] = c;
    }
    if (store[i] || nodes[i].inputLiveUntilBackward)
      avail = int64_t(i);
  }
  return cost;
}

namespace {

int64_t bytesOf(const CheckpointNode &n, bool store) {
  return n.fixedBytes + (store ? n.activationBytes : 0);
}

/// Fills the plan's cost and peak from its `store`.
void finish(const std::vector<CheckpointNode> &nodes, CheckpointPlan &plan) {
  plan.recomputeCycles = recomputeCost(nodes, plan.store);
  plan.totalRecomputeCycles = 0;
  plan.peakBytes = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    plan.totalRecomputeCycles += plan.recomputeCycles[i];
    plan.peakBytes = std::max(plan.peakBytes, bytesOf(nodes[i], plan.store[i]));
  }
}

std::string tooBig(const CheckpointNode &n, bool store, int64_t budget,
                   const std::string &how) {
  return "node '" + n.name + "' needs " + std::to_string(bytesOf(n, store)) +
         " bytes per PE " + how + ", more than the budget of " +
         std::to_string(budget) + " bytes";
}

/// The fixed policies: `store` given, checked against the budget.
bool checkFixed(const std::vector<CheckpointNode> &nodes, int64_t budget,
                const std::string &policy, CheckpointPlan &plan,
                std::string &error) {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (bytesOf(nodes[i], plan.store[i]) > budget) {
      error = tooBig(nodes[i], plan.store[i], budget,
                     plan.store[i] ? "storing its activations (" + policy + ")"
                                   : "recomputing its activations (" +
                                         policy + ")");
      return false;
    }
  finish(nodes, plan);
  return true;
}

} // namespace

bool selectCheckpoints(const std::vector<CheckpointNode> &nodes,
                       int64_t budget, const CheckpointPolicy &policy,
                       CheckpointPlan &plan, std::string &error) {
  const size_t n = nodes.size();
  plan = CheckpointPlan();
  plan.store.assign(n, true);
  if (policy.kind == CheckpointPolicy::Kind::None)
    return checkFixed(nodes, budget, "none", plan, error);
  if (policy.kind == CheckpointPolicy::Kind::EveryK) {
    for (size_t i = 0; i < n; ++i)
      plan.store[i] = !nodes[i].mayDrop || int64_t(i) % policy.k == 0;
    return checkFixed(nodes, budget, policy.str(), plan, error);
  }

  // Auto. The cost of dropping node i depends only on `avail`, the nearest
  // node before i whose input is available (stored, or live until its
  // backward pass): receiveCycles[i] + forwardCycles[avail .. i - 1]. The
  // state after node i is that index (+1; 0 is "none yet").
  std::vector<int64_t> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + nodes[i].forwardCycles;
  constexpr int64_t kInf = std::numeric_limits<int64_t>::max();
  // best[i][a]: the least cost of nodes 0 .. i - 1 ending in state a.
  std::vector<std::vector<int64_t>> best(n + 1,
                                         std::vector<int64_t>(n + 1, kInf));
  // How state a after node i was reached: the state before, and the choice.
  std::vector<std::vector<std::pair<int64_t, bool>>> from(
      n + 1, std::vector<std::pair<int64_t, bool>>(n + 1, {-1, true}));
  best[0][0] = 0;
  for (size_t i = 0; i < n; ++i) {
    const CheckpointNode &node = nodes[i];
    for (size_t a = 0; a <= i; ++a) {
      int64_t here = best[i][a];
      if (here == kInf)
        continue;
      auto relax = [&](size_t to, int64_t cost, bool store) {
        // Among equal costs, storing wins (the loop tries it first).
        if (here + cost < best[i + 1][to]) {
          best[i + 1][to] = here + cost;
          from[i + 1][to] = {int64_t(a), store};
        }
      };
      if (bytesOf(node, true) <= budget)
        relax(i + 1, 0, true);
      if (node.mayDrop && a > 0 && bytesOf(node, false) <= budget) {
        int64_t cost = node.receiveCycles + prefix[i] - prefix[a - 1];
        relax(node.inputLiveUntilBackward ? i + 1 : a, cost, false);
      }
    }
    bool any = false;
    for (int64_t v : best[i + 1])
      any |= v != kInf;
    if (!any) {
      bool canDrop = node.mayDrop;
      error = tooBig(node, !canDrop, budget,
                     canDrop ? "even recomputing its activations"
                             : "storing its activations, which it cannot "
                               "recompute");
      if (canDrop && bytesOf(node, false) <= budget)
        error = "node '" + node.name +
                "' must recompute its activations but nothing before it "
                "keeps an input to recompute them from";
      return false;
    }
  }
  size_t state = 0;
  for (size_t a = 1; a <= n; ++a)
    if (best[n][a] < best[n][state])
      state = a;
  for (size_t i = n; i > 0; --i) {
    auto [prev, store] = from[i][state];
    plan.store[i - 1] = store;
    state = size_t(prev);
  }
  finish(nodes, plan);
  return true;
}

} // namespace weft::conversion
