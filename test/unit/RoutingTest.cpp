//===- RoutingTest.cpp - Router settings of the mapping schemes -----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Follows wavelets through the RoutePlans of weft/Kernels/Routing.h the
// way the routers would (a wavelet entering a PE through a port of `in`
// leaves through every port of `out`) and checks that each scheme delivers
// exactly where docs/execution-model.md says, over many mappings.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/Routing.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <set>
#include <tuple>

using namespace weft::conversion;
using weft::machine::Dir;
using weft::machine::dirBit;

namespace {

using PE = std::pair<int64_t, int64_t>;

/// Three rows of output columns [c0, c1), `per` wavelets each.
std::vector<int64_t> threeRows(int64_t c0, int64_t c1, int64_t per) {
  std::vector<int64_t> v;
  for (int64_t row = 0; row < 3; ++row)
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t j = 0; j < per; ++j)
        v.push_back(c);
  return v;
}

/// What leaves band t's merge switch `sw` (positions [west, ramp]) when
/// `lane` arrives from the west and band t's own columns from its ramp.
std::vector<int64_t> mergeAt(const Switch &sw, const std::vector<int64_t> &lane,
                             const std::vector<int64_t> &own) {
  std::vector<int64_t> merged;
  size_t w = 0, o = 0;
  while (w < lane.size() || o < own.size()) {
    for (int64_t k = 0; k < sw.positions[0].count; ++k)
      merged.push_back(lane.at(w++));
    for (int64_t k = 0; k < sw.positions[1].count; ++k)
      merged.push_back(own.at(o++));
  }
  return merged;
}

struct Walk {
  std::set<PE> ramps;   ///< PEs whose CE receives the wavelet
  std::set<PE> offEdge; ///< PEs it leaves the mapped area from (east/west)
  std::vector<std::string> problems;
};

/// Injects a wavelet into `start` through port `entry` and follows `plan`.
Walk follow(const RoutePlan &plan, PE start, Dir entry) {
  Walk w;
  std::set<std::tuple<int64_t, int64_t, int>> seen;
  std::vector<std::pair<PE, Dir>> todo = {{start, entry}};
  while (!todo.empty()) {
    auto [pe, from] = todo.back();
    todo.pop_back();
    if (!seen.insert({pe.first, pe.second, int(from)}).second) {
      w.problems.push_back("loop");
      continue;
    }
    auto it = plan.get().find(pe);
    if (it == plan.get().end() || !(it->second.in & dirBit(from))) {
      w.problems.push_back("PE (" + std::to_string(pe.first) + ", " +
                           std::to_string(pe.second) + ") drops it");
      continue;
    }
    DirSet out = it->second.out;
    if (out & dirBit(Dir::Ramp))
      w.ramps.insert(pe);
    for (Dir d : {Dir::North, Dir::East, Dir::South, Dir::West}) {
      if (!(out & dirBit(d)))
        continue;
      PE next = pe;
      next.first += d == Dir::East ? 1 : d == Dir::West ? -1 : 0;
      next.second += d == Dir::South ? 1 : d == Dir::North ? -1 : 0;
      if (!plan.get().count(next)) {
        w.offEdge.insert(pe);
        continue;
      }
      todo.push_back({next, weft::machine::opposite(d)});
    }
  }
  return w;
}

TEST(Routing, PlansMergePortsPerPE) {
  RoutePlan p;
  p.add(1, 2, dirBit(Dir::West), dirBit(Dir::East));
  p.add(1, 2, dirBit(Dir::Ramp), dirBit(Dir::East));
  p.add(0, 5, dirBit(Dir::North), dirBit(Dir::Ramp));
  ASSERT_EQ(p.get().size(), 2u);
  EXPECT_EQ(p.get().at({1, 2}).in, dirBit(Dir::West) | dirBit(Dir::Ramp));
  EXPECT_EQ(p.pes(), (std::vector<PE>{{0, 5}, {1, 2}}));
}

