//===- Router.cpp - One PE's cycle: the router ----------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The router's part of a PE's decide phase (docs/architecture.md §4): which
// queued wavelets move to which outputs this cycle. Step.cpp runs it first.
//
//===----------------------------------------------------------------------===//

#include "StepCtx.h"

namespace weft::sim::detail {

//===----------------------------------------------------------------------===//
// Router
//===----------------------------------------------------------------------===//

bool Ctx::tryForward(unsigned pair, DirSet &granted) {
  unsigned color = pair / 5, port = pair % 5;
  const PeRoute &r = pe.route[color];
  if (__builtin_expect(r.position != 0, 0))
    return tryForwardPositioned(color, port, r.position - 1u, granted);
  return forward(color, port, r.outputs, granted);
}

// A positioned route forwards only from its current position's inputs, to its
// outputs, at most once per cycle (§4.4). Out of line: keeps tryForward short.
__attribute__((noinline)) bool Ctx::tryForwardPositioned(unsigned color,
                                                         unsigned port,
                                                         unsigned slot,
                                                         DirSet &granted) {
  PositionState &pos = pe.positions[slot];
  if (!(pos.inputs & (1u << port)) || (positionedGranted >> color) & 1 ||
      !forward(color, port, pos.outputs, granted))
    return false;
  positionedGranted |= 1u << color;
  if (--pos.left == 0)
    pos.enter((pos.current + 1u) % pos.numPositions);
  return true;
}

bool Ctx::forward(unsigned color, unsigned port, DirSet outs, DirSet &granted) {
  if (!outs || (outs & granted))
    return false;
  for (unsigned d = 0; d < 5; ++d) {
    if (!(outs & (1u << d)))
      continue;
    if (d == kRamp) {
      if (pe.cqCount[color] >= cfg.cqDepth)
        return false;
      continue;
    }
    if (pe.hostPorts & (1u << d))
      continue;
    Pe *nb = pe.neighbour[d];
    if (!nb) {
      // The loader checks links; a missing neighbour is a PE no group
      // covers, so it has no route for anything.
      int64_t nx = int64_t(pe.x) + (d == 1) - (d == 3);
      int64_t ny = int64_t(pe.y) + (d == 2) - (d == 0);
      fail("color " + std::to_string(color) + " leaves through " +
           dirName(Dir(d)) + " to PE (" + std::to_string(nx) + ", " +
           std::to_string(ny) + "), which runs no program and has no route");
      return false;
    }
    unsigned in = unsigned(opposite(Dir(d)));
    if (nb->rqCount[cfg.rqIndex(in, color)] >= cfg.rqDepth)
      return false;
  }
  // Grant: the wavelet leaves through every output this cycle (§4.3).
  unsigned q = cfg.rqIndex(port, color);
  uint64_t w = pe.rqData[pe.rqSlot[q] * cfg.rqDepth + pe.rqHead[q]];
  pe.popped[pe.numPopped++] = popCode(port, color);
  granted |= outs;
  for (unsigned d = 0; d < 5; ++d) {
    if (!(outs & (1u << d)))
      continue;
    ++pe.st.hops[d];
    ++out.hopsPerColor[color];
    if (cfg.trace)
      out.trace.push_back(
          TraceEvent{now, 1, pe.index, 1, uint8_t(d), uint8_t(color)});
    // Each link carries at most one wavelet per direction per cycle; the
    // latch of a link that already carries one would be overwritten.
    uint64_t *latch;
    if (d == kRamp) {
      latch = &pe.ceLatch;
    } else if (pe.hostPorts & (1u << d)) {
      latch = &pe.hostLatch[d == unsigned(Dir::West) ? 0 : 1];
      out.hostOut.push_back(pe.index);
    } else {
      Pe *nb = pe.neighbour[d];
      latch = &nb->inLatch[unsigned(opposite(Dir(d)))];
      out.woken.push_back(nb->index);
    }
    if (*latch) {
      fail(std::string("simulator invariant broken: two wavelets on the ") +
           dirName(Dir(d)) + " link in one cycle");
      return false;
    }
    *latch = w | kLatchFull;
  }
  return true;
}

void Ctx::stepRouter() {
  if (!(pe.nonEmpty[0] | pe.nonEmpty[1] | pe.nonEmpty[2]))
    return;
  unsigned pairs = cfg.colors * 5;
  unsigned start = ringAdd(pe.rrPointer, 1, pairs);
  DirSet granted = 0;
  int64_t last = -1;
  // Scan the set bits of [start, pairs) then [0, start), in order.
  auto scan = [&](unsigned lo, unsigned hi) {
    for (unsigned wi = lo / 64; wi * 64 < hi && !failed; ++wi) {
      uint64_t bits = pe.nonEmpty[wi];
      if (wi * 64 < lo)
        bits &= ~uint64_t(0) << (lo - wi * 64);
      if ((wi + 1) * 64 > hi)
        bits &= (hi - wi * 64) >= 64 ? ~uint64_t(0)
                                     : ((uint64_t(1) << (hi - wi * 64)) - 1);
      while (bits && !failed) {
        unsigned b = unsigned(__builtin_ctzll(bits));
        bits &= bits - 1;
        unsigned pair = wi * 64 + b;
        // Pairs are numbered color * 5 + port but queues port * C + color.
        if (tryForward(pair, granted))
          last = pair;
      }
    }
  };
  scan(start, pairs);
  if (start)
    scan(0, start);
  if (last >= 0) {
    pe.rrPointer = unsigned(last);
    pe.routerMoved = true;
    pe.progress = true;
  }
}

} // namespace weft::sim::detail
