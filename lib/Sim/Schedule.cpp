//===- Schedule.cpp - Stepping, committing and the fast mode's schedule ---===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The step and commit sweeps over the PEs of a cycle, and the fast mode's
// scheduling: which PEs step next, which sleep through a batched
// instruction, and the timers that wake them (docs/simulator.md, "Fast
// mode"). Every PE belongs to one thread (Engine::owner): the thread steps
// it, commits it, decides whether it sleeps and keeps its timer. With
// threads and enough PEs to step, a cycle is one parallel region with a
// barrier after the step and one after the commit (cycleThreads); the
// host ports, errors and the end-of-cycle test stay on the calling thread.
//
//===----------------------------------------------------------------------===//

#include "Engine.h"

#include <algorithm>

namespace weft::sim::detail {

//===----------------------------------------------------------------------===//
// Sweeps
//===----------------------------------------------------------------------===//

void Engine::stepList(const std::vector<uint32_t> &list, ThreadOut &o) {
  size_t n = list.size();
  const uint32_t *ids = list.data();
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n)
      prefetchPe(pes[ids[i + kPrefetchAhead]]);
    if (i + kPrefetchData < n)
      prefetchPeData(pes[ids[i + kPrefetchData]], cfg.colors);
    Pe &pe = *pes[ids[i]];
    if (pe.sleeping)
      stepRouterOnly(pe, cfg, now, o);
    else
      stepPe(pe, cfg, now, o);
    if (pe.progress)
      o.progressed.push_back(pe.index);
  }
}

/// Steps the PEs in `current` on this thread (a distributed run's band, or
/// a set too small to share), each list with its owner's pool thread when
/// there are enough.
void Engine::stepCurrent() {
  unsigned T = pool->size();
  size_t total = current.size();
  peSteps += total;
  if (T > 1 && total >= kParallelMin) {
    pool->run([&](unsigned t) { stepList(current.lists[t], outs[t]); });
    return;
  }
  for (const std::vector<uint32_t> &list : current.lists)
    stepList(list, outs[0]);
}

/// Thread t's part of the commit phase: its stepped PEs and its PEs a
/// latch was written into (by any thread) apply their dequeues and latched
/// wavelets; credited neighbours go to wakes[t].
void Engine::commitOwn(unsigned t) {
  uint64_t mark = now + 1;
  std::vector<uint32_t> &list = commitSet.lists[t];
  list.clear();
  for (uint32_t i : current.lists[t]) {
    commitStamp[i] = mark;
    list.push_back(i);
  }
  for (const ThreadOut &o : outs)
    for (uint32_t i : o.woken) {
      // A ghost's arrivals go to its rank (swapEdges).
      if (i >= ghostBase || owner[i] != t || commitStamp[i] == mark)
        continue;
      commitStamp[i] = mark;
      list.push_back(i);
    }
  std::vector<uint32_t> &wake = wakes[t].pes;
  wake.clear();
  commitErrorPe[t] = UINT32_MAX;
  size_t n = list.size();
  const uint32_t *ids = list.data();
  std::string scratch;
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n)
      prefetchPe(pes[ids[i + kPrefetchAhead]]);
    if (i + kPrefetchData < n)
      prefetchPeData(pes[ids[i + kPrefetchData]], cfg.colors);
    Pe &pe = *pes[ids[i]];
    if (!commitPe(pe, cfg, now, wake, scratch) &&
        pe.index < commitErrorPe[t]) {
      commitErrorPe[t] = pe.index;
      commitErrors[t] = scratch;
    }
  }
}

/// The first commit error of the cycle (by PE index): fails the run and
/// returns false; true when there is none.
bool Engine::commitOk() {
  uint32_t errPe = UINT32_MAX;
  std::string err;
  for (size_t t = 0; t < commitErrorPe.size(); ++t)
    if (commitErrorPe[t] < errPe) {
      errPe = commitErrorPe[t];
      err = commitErrors[t];
    }
  if (errPe == UINT32_MAX)
    return true;
  fail(err);
  return false;
}