/// Every dense mapping with S, R in [1, 9] at an offset: row chunk r turns
/// at the diagonal, column c's multicast reaches exactly the ramps of its
/// compute rows, every partial-sum hop reaches the next column's PE, the
/// results leave the last column east.
TEST(Routing, DenseSchemeDeliversEverywhereItShould) {
  for (int64_t S = 1; S <= 9; ++S) {
    for (int64_t R = 1; R <= 9; ++R) {
      DenseMapping m;
      m.x0 = 3;
      m.y0 = 0;
      m.smear = S;
      m.rows = R;
      SCOPED_TRACE("S=" + std::to_string(S) + " R=" + std::to_string(R));
      RoutePlan rows = denseRowsToDiagonal(m);
      for (int64_t r = 0; r < S; ++r) {
        Walk w = follow(rows, {m.x0, r}, Dir::West);
        EXPECT_TRUE(w.problems.empty()) << w.problems.front();
        EXPECT_EQ(w.ramps, (std::set<PE>{{m.x0 + r, r}}));
        EXPECT_TRUE(w.offEdge.empty());
      }
      RoutePlan cols = denseColumns(m);
      for (int64_t c = 0; c < S; ++c) {
        Walk w = follow(cols, {m.x0 + c, c}, Dir::Ramp);
        EXPECT_TRUE(w.problems.empty()) << w.problems.front();
        std::set<PE> want;
        for (int64_t r = 0; r < R; ++r)
          want.insert({m.x0 + c, r});
        EXPECT_EQ(w.ramps, want) << "column " << c;
        EXPECT_TRUE(w.offEdge.empty());
      }
      for (int parity = 0; parity < 2; ++parity) {
        RoutePlan p = densePartialSums(m, parity);
        for (int64_t c = 0; c + 1 < S; ++c) {
          if ((c + 1) % 2 != parity)
            continue;
          for (int64_t r = 0; r < R; ++r) {
            Walk w = follow(p, {m.x0 + c, r}, Dir::Ramp);
            EXPECT_TRUE(w.problems.empty());
            EXPECT_EQ(w.ramps, (std::set<PE>{{m.x0 + c + 1, r}}));
          }
        }
      }
      // The two parities never share a PE in one direction: a PE receives
      // on one and sends on the other.
      RoutePlan even = densePartialSums(m, 0), odd = densePartialSums(m, 1);
      for (auto &[pe, sw] : even.get())
        if (auto it = odd.get().find(pe); it != odd.get().end()) {
          EXPECT_NE(sw.in, it->second.in);
        }
      RoutePlan out = denseResults(m);
      out.append(relayEast(m.x0 + S, m.x0 + S + 2, R));
      for (int64_t r = 0; r < R; ++r) {
        Walk w = follow(out, {m.x0 + S - 1, r}, Dir::Ramp);
        EXPECT_TRUE(w.ramps.empty());
        EXPECT_EQ(w.offEdge, (std::set<PE>{{m.x0 + S + 1, r}}));
      }
    }
  }
}

/// A column all-reduce over n rows: every row's partial result reaches the
/// row above (its parity's channel), row 0's totals reach every other row.
TEST(Routing, ColumnReduceChannels) {
  for (int64_t n = 1; n <= 12; ++n) {
    SCOPED_TRACE("rows=" + std::to_string(n));
    RoutePlan ch[3] = {columnReduce(4, 0, n, 0), columnReduce(4, 0, n, 1),
                       columnReduce(4, 0, n, 2)};
    if (n == 1) {
      EXPECT_TRUE(ch[0].empty() && ch[1].empty() && ch[2].empty());
      continue;
    }
    for (int64_t r = 1; r < n; ++r) {
      Walk w = follow(ch[r % 2], {4, r}, Dir::Ramp);
      EXPECT_TRUE(w.problems.empty());
      EXPECT_EQ(w.ramps, (std::set<PE>{{4, r - 1}}));
    }
    Walk b = follow(ch[2], {4, 0}, Dir::Ramp);
    std::set<PE> want;
    for (int64_t r = 1; r < n; ++r)
      want.insert({4, r});
    EXPECT_EQ(b.ramps, want);
    // Over two rows nobody sends on the even channel.
    if (n == 2) {
      EXPECT_TRUE(ch[0].empty());
    }
  }
}

