//===- ColorAllocationTest.cpp - Stream color allocation ------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ColorAllocation.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

using namespace weft::conversion;

namespace {

StreamRequest line(std::string name, int64_t x0, int64_t x1, int64_t y,
                   int64_t fixed = -1) {
  StreamRequest s;
  s.name = std::move(name);
  for (int64_t x = x0; x <= x1; ++x)
    s.pes.push_back({x, y});
  s.fixed = fixed;
  return s;
}

/// No two streams that share a PE got one color, all colors are usable.
void expectValid(const std::vector<StreamRequest> &s,
                 const std::vector<int64_t> &c, unsigned routable,
                 const std::vector<int64_t> &reserved) {
  std::map<std::pair<int64_t, int64_t>, std::set<int64_t>> used;
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_GE(c[i], 0);
    EXPECT_LT(c[i], int64_t(routable));
    if (s[i].fixed >= 0)
      EXPECT_EQ(c[i], s[i].fixed);
    else
      EXPECT_EQ(std::count(reserved.begin(), reserved.end(), c[i]), 0);
    std::set<std::pair<int64_t, int64_t>> pes(s[i].pes.begin(),
                                              s[i].pes.end());
    for (auto pe : pes)
      EXPECT_TRUE(used[pe].insert(c[i]).second)
          << s[i].name << " at (" << pe.first << ", " << pe.second << ")";
  }
}

TEST(ColorAllocation, ChainOfHopsAlternates) {
  // Partial-sum hops along a row: hop i covers PEs i and i+1.
  std::vector<StreamRequest> s;
  for (int i = 0; i < 8; ++i)
    s.push_back(line("hop" + std::to_string(i), i, i + 1, 0));
  std::string why;
  auto c = allocateColors(s, 24, {}, why);
  ASSERT_TRUE(c) << why;
  expectValid(s, *c, 24, {});
  std::set<int64_t> distinct(c->begin(), c->end());
  EXPECT_EQ(distinct.size(), 2u); // two colors suffice, and are used
}

TEST(ColorAllocation, FixedAndReservedColors) {
  std::vector<StreamRequest> s = {line("in", 0, 3, 0, 1), line("a", 2, 5, 0),
                                  line("b", 5, 6, 0)};
  std::string why;
  auto c = allocateColors(s, 8, {0, 2}, why);
  ASSERT_TRUE(c) << why;
  expectValid(s, *c, 8, {0, 2});
  EXPECT_EQ((*c)[0], 1);
  EXPECT_EQ((*c)[1], 3); // 0, 1, 2 are taken or reserved
}

TEST(ColorAllocation, TooFewColorsSaysWhoMeetsWhereAndHowMany) {
  // Five streams through PE (2, 0): five colors, but only four exist.
  std::vector<StreamRequest> s;
  for (int i = 0; i < 5; ++i)
    s.push_back(line("s" + std::to_string(i), 0, 4, 0));
  std::string why;
  auto c = allocateColors(s, 4, {}, why);
  ASSERT_FALSE(c);
  EXPECT_NE(why.find("no color is left for stream"), std::string::npos) << why;
  EXPECT_NE(why.find("meets 's"), std::string::npos) << why;
  EXPECT_NE(why.find("need 5 colors"), std::string::npos) << why;
  EXPECT_NE(why.find("carries 5 streams"), std::string::npos) << why;
  EXPECT_NE(why.find("only 4 of the 4 routable colors"), std::string::npos)
      << why;
}

TEST(ColorAllocation, ClashingFixedColors) {
  std::vector<StreamRequest> s = {line("x", 0, 2, 0, 3), line("y", 2, 3, 0, 3)};
  std::string why;
  EXPECT_FALSE(allocateColors(s, 8, {}, why));
  EXPECT_NE(why.find("'x' and 'y' both must have color 3 but meet at PE (2, 0)"),
            std::string::npos)
      << why;
}

TEST(ColorAllocation, RandomStreamsAreColoredValidlyAndDeterministically) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<StreamRequest> s;
    int n = 1 + rng() % 30;
    for (int i = 0; i < n; ++i) {
      int64_t y = rng() % 6, x0 = rng() % 10, len = rng() % 5;
      s.push_back(line("s" + std::to_string(i), x0, x0 + len, y));
      if (rng() % 3 == 0) // a vertical piece too
        for (int64_t yy = 0; yy < 3; ++yy)
          s.back().pes.push_back({x0, (y + yy) % 6});
    }
    std::string why, why2;
    auto c = allocateColors(s, 24, {0}, why);
    auto again = allocateColors(s, 24, {0}, why2);
    ASSERT_EQ(bool(c), bool(again));
    if (!c)
      continue;
    EXPECT_EQ(*c, *again);
    expectValid(s, *c, 24, {0});
  }
}

} // namespace
