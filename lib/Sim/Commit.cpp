//===- Commit.cpp - A PE's commit phase and its hang report ---------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The commit phase of a cycle (docs/simulator.md, "One step, two phases"):
// the dequeues a PE's step counted and the wavelets latched for its queues
// take effect. Also the per-PE lines of the hang report and error messages.
//
//===----------------------------------------------------------------------===//

#include "Step.h"

#include "weft/Machine/Wavelet.h"

#include <sstream>

using namespace weft::machine;

namespace weft::sim::detail {

std::string peError(const Pe &pe, uint64_t now, const std::string &what) {
  std::ostringstream os;
  os << "PE (" << pe.x << ", " << pe.y << ") at cycle " << now << ": "
     << what;
  return os.str();
}

namespace {

std::string wrongPortError(const Pe &pe, uint64_t now, unsigned port,
                           unsigned color) {
  return peError(pe, now,
                 "a wavelet of color " + std::to_string(color) +
                     " arrives on port " + dirName(Dir(port)) +
                     ", which the route of that color does not list "
                     "as an input");
}

std::string overflowError(const Pe &pe, uint64_t now, unsigned port,
                          unsigned color) {
  return peError(pe, now, "simulator invariant broken: queue (" +
                              std::string(dirName(Dir(port))) + ", " +
                              std::to_string(color) + ") overflows");
}

/// "waiting: color 3 is at position 2 of 2, taking from ramp, 4 left" for
/// a queue of a positioned color; "waiting" only when the position does not
/// take from the queue's port.
std::string describePosition(const PositionState &s, unsigned port,
                             unsigned color) {
  std::ostringstream os;
  if (!(s.inputs & (1u << port)))
    os << "waiting: ";
  os << "color " << color << " is at position " << s.current + 1 << " of "
     << unsigned(s.numPositions) << ", taking from ";
  bool first = true;
  for (unsigned d = 0; d < 5; ++d)
    if (s.inputs & (1u << d)) {
      os << (first ? "" : " and ") << dirName(Dir(d));
      first = false;
    }
  os << ", " << s.left << " left";
  return os.str();
}

} // namespace

std::string checkArrivals(const Pe &pe, const FabricConfig &cfg,
                          uint64_t now) {
  for (unsigned port = 0; port < 5; ++port) {
    uint64_t l = pe.inLatch[port];
    if (!l)
      continue;
    uint64_t w = l & ~kLatchFull;
    unsigned color = unsigned(w >> Wavelet::kColorShift) & 31;
    if (color >= cfg.colors || !(pe.route[color].inputs & (1u << port)))
      return wrongPortError(pe, now, port, color);
    unsigned q = cfg.rqIndex(port, color);
    unsigned count = pe.rqCount[q];
    for (unsigned i = 0; i < pe.numPopped; ++i)
      count -= pe.popped[i] == popCode(port, color);
    if (count >= cfg.rqDepth)
      return overflowError(pe, now, port, color);
  }
  return "";
}

bool commitPe(Pe &pe, const FabricConfig &cfg, uint64_t now,
              std::vector<uint32_t> &wake, std::string &error) {
  bool ok = true;
  unsigned rd = cfg.rqDepth, cd = cfg.cqDepth;
  // Dequeues counted in the decide phase.
  for (unsigned i = 0; i < pe.numPopped; ++i) {
    unsigned port = popPort(pe.popped[i]), c = popColor(pe.popped[i]);
    unsigned q = cfg.rqIndex(port, c);
    pe.rqHead[q] = uint8_t(ringAdd(pe.rqHead[q], 1, rd));
    if (--pe.rqCount[q] == 0) {
      unsigned pair = c * 5 + port;
      pe.nonEmpty[pair / 64] &= ~(uint64_t(1) << (pair % 64));
    }
    // A freed slot is a credit for the upstream router (§3). Its router
    // only asks whether the queue is full, so only a queue that was full
    // (no arrival can have joined it this cycle) changes what it decides.
    if (port < 4 && pe.neighbour[port] && pe.rqCount[q] + 1u >= rd)
      wake.push_back(pe.neighbour[port]->index);
  }
  pe.numPopped = 0;
  for (uint32_t m = pe.cePopMask; m; m &= m - 1) {
    unsigned c = unsigned(__builtin_ctz(m));
    pe.cqHead[c] = uint8_t(ringAdd(pe.cqHead[c], pe.cqPops[c], cd));
    pe.cqCount[c] = uint8_t(pe.cqCount[c] - pe.cqPops[c]);
    pe.cqPops[c] = 0;
  }
  pe.cePopMask = 0;
  // Arrivals.
  for (unsigned port = 0; port < 5; ++port) {
    uint64_t l = pe.inLatch[port];
    if (!l)
      continue;
    pe.inLatch[port] = 0;
    uint64_t w = l & ~kLatchFull;
    unsigned color = unsigned(w >> Wavelet::kColorShift) & 31;
    if (color >= cfg.colors || !(pe.route[color].inputs & (1u << port))) {
      if (ok)
        error = wrongPortError(pe, now, port, color);
      ok = false;
      continue;
    }
    unsigned q = cfg.rqIndex(port, color);
    if (pe.rqCount[q] >= rd) {
      if (ok)
        error = overflowError(pe, now, port, color);
      ok = false;
      continue;
    }
    pe.rqData[pe.rqSlot[q] * rd + ringAdd(pe.rqHead[q], pe.rqCount[q], rd)] = w;
    if (++pe.rqCount[q] > pe.st.routerQueueHigh)
      pe.st.routerQueueHigh = pe.rqCount[q];
    unsigned pair = color * 5 + port;
    pe.nonEmpty[pair / 64] |= uint64_t(1) << (pair % 64);
  }
  if (uint64_t l = pe.ceLatch) {
    pe.ceLatch = 0;
    uint64_t w = l & ~kLatchFull;
    unsigned color = unsigned(w >> Wavelet::kColorShift) & 31;
    pe.cqData[pe.cqSlot[color] * cd +
              ringAdd(pe.cqHead[color], pe.cqCount[color], cd)] = w;
    if (++pe.cqCount[color] > pe.st.ceQueueHigh)
      pe.st.ceQueueHigh = pe.cqCount[color];
  }
  // Active-bit clears commit before sets (§3).
  pe.active = (pe.active & ~pe.activeClear) | pe.activeSet;
  pe.blocked = (pe.blocked & ~pe.blockClear) | pe.blockSet;
  pe.activeSet = pe.activeClear = pe.blockSet = pe.blockClear = 0;
  return ok;
}

std::string describeStuck(const Pe &pe, const FabricConfig &cfg) {
  std::ostringstream os;
  auto exec = [&](const Exec &e) {
    os << e.info->mnemonic << " at element " << e.done << " of " << e.n;
    if (e.waitReason)
      os << ", waiting: " << e.waitReason << " ("
         << (std::string(e.waitReason).find("fifo") != std::string::npos
                 ? "fifo "
                 : std::string(e.waitReason) == "microthread busy"
                       ? "utid "
                       : "color ")
         << unsigned(e.waitColor) << ")";
  };
  bool any = false;
  if (pe.running) {
    os << "task " << unsigned(pe.taskId) << " at slot " << pe.pc;
    if (pe.main.active) {
      os << " executing ";
      exec(pe.main);
    } else if (pe.main.waitReason) {
      os << " waiting: " << pe.main.waitReason;
    }
    any = true;
  }
  for (unsigned u = 0; u < 8; ++u)
    if (pe.microActive & (1u << u)) {
      os << (any ? "; " : "") << "microthread " << u << " executing ";
      exec(pe.micro[u]);
      any = true;
    }
  for (unsigned port = 0; port < 5; ++port)
    for (unsigned c = 0; c < cfg.colors; ++c) {
      unsigned n = pe.rqCount[cfg.rqIndex(port, c)];
      if (!n)
        continue;
      os << (any ? "; " : "") << "router queue (" << dirName(Dir(port))
         << ", color " << c << ") holds " << n;
      const PeRoute &r = pe.route[c];
      bool full = n >= cfg.rqDepth;
      if (!r.outputs)
        os << " (no route out)";
      else if (r.position)
        os << " (" << (full ? "full; " : "")
           << describePosition(pe.positions[r.position - 1], port, c) << ")";
      else if (full)
        os << " (full)";
      any = true;
    }
  for (unsigned c = 0; c < cfg.colors; ++c) {
    unsigned n = pe.cqCount[c];
    if (!n)
      continue;
    uint64_t bit = uint64_t(1) << c;
    os << (any ? "; " : "") << "CE queue color " << c << " holds " << n;
    if (pe.blocked & bit)
      os << " (color blocked)";
    else if (!(pe.active & bit))
      os << " (color inactive, no reader)";
    any = true;
  }
  return any ? os.str() : std::string();
}

} // namespace weft::sim::detail
