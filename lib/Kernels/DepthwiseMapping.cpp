//===- DepthwiseMapping.cpp - A grouped convolution's program and cost ----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/DepthwiseMapping.h"
#include "weft/Kernels/Epilogue.h"

#include "weft/Machine/ISA.h"

#include <algorithm>
#include <vector>

namespace wt = weft::machine;

namespace weft::conversion {

ConvSchedule depthwiseSchedule(const ConvShape &s) { return convSchedule(s); }

namespace {
/// One sample of the PE program: instructions, main-thread cycles, and the
/// cycles the main thread leaves the datapath free between consecutive
/// send launches (`gaps[i]`: after launch i, up to the next one; the last
/// wraps into the next sample).
struct Program {
  int64_t instructions = 0, cycles = 0;
  std::vector<int64_t> gaps;
};
} // namespace

/// emitDepthwiseKernel's loop body, counted.
static Program program(const ConvShape &s, int64_t rows, Precision prec) {
  const ConvSchedule sch = depthwiseSchedule(s);
  const int64_t lc = depthwiseLc(s, rows), lo = depthwiseLo(s, rows);
  const int64_t rowLen = lo * s.wout(), macLen = rowLen * s.kw;
  std::optional<EpilogueCode> epi;
  if (!s.epilogue.empty())
    epi = compileEpilogue(s.epilogue);
  Program p;
  int64_t gap = 0, beforeFirst = 0;
  bool launched = false;
  // An instruction of `cycles` of which `free` leave the datapath to the
  // microthreads (record loads, a vector's startup).
  auto add = [&](int64_t instructions, int64_t cycles, int64_t free) {
    p.instructions += instructions;
    p.cycles += cycles;
    (launched ? gap : beforeFirst) += free;
  };
  // A record load, and a vector instruction of n elements.
  auto load = [&] { add(1, 1, 1); };
  auto vec = [&](wt::Opcode op, int64_t n) {
    add(1, wt::vectorCycles(op, n), int64_t(wt::info(op).startup));
  };
  for (const ConvStep &st : sch.steps) {
    if (st.receive) {
      load();
      add(1, convReceiveCycles(prec, s.win * lc),
          int64_t(wt::info(prec == Precision::Mixed ? wt::Opcode::FF2H
                                                     : wt::Opcode::MOV32)
                      .startup));
      continue;
    }
    // The bias broadcast (or zeros), a record pair and a multiply-
    // accumulate per kernel row inside the input and input channel of a
    // group, the ReLU, the send's launch.
    vec(wt::Opcode::MOV32, rowLen);
    for (size_t t = 0; t < st.taps.size(); ++t)
      for (int64_t k = 0; k < s.groupIn(); ++k) {
        load();
        load();
        vec(prec == Precision::Mixed ? wt::Opcode::FMACHS : wt::Opcode::FMAC,
            macLen);
      }
    if (s.relu)
      vec(wt::Opcode::FMAX, rowLen);
    if (s.reluMax)
      vec(wt::Opcode::FMIN, rowLen);
    // A fused activation in the buffer (docs/execution-model.md, "Fused
    // activations"): its DSR loads and startups leave the datapath free.
    if (epi)
      add(epilogueInstructions(*epi), epilogueCycles(*epi, rowLen),
          epilogueFreeCycles(*epi));
    add(1, 1, 0);
    if (launched)
      p.gaps.push_back(gap);
    launched = true;
    gap = 0;
  }
  load(); // the jump back (an Imm instruction)
  p.gaps.push_back(gap + beforeFirst);
  return p;
}

int64_t depthwiseProgramInstructions(const ConvShape &s, int64_t rows) {
  return program(s, rows, Precision::FP32).instructions *
         depthwiseSchedule(s).unroll;
}

int64_t predictDepthwiseCycles(const ConvShape &s, int64_t rows,
                               Precision prec) {
  Program p = program(s, rows, prec);
  // A send of an output row issues its elements (one a cycle, after one
  // startup cycle) in the cycles the main thread leaves free; what does
  // not fit before the next launch stalls the main thread.
  const int64_t send =
      wt::vectorCycles(wt::Opcode::MOV32, depthwiseLo(s, rows) * s.wout());
  int64_t stalls = 0;
  for (int64_t gap : p.gaps)
    stalls += std::max<int64_t>(0, send - gap);
  return p.cycles + stalls;
}

DepthwiseMemoryMap depthwiseMemoryMap(const ConvShape &s, int64_t rows,
                                      Precision p) {
  const ConvSchedule sch = depthwiseSchedule(s);
  const int64_t lc = depthwiseLc(s, rows), lo = depthwiseLo(s, rows);
  const int64_t rowLen = lo * s.wout();
  DepthwiseMemoryMap mm;
  // The task table (640 words) and the code (two words a slot, the set-up
  // and some slack included), then the records (4 words each): per
  // line-buffer slot one to receive into and one per input channel of a
  // group to read windows from, one per kernel row and input channel of a
  // group of weights, three per output buffer (4-D, 1-D, send), the input,
  // the bias, the clipped ReLU's bound, four XDSDs and five stride words.
  // Then the data.
  mm.code = 2 * (depthwiseProgramInstructions(s, rows) + 64);
  mm.records = (640 + mm.code + 3) / 4 * 4;
  std::optional<EpilogueCode> epi;
  if (!s.epilogue.empty())
    epi = compileEpilogue(s.epilogue);
  mm.numRecords = sch.ringRows * (1 + s.groupIn()) + s.kh * s.groupIn() + 18 +
                  (epi ? epilogueRecords(*epi) : 0);
  mm.weights = mm.records + 4 * mm.numRecords;
  // Weights and line buffer: fp32, or fp16 in mixed precision.
  const int64_t ew = convElementWords(p);
  mm.ring = mm.weights + ew * lo * s.groupIn() * s.kh * s.kw;
  // (The fp32 bias after it starts at an even word.)
  mm.bias = mm.ring + (ew * sch.ringRows * sch.paddedWidth * lc + 1) / 2 * 2;
  mm.outBuf = mm.bias + 2 * lo;
  mm.clip = mm.outBuf + 2 * 2 * rowLen;
  mm.epilogue = mm.clip + (s.reluMax ? 2 : 0);
  // A fused activation's row buffers, then its memory constants.
  mm.end = mm.epilogue + (epi ? epilogueWords(*epi, rowLen) : 0);
  return mm;
}

int64_t depthwiseMemoryPerPE(const ConvShape &s, int64_t rows, Precision p) {
  return 2 * depthwiseMemoryMap(s, rows, p).end;
}

std::string depthwiseMappingProblem(const ConvShape &s, int64_t rows,
                                    int64_t memoryBytes, Precision p) {
  if (!s.grouped())
    return "not a grouped convolution";
  if (rows < 1 || s.groups % rows)
    return "the rows must divide the groups (" + std::to_string(s.groups) + ")";
  const int64_t lc = depthwiseLc(s, rows), lo = depthwiseLo(s, rows);
  const int64_t gl = depthwiseGroups(s, rows);
  // The multiply-accumulate's dimensions (groups, multiplier, output
  // columns, window columns) and the bias broadcast's (output channels,
  // output columns) must fit the XDSD; the strides (multiplier, output
  // channels, input channels of a group, sw Lc, dw Lc) the stride
  // registers.
  if (gl > 4095 || s.groupOut() > 255 || s.wout() > 255 || s.kw > 255 ||
      lo > 4095)
    return "a 4-D descriptor dimension exceeds its field";
  int64_t maxStride = (1 << 14) - 1;
  if (lo > maxStride || s.groupIn() > maxStride || s.sw * lc > maxStride ||
      s.dw * lc > maxStride)
    return "a 4-D descriptor stride exceeds the stride registers";
  if (s.win * lc > 32767 || lo * s.wout() > 32767)
    return "a row is longer than a vector";
  DepthwiseMemoryMap mm = depthwiseMemoryMap(s, rows, p);
  if (mm.weights > std::min<int64_t>(8192, memoryBytes / 2))
    return "the per-sample program (" +
           std::to_string(depthwiseProgramInstructions(s, rows)) +
           " instructions) leaves its descriptors out of the reach of DSR "
           "loads";
  int64_t bytes = depthwiseMemoryPerPE(s, rows, p);
  if (bytes > memoryBytes)
    return "the weights, line buffer and program need " +
           std::to_string(bytes) + " bytes of PE memory";
  return "";
}

/// The most of f over the band convolutions of `s` cut into `tiles`.
template <typename F>
static int64_t mostOverBands(const ConvShape &s, int64_t tiles, F f) {
  int64_t most = 0;
  for (const ConvTile &b : convTiles(s, tiles))
    most = std::max(most, f(b.shape));
  return most;
}

std::string depthwiseBandsProblem(const ConvShape &s, int64_t rows,
                                  int64_t tiles, int64_t memoryBytes,
                                  Precision p) {
  if (tiles == 1)
    return depthwiseMappingProblem(s, rows, memoryBytes, p);
  std::vector<ConvTile> bands = convTiles(s, tiles);
  if (bands.empty())
    return "cannot cut its " + std::to_string(s.wout()) +
           " output columns into " + std::to_string(tiles) + " bands";
  for (const ConvTile &b : bands)
    if (std::string why =
            depthwiseMappingProblem(b.shape, rows, memoryBytes, p);
        !why.empty())
      return "band of output columns [" + std::to_string(b.out0) + ", " +
             std::to_string(b.out1) + "): " + why;
  return "";
}

int64_t predictDepthwiseBandsCycles(const ConvShape &s, int64_t rows,
                                    int64_t tiles, Precision p) {
  if (tiles == 1)
    return predictDepthwiseCycles(s, rows, p);
  int64_t most = mostOverBands(s, tiles, [&](const ConvShape &b) {
    return predictDepthwiseCycles(b, rows, p);
  });
  // Every band's input columns pass one lane a row, and every band's output
  // columns leave on one.
  int64_t in = s.hin * s.win * depthwiseLc(s, rows);
  int64_t out = s.hout() * s.wout() * depthwiseLo(s, rows);
  return std::max({most, in, out});
}

int64_t depthwiseBandsMemoryPerPE(const ConvShape &s, int64_t rows,
                                  int64_t tiles, Precision p) {
  if (tiles == 1)
    return depthwiseMemoryPerPE(s, rows, p);
  return mostOverBands(s, tiles, [&](const ConvShape &b) {
    return depthwiseMemoryPerPE(b, rows, p);
  });
}

} // namespace weft::conversion