/// The commit phase: every stepped PE and every PE a latch was written
/// into applies its dequeues and latched wavelets, on its owner's thread
/// when there are enough. False when the run has failed.
bool Engine::commit() {
  unsigned T = pool->size();
  size_t n = current.size();
  for (const ThreadOut &o : outs)
    n += o.woken.size();
  if (T > 1 && n >= kParallelMin)
    pool->run([&](unsigned t) { commitOwn(t); });
  else
    for (unsigned t = 0; t < T; ++t)
      commitOwn(t);
  return commitOk();
}

//===----------------------------------------------------------------------===//
// The fast mode's schedule
//===----------------------------------------------------------------------===//

/// Thread t's part of the next cycle's set: its PEs that progressed, were
/// woken or credited, less those that fall asleep, plus its sleepers whose
/// timer fires.
void Engine::scheduleOwn(unsigned t) {
  uint64_t nextMark = now + 1;
  std::vector<uint32_t> &next = nextSet.lists[t];
  next.clear();
  auto add = [&](uint32_t i, bool event) {
    if (i >= ghostBase || owner[i] != t)
      return;
    if (event)
      eventStamp[i] = nextMark;
    if (nextStamp[i] != nextMark) {
      nextStamp[i] = nextMark;
      next.push_back(i);
    }
  };
  for (const ThreadOut &o : outs) {
    for (uint32_t i : o.progressed)
      add(i, false);
    for (uint32_t i : o.woken)
      add(i, true);
  }
  for (const WakeList &w : wakes)
    for (uint32_t i : w.pes)
      add(i, true);
  // Credits from the other ranks (a distributed run).
  for (uint32_t i : bandWakes)
    add(i, true);
  dropSleepers(t, next, nextMark);
  fireTimers(t, next, nextMark);
}

/// Fast mode, on this thread: the next cycle's set, `current`.
void Engine::scheduleNext() {
  for (unsigned t = 0; t < pool->size(); ++t)
    scheduleOwn(t);
  bandWakes.clear();
  // The order of `current` never changes a result (see the file
  // comment), so it is left as collected.
  current.swap(nextSet);
  peakActive = std::max<uint64_t>(peakActive, current.size());
}

