//===- Routing.cpp - Per-PE routes of the mapping schemes -----------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/Routing.h"

#include <algorithm>
#include <cassert>

namespace weft::conversion {

using machine::Dir;
using machine::dirBit;

/// Whether a setting from `in` joins position `p`: the positions whose
/// inputs overlap `in` (the wavelets it adds arrive there), or every
/// position when none does.
static bool joins(const Switch &s, const SwitchPosition &p, DirSet in) {
  bool any = false;
  for (const SwitchPosition &q : s.positions)
    any |= (q.in & in) != 0;
  return !any || (p.in & in) != 0;
}

void RoutePlan::add(int64_t x, int64_t y, DirSet in, DirSet out) {
  Switch &s = switches[{x, y}];
  // A plain setting joins the positions that take wavelets from its
  // inputs (a lane relayed on east past a merge PE leaves with the lane's
  // own position, not with the lanes merged in from the south), or every
  // position when none does.
  std::vector<bool> join;
  for (const SwitchPosition &p : s.positions)
    join.push_back(joins(s, p, in));
  for (size_t i = 0; i < s.positions.size(); ++i)
    if (join[i]) {
      s.positions[i].in |= in;
      s.positions[i].out |= out;
    }
  s.in |= in;
  s.out |= out;
}

void RoutePlan::addPositions(int64_t x, int64_t y,
                             const std::vector<SwitchPosition> &positions) {
  std::vector<SwitchPosition> kept;
  for (const SwitchPosition &p : positions)
    if (p.count > 0)
      kept.push_back(p);
  Switch &s = switches[{x, y}];
  assert(s.positions.empty() && "two cycles of positions at one PE");
  if (kept.size() == 1) {
    add(x, y, kept[0].in, kept[0].out);
    return;
  }
  // A plain setting already there joins the positions taking wavelets from
  // its inputs (or every position, when none does).
  Switch cycle;
  cycle.positions = kept;
  for (SwitchPosition &p : kept)
    if (joins(cycle, p, s.in)) {
      p.in |= s.in;
      p.out |= s.out;
    }
  for (const SwitchPosition &p : kept) {
    s.in |= p.in;
    s.out |= p.out;
  }
  s.positions = std::move(kept);
}

void RoutePlan::append(const RoutePlan &other) {
  for (const auto &[pe, s] : other.switches) {
    if (s.positions.empty())
      add(pe.first, pe.second, s.in, s.out);
    else
      addPositions(pe.first, pe.second, s.positions);
  }
}

std::vector<std::pair<int64_t, int64_t>> RoutePlan::pes() const {
  std::vector<std::pair<int64_t, int64_t>> out;
  out.reserve(switches.size());
  for (const auto &entry : switches)
    out.push_back(entry.first);
  return out;
}

RoutePlan denseRowsToDiagonal(const DenseMapping &m, int64_t laneChunk) {
  RoutePlan p;
  const DirSet west = dirBit(Dir::West), east = dirBit(Dir::East),
               south = dirBit(Dir::South), north = dirBit(Dir::North),
               ramp = dirBit(Dir::Ramp);
  const int64_t k = m.merge;
  for (int64_t l = 0; l < m.lanes(); ++l) {
    // Lane l = jk + i goes east to column j, then north to row jk.
    int64_t j = l / k, i = l % k, y = m.y0 + l, x = m.x0 + j;
    for (int64_t c = 0; c < j; ++c)
      p.add(m.x0 + c, y, west, east);
    DirSet to = i == 0 ? ramp : north;
    if (i + 1 == k) {
      p.add(x, y, west, to);
      continue;
    }
    // Per pixel: the lane's own channels, then those of the lanes below
    // it, already merged (docs/execution-model.md, "Merged lanes").
    p.addPositions(x, y,
                   {{west, to, laneChunk}, {south, to, (k - 1 - i) * laneChunk}});
  }
  return p;
}

RoutePlan denseColumns(const DenseMapping &m) {
  RoutePlan p;
  int64_t height = m.footprint();
  for (int64_t tc = 0; tc < m.smear * m.tiles; ++tc) {
    int64_t c = tc % m.smear, x = m.x0 + tc, d = m.turnRow(c);
    for (int64_t r = 0; r < height; ++r) {
      // Column c's multicast starts at its turn PE (c, d) and reaches
      // rows 0 .. rows-1; between a turn below the rectangle and the last
      // row it only passes north.
      if (!(r <= d || r < m.rows))
        continue;
      Dir from = r == d ? Dir::Ramp : r < d ? Dir::South : Dir::North;
      DirSet to = 0;
      if (r < m.rows)
        to |= dirBit(Dir::Ramp);
      if (r > 0 && r <= d)
        to |= dirBit(Dir::North);
      if (r >= d && r + 1 < m.rows)
        to |= dirBit(Dir::South);
      p.add(x, m.y0 + r, dirBit(from), to);
    }
  }
  return p;
}

RoutePlan densePartialSums(const DenseMapping &m, int parity) {
  RoutePlan p;
  for (int64_t t = 0; t < m.tiles; ++t)
    for (int64_t c = 0; c + 1 < m.smear; ++c) {
      if ((c + 1) % 2 != parity)
        continue;
      int64_t x = m.x0 + t * m.smear + c;
      for (int64_t r = 0; r < m.rows; ++r) {
        p.add(x, m.y0 + r, dirBit(Dir::Ramp), dirBit(Dir::East));
        p.add(x + 1, m.y0 + r, dirBit(Dir::West), dirBit(Dir::Ramp));
      }
    }
  return p;
}

RoutePlan denseResults(const DenseMapping &m) {
  return columnResults(m.x0 + m.smear - 1, m.y0, m.rows);
}

RoutePlan denseGradientIn(const DenseMapping &m) {
  RoutePlan p;
  for (int64_t r = 0; r < m.rows; ++r)
    p.add(m.x0 + m.smear - 1, m.y0 + r, dirBit(Dir::East), dirBit(Dir::Ramp));
  return p;
}

RoutePlan denseDeltaRows(const DenseMapping &m) {
  RoutePlan p;
  if (m.smear < 2)
    return p;
  const DirSet west = dirBit(Dir::West), east = dirBit(Dir::East),
               ramp = dirBit(Dir::Ramp);
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t c = 0; c < m.smear; ++c) {
      int64_t x = m.x0 + c, y = m.y0 + r;
      if (c + 1 == m.smear)
        p.add(x, y, ramp, west);
      else
        p.add(x, y, east, c == 0 ? ramp : ramp | west);
    }
  return p;
}

