//===- PoolMapping.cpp - A pooling's program, cost and memory -------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/PoolMapping.h"

#include "weft/Machine/ISA.h"

#include <algorithm>

namespace wt = weft::machine;

namespace weft::conversion {

int64_t PoolShape::outSize(int64_t in, int64_t k, int64_t s, int64_t d,
                           int64_t lo, int64_t hi) const {
  // ONNX's rule, as the importer applies it (lib/Import/ImportNN.cpp,
  // readWindow).
  int64_t extent = (k - 1) * d + 1, span = in + lo + hi - extent;
  if (span < 0 || s < 1)
    return 0;
  int64_t out = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (out - 1) * s >= in + lo)
    --out;
  return out;
}

int64_t PoolShape::padEnd(int64_t in, int64_t k, int64_t s, int64_t d,
                          int64_t lo, int64_t hi) const {
  int64_t out = outSize(in, k, s, d, lo, hi);
  return std::max(hi, (out - 1) * s + (k - 1) * d + 1 - in - lo);
}

int64_t PoolShape::rowCount(int64_t oh) const {
  int64_t lower = includePad ? -pt : 0, upper = hin + (includePad ? pb : 0);
  int64_t n = 0;
  for (int64_t i = 0; i < kh; ++i) {
    int64_t h = oh * sh - pt + i * dh;
    n += h >= lower && h < upper;
  }
  return std::max<int64_t>(n, 1);
}

int64_t PoolShape::colCount(int64_t ow) const {
  int64_t lower = includePad ? -pl : 0, upper = win + (includePad ? pr : 0);
  int64_t n = 0;
  for (int64_t j = 0; j < kw; ++j) {
    int64_t w = ow * sw - pl + j * dw;
    n += w >= lower && w < upper;
  }
  return std::max<int64_t>(n, 1);
}

ConvShape PoolShape::window() const {
  ConvShape w;
  w.cin = w.cout = c;
  w.hin = hin;
  w.win = win;
  w.kh = kh;
  w.kw = kw;
  w.sh = sh;
  w.sw = sw;
  w.dh = dh;
  w.dw = dw;
  w.pt = pt;
  w.pl = pl;
  w.pb = padBottom();
  w.pr = padRight();
  return w;
}

std::string PoolShape::check() const {
  if (c < 1 || hin < 1 || win < 1 || kh < 1 || kw < 1)
    return "sizes must be at least 1";
  if (sh < 1 || sw < 1 || dh < 1 || dw < 1)
    return "strides and dilations must be at least 1";
  if (pt < 0 || pl < 0 || pb < 0 || pr < 0)
    return "pads must not be negative";
  if (hout() < 1 || wout() < 1)
    return "the window is larger than the padded input";
  return window().check();
}

PoolSchedule poolSchedule(const PoolShape &s) {
  PoolSchedule sch;
  int64_t ends = 0;
  if (s.global()) {
    // Every received row is added into the one output pixel at once: no
    // line buffer.
    sch.ringRows = 1;
    sch.paddedWidth = s.win;
    sch.wo = 1;
    sch.kw = s.win;
    for (int64_t h = 0; h < s.hin; ++h) {
      PoolStep r;
      r.receive = true;
      r.row = h;
      sch.steps.push_back(r);
      PoolStep c;
      c.slots = {0};
      c.begin = h == 0;
      c.end = h == s.hin - 1;
      sch.steps.push_back(c);
    }
    ends = 1;
  } else {
    ConvShape w = s.window();
    ConvSchedule conv = convSchedule(w);
    sch.ringRows = conv.ringRows;
    sch.paddedWidth = conv.paddedWidth;
    sch.wo = w.wout();
    sch.kw = s.kw;
    for (const ConvStep &st : conv.steps) {
      PoolStep p;
      p.receive = st.receive;
      p.row = st.row;
      p.slot = st.slot;
      p.slots = st.slots;
      sch.steps.push_back(std::move(p));
      ends += !st.receive;
    }
  }
  sch.unroll = ends % 2 ? 2 : 1;
  return sch;
}

std::vector<int64_t> poolRowCounts(const PoolShape &s,
                                   std::vector<int64_t> *indexOfRow) {
  std::vector<int64_t> counts;
  if (indexOfRow)
    indexOfRow->clear();
  for (int64_t oh = 0; oh < s.hout(); ++oh) {
    int64_t n = s.rowCount(oh);
    auto it = std::find(counts.begin(), counts.end(), n);
    if (it == counts.end())
      it = counts.insert(counts.end(), n);
    if (indexOfRow)
      indexOfRow->push_back(int64_t(it - counts.begin()));
  }
  return counts;
}