/// Removes from `next` (thread t's) the PEs that sleep in the next cycle. A
/// PE whose CE is busy with a batched instruction sleeps until the
/// instruction retires (its timer); until then only its router is stepped,
/// while it may move.
void Engine::dropSleepers(unsigned t, std::vector<uint32_t> &next,
                          uint64_t nextMark) {
  Sleepers &z = sleepers[t];
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
      ++z.sleeping;
      // The instruction retires in cycle now + busyLeft. Without a trace
      // the PE wakes after that cycle, with the retirement applied
      // (wake()); a trace wakes it for that cycle, whose step records the
      // end of a task in cycle order.
      uint64_t at = now + pe.main.busyLeft + (cfg.trace ? 0 : 1);
      z.wheel[at % kWheel].emplace_back(at, (pe.sleepToken << 32) | i);
      ++z.timers;
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

/// Wakes thread t's sleepers whose timer fires at the start of the next
/// cycle and adds them to `next`.
void Engine::fireTimers(unsigned t, std::vector<uint32_t> &next,
                        uint64_t nextMark) {
  Sleepers &z = sleepers[t];
  std::vector<std::pair<uint64_t, uint64_t>> &bucket =
      z.wheel[(now + 1) % kWheel];
  for (size_t k = 0; k < bucket.size();) {
    auto [at, tag] = bucket[k];
    if (at > now + 1) {
      ++k; // a later lap
      continue;
    }
    bucket[k] = bucket.back();
    bucket.pop_back();
    --z.timers;
    Pe &pe = *pes[uint32_t(tag)];
    if (!pe.sleeping || pe.sleepToken != (tag >> 32))
      continue; // woken earlier
    wake(pe, now + 1);
    if (nextStamp[pe.index] != nextMark) {
      nextStamp[pe.index] = nextMark;
      next.push_back(pe.index);
    }
  }
}

/// The earliest cycle in the timing wheels (UINT64_MAX if they are empty).
uint64_t Engine::firstTimer() const {
  uint64_t first = UINT64_MAX;
  for (const Sleepers &z : sleepers) {
    if (!z.timers)
      continue;
    bool found = false;
    for (uint64_t t = now + 1; t <= now + kWheel && t < first && !found; ++t)
      for (const auto &e : z.wheel[t % kWheel])
        if (e.first == t) {
          first = t;
          found = true;
          break;
        }
    if (found)
      continue;
    for (const auto &b : z.wheel)
      for (const auto &e : b)
        first = std::min(first, e.first);
  }
  return first;
}

uint64_t Engine::numSleeping() const {
  uint64_t n = 0;
  for (const Sleepers &z : sleepers)
    n += z.sleeping;
  return n;
}

uint64_t Engine::timerCount() const {
  uint64_t n = 0;
  for (const Sleepers &z : sleepers)
    n += z.timers;
  return n;
}

void Engine::catchUp(Pe &pe, uint64_t upTo) {
  uint64_t skipped = upTo - pe.sleepFrom;
  pe.main.busyLeft -= uint32_t(skipped);
  pe.st.busyCycles += skipped;
  pe.st.ceBusyCycles += skipped;
  pe.sleepFrom = upTo;
}

/// Wakes a sleeping PE for cycle `at` (on its owner's thread).
void Engine::wake(Pe &pe, uint64_t at) {
  catchUp(pe, at);
  // Woken after the cycle its instruction retired in: apply that cycle.
  if (!pe.main.busyLeft)
    retireBatch(pe, cfg, at - 1, outs[owner[pe.index]]);
  pe.sleeping = false;
  ++pe.sleepToken;
  --sleepers[owner[pe.index]].sleeping;
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
  if (!current.empty() || !timerCount() || !numSleeping())
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

//===----------------------------------------------------------------------===//
// A cycle over threads
//===----------------------------------------------------------------------===//

/// Fast mode, one process, threads, at least kParallelMin PEs to step: the
/// cycle of cycleOnce as one parallel region. Each thread steps its PEs,
/// checks what they sent to host ports, and after a barrier commits its
/// PEs and, after another, schedules them. A step or host-port error (any
/// thread's) stops every thread before the commit, a commit error before
/// the schedule, so the state at an error is the one cycleOnce leaves; the
/// calling thread then reports it as cycleOnce does. False when the run
/// has ended.
bool Engine::cycleThreads() {
  ThreadOut &main = outs[0];
  injectHost(main);
  bool hostMoved = !main.woken.empty();
  unsigned T = pool->size();
  peSteps += current.size();
  hostError.assign(T, 0);
  pool->run([&](unsigned t) {
    ThreadOut &o = outs[t];
    stepList(current.lists[t], o);
    // Checked only (collectHost applies them): each edge PE feeds its own
    // output rows, so the threads' checks are independent.
    bool refused = false;
    for (uint32_t idx : o.hostOut)
      for (unsigned side = 0; side < 2; ++side)
        if (uint64_t l = pes[idx]->hostLatch[side])
          refused |= !hostArrival(*pes[idx], side, l, false).empty();
    if (refused)
      hostError[t] = 1;
    pool->barrier();
    for (unsigned u = 0; u < T; ++u)
      if (outs[u].errorPe != UINT32_MAX || hostError[u])
        return;
    commitOwn(t);
    pool->barrier();
    for (unsigned u = 0; u < T; ++u)
      if (commitErrorPe[u] != UINT32_MAX)
        return;
    sleepers[t].sleptBefore = sleepers[t].sleeping;
    scheduleOwn(t);
  });
  std::string err;
  if (firstStepError(err) != UINT32_MAX) {
    fail(err);
    return false;
  }
  bool anyProgress = mergeThreadOuts() || hostMoved;
  anyProgress |= collectHost(main);
  if (st == Status::Error || !commitOk())
    return false;
  if (opts.trace)
    collectTrace();
  // A PE asleep in this cycle spent it on its batched instruction.
  for (const Sleepers &z : sleepers)
    anyProgress |= z.sleptBefore > 0;
  current.swap(nextSet);
  peakActive = std::max<uint64_t>(peakActive, current.size());
  for (ThreadOut &o : outs) {
    o.progressed.clear();
    o.woken.clear();
  }
  return endCycle(anyProgress, !anyProgress && outputsComplete());
}

} // namespace weft::sim::detail