TEST(Routing, ColumnKernelInAndOut) {
  RoutePlan p = columnResults(2, 0, 3);
  p.append(columnInputs(3, 0, 3));
  for (int64_t r = 0; r < 3; ++r) {
    Walk w = follow(p, {2, r}, Dir::Ramp);
    EXPECT_EQ(w.ramps, (std::set<PE>{{3, r}}));
  }
}

} // namespace

/// Band routes of a convolution cut into bands of output columns: a lane's
/// wavelets run through the positions the way the routers cycle them.
/// Row r of the input (win x lk wavelets a row, several rows) reaches band
/// t's diagonal ramp exactly for the input columns [in0, in1) of band t;
/// the output lanes, merged by the last columns' positions, carry every
/// row's output columns in order, each from the band that computed it.
TEST(Routing, ConvBandsTakeTheirColumnsAndMergeInOrder) {
  auto conv = [](int64_t cin, int64_t w, int64_t cout, int64_t k, int64_t st,
                 int64_t d, int64_t pad) {
    ConvShape s;
    s.cin = cin, s.hin = 3, s.win = w, s.cout = cout, s.kh = s.kw = k;
    s.sh = s.sw = st, s.dh = s.dw = d;
    s.pt = s.pl = s.pb = s.pr = pad;
    return s;
  };
  int cases = 0;
  for (const ConvShape &s :
       {conv(4, 16, 6, 3, 1, 1, 1), conv(2, 15, 4, 1, 2, 1, 0),
        conv(3, 20, 2, 7, 2, 1, 3), conv(4, 12, 4, 3, 1, 2, 2)})
    for (int64_t S : {1, 2, 4})
      for (int64_t R : {1, 2})
        for (int64_t tiles = 2; tiles <= 5; ++tiles) {
          if (s.cin % S || s.cout % R || convTiles(s, tiles).empty())
            continue;
          DenseMapping m;
          m.x0 = 2;
          m.smear = S;
          m.rows = R;
          m.tiles = tiles;
          std::vector<ConvTile> bands = convTiles(s, tiles);
          const int64_t lk = s.cin / S, lm = s.cout / R;
          ++cases;
          // The input lanes: positions as counters per PE. With
          // passThrough the lane goes on east of the rectangle in full (a
          // reader further east), and every band still takes its columns.
          for (bool passThrough : {false, true}) {
          RoutePlan in = convRowsToDiagonals(s, m, passThrough);
          for (int64_t r = 0; r < S; ++r) {
            std::map<PE, std::pair<size_t, int64_t>> state; // position, taken
            std::map<PE, std::vector<int64_t>> got;
            std::vector<int64_t> beyond; // what leaves the rectangle east
            for (int64_t row = 0; row < 3; ++row)
              for (int64_t i = 0; i < s.win * lk; ++i) {
                PE pe{m.x0, r};
                while (true) {
                  if (pe.first == m.x0 + tiles * S) {
                    beyond.push_back(i / lk);
                    break;
                  }
                  auto it = in.get().find(pe);
                  ASSERT_NE(it, in.get().end())
                      << "lane " << r << " dropped at x " << pe.first;
                  const Switch &sw = it->second;
                  DirSet out = sw.out;
                  if (!sw.positions.empty()) {
                    auto &[k, taken] = state[pe];
                    out = sw.positions[k].out;
                    if (++taken == sw.positions[k].count) {
                      taken = 0;
                      k = (k + 1) % sw.positions.size();
                    }
                  }
                  if (out & dirBit(Dir::Ramp))
                    got[pe].push_back(i / lk);
                  if (!(out & dirBit(Dir::East)))
                    break;
                  ++pe.first;
                }
              }
            for (int64_t t = 0; t < tiles; ++t) {
              const ConvTile &b = bands[size_t(t)];
              std::vector<int64_t> want;
              for (int64_t row = 0; row < 3; ++row)
                for (int64_t c = b.in0; c < b.in1; ++c)
                  for (int64_t j = 0; j < lk; ++j)
                    want.push_back(c);
              PE diagonal{m.x0 + t * S + r, r};
              EXPECT_EQ(got[diagonal], want)
                  << "band " << t << " of " << tiles << ", S " << S
                  << (passThrough ? ", passing through" : "");
            }
            EXPECT_EQ(got.size(), size_t(tiles));
            EXPECT_EQ(beyond.size(), passThrough ? size_t(3 * s.win * lk) : 0u);
            if (passThrough) {
              for (size_t i = 0; i < beyond.size(); ++i)
                EXPECT_EQ(beyond[i], int64_t(i % size_t(s.win * lk)) / lk);
            }
          }
          }
          // The output lanes: band t's ramp holds its columns of 3 rows;
          // walk the lane from the first band's last column east.
          RoutePlan outPlan = convResults(s, m);
          for (int64_t r = 0; r < R; ++r) {
            // The output columns leaving band 0.
            std::vector<int64_t> lane =
                threeRows(bands[0].out0, bands[0].out1, lm);
            for (int64_t t = 1; t < tiles; ++t) {
              const ConvTile &b = bands[size_t(t)];
              int64_t x = m.x0 + t * S + S - 1;
              for (int64_t between = x - S + 1; between < x; ++between)
                ASSERT_EQ(outPlan.get().at({between, r}).out,
                          dirBit(Dir::East));
              const Switch &sw = outPlan.get().at({x, r});
              ASSERT_EQ(sw.positions.size(), 2u);
              lane = mergeAt(sw, lane, threeRows(b.out0, b.out1, lm));
            }
            EXPECT_EQ(lane, threeRows(0, s.wout(), lm))
                << "output lane " << r;
          }
        }
  EXPECT_GT(cases, 40);
}