namespace {
struct Program {
  int64_t instructions = 0, cycles = 0;
};
} // namespace

/// One sample of the PE program (emitPoolKernel's loop body), with the
/// cycles the output rows' sends hold the main thread up.
///
/// A send (`mov32 out <- buf` on microthread 3, one wavelet per cycle) takes
/// the datapath only in the cycles the main thread leaves it free: record
/// loads, the jump and each vector instruction's startup cycle. The next
/// send's launch waits for it (one microthread), so of the rowLen cycles of
/// output row k's send, those that the free cycles between its launch and
/// the next one do not cover stall the main thread. The last launch of a
/// sample wraps around to the first of the next.
static Program program(const PoolShape &s, int64_t rows) {
  const PoolSchedule sch = poolSchedule(s);
  const int64_t lc = poolLc(s, rows), rowLen = lc * sch.wo;
  const wt::Opcode op = s.max ? wt::Opcode::FMAX : wt::Opcode::FADD;
  Program p;
  // Free datapath cycles since the last launch, and per launch the free
  // cycles before it.
  int64_t freeCycles = 0;
  std::vector<int64_t> window;
  auto add = [&](int64_t instructions, int64_t cycles) {
    p.instructions += instructions;
    p.cycles += cycles;
  };
  // `loads` record loads, then a vector instruction of n elements.
  auto vectorOp = [&](int64_t loads, wt::Opcode o, int64_t n) {
    add(loads + 1, loads + wt::vectorCycles(o, n));
    freeCycles += loads + wt::info(o).startup;
  };
  for (const PoolStep &st : sch.steps) {
    if (st.receive) {
      vectorOp(1, wt::Opcode::MOV32, s.win * lc); // the slot's record, the row
      continue;
    }
    if (st.begin)
      vectorOp(0, wt::Opcode::MOV32, rowLen); // the accumulator's reset
    for (size_t k = 0; k < st.slots.size(); ++k)
      vectorOp(1, op, rowLen * sch.kw); // the slot's record, the op
    if (st.end) {
      if (!s.max)
        vectorOp(1, wt::Opcode::FMUL, rowLen); // the factors, the scale
      // The send's launch.
      add(1, 1);
      window.push_back(freeCycles);
      freeCycles = 0;
    }
  }
  add(1, 1); // the jump back
  freeCycles += 1;
  if (!window.empty())
    window.front() += freeCycles;
  for (int64_t w : window)
    p.cycles += std::max<int64_t>(0, rowLen - w);
  return p;
}

int64_t poolProgramInstructions(const PoolShape &s, int64_t rows) {
  return program(s, rows).instructions * poolSchedule(s).unroll;
}

int64_t predictPoolCycles(const PoolShape &s, int64_t rows) {
  return program(s, rows).cycles;
}

PoolMemoryMap poolMemoryMap(const PoolShape &s, int64_t rows) {
  const PoolSchedule sch = poolSchedule(s);
  const int64_t lc = poolLc(s, rows), rowLen = lc * sch.wo;
  const int64_t factors = s.max ? 0 : int64_t(poolRowCounts(s).size());
  PoolMemoryMap mm;
  // The task table (640 words) and the code (two words a slot, the set-up
  // and some slack included), then the records (4 words each): two per
  // line-buffer slot (receive, window), three per output buffer (4-D, 1-D,
  // send), the input, the -inf word, one per factor vector, three XDSDs
  // and three stride words. Then the data.
  mm.code = 2 * (poolProgramInstructions(s, rows) + 64);
  mm.records = (640 + mm.code + 3) / 4 * 4;
  mm.numRecords = 2 * sch.ringRows + 6 + 2 + factors + 6;
  mm.ring = mm.records + 4 * mm.numRecords;
  mm.outBuf = mm.ring + 2 * sch.ringRows * sch.paddedWidth * lc;
  mm.factors = mm.outBuf + 2 * 2 * rowLen;
  mm.ninf = mm.factors + 2 * factors * sch.wo;
  mm.end = mm.ninf + 2;
  return mm;
}

int64_t poolMemoryPerPE(const PoolShape &s, int64_t rows) {
  return 2 * poolMemoryMap(s, rows).end;
}

