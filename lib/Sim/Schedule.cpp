//===- Schedule.cpp - Stepping, committing and the fast mode's schedule ---===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The step and commit sweeps over the PEs of a cycle, and the fast mode's
// scheduling: which PEs step next, which sleep through a batched
// instruction, and the timers that wake them (docs/simulator.md, "Fast
// mode"). An engine runs on one thread; threads run bands of rows, an
// engine each (lib/Sim/Bands.cpp).
//
//===----------------------------------------------------------------------===//

#include "Engine.h"

#include <algorithm>

namespace weft::sim::detail {

//===----------------------------------------------------------------------===//
// Sweeps
//===----------------------------------------------------------------------===//

/// Steps the PEs in `current`.
void Engine::stepCurrent() {
  size_t n = current.size();
  const uint32_t *ids = current.data();
  peSteps += n;
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n)
      prefetchPe(pes[ids[i + kPrefetchAhead]]);
    if (i + kPrefetchData < n)
      prefetchPeData(pes[ids[i + kPrefetchData]], cfg.colors);
    Pe &pe = *pes[ids[i]];
    if (pe.sleeping)
      stepRouterOnly(pe, cfg, now, stepOut);
    else
      stepPe(pe, cfg, now, stepOut);
    if (pe.progress)
      stepOut.progressed.push_back(pe.index);
  }
}

/// The commit phase: every stepped PE and every PE a latch was written
/// into applies its dequeues and latched wavelets; credited neighbours go
/// to `credited`. False when the run has failed (the first commit error by
/// PE index).
bool Engine::commit() {
  uint64_t mark = now + 1;
  commitSet.clear();
  for (uint32_t i : current) {
    commitStamp[i] = mark;
    commitSet.push_back(i);
  }
  for (uint32_t i : stepOut.woken) {
    // A ghost's arrivals go to its rank (swapEdges).
    if (i >= ghostBase || commitStamp[i] == mark)
      continue;
    commitStamp[i] = mark;
    commitSet.push_back(i);
  }
  credited.clear();
  commitErrorPe = UINT32_MAX;
  size_t n = commitSet.size();
  const uint32_t *ids = commitSet.data();
  std::string scratch;
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n)
      prefetchPe(pes[ids[i + kPrefetchAhead]]);
    if (i + kPrefetchData < n)
      prefetchPeData(pes[ids[i + kPrefetchData]], cfg.colors);
    Pe &pe = *pes[ids[i]];
    if (!commitPe(pe, cfg, now, credited, scratch) &&
        pe.index < commitErrorPe) {
      commitErrorPe = pe.index;
      commitError = scratch;
    }
  }
  if (commitErrorPe == UINT32_MAX)
    return true;
  fail(commitError);
  return false;
}

//===----------------------------------------------------------------------===//
// The fast mode's schedule
//===----------------------------------------------------------------------===//

/// Fast mode: the next cycle's set, `current`: the PEs that progressed,
/// were woken or credited, less those that fall asleep, plus the sleepers
/// whose timer fires. The order of `current` never changes a result (see
/// docs/simulator.md, "One step, two phases"), so it is left as collected.
void Engine::scheduleNext() {
  uint64_t nextMark = now + 1;
  nextSet.clear();
  auto add = [&](uint32_t i, bool event) {
    if (i >= ghostBase)
      return;
    if (event)
      eventStamp[i] = nextMark;
    if (nextStamp[i] != nextMark) {
      nextStamp[i] = nextMark;
      nextSet.push_back(i);
    }
  };
  for (uint32_t i : stepOut.progressed)
    add(i, false);
  for (uint32_t i : stepOut.woken)
    add(i, true);
  for (uint32_t i : credited)
    add(i, true);
  // Credits from the other ranks (a distributed run).
  for (uint32_t i : bandWakes)
    add(i, true);
  bandWakes.clear();
  dropSleepers(nextMark);
  fireTimers(nextMark);
  current.swap(nextSet);
  peakActive = std::max<uint64_t>(peakActive, current.size());
}