// A depthwise convolution in bands, a column each: on every row the lane's
// columns reach exactly the bands that read them (with and without a
// reader further east), and the bands' output columns leave merged in
// order.
TEST(Routing, DepthwiseBandsTakeTheirColumnsAndMergeInOrder) {
  auto dw = [](int64_t c, int64_t w, int64_t k, int64_t st, int64_t pad,
               int64_t mult) {
    ConvShape s;
    s.cin = c, s.hin = 3, s.win = w, s.cout = c * mult, s.groups = c;
    s.kh = s.kw = k, s.sh = s.sw = st, s.pt = s.pl = s.pb = s.pr = pad;
    return s;
  };
  int cases = 0;
  for (const ConvShape &s : {dw(4, 16, 3, 1, 1, 1), dw(6, 15, 3, 2, 1, 2),
                             dw(4, 12, 5, 1, 2, 1), dw(2, 9, 3, 2, 0, 1)})
    for (int64_t rows : {1, 2})
      for (int64_t tiles = 2; tiles <= 5; ++tiles) {
        std::vector<ConvTile> bands = convTiles(s, tiles);
        if (s.groups % rows || bands.empty())
          continue;
        ++cases;
        const int64_t x0 = 3, lc = s.cin / rows, lo = s.cout / rows;
        for (bool passThrough : {false, true}) {
          RoutePlan in = windowBandInputs(s, x0, rows, tiles, passThrough);
          for (int64_t r = 0; r < rows; ++r) {
            std::map<PE, std::pair<size_t, int64_t>> state;
            std::map<int64_t, std::vector<int64_t>> got; // band -> columns
            int64_t beyond = 0;
            for (int64_t row = 0; row < 3; ++row)
              for (int64_t i = 0; i < s.win * lc; ++i)
                for (PE pe{x0, r};; ++pe.first) {
                  if (pe.first == x0 + tiles) {
                    ++beyond;
                    break;
                  }
                  auto it = in.get().find(pe);
                  ASSERT_NE(it, in.get().end()) << "lane " << r << " dropped";
                  const Switch &sw = it->second;
                  DirSet out = sw.out;
                  if (!sw.positions.empty()) {
                    auto &[k, taken] = state[pe];
                    out = sw.positions[k].out;
                    if (++taken == sw.positions[k].count) {
                      taken = 0;
                      k = (k + 1) % sw.positions.size();
                    }
                  }
                  if (out & dirBit(Dir::Ramp))
                    got[pe.first - x0].push_back(i / lc);
                  if (!(out & dirBit(Dir::East)))
                    break;
                }
            for (int64_t t = 0; t < tiles; ++t) {
              std::vector<int64_t> want;
              for (int64_t row = 0; row < 3; ++row)
                for (int64_t c = bands[size_t(t)].in0; c < bands[size_t(t)].in1;
                     ++c)
                  for (int64_t j = 0; j < lc; ++j)
                    want.push_back(c);
              EXPECT_EQ(got[t], want) << "band " << t << " of " << tiles;
            }
            EXPECT_EQ(beyond, passThrough ? 3 * s.win * lc : 0);
          }
        }
        // The output lanes.
        RoutePlan outPlan = windowBandResults(s, x0, rows, tiles);
        for (int64_t r = 0; r < rows; ++r) {
          std::vector<int64_t> lane =
              threeRows(bands[0].out0, bands[0].out1, lo);
          ASSERT_EQ(outPlan.get().at({x0, r}).out, dirBit(Dir::East));
          for (int64_t t = 1; t < tiles; ++t) {
            const ConvTile &b = bands[size_t(t)];
            const Switch &sw = outPlan.get().at({x0 + t, r});
            ASSERT_EQ(sw.positions.size(), 2u);
            lane = mergeAt(sw, lane, threeRows(b.out0, b.out1, lo));
          }
          EXPECT_EQ(lane, threeRows(0, s.wout(), lo)) << "output lane " << r;
        }
      }
  EXPECT_GT(cases, 20);
}