std::string poolMappingProblem(const PoolShape &s, int64_t rows,
                               int64_t memoryBytes) {
  if (rows < 1 || s.c % rows)
    return "the rows must divide the channels";
  const PoolSchedule sch = poolSchedule(s);
  const int64_t lc = poolLc(s, rows);
  // The 4-D vectors' dimensions (Lc, output columns, window columns) and
  // strides (Lc, sw Lc, dw Lc) must fit the XDSD and the stride registers.
  if (lc > 4095 || sch.wo > 255 || sch.kw > 255)
    return "a 4-D descriptor dimension exceeds its field";
  int64_t maxStride = (1 << 14) - 1;
  if (s.sw * lc > maxStride || s.dw * lc > maxStride)
    return "a 4-D descriptor stride exceeds the stride registers";
  if (s.win * lc > 32767 || lc * sch.wo * sch.kw > 32767)
    return "a row is longer than a vector";
  PoolMemoryMap mm = poolMemoryMap(s, rows);
  if (mm.ring > std::min<int64_t>(8192, memoryBytes / 2))
    return "the per-sample program (" +
           std::to_string(poolProgramInstructions(s, rows)) +
           " instructions) leaves its descriptors out of the reach of DSR "
           "loads";
  int64_t bytes = poolMemoryPerPE(s, rows);
  if (bytes > memoryBytes)
    return "the line buffer and program need " + std::to_string(bytes) +
           " bytes of PE memory";
  return "";
}

std::vector<PoolShape> poolBands(const PoolShape &s, int64_t tiles) {
  if (tiles == 1)
    return {s};
  if (!s.max || s.global())
    return {};
  std::vector<PoolShape> bands;
  for (const ConvTile &t : convTiles(s.window(), tiles)) {
    PoolShape b = s;
    b.win = t.shape.win;
    b.pl = t.shape.pl;
    b.pr = t.shape.pr;
    b.pb = s.padBottom();
    b.ceil = false;
    if (b.wout() != t.out1 - t.out0 || b.hout() != s.hout())
      return {};
    bands.push_back(b);
  }
  return bands;
}

std::string poolBandsProblem(const PoolShape &s, int64_t rows, int64_t tiles,
                             int64_t memoryBytes) {
  if (tiles == 1)
    return poolMappingProblem(s, rows, memoryBytes);
  if (!s.max || s.global())
    return "only a max pool of a window is cut into bands";
  std::vector<PoolShape> bands = poolBands(s, tiles);
  if (bands.empty())
    return "cannot cut its " + std::to_string(s.wout()) +
           " output columns into " + std::to_string(tiles) + " bands";
  for (const PoolShape &b : bands)
    if (std::string why = poolMappingProblem(b, rows, memoryBytes);
        !why.empty())
      return "a band of " + std::to_string(b.wout()) +
             " output columns: " + why;
  return "";
}

/// predictPoolBandsCycles and the busiest band's cycles of work.
static std::pair<int64_t, int64_t>
poolBandsCyclesAndWork(const PoolShape &s, int64_t rows, int64_t tiles) {
  if (tiles == 1)
    return {predictPoolCycles(s, rows), predictPoolCycles(s, rows)};
  int64_t most = 0, work = 0, lc = poolLc(s, rows);
  for (const PoolShape &b : poolBands(s, tiles)) {
    int64_t cycles = predictPoolCycles(b, rows);
    work = std::max(work, cycles);
    // A band's receives last as long as the lane's whole row.
    most = std::max(most, cycles + bandLaneWait(s.hin, s.win, b.win, lc));
  }
  return {std::max({most, s.hin * s.win * lc, s.hout() * s.wout() * lc}),
          work};
}

int64_t predictPoolBandsCycles(const PoolShape &s, int64_t rows,
                               int64_t tiles) {
  return poolBandsCyclesAndWork(s, rows, tiles).first;
}

int64_t poolBandsLaneWait(const PoolShape &s, int64_t rows, int64_t tiles) {
  auto [cycles, work] = poolBandsCyclesAndWork(s, rows, tiles);
  return cycles - work;
}

int64_t poolBandsMemoryPerPE(const PoolShape &s, int64_t rows, int64_t tiles) {
  int64_t most = 0;
  for (const PoolShape &b : poolBands(s, tiles))
    most = std::max(most, poolMemoryPerPE(b, rows));
  return most;
}

} // namespace weft::conversion