/// Removes from `nextSet` the PEs that sleep in the next cycle. A PE whose
/// CE is busy with a batched instruction sleeps until the instruction
/// retires (its timer); until then only its router is stepped, while it
/// may move.
void Engine::dropSleepers(uint64_t nextMark) {
  std::vector<uint32_t> &next = nextSet;
  size_t kept = 0;
  for (size_t k = 0; k < next.size(); ++k) {
    if (k + kPrefetchAhead < next.size())
      __builtin_prefetch(pes[next[k + kPrefetchAhead]]);
    uint32_t i = next[k];
    Pe &pe = *pes[i];
    if (pe.sleeping) {
      // A sleeping PE's router is stepped on its own while it has work:
      // a wavelet or credit arrived, or it moved one and holds more.
      bool touched = eventStamp[i] == nextMark;
      bool queued = pe.nonEmpty[0] | pe.nonEmpty[1] | pe.nonEmpty[2];
      if (!touched && !(pe.routerMoved && queued)) {
        nextStamp[i] = 0; // not in the set: its timer may still add it
        continue;
      }
    } else if (maySleep(pe)) {
      pe.sleeping = true;
      pe.sleepFrom = now + 1;
      ++pe.sleepToken;
      ++sleeping;
      // The instruction retires in cycle now + busyLeft. Without a trace
      // the PE wakes after that cycle, with the retirement applied
      // (wake()); a trace wakes it for that cycle, whose step records the
      // end of a task in cycle order.
      uint64_t at = now + pe.main.busyLeft + (cfg.trace ? 0 : 1);
      wheel[at % kWheel].emplace_back(at, (pe.sleepToken << 32) | i);
      ++timers;
      // Its router goes on being stepped on its own while it may move: it
      // holds wavelets and a wavelet or credit arrived, it moved one, or
      // its CE freed a CE queue slot or sent on the ramp this cycle.
      bool queued = pe.nonEmpty[0] | pe.nonEmpty[1] | pe.nonEmpty[2];
      if (!queued || !(eventStamp[i] == nextMark || pe.routerMoved ||
                       pe.cePopped || pe.onRampUsed)) {
        nextStamp[i] = 0;
        continue;
      }
    }
    next[kept++] = i;
  }
  next.resize(kept);
}

/// Wakes the sleepers whose timer fires at the start of the next cycle and
/// adds them to `nextSet`.
void Engine::fireTimers(uint64_t nextMark) {
  std::vector<std::pair<uint64_t, uint64_t>> &bucket =
      wheel[(now + 1) % kWheel];
  for (size_t k = 0; k < bucket.size();) {
    auto [at, tag] = bucket[k];
    if (at > now + 1) {
      ++k; // a later lap
      continue;
    }
    bucket[k] = bucket.back();
    bucket.pop_back();
    --timers;
    Pe &pe = *pes[uint32_t(tag)];
    if (!pe.sleeping || pe.sleepToken != (tag >> 32))
      continue; // woken earlier
    wake(pe, now + 1);
    if (nextStamp[pe.index] != nextMark) {
      nextStamp[pe.index] = nextMark;
      nextSet.push_back(pe.index);
    }
  }
}

/// The earliest cycle in the timing wheel (UINT64_MAX if it is empty).
uint64_t Engine::firstTimer() const {
  if (!timers)
    return UINT64_MAX;
  for (uint64_t t = now + 1; t <= now + kWheel; ++t)
    for (const auto &e : wheel[t % kWheel])
      if (e.first == t)
        return t;
  uint64_t first = UINT64_MAX;
  for (const auto &b : wheel)
    for (const auto &e : b)
      first = std::min(first, e.first);
  return first;
}

void Engine::catchUp(Pe &pe, uint64_t upTo) {
  uint64_t skipped = upTo - pe.sleepFrom;
  pe.main.busyLeft -= uint32_t(skipped);
  pe.st.busyCycles += skipped;
  pe.st.ceBusyCycles += skipped;
  pe.sleepFrom = upTo;
}

/// Wakes a sleeping PE for cycle `at`.
void Engine::wake(Pe &pe, uint64_t at) {
  catchUp(pe, at);
  // Woken after the cycle its instruction retired in: apply that cycle.
  if (!pe.main.busyLeft)
    retireBatch(pe, cfg, at - 1, stepOut);
  pe.sleeping = false;
  ++pe.sleepToken;
  --sleeping;
}

/// Whether a PE's CE can skip the cycles until its main thread's datapath
/// is free: it only counts down a held datapath (no microthread in its
/// startup or holding the datapath). Its router goes on alone
/// (dropSleepers).
bool Engine::maySleep(const Pe &pe) const {
  return pe.running && pe.main.active && pe.main.busyLeft >= 2 &&
         microsInert(pe);
}

/// Fast mode: how many of the next cycles (at most `limit`) are known to do
/// nothing but let sleeping PEs count down: no PE to step, no host port
/// able to inject, and the first sleeper's wake-up later.
uint64_t Engine::idleCyclesAhead(uint64_t limit) const {
  if (!current.empty() || !timers || !sleeping)
    return 0;
  for (const HostPort &hp : hostPorts)
    for (unsigned si : hp.streams) {
      const StreamState &s = streams[si];
      const RowState &row = s.rows[hp.pe->y - s.io->firstRow];
      if (row.next < row.payloads.size() &&
          hp.pe->rqCount[cfg.rqIndex(hp.dir, s.io->color)] < cfg.rqDepth)
        return 0;
    }
  // The earliest timer fires at the end of cycle `at - 1`; cycles now ..
  // at - 2 are empty.
  uint64_t at = firstTimer();
  if (at < now + 2)
    return 0;
  return std::min(limit, at - 1 - now);
}

} // namespace weft::sim::detail