RoutePlan denseGradientReduce(const DenseMapping &m, int parity) {
  RoutePlan p;
  const DirSet north = dirBit(Dir::North), south = dirBit(Dir::South),
               ramp = dirBit(Dir::Ramp);
  for (int64_t c = 0; c < m.smear; ++c) {
    int64_t x = m.x0 + c, d = m.turnRow(c);
    for (int64_t r = 0; r < m.rows; ++r) {
      int64_t y = m.y0 + r;
      if (r < d) {
        // Above the diagonal: receive from the north, send south.
        if (r % 2 == parity)
          p.add(x, y, ramp, south);
        else if (r > 0)
          p.add(x, y, north, ramp);
      } else if (r > d) {
        // Below: receive from the south, send north.
        if ((r + 1) % 2 == parity)
          p.add(x, y, ramp, north);
        else if (r + 1 < m.rows)
          p.add(x, y, south, ramp);
      } else {
        if (r > 0 && (r + 1) % 2 == parity)
          p.add(x, y, north, ramp);
        if (r + 1 < m.rows && r % 2 == parity)
          p.add(x, y, south, ramp);
      }
    }
    // A diagonal below the rectangle: row rows - 1's sum passes south.
    if (d >= m.rows && m.rows > 0 && (m.rows - 1) % 2 == parity) {
      for (int64_t r = m.rows; r < d; ++r)
        p.add(x, m.y0 + r, north, south);
      p.add(x, m.y0 + d, north, ramp);
    }
  }
  return p;
}

RoutePlan denseGradientOut(const DenseMapping &m) {
  RoutePlan p;
  const DirSet west = dirBit(Dir::West), east = dirBit(Dir::East),
               ramp = dirBit(Dir::Ramp);
  for (int64_t c = 0; c < m.smear; ++c) {
    int64_t y = m.y0 + m.turnRow(c);
    p.add(m.x0 + c, y, ramp, west);
    for (int64_t k = 0; k < c; ++k)
      p.add(m.x0 + k, y, east, west);
  }
  return p;
}