/// Runs wavelets through `plan` with router positions and unbounded input
/// queues until nothing moves: `inject` lists, per (PE, entry port), the
/// wavelets entering there in order. Returns what each PE's CE receives
/// and what leaves each PE off the plan's east side, in order; `stuck`
/// counts the wavelets left in queues.
struct Flow {
  std::map<PE, std::vector<int64_t>> ramps, offEast;
  int64_t stuck = 0;
};
static Flow flow(const RoutePlan &plan,
                 const std::map<std::pair<PE, Dir>, std::vector<int64_t>>
                     &inject) {
  std::map<std::pair<PE, Dir>, std::deque<int64_t>> queues;
  for (const auto &[at, ws] : inject)
    queues[at].insert(queues[at].end(), ws.begin(), ws.end());
  std::map<PE, std::pair<size_t, int64_t>> state; // position, taken
  Flow f;
  for (bool progress = true; progress;) {
    progress = false;
    for (const auto &[pe, sw] : plan.get()) {
      DirSet in = sw.in, out = sw.out;
      if (!sw.positions.empty()) {
        in = sw.positions[state[pe].first].in;
        out = sw.positions[state[pe].first].out;
      }
      for (Dir d : {Dir::West, Dir::South, Dir::North, Dir::East, Dir::Ramp}) {
        auto q = queues.find({pe, d});
        if (!(in & dirBit(d)) || q == queues.end() || q->second.empty())
          continue;
        int64_t w = q->second.front();
        q->second.pop_front();
        progress = true;
        if (out & dirBit(Dir::Ramp))
          f.ramps[pe].push_back(w);
        for (Dir o : {Dir::North, Dir::East, Dir::South, Dir::West}) {
          if (!(out & dirBit(o)))
            continue;
          PE next = pe;
          next.first += o == Dir::East ? 1 : o == Dir::West ? -1 : 0;
          next.second += o == Dir::South ? 1 : o == Dir::North ? -1 : 0;
          if (!plan.get().count(next)) {
            EXPECT_EQ(o, Dir::East) << "leaves the plan " << int(o);
            f.offEast[pe].push_back(w);
            continue;
          }
          queues[{next, weft::machine::opposite(o)}].push_back(w);
        }
        if (!sw.positions.empty()) {
          auto &[k, taken] = state[pe];
          if (++taken == sw.positions[k].count) {
            taken = 0;
            k = (k + 1) % sw.positions.size();
          }
        }
        break; // one wavelet per PE and sweep
      }
    }
  }
  for (const auto &[at, q] : queues)
    f.stuck += int64_t(q.size());
  return f;
}

