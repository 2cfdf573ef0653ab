//===- FrustumChain.cpp - A fused chain of convolutions per band ----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/FrustumChain.h"

#include "PartitionSearch.h"

#include "weft/Machine/ISA.h"

#include <algorithm>
#include <limits>
#include <cassert>

namespace wt = weft::machine;

namespace weft::conversion {

namespace {
/// The composed window of one dimension: reach, stride and leading pad.
struct Composed {
  int64_t reach = 1, stride = 1, lead = 0;
};

template <typename K, typename S, typename D, typename P>
Composed compose(const std::vector<ConvShape> &chain, K k, S s, D d, P p) {
  Composed c;
  for (const ConvShape &l : chain) {
    c.reach += (k(l) - 1) * d(l) * c.stride;
    c.lead += p(l) * c.stride;
    c.stride *= s(l);
  }
  return c;
}

ConvShape envelopeOf(const std::vector<ConvShape> &chain) {
  const ConvShape &first = chain.front(), &last = chain.back();
  Composed h = compose(
      chain, [](const ConvShape &l) { return l.kh; },
      [](const ConvShape &l) { return l.sh; },
      [](const ConvShape &l) { return l.dh; },
      [](const ConvShape &l) { return l.pt; });
  Composed w = compose(
      chain, [](const ConvShape &l) { return l.kw; },
      [](const ConvShape &l) { return l.sw; },
      [](const ConvShape &l) { return l.dw; },
      [](const ConvShape &l) { return l.pl; });
  ConvShape e;
  e.cin = first.cin, e.hin = first.hin, e.win = first.win;
  e.cout = last.cout;
  e.kh = h.reach, e.kw = w.reach, e.sh = h.stride, e.sw = w.stride;
  e.pt = h.lead, e.pl = w.lead;
  e.pb = std::max<int64_t>(0, (last.hout() - 1) * e.sh + e.kh - e.hin - e.pt);
  e.pr = std::max<int64_t>(0, (last.wout() - 1) * e.sw + e.kw - e.win - e.pl);
  e.relu = last.relu;
  e.bias = last.bias;
  return e;
}
} // namespace

std::string frustumChainProblem(const std::vector<ConvShape> &chain) {
  if (chain.size() < 2)
    return "a fused chain needs at least two convolutions";
  for (size_t l = 0; l < chain.size(); ++l) {
    const ConvShape &c = chain[l];
    std::string why = c.check();
    if (!why.empty())
      return "layer " + std::to_string(l) + ": " + why;
    if (c.grouped())
      return "layer " + std::to_string(l) +
             " is a grouped convolution (not smeared)";
    if (!c.epilogue.empty() || c.reluMax)
      return "layer " + std::to_string(l) +
             " has a fused activation other than ReLU";
    if (c.maxPool && (c.cin != c.cout || c.relu || c.bias))
      return "layer " + std::to_string(l) +
             " is a max pool with an activation or a bias";
    if (c.skipAdd &&
        (l + 1 != chain.size() || c.maxPool || c.cout != chain[0].cin ||
         c.hout() != chain[0].hin || c.wout() != chain[0].win))
      return "layer " + std::to_string(l) +
             " adds the skip of a residual block but is not the last layer "
             "or its output is not the shape of the block's input";
    // (With every stride 1, input row h has arrived when top row h
    // completes: the line buffer can keep it.)
    if (chain.back().skipAdd && (c.sh != 1 || c.sw != 1))
      return "layer " + std::to_string(l) +
             " of a residual block has a stride (only blocks of stride 1 "
             "run fused)";
    if (l > 0 && (c.cin != chain[l - 1].cout || c.hin != chain[l - 1].hout() ||
                  c.win != chain[l - 1].wout()))
      return "layer " + std::to_string(l) + " does not read layer " +
             std::to_string(l - 1) + "'s output";
  }
  ConvShape e = envelopeOf(chain);
  if (!e.check().empty() || e.hout() != chain.back().hout() ||
      e.wout() != chain.back().wout())
    return "the chain's composed window does not give its output size";
  return "";
}

std::optional<ConvShape> frustumPoolLevel(const PoolShape &p,
                                          std::string &why) {
  if (!p.max || p.global()) {
    why = "an average or global pool (only max pools of a window run fused)";
    return std::nullopt;
  }
  ConvShape w = p.window();
  w.maxPool = true;
  return w;
}

std::string frustumSkipLevel(ConvShape &top, bool relu) {
  if (top.maxPool || top.relu || top.reluMax || !top.epilogue.empty())
    return "the block's last layer is a max pool or has an activation of "
           "its own before the add";
  top.skipAdd = true;
  top.relu = relu;
  return "";
}

ConvShape frustumEnvelope(const std::vector<ConvShape> &chain) {
  return envelopeOf(chain);
}

int64_t frustumBandsForTile(const std::vector<ConvShape> &chain, int64_t tw) {
  int64_t wo = chain.back().wout();
  tw = std::clamp<int64_t>(tw, 1, wo);
  return (wo + tw - 1) / tw;
}

std::vector<FrustumBand> frustumBands(const std::vector<ConvShape> &chain,
                                      int64_t tiles) {
  if (!frustumChainProblem(chain).empty())
    return {};
  std::vector<ConvTile> env = convTiles(envelopeOf(chain), tiles);
  if (env.empty())
    return {};
  std::vector<FrustumBand> bands;
  for (const ConvTile &t : env) {
    FrustumBand band;
    band.out0 = t.out0, band.out1 = t.out1, band.in0 = t.in0,
    band.in1 = t.in1;
    band.levels.resize(chain.size());
    int64_t o0 = t.out0, o1 = t.out1;
    for (size_t l = chain.size(); l-- > 0;) {
      const ConvShape &c = chain[l];
      // The input columns output columns [o0, o1) read, in the image.
      int64_t a = std::max<int64_t>(0, o0 * c.sw - c.pl);
      int64_t end = (o1 - 1) * c.sw - c.pl + (c.kw - 1) * c.dw + 1;
      int64_t b = std::min(c.win, end);
      int64_t base = a;
      if (l == 0) {
        // What the band receives must hold what it reads.
        if (t.in0 > a || t.in1 < b)
          return {};
        base = t.in0;
      }
      if (b <= a)
        return {};
      ConvShape &s = band.levels[l];
      s = c;
      s.win = b - base;
      s.pl = base + c.pl - o0 * c.sw;
      s.pr = std::max<int64_t>(0, end - b);
      if (s.pl < 0 || !s.check().empty() || s.wout() != o1 - o0)
        return {};
      o0 = a, o1 = b;
    }
    // A residual block's skip adds input columns [out0, out1): the band
    // must receive them.
    if (chain.back().skipAdd && (t.in0 > t.out0 || t.in1 < t.out1))
      return {};
    bands.push_back(std::move(band));
  }
  return bands;
}

/// The band's steps with level 0's line buffer of `ring0` rows (0: the
/// window's); `depth` is set to the rows level 0 must keep for the skip
/// (the newest input row received, less the row the top adds, plus one).
static std::vector<FrustumStep>
scheduleWith(const FrustumBand &band, const std::vector<ConvSchedule> &sch,
             int64_t *depth);

std::vector<ConvSchedule> frustumLevelSchedules(const FrustumBand &band) {
  std::vector<ConvSchedule> sch;
  for (const ConvShape &s : band.levels)
    sch.push_back(convSchedule(s, /*lateReceives=*/false));
  if (!band.levels.back().skipAdd)
    return sch;
  int64_t depth = 0;
  scheduleWith(band, sch, &depth);
  sch[0] = convSchedule(band.levels[0], /*lateReceives=*/false, depth);
  return sch;
}

std::vector<FrustumStep> frustumSchedule(const FrustumBand &band) {
  return scheduleWith(band, frustumLevelSchedules(band), nullptr);
}

static std::vector<FrustumStep>
scheduleWith(const FrustumBand &band, const std::vector<ConvSchedule> &sch,
             int64_t *depth) {
  const size_t n = band.levels.size();
  const bool skip = band.levels.back().skipAdd;
  // Level 0's newest row received, and the slot of each row.
  int64_t newest = -1;
  std::vector<int64_t> slotOf(size_t(band.levels[0].hin), -1);
  std::vector<size_t> cursor(n, 0);
  std::vector<FrustumStep> out;
  // Runs level l's steps until it needs a row level l - 1 has not made
  // (level 0: receives it from the fabric and goes on).
  auto run = [&](auto &self, size_t l) -> void {
    const std::vector<ConvStep> &steps = sch[l].steps;
    for (; cursor[l] < steps.size(); ++cursor[l]) {
      const ConvStep &st = steps[cursor[l]];
      if (st.receive) {
        if (l > 0)
          return; // level l - 1 makes it
        out.push_back({FrustumStep::Kind::Receive, 0, st.row, st.slot, 0});
        newest = std::max(newest, st.row);
        slotOf[size_t(st.row)] = st.slot;
        continue;
      }
      for (size_t k = 0; k < st.taps.size(); ++k)
        out.push_back({FrustumStep::Kind::Mac, int64_t(l), st.row,
                       st.slots[k], st.taps[k]});
      FrustumStep close{FrustumStep::Kind::Closeout, int64_t(l), st.row, 0, 0};
      if (l + 1 == n) {
        if (skip) {
          // The input row of the same index, still in level 0's ring
          // (its depth is what `depth` asks for).
          if (depth)
            *depth = std::max(*depth, newest - st.row + 1);
          close.skipSlot = slotOf[size_t(st.row)];
          assert(close.skipSlot >= 0 && "the skip's row was received");
        }
        out.push_back(close);
        continue;
      }
      // The row is level l + 1's next input row: into its slot, then
      // level l + 1 goes as far as that row takes it.
      const ConvStep &next = sch[l + 1].steps[cursor[l + 1]];
      assert(next.receive && next.row == st.row &&
             "levels produce and receive rows in order");
      close.slot = next.slot;
      out.push_back(close);
      ++cursor[l + 1];
      self(self, l + 1);
    }
  };
  run(run, 0);
  return out;
}

namespace {
/// Instructions and cycles of one sample of a band's program.
struct BandProgram {
  int64_t instructions = 0, cycles = 0;
};

/// The loads that switch the 4-D vectors to another level: four XDSRs,
/// four stride registers and the accumulator's 4-D destination.
constexpr int64_t kLevelSwitch = 9;

BandProgram bandProgram(const FrustumBand &band) {
  BandProgram p;
  auto add = [&](int64_t instructions, int64_t cycles) {
    p.instructions += instructions;
    p.cycles += cycles;
  };
  const std::vector<ConvShape> &lv = band.levels;
  int64_t current = -1;
  auto use = [&](int64_t l) {
    if (l != current)
      add(kLevelSwitch, kLevelSwitch);
    current = l;
  };
  for (const FrustumStep &st : frustumSchedule(band)) {
    switch (st.kind) {
    case FrustumStep::Kind::Receive: {
      // The copy of the row into the column's color launched (on a
      // microthread), the slot's record, the row; the copy and the
      // receive share the datapath.
      int64_t n = band.received() * lv[0].cin;
      add(1, 1);
      add(2, 1 + wt::vectorCycles(wt::Opcode::MOV32, n) + n);
      break;
    }
    case FrustumStep::Kind::Mac: {
      const ConvShape &s = lv[size_t(st.level)];
      use(st.level);
      // (A max pool: the window's columns into the accumulator, per
      // channel.)
      add(3, 2 + (s.maxPool
                      ? wt::vectorCycles(wt::Opcode::FMAX,
                                         s.cout * s.wout() * s.kw)
                      : wt::vectorCycles(wt::Opcode::FMAC,
                                         s.cout * s.wout() * s.kw * s.cin)));
      break;
    }
    case FrustumStep::Kind::Closeout: {
      const ConvShape &s = lv[size_t(st.level)];
      int64_t row = s.cout * s.wout();
      use(st.level); // the bias's 4-D vector
      if (size_t(st.level) + 1 < lv.size()) {
        // Into the next level's slot (a ReLU as an fmax), two loads.
        add(3, 2 + wt::vectorCycles(wt::Opcode::MOV32, row));
      } else {
        // (A residual block: the skip's row added first, three loads.)
        if (st.skipSlot >= 0)
          add(4, 3 + wt::vectorCycles(wt::Opcode::FADD, row));
        // Into an output buffer, then the send's launch (its microthread
        // takes the datapath for the row).
        add(1, wt::vectorCycles(wt::Opcode::MOV32, row));
        add(1, 1 + wt::vectorCycles(wt::Opcode::MOV32, row));
      }
      // The accumulator back to the bias (or zero), two loads.
      add(3, 2 + wt::vectorCycles(wt::Opcode::MOV32, row));
      break;
    }
    }
  }
  add(1, 1); // the jump back
  return p;
}

int64_t unrollOf(const FrustumBand &band) {
  return band.levels.back().hout() % 2 ? 2 : 1;
}
} // namespace

/// A max pool's pad columns in each line-buffer slot, set to -inf once in
/// the prologue (two loads and a copy each side): the left pad, and the
/// columns from the data's end to the row's padded width.
static int64_t padFills(const FrustumBand &band,
                        const std::vector<ConvSchedule> &sch) {
  int64_t fills = 0;
  for (size_t l = 0; l < band.levels.size(); ++l)
    if (band.levels[l].maxPool)
      fills += 2 * sch[l].ringRows;
  return fills;
}

int64_t frustumProgramInstructions(const FrustumBand &band) {
  // The prologue: per level, its 4-D vectors and strides, plus the fixed
  // registers, and a max pool's -inf pad columns.
  return bandProgram(band).instructions * unrollOf(band) +
         (kLevelSwitch + 3) * int64_t(band.levels.size()) + 16 +
         3 * padFills(band, frustumLevelSchedules(band));
}

FrustumMemoryMap frustumMemoryMap(const FrustumBand &band) {
  FrustumMemoryMap mm;
  const std::vector<ConvShape> &lv = band.levels;
  mm.code = 2 * (frustumProgramInstructions(band) + 64);
  mm.records = (640 + mm.code + 3) / 4 * 4;
  // Records: per level, a record to write and one to read each slot, one
  // per kernel row, the accumulator (4-D and 1-D), the bias, four XDSDs
  // and four stride words (a max pool: and its -inf); then the input, the
  // copy, two output buffers and two sends.
  const std::vector<ConvSchedule> schedules = frustumLevelSchedules(band);
  mm.numRecords = 8;
  for (size_t l = 0; l < lv.size(); ++l)
    mm.numRecords += 2 * schedules[l].ringRows + lv[l].kh + 12;
  // A residual block's skip: one record a level-0 slot; a max pool's pad
  // columns: two a slot, and their two -inf sources a level.
  if (lv.back().skipAdd)
    mm.numRecords += schedules[0].ringRows;
  mm.numRecords += padFills(band, schedules);
  for (const ConvShape &s : lv)
    mm.numRecords += s.maxPool ? 2 : 0;
  int64_t at = mm.records + 4 * mm.numRecords;
  for (size_t l = 0; l < lv.size(); ++l) {
    const ConvShape &s = lv[l];
    const ConvSchedule &sch = schedules[l];
    int64_t width = sch.paddedWidth;
    if (l == 0)
      width = std::max(width, s.pl + band.received());
    mm.ringRows.push_back(sch.ringRows);
    mm.ringWidth.push_back(width);
    mm.weights.push_back(at);
    at += s.maxPool ? 0 : 2 * s.cin * s.cout * s.kh * s.kw;
    mm.ring.push_back(at);
    at += 2 * sch.ringRows * width * s.cin;
    mm.acc.push_back(at);
    at += 2 * s.cout * s.wout();
    mm.bias.push_back(at);
    at += s.maxPool ? 0 : 2 * s.cout;
  }
  mm.outBuf = at;
  at += 2 * 2 * lv.back().cout * lv.back().wout();
  // A max pool's accumulator starts at -inf: one word.
  mm.negInf = at;
  at += 2;
  mm.end = at;
  return mm;
}

int64_t predictFrustumCycles(const std::vector<ConvShape> &chain,
                             int64_t tiles) {
  int64_t most = 0;
  for (const FrustumBand &b : frustumBands(chain, tiles))
    most = std::max(most, bandProgram(b).cycles);
  const ConvShape &top = chain.back();
  return std::max(most, top.hout() * top.wout() * top.cout);
}

int64_t frustumMemoryPerPE(const std::vector<ConvShape> &chain,
                           int64_t tiles) {
  int64_t most = 0;
  for (const FrustumBand &b : frustumBands(chain, tiles))
    most = std::max(most, 2 * frustumMemoryMap(b).end);
  return most;
}

std::string frustumMappingProblem(const std::vector<ConvShape> &chain,
                                  int64_t tiles, int64_t memoryBytes) {
  std::string why = frustumChainProblem(chain);
  if (!why.empty())
    return why;
  std::vector<FrustumBand> bands = frustumBands(chain, tiles);
  if (bands.empty())
    return std::to_string(tiles) + " bands of the chain's " +
           std::to_string(chain.back().wout()) +
           " output columns do not exist or read only padding";
  DenseMapping one;
  one.precision = Precision::FP32;
  for (const FrustumBand &b : bands) {
    for (const ConvShape &s : b.levels) {
      // The descriptors' reach, level by level (a max pool's as a
      // convolution of one channel: it has no weights).
      ConvShape reach = s;
      if (s.maxPool)
        reach.cin = 1;
      why = convMappingProblem(reach, one, memoryBytes);
      if (!why.empty())
        return why;
    }
    int64_t bytes = 2 * frustumMemoryMap(b).end;
    if (bytes > memoryBytes)
      return "a band needs " + std::to_string(bytes) +
             " bytes of PE memory, more than the " +
             std::to_string(memoryBytes) + " a PE has";
  }
  return "";
}

int64_t fastestConvCycles(const ConvShape &s, int64_t width, int64_t height,
                          int64_t memoryBytes, Precision precision) {
  int64_t best = std::numeric_limits<int64_t>::max();
  DenseMapping m;
  m.precision = precision;
  for (int64_t S = 1; S <= std::min(s.cin, height); ++S) {
    if (s.cin % S)
      continue;
    for (int64_t R = 1; R <= std::min(s.cout, height); ++R) {
      if (s.cout % R)
        continue;
      m.smear = S, m.rows = R;
      // Unbanded, or in the partitioner's bands of output columns side by
      // side (docs/execution-model.md, "Bands of output columns").
      auto consider = [&](int64_t tiles) {
        if (tiles > s.wout() || tiles * S > width)
          return;
        m.tiles = tiles;
        if (convMappingProblem(s, m, memoryBytes).empty())
          best = std::min(best, predictConvCycles(s, m));
      };
      consider(1);
      for (int64_t tiles : partition::kTileOptions)
        consider(tiles);
    }
  }
  return best;
}

int64_t fastestPoolCycles(const PoolShape &p, int64_t height,
                          int64_t memoryBytes) {
  int64_t best = std::numeric_limits<int64_t>::max();
  for (int64_t r = 1; r <= std::min(p.c, height); ++r)
    if (p.c % r == 0 && poolMappingProblem(p, r, memoryBytes).empty())
      best = std::min(best, predictPoolCycles(p, r));
  return best;
}

} // namespace weft::conversion