/// Band t's taking PE (x, y) on a lane carrying rows of `win` pixels of
/// `lk` wavelets: its input columns [in0, in1) go to the ramp. Without
/// `passThrough` the lane holds only what the west bands left, [in0, win),
/// and passes on what the bands east of it read; with it the whole row
/// arrives and goes on east (docs/execution-model.md, "Bands of output
/// columns").
static void takeBandColumns(RoutePlan &p, int64_t x, int64_t y,
                            const std::vector<ConvTile> &bands, size_t t,
                            int64_t win, int64_t lk, bool passThrough) {
  const DirSet west = dirBit(Dir::West), east = dirBit(Dir::East),
               ramp = dirBit(Dir::Ramp);
  const ConvTile &b = bands[t];
  if (passThrough) {
    p.addPositions(x, y,
                   {{west, east, b.in0 * lk},
                    {west, ramp | east, (b.in1 - b.in0) * lk},
                    {west, east, (win - b.in1) * lk}});
    return;
  }
  if (t + 1 == bands.size()) {
    p.add(x, y, west, ramp);
    return;
  }
  // This band reads [in0, in1), the bands east of it [next.in0, win), and
  // next.in0 <= in1.
  const ConvTile &next = bands[t + 1];
  p.addPositions(x, y,
                 {{west, ramp, (next.in0 - b.in0) * lk},
                  {west, ramp | east, (b.in1 - next.in0) * lk},
                  {west, east, (win - b.in1) * lk}});
}

/// Band t's sending PE (x, y): band 0 sends its columns east; a later band
/// first passes the row's columns of the bands west of it, then its own
/// (`lm` wavelets a pixel).
static void mergeBandColumns(RoutePlan &p, int64_t x, int64_t y,
                             const std::vector<ConvTile> &bands, size_t t,
                             int64_t lm) {
  const DirSet west = dirBit(Dir::West), east = dirBit(Dir::East),
               ramp = dirBit(Dir::Ramp);
  const ConvTile &b = bands[t];
  if (t == 0)
    p.add(x, y, ramp, east);
  else
    p.addPositions(x, y,
                   {{west, east, b.out0 * lm},
                    {ramp, east, (b.out1 - b.out0) * lm}});
}

RoutePlan convRowsToDiagonals(const ConvShape &s, const DenseMapping &m,
                              bool passThrough) {
  if (m.tiles <= 1)
    return denseRowsToDiagonal(m, convLk(s, m) / m.merge);
  assert(m.merge == 1 && "only an unbanded convolution merges lanes");
  std::vector<ConvTile> bands = convTiles(s, m.tiles);
  assert(!bands.empty() && "the bands were checked at placement");
  const int64_t S = m.smear, lk = convLk(s, m);
  const DirSet west = dirBit(Dir::West), east = dirBit(Dir::East);
  RoutePlan p;
  for (int64_t r = 0; r < S; ++r) {
    int64_t y = m.y0 + r;
    for (int64_t t = 0; t < m.tiles; ++t) {
      int64_t x0 = m.x0 + t * S;
      // Relays from the previous band's diagonal (or the west edge of
      // the rectangle) to this band's.
      for (int64_t x = t == 0 ? m.x0 : x0 - S + r + 1; x < x0 + r; ++x)
        p.add(x, y, west, east);
      // With passThrough the whole row goes on east (another reader of the
      // stream lies beyond the rectangle): every band sees every column.
      takeBandColumns(p, x0 + r, y, bands, size_t(t), s.win, lk, passThrough);
      if (passThrough && t + 1 == m.tiles)
        for (int64_t x = x0 + r + 1; x < x0 + S; ++x)
          p.add(x, y, west, east);
    }
  }
  return p;
}

RoutePlan windowBandInputs(const ConvShape &s, int64_t x, int64_t rows,
                              int64_t tiles, bool passThrough) {
  if (tiles <= 1)
    return columnInputs(x, 0, rows);
  std::vector<ConvTile> bands = convTiles(s, tiles);
  assert(!bands.empty() && "the bands were checked at placement");
  RoutePlan p;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t t = 0; t < tiles; ++t)
      takeBandColumns(p, x + t, r, bands, size_t(t), s.win, s.cin / rows,
                      passThrough);
  return p;
}

RoutePlan windowBandResults(const ConvShape &s, int64_t x, int64_t rows,
                               int64_t tiles) {
  if (tiles <= 1)
    return columnResults(x, 0, rows);
  std::vector<ConvTile> bands = convTiles(s, tiles);
  assert(!bands.empty() && "the bands were checked at placement");
  RoutePlan p;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t t = 0; t < tiles; ++t)
      mergeBandColumns(p, x + t, r, bands, size_t(t), s.cout / rows);
  return p;
}