// docs/execution-model.md, "Merged lanes": lane jk + i carries, pixel by
// pixel, channels [(jk + i) Lc, (jk + i + 1) Lc); column j's turn PE (x0 + j,
// jk) must receive, pixel by pixel, the k Lc channels of lanes jk .. jk + k
// - 1 in order. With a reader further east the lanes also go on east
// unchanged (a relay added over the merge PEs).
TEST(Routing, MergedLanesArriveInChannelOrder) {
  int cases = 0;
  for (int64_t S : {1, 2, 3, 4})
    for (int64_t k : {1, 2, 3, 4, 8})
      for (int64_t lc : {1, 2, 3})
        for (int64_t pixels : {1, 5})
          for (bool passThrough : {false, true}) {
            DenseMapping m;
            m.x0 = 1;
            m.smear = S;
            m.merge = k;
            m.rows = 2;
            RoutePlan plan = denseRowsToDiagonal(m, lc);
            if (passThrough)
              plan.append(relayEast(m.x0, m.x0 + S, m.lanes()));
            // A wavelet is pixel * 10000 + channel.
            std::map<std::pair<PE, Dir>, std::vector<int64_t>> inject;
            for (int64_t l = 0; l < m.lanes(); ++l)
              for (int64_t p = 0; p < pixels; ++p)
                for (int64_t c = 0; c < lc; ++c)
                  inject[{{m.x0, l}, Dir::West}].push_back(p * 10000 +
                                                           l * lc + c);
            Flow f = flow(plan, inject);
            ++cases;
            std::string what = "S " + std::to_string(S) + ", k " +
                               std::to_string(k) + ", Lc " +
                               std::to_string(lc) + ", " +
                               std::to_string(pixels) + " pixels" +
                               (passThrough ? ", passing through" : "");
            EXPECT_EQ(f.stuck, 0) << what;
            EXPECT_EQ(f.ramps.size(), size_t(S)) << what;
            for (int64_t j = 0; j < S; ++j) {
              std::vector<int64_t> want;
              for (int64_t p = 0; p < pixels; ++p)
                for (int64_t c = j * k * lc; c < (j + 1) * k * lc; ++c)
                  want.push_back(p * 10000 + c);
              PE turn{m.x0 + j, m.turnRow(j)};
              EXPECT_EQ(f.ramps[turn], want) << what << ", column " << j;
            }
            if (!passThrough) {
              EXPECT_TRUE(f.offEast.empty()) << what;
              continue;
            }
            for (int64_t l = 0; l < m.lanes(); ++l) {
              PE last{m.x0 + S - 1, l}, first{m.x0, l};
              std::pair<PE, Dir> entry{first, Dir::West};
              EXPECT_EQ(f.offEast[last], inject[entry])
                  << what << ", lane " << l;
            }
          }
  EXPECT_EQ(cases, 4 * 5 * 3 * 2 * 2);
}

// The column multicast of a merged layout starts at each column's turn PE
// (row jk) and reaches every row of the rectangle.
TEST(Routing, MergedColumnsStartAtTheTurn) {
  for (int64_t S : {1, 2, 3})
    for (int64_t k : {2, 4})
      for (int64_t R : {1, 3, 8, 13}) {
        DenseMapping m;
        m.smear = S;
        m.merge = k;
        m.rows = R;
        RoutePlan cols = denseColumns(m);
        for (int64_t c = 0; c < S; ++c) {
          Walk w = follow(cols, {c, m.turnRow(c)}, Dir::Ramp);
          EXPECT_TRUE(w.problems.empty());
          std::set<PE> want;
          for (int64_t r = 0; r < R; ++r)
            want.insert({c, r});
          EXPECT_EQ(w.ramps, want) << "S " << S << ", k " << k << ", R " << R;
        }
      }
}

