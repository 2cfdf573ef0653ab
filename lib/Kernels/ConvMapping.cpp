//===- ConvMapping.cpp - A convolution's program, cost and memory ---------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ConvMapping.h"

#include "weft/Kernels/Epilogue.h"

#include "weft/Machine/DSD.h"
#include "weft/Machine/ISA.h"

#include <algorithm>

namespace wt = weft::machine;

namespace weft::conversion {

std::string ConvShape::check() const {
  if (cin < 1 || hin < 1 || win < 1 || cout < 1 || kh < 1 || kw < 1)
    return "sizes must be at least 1";
  if (sh < 1 || sw < 1 || dh < 1 || dw < 1)
    return "strides and dilations must be at least 1";
  if (pt < 0 || pl < 0 || pb < 0 || pr < 0)
    return "pads must not be negative";
  if (reluMax && (!relu || !(*reluMax > 0)))
    return "a clipped ReLU needs a positive upper bound";
  if (!epilogue.empty()) {
    if (relu)
      return "a fused activation cannot follow a ReLU";
    EpilogueCode e = compileEpilogue(epilogue);
    if (!e.code.error.empty())
      return "its fused activation cannot run: " + e.code.error;
  }
  if (groups < 1 || cin % groups || cout % groups)
    return "the groups (" + std::to_string(groups) +
           ") must divide the input and output channels";
  if (hout() < 1 || wout() < 1)
    return "the window is larger than the padded input";
  return "";
}

int64_t ConvShape::modelMacs() const {
  int64_t taps = 0;
  for (int64_t oh = 0; oh < hout(); ++oh)
    for (int64_t i = 0; i < kh; ++i) {
      int64_t h = inputRow(oh, i);
      if (h < 0 || h >= hin)
        continue;
      for (int64_t ow = 0; ow < wout(); ++ow)
        for (int64_t j = 0; j < kw; ++j) {
          int64_t w = ow * sw + j * dw - pl;
          taps += w >= 0 && w < win;
        }
    }
  return taps * groupIn() * cout;
}

int64_t ConvShape::executedMacs() const {
  int64_t rows = 0;
  for (int64_t oh = 0; oh < hout(); ++oh)
    for (int64_t i = 0; i < kh; ++i) {
      int64_t h = inputRow(oh, i);
      rows += h >= 0 && h < hin;
    }
  return rows * wout() * kw * groupIn() * cout;
}

ConvSchedule convSchedule(const ConvShape &s, bool lateReceives,
                          int64_t minRingRows) {
  ConvSchedule sch;
  sch.ringRows = std::max((s.kh - 1) * s.dh + 1, minRingRows);
  sch.paddedWidth =
      std::max(s.pl + s.win, (s.wout() - 1) * s.sw + (s.kw - 1) * s.dw + 1);
  sch.unroll = s.hout() % 2 ? 2 : 1;
  int64_t received = 0;
  auto receive = [&](int64_t upTo) {
    for (; received < upTo; ++received) {
      ConvStep st;
      st.receive = true;
      st.row = received;
      st.slot = received % sch.ringRows;
      sch.steps.push_back(st);
    }
  };
  for (int64_t oh = 0; oh < s.hout(); ++oh) {
    // (At least one row first: output rows of pads alone must not run
    // ahead of their sample's input.)
    int64_t last = std::min(s.hin, s.inputRow(oh, s.kh - 1) + 1);
    receive(lateReceives ? 1 : std::max<int64_t>(1, last));
    ConvStep st;
    st.row = oh;
    for (int64_t i = 0; i < s.kh; ++i) {
      int64_t h = s.inputRow(oh, i);
      if (h < 0 || h >= s.hin)
        continue;
      if (h >= received) {
        // (Only with lateReceives.) The taps so far, then the row.
        if (!st.taps.empty()) {
          ConvStep part = std::move(st);
          part.closeout = false;
          sch.steps.push_back(std::move(part));
          st = ConvStep();
          st.row = oh;
        }
        receive(h + 1);
      }
      st.taps.push_back(i);
      st.slots.push_back(h % sch.ringRows);
    }
    // An output row of pads alone still waits for the rows before it.
    if (st.taps.empty())
      receive(std::max<int64_t>(1, last));
    sch.steps.push_back(std::move(st));
  }
  receive(s.hin);
  return sch;
}

std::vector<ConvTile> convTiles(const ConvShape &s, int64_t tiles) {
  const int64_t wo = s.wout();
  if (tiles < 1 || tiles > wo)
    return {};
  // Output columns: the first wo % tiles bands one wider.
  std::vector<ConvTile> bands(static_cast<size_t>(tiles));
  for (int64_t t = 0, o = 0; t < tiles; ++t) {
    ConvTile &b = bands[size_t(t)];
    b.out0 = o;
    o += wo / tiles + (t < wo % tiles ? 1 : 0);
    b.out1 = o;
    // The first input column a window of the band reads (real columns).
    b.in0 = t == 0 ? 0 : std::max<int64_t>(0, b.out0 * s.sw - s.pl);
  }
  for (int64_t t = 0; t < tiles; ++t) {
    ConvTile &b = bands[size_t(t)];
    // One past the last input column the band's last window reads.
    int64_t end = (b.out1 - 1) * s.sw + (s.kw - 1) * s.dw - s.pl + 1;
    b.in1 = t + 1 < tiles
                ? std::max(std::min(end, s.win), bands[size_t(t + 1)].in0)
                : s.win;
    if (b.in1 <= b.in0)
      return {}; // the band reads only padding
    ConvShape &c = b.shape;
    c = s;
    c.win = b.in1 - b.in0;
    c.pl = b.in0 + s.pl - b.out0 * s.sw;
    c.pr = std::max<int64_t>(0, end - b.in1);
    if (c.pl < 0 || c.wout() != b.out1 - b.out0)
      return {};
  }
  return bands;
}

namespace {
/// What one PE of column c runs per sample: instructions and cycles.
struct ColumnProgram {
  int64_t instructions = 0, cycles = 0;
};

/// The mapping of one band: a single rectangle.
DenseMapping bandMapping(DenseMapping m) {
  m.tiles = 1;
  return m;
}

/// The distinct shapes of `m`'s bands of `s` (one when m.tiles is 1);
/// empty when the bands do not fit.
std::vector<ConvShape> bandShapes(const ConvShape &s, const DenseMapping &m) {
  if (m.tiles <= 1)
    return {s};
  std::vector<ConvShape> shapes;
  for (const ConvTile &t : convTiles(s, m.tiles)) {
    bool seen = false;
    for (const ConvShape &o : shapes)
      seen |= o.win == t.shape.win && o.pl == t.shape.pl &&
              o.pr == t.shape.pr && o.wout() == t.shape.wout();
    if (!seen)
      shapes.push_back(t.shape);
  }
  return shapes;
}
} // namespace

int64_t convReceiveCycles(Precision p, int64_t n) {
  // A fabric source supplies one element a cycle whatever the SIMD width
  // (docs/architecture.md §9.6).
  const wt::OpcodeInfo &i =
      wt::info(p == Precision::Mixed ? wt::Opcode::FF2H : wt::Opcode::MOV32);
  return int64_t(i.startup) + n * int64_t(i.cyclesPerGroup);
}

static ColumnProgram columnProgram(const ConvShape &s, const ConvSchedule &sch,
                                   const DenseMapping &m, int64_t c,
                                   bool diagonal) {
  const int64_t lk = convLk(s, m), lm = convLm(s, m), wo = s.wout();
  const int64_t rowLen = lm * wo;
  const bool first = c == 0, last = c == m.smear - 1;
  const bool mixed = m.precision == Precision::Mixed;
  std::optional<EpilogueCode> epi;
  if (last && !s.epilogue.empty())
    epi = compileEpilogue(s.epilogue);
  ColumnProgram p;
  auto add = [&](int64_t instructions, int64_t cycles) {
    p.instructions += instructions;
    p.cycles += cycles;
  };
  for (const ConvStep &st : sch.steps) {
    if (st.receive) {
      // (The diagonal first launches the copy of the row into its
      // column.) Load the slot's record, then move the row in.
      // Where the column's turn PE holds weights too, its copy and its
      // own receive share its datapath: every element of the row takes two
      // of its cycles, and the column receives at that pace.
      // Mixed precision converts the row to fp16 on the way in (ff2h):
      // one element a cycle, as the fabric supplies them.
      if (diagonal)
        add(1, 1);
      add(2, 1 + convReceiveCycles(m.precision, s.win * lk) +
                 (m.turnRow(c) < m.rows ? s.win * lk : 0));
      continue;
    }
    for (size_t k = 0; k < st.taps.size(); ++k)
      add(3, 2 + wt::vectorCycles(mixed ? wt::Opcode::FMACHS : wt::Opcode::FMAC,
                                  lm * wo * s.kw * lk));
    if (!st.closeout)
      continue;
    // The output row's closeout: forward, add and forward, or (the last
    // column) add into an output buffer (ReLU6: max and min there), and
    // the send's launch, whose microthread takes the datapath for the row
    // (with a ReLU, as an fmax); then clear the accumulator (the first
    // column: set it to the bias).
    if (!last) {
      add(1, wt::vectorCycles(first ? wt::Opcode::MOV32 : wt::Opcode::FADD,
                              rowLen));
    } else {
      add(1, wt::vectorCycles(first ? wt::Opcode::MOV32 : wt::Opcode::FADD,
                              rowLen));
      if (s.reluMax)
        add(first ? 1 : 2, (first ? 0 : wt::vectorCycles(wt::Opcode::FMAX,
                                                         rowLen)) +
                               wt::vectorCycles(wt::Opcode::FMIN, rowLen));
      // A fused activation, in the output buffer (docs/execution-model.md,
      // "Fused activations").
      if (epi)
        add(epilogueInstructions(*epi), epilogueCycles(*epi, rowLen));
      add(1, 1 + wt::vectorCycles(s.relu && !s.reluMax ? wt::Opcode::FMAX
                                                       : wt::Opcode::MOV32,
                                  rowLen));
    }
    add(1, wt::vectorCycles(wt::Opcode::MOV32, rowLen));
  }
  add(1, 1); // the jump back
  return p;
}

/// The programs of one band's columns, the most of `f` over them: columns
/// differ only in being first, last, and holding weights on their turn PE
/// (row ck < rows, k = m.merge lanes a column), so one of each kind is
/// counted.
template <typename F>
static int64_t mostOverColumns(const ConvShape &s, const DenseMapping &m,
                               F f) {
  const ConvSchedule sch = convSchedule(s, /*lateReceives=*/true);
  int64_t most = 0;
  auto visit = [&](int64_t c) {
    if (c >= 0 && c < m.smear)
      most = std::max(most,
                      f(columnProgram(s, sch, m, c, m.turnRow(c) < m.rows)));
  };
  // First, last, the last column with weights on its turn PE and the
  // first without, and one in between of each.
  const int64_t firstBare = (m.rows + m.merge - 1) / m.merge;
  for (int64_t c : {int64_t(0), int64_t(1), m.smear - 1, m.smear - 2,
                    firstBare - 1, firstBare, firstBare + 1})
    visit(c);
  return most;
}

int64_t convProgramInstructions(const ConvShape &s, const DenseMapping &m) {
  int64_t most = 0;
  for (const ConvShape &b : bandShapes(s, m))
    most = std::max(most, mostOverColumns(b, bandMapping(m),
                                          [](const ColumnProgram &p) {
                                            return p.instructions;
                                          }) *
                              convSchedule(b, /*lateReceives=*/true).unroll);
  return most;
}

/// predictConvCycles and the busiest band's cycles of work (without its
/// wait on the lanes).
static std::pair<int64_t, int64_t> bandsCyclesAndWork(const ConvShape &s,
                                                      const DenseMapping &m) {
  int64_t most = 0, work = 0;
  for (const ConvShape &b : bandShapes(s, m)) {
    int64_t cycles = mostOverColumns(
        b, bandMapping(m), [](const ColumnProgram &p) { return p.cycles; });
    work = std::max(work, cycles);
    // A band's receives last as long as the lane's whole row
    // (bandLaneWait); each lane carries Lk channels.
    if (m.tiles > 1)
      cycles += bandLaneWait(s.hin, s.win, b.win, convLk(s, m));
    most = std::max(most, cycles);
  }
  // Every band's results of a row chunk leave on one lane.
  return {std::max(most, s.hout() * s.wout() * convLm(s, m)), work};
}

int64_t predictConvCycles(const ConvShape &s, const DenseMapping &m) {
  return bandsCyclesAndWork(s, m).first;
}

int64_t convBandsLaneWait(const ConvShape &s, const DenseMapping &m) {
  auto [cycles, work] = bandsCyclesAndWork(s, m);
  return cycles - work;
}

ConvMemoryMap convMemoryMap(const ConvShape &s, const DenseMapping &m) {
  const ConvSchedule sch = convSchedule(s, /*lateReceives=*/true);
  const int64_t lk = convLk(s, m), lm = convLm(s, m), wo = s.wout();
  ConvMemoryMap mm;
  // The task table (640 words) and the code (two words a slot, the init
  // and some slack included), then the records (4 words each): one per
  // line-buffer slot to receive into and to read the window from, one per
  // kernel row of weights, the accumulator (4-D and 1-D), partial sums,
  // bias, output buffers and sends, the copy, four XDSDs and four stride
  // words. Then the data.
  mm.code = 2 * (convProgramInstructions(s, m) + 64);
  mm.records = (640 + mm.code + 3) / 4 * 4;
  std::optional<EpilogueCode> epi;
  if (!s.epilogue.empty())
    epi = compileEpilogue(s.epilogue);
  mm.numRecords =
      2 * sch.ringRows + s.kh + 24 + (epi ? epilogueRecords(*epi) : 0);
  // Weights and the line buffer hold fp16 in mixed precision (one
  // 16-bit word an element); the accumulator stays fp32 (two words, at an
  // even word).
  const int64_t ew = convElementWords(m.precision);
  mm.weights = mm.records + 4 * mm.numRecords;
  mm.ring = mm.weights + ew * lk * lm * s.kh * s.kw;
  mm.acc = mm.ring + ew * sch.ringRows * sch.paddedWidth * lk;
  mm.acc += mm.acc % 2;
  mm.bias = mm.acc + 2 * lm * wo;
  mm.outBuf = mm.bias + 2 * lm;
  mm.clip = mm.outBuf + 2 * 2 * lm * wo;
  mm.epilogue = mm.clip + (s.reluMax ? 2 : 0);
  // A fused activation's row buffers, then its memory constants.
  mm.end = mm.epilogue + (epi ? epilogueWords(*epi, lm * wo) : 0);
  return mm;
}

int64_t convMemoryPerPE(const ConvShape &s, const DenseMapping &m) {
  int64_t most = 0;
  for (const ConvShape &b : bandShapes(s, m))
    most = std::max(most, 2 * convMemoryMap(b, bandMapping(m)).end);
  return most;
}

std::string convMappingProblem(const ConvShape &s, const DenseMapping &m,
                               int64_t memoryBytes) {
  if (s.grouped())
    return "a grouped convolution is not smeared: it runs as a column of "
           "whole groups per row (depthwiseMappingProblem)";
  if (s.cin % m.smear || s.cout % m.rows)
    return "the chunks must divide the channels";
  if (m.merge > 1 && m.tiles > 1)
    return "a convolution cut into bands does not merge input lanes";
  if (m.merge > 1 && s.cin % m.lanes())
    return "its " + std::to_string(m.lanes()) + " input lanes must divide its " +
           std::to_string(s.cin) + " input channels";
  if (m.tiles > 1) {
    if (convTiles(s, m.tiles).empty())
      return "its " + std::to_string(s.wout()) +
             " output columns cannot be cut into " + std::to_string(m.tiles) +
             " bands that each read an input column";
    for (const ConvShape &b : bandShapes(s, m))
      if (std::string why = convMappingProblem(b, bandMapping(m), memoryBytes);
          !why.empty())
        return why;
    return "";
  }
  const int64_t lk = convLk(s, m), lm = convLm(s, m);
  // The 4-D multiply-accumulate's dimensions (Lm, wout, kw, Lk) and
  // strides (Lm, kh kw Lm, sw Lk, dw Lk) must fit the XDSD and the stride
  // registers.
  if (lm > 4095 || s.wout() > 255 || s.kw > 255 || lk > 255)
    return "a 4-D descriptor dimension exceeds its field";
  int64_t maxStride = (1 << 14) - 1;
  if (s.kh * s.kw * lm > maxStride || s.sw * lk > maxStride ||
      s.dw * lk > maxStride)
    return "a 4-D descriptor stride exceeds the stride registers";
  if (s.win * lk > 32767 || lm * s.wout() > 32767)
    return "a row is longer than a vector";
  ConvMemoryMap mm = convMemoryMap(s, m);
  if (mm.weights > std::min<int64_t>(8192, memoryBytes / 2))
    return "the per-sample program (" +
           std::to_string(convProgramInstructions(s, m)) +
           " instructions) leaves its descriptors out of the reach of DSR "
           "loads";
  int64_t bytes = convMemoryPerPE(s, m);
  if (bytes > memoryBytes)
    return "the weights, line buffer and program need " +
           std::to_string(bytes) + " bytes of PE memory";
  return "";
}

} // namespace weft::conversion