RoutePlan convResults(const ConvShape &s, const DenseMapping &m) {
  if (m.tiles <= 1)
    return denseResults(m);
  std::vector<ConvTile> bands = convTiles(s, m.tiles);
  assert(!bands.empty() && "the bands were checked at placement");
  const int64_t S = m.smear, lm = convLm(s, m);
  const DirSet west = dirBit(Dir::West), east = dirBit(Dir::East);
  RoutePlan p;
  for (int64_t r = 0; r < m.rows; ++r) {
    int64_t y = m.y0 + r;
    for (int64_t t = 0; t < m.tiles; ++t) {
      int64_t last = m.x0 + t * S + S - 1;
      if (t > 0)
        for (int64_t x = last - S + 1; x < last; ++x)
          p.add(x, y, west, east);
      mergeBandColumns(p, last, y, bands, size_t(t), lm);
    }
  }
  return p;
}

RoutePlan columnInputs(int64_t x, int64_t y0, int64_t rows) {
  RoutePlan p;
  for (int64_t r = 0; r < rows; ++r)
    p.add(x, y0 + r, dirBit(Dir::West), dirBit(Dir::Ramp));
  return p;
}

RoutePlan columnResults(int64_t x, int64_t y0, int64_t rows) {
  RoutePlan p;
  for (int64_t r = 0; r < rows; ++r)
    p.add(x, y0 + r, dirBit(Dir::Ramp), dirBit(Dir::East));
  return p;
}

RoutePlan columnReduce(int64_t x, int64_t y0, int64_t rows, int channel) {
  RoutePlan p;
  if (rows < 2)
    return p;
  for (int64_t r = 0; r < rows; ++r) {
    bool first = r == 0, last = r == rows - 1;
    int parity = int(r % 2);
    if (channel == 2) {
      if (first)
        p.add(x, y0 + r, dirBit(Dir::Ramp), dirBit(Dir::South));
      else
        p.add(x, y0 + r, dirBit(Dir::North),
              dirBit(Dir::Ramp) | (last ? 0 : dirBit(Dir::South)));
      continue;
    }
    // Row r sends its partial result north on its own parity's channel and
    // receives row r + 1's on the other one.
    if (!first && parity == channel)
      p.add(x, y0 + r, dirBit(Dir::Ramp), dirBit(Dir::North));
    if (!last && 1 - parity == channel)
      p.add(x, y0 + r, dirBit(Dir::South), dirBit(Dir::Ramp));
  }
  return p;
}

RoutePlan columnGradientIn(int64_t x, int64_t y0, int64_t rows) {
  RoutePlan p;
  for (int64_t r = 0; r < rows; ++r)
    p.add(x, y0 + r, dirBit(Dir::East), dirBit(Dir::Ramp));
  return p;
}

RoutePlan columnGradientOut(int64_t x, int64_t y0, int64_t rows) {
  RoutePlan p;
  for (int64_t r = 0; r < rows; ++r)
    p.add(x, y0 + r, dirBit(Dir::Ramp), dirBit(Dir::West));
  return p;
}

RoutePlan columnLabels(int64_t x, int64_t gridWidth, int64_t y0,
                       int64_t rows) {
  RoutePlan p;
  for (int64_t xx = gridWidth - 1; xx > x; --xx)
    p.add(xx, y0, dirBit(Dir::East), dirBit(Dir::West));
  for (int64_t r = 0; r < rows; ++r)
    p.add(x, y0 + r, r == 0 ? dirBit(Dir::East) : dirBit(Dir::North),
          dirBit(Dir::Ramp) | (r + 1 < rows ? dirBit(Dir::South) : 0));
  return p;
}

void addRoute(RouteTable &table, const RoutePlan &plan, int64_t color) {
  for (const auto &[pe, sw] : plan.get())
    table[pe][color] = sw;
}

bool sameSwitches(const RouteTable &table, int64_t x, int64_t ya,
                  int64_t yb) {
  auto a = table.find({x, ya}), b = table.find({x, yb});
  if (a == table.end() || b == table.end())
    return a == b || (a == table.end() ? b->second.empty() : a->second.empty());
  if (a->second.size() != b->second.size())
    return false;
  for (auto i = a->second.begin(), j = b->second.begin(); i != a->second.end();
       ++i, ++j)
    if (i->first != j->first || !(i->second == j->second))
      return false;
  return true;
}

RoutePlan relayEast(int64_t x0, int64_t gridWidth, int64_t rows) {
  RoutePlan p;
  for (int64_t x = x0; x < gridWidth; ++x)
    for (int64_t r = 0; r < rows; ++r)
      p.add(x, r, dirBit(Dir::West), dirBit(Dir::East));
  return p;
}

} // namespace weft::conversion