/// The backward channels of a trained dense layer (docs/training.md): dL/dz
/// from the last column to every other CE of its row; each row's partial
/// input gradient one hop toward its column's diagonal, on the parity color
/// it sends on; the diagonal's total out of the layer's west side on its
/// row; dL/dy from the east into the last column.
TEST(Routing, DenseTrainingChannels) {
  for (int64_t S = 1; S <= 7; ++S)
    for (int64_t R = 1; R <= 7; ++R) {
      DenseMapping m;
      m.x0 = 2;
      m.smear = S;
      m.rows = R;
      SCOPED_TRACE("S=" + std::to_string(S) + " R=" + std::to_string(R));
      RoutePlan delta = denseDeltaRows(m);
      EXPECT_EQ(delta.empty(), S == 1);
      for (int64_t r = 0; r < R && S > 1; ++r) {
        Walk w = follow(delta, {m.x0 + S - 1, r}, Dir::Ramp);
        EXPECT_TRUE(w.problems.empty()) << w.problems.front();
        std::set<PE> want;
        for (int64_t c = 0; c + 1 < S; ++c)
          want.insert({m.x0 + c, r});
        EXPECT_EQ(w.ramps, want);
        EXPECT_TRUE(w.offEdge.empty());
      }
      RoutePlan reduce[2] = {denseGradientReduce(m, 0),
                             denseGradientReduce(m, 1)};
      for (int64_t c = 0; c < S; ++c) {
        const int64_t d = m.turnRow(c);
        for (int64_t r = 0; r < R; ++r) {
          if (r == d)
            continue;
          // Above the diagonal a row sends on its own parity, below it on
          // the other one; the sum lands one row nearer the diagonal (or,
          // from the last row, on a diagonal below the rectangle).
          int parity = r < d ? int(r % 2) : int((r + 1) % 2);
          int64_t to = r < d ? (r + 1 == R ? d : r + 1) : r - 1;
          Walk w = follow(reduce[parity], {m.x0 + c, r}, Dir::Ramp);
          EXPECT_TRUE(w.problems.empty()) << w.problems.front();
          EXPECT_EQ(w.ramps, (std::set<PE>{{m.x0 + c, to}}))
              << "column " << c << " row " << r;
        }
      }
      // A PE never sends both parities: each hop has its own color.
      for (auto &[pe, sw] : reduce[0].get()) {
        auto it = reduce[1].get().find(pe);
        if (it != reduce[1].get().end()) {
          EXPECT_FALSE((sw.in & dirBit(Dir::Ramp)) &&
                       (it->second.in & dirBit(Dir::Ramp)));
        }
      }
      RoutePlan out = denseGradientOut(m);
      for (int64_t c = 0; c < S; ++c) {
        Walk w = follow(out, {m.x0 + c, m.turnRow(c)}, Dir::Ramp);
        EXPECT_TRUE(w.problems.empty()) << w.problems.front();
        EXPECT_TRUE(w.ramps.empty());
        EXPECT_EQ(w.offEdge, (std::set<PE>{{m.x0, m.turnRow(c)}}));
      }
      RoutePlan in = denseGradientIn(m);
      for (int64_t r = 0; r < R; ++r) {
        Walk w = follow(in, {m.x0 + S - 1, r}, Dir::East);
        EXPECT_EQ(w.ramps, (std::set<PE>{{m.x0 + S - 1, r}}));
      }
    }
}

/// The loss column's labels: in at the east edge on row 0, west to the
/// column, down to every row's CE.
TEST(Routing, LossLabels) {
  for (int64_t rows = 1; rows <= 5; ++rows) {
    RoutePlan p = columnLabels(3, 6, 0, rows);
    Walk w = follow(p, {5, 0}, Dir::East);
    EXPECT_TRUE(w.problems.empty());
    std::set<PE> want;
    for (int64_t r = 0; r < rows; ++r)
      want.insert({3, r});
    EXPECT_EQ(w.ramps, want);
  }
}
