//===- Band.cpp - One band of rows of a distributed run -------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A distributed run (docs/simulator.md, "Distributed simulation") splits the
// fabric into bands of rows, one per rank. A rank holds the PEs of its band
// and, as *ghosts*, the programmed PEs of the rows just outside it. A ghost
// is never stepped: the PE beside it reads its queue counts for the credit
// check and writes its input latch, exactly as with the real PE in one
// process. Every cycle, after the decide phase:
//
//  1. each rank sends each neighbouring rank the wavelets its PEs latched
//     into that rank's PEs (at most one per column: one link) and the
//     dequeues of the queues that rank's PEs feed (the credits); both keep
//     the ghosts' queue counts equal to the real ones;
//  2. one reduction finds the cycle's first program error in the order the
//     single-process engine finds it (steps, host ports, commits, each by
//     PE index), so every rank stops at the same point with the same state;
//  3. after the commit, one reduction says whether the cycle was quiet,
//     whether every output is complete and (fast mode) when the next PE
//     wakes, for the idle-cycle skip.
//
// Nothing else crosses a band edge: a PE reads of a neighbour only its queue
// counts, and those change only at commit (lib/Sim/Machine.h). At the end
// rank 0 gathers the statistics, the outputs and the hang report.
//
//===----------------------------------------------------------------------===//

#include "Engine.h"

#include "weft/Machine/Wavelet.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

using namespace weft::machine;

namespace weft::sim {

BandExchange::~BandExchange() = default;

namespace detail {

namespace {

constexpr unsigned kNorth = unsigned(Dir::North);
constexpr unsigned kSouth = unsigned(Dir::South);

/// An edge record: the column in bits 40-55, bit 56 set for a dequeue
/// (colour in the low bits), clear for a wavelet (its encoding).
constexpr uint64_t kPopRecord = uint64_t(1) << 56;
constexpr uint64_t kColumnShift = 40;

constexpr uint64_t makeErrorKey(uint64_t phase, uint64_t pe, uint64_t side) {
  return (phase << 40) | (pe << 1) | side;
}

/// Flat serialisation of the gathered state.
class Writer {
public:
  std::vector<uint8_t> bytes;
  template <typename T> void put(const T &v) {
    static_assert(std::is_trivially_copyable<T>::value);
    const uint8_t *p = reinterpret_cast<const uint8_t *>(&v);
    bytes.insert(bytes.end(), p, p + sizeof(T));
  }
  template <typename T> void putVector(const std::vector<T> &v) {
    put(uint64_t(v.size()));
    const uint8_t *p = reinterpret_cast<const uint8_t *>(v.data());
    bytes.insert(bytes.end(), p, p + v.size() * sizeof(T));
  }
  void putString(const std::string &s) {
    put(uint64_t(s.size()));
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
};

class Reader {
public:
  explicit Reader(const std::vector<uint8_t> &b) : bytes(b) {}
  template <typename T> T get() {
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  template <typename T> std::vector<T> getVector() {
    std::vector<T> v(get<uint64_t>());
    // An empty vector's data() may be null, which memcpy must not get even
    // for zero bytes.
    if (!v.empty())
      std::memcpy(v.data(), bytes.data() + at, v.size() * sizeof(T));
    at += v.size() * sizeof(T);
    return v;
  }
  std::string getString() {
    uint64_t n = get<uint64_t>();
    std::string s(reinterpret_cast<const char *>(bytes.data() + at), n);
    at += n;
    return s;
  }

private:
  const std::vector<uint8_t> &bytes;
  size_t at = 0;
};

} // namespace

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

/// This rank's band: contiguous rows, balanced by the number of programmed
/// PEs (rank k's band ends at the first row before which at least
/// (k + 1) / n of them lie), at least one row each.
bool Engine::planBand(std::string &why) {
  unsigned n = exchange->size();
  uint32_t height = target.height();
  if (n > height) {
    why = "the run has " + std::to_string(n) + " ranks but the fabric has " +
          std::to_string(height) +
          " rows; a distributed run needs at least one row per rank";
    return false;
  }
  std::tie(bandBegin, bandEnd) = bandRows(exchange->rank());
  // A message holds at most one wavelet per column and one dequeue per
  // (column, colour) fed across the edge.
  maxEdgeWords = size_t(target.width()) * (1 + cfg.colors) + 1;
  return true;
}

std::pair<uint32_t, uint32_t> Engine::bandRows(unsigned rank) const {
  unsigned n = exchange->size();
  uint32_t height = target.height();
  std::pair<uint32_t, uint32_t> band;
  std::vector<uint64_t> before(size_t(height) + 1, 0);
  for (const binary::Group &g : prog.groups)
    for (uint32_t gy = 0; gy < g.height; ++gy)
      before[size_t(g.y) + gy + 1] += g.width;
  for (uint32_t y = 0; y < height; ++y)
    before[y + 1] += before[y];
  uint64_t total = before[height];
  uint32_t begin = 0;
  for (unsigned k = 0; k < n; ++k) {
    uint32_t end = height;
    if (k + 1 < n) {
      uint64_t want = total * (k + 1) / n;
      uint32_t last = height - (n - 1 - k);
      end = begin + 1;
      while (end < last && before[end] < want)
        ++end;
    }
    if (k == rank)
      band = {begin, end};
    begin = end;
  }
  return band;
}

bool Engine::isProgrammed(uint32_t x, uint32_t y) const {
  for (const binary::Group &g : prog.groups)
    if (x >= g.x && x - g.x < g.width && y >= g.y && y - g.y < g.height)
      return true;
  return false;
}

/// The band's edge PEs and ghosts by column.
void Engine::linkGhosts() {
  for (Pe *pe : pes) {
    Pe *n = pe->neighbour[kNorth], *s = pe->neighbour[kSouth];
    bool edge = false;
    if (n && n->index >= ghostBase) {
      northEdge[pe->x] = pe;
      northGhost[pe->x] = n;
      edge = true;
    }
    if (s && s->index >= ghostBase) {
      southEdge[pe->x] = pe;
      southGhost[pe->x] = s;
      edge = true;
    }
    if (edge)
      edgePes.push_back(pe);
  }
  toNorth.reserve(maxEdgeWords);
  toSouth.reserve(maxEdgeWords);
}

//===----------------------------------------------------------------------===//
// The cycle
//===----------------------------------------------------------------------===//

/// One cycle of a band; the same phases as cycleOnce, with the edge
/// exchange and the two reductions. False when the run has ended.
bool Engine::cycleBand() {
  bool reference = opts.mode == Mode::Reference;
  ThreadOut &main = stepOut;
  injectHost(main);
  bool anyProgress = !main.woken.empty();
  stepCurrent();
  std::string pending;
  localErrorKey = UINT64_MAX;
  uint32_t errPe = firstStepError(pending);
  if (errPe != UINT32_MAX)
    localErrorKey = makeErrorKey(0, globalOf(errPe), 0);
  anyProgress |= steppedProgress();
  // Host-port deliveries are checked now and applied after the reduction,
  // up to the first error anywhere.
  hostPending.clear();
  for (uint32_t idx : main.hostOut)
    for (unsigned side = 0; side < 2; ++side) {
      Pe &pe = *pes[idx];
      if (!pe.hostLatch[side])
        continue;
      uint64_t key = makeErrorKey(1, globalOf(idx), side);
      hostPending.emplace_back(key, &pe, side);
      if (localErrorKey != UINT64_MAX)
        continue;
      std::string e = hostArrival(pe, side, pe.hostLatch[side], false);
      if (!e.empty()) {
        localErrorKey = key;
        pending = e;
      }
    }
  main.hostOut.clear();
  swapEdges();
  if (localErrorKey == UINT64_MAX)
    localErrorKey = arrivalErrorKey(pending);
  errorKey = localErrorKey;
  exchange->allMin(&errorKey, 1);
  auto stop = [&] {
    st = Status::Error;
    msg = errorKey == localErrorKey ? pending : std::string();
    return false;
  };
  uint64_t phase = errorKey == UINT64_MAX ? 3 : errorKey >> 40;
  if (phase == 0)
    return stop();
  for (auto &[key, pe, side] : hostPending) {
    if (key >= errorKey)
      break;
    hostArrival(*pe, side, pe->hostLatch[side], true);
    pe->hostLatch[side] = 0;
    anyProgress = true;
  }
  if (phase == 1)
    return stop();
  commit();
  if (phase == 2)
    return stop();
  if (opts.trace)
    collectTrace();
  anyProgress |= sleeping > 0;
  if (!reference)
    scheduleNext();
  else
    bandWakes.clear();
  stepOut.progressed.clear();
  stepOut.woken.clear();
  return reduceEndOfCycle(anyProgress);
}

/// Sends the wavelets latched into ghosts and the dequeues of queues that
/// the neighbouring ranks feed; applies what they sent: wavelets into the
/// latches of this band's edge PEs, dequeues to the ghosts' counts (and as
/// credits that wake the edge PEs in the fast mode).
void Engine::swapEdges() {
  toNorth.clear();
  toSouth.clear();
  for (Pe *g : ghosts) {
    bool north = g->y < bandBegin;
    unsigned port = north ? kSouth : kNorth;
    uint64_t l = g->inLatch[port];
    if (!l)
      continue;
    g->inLatch[port] = 0;
    uint64_t w = l & ~kLatchFull;
    unsigned color = unsigned(w >> Wavelet::kColorShift) & 31;
    ++g->rqCount[cfg.rqIndex(port, color)];
    (north ? toNorth : toSouth)
        .push_back((uint64_t(g->x) << kColumnShift) | w);
  }
  for (Pe *pe : edgePes)
    for (unsigned i = 0; i < pe->numPopped; ++i) {
      unsigned port = popPort(pe->popped[i]), color = popColor(pe->popped[i]);
      uint64_t rec = kPopRecord | (uint64_t(pe->x) << kColumnShift) | color;
      if (port == kNorth && pe->y == bandBegin && northGhost.count(pe->x))
        toNorth.push_back(rec);
      else if (port == kSouth && pe->y + 1 == bandEnd &&
               southGhost.count(pe->x))
        toSouth.push_back(rec);
    }
  exchange->edgeBytesSent += 8 * (toNorth.size() + toSouth.size());
  exchange->swapEdges(toNorth, toSouth, fromNorth, fromSouth, maxEdgeWords);
  // From the north: into our first row's North ports; dequeues of the
  // South queues of the row above (our ghosts).
  auto apply = [&](const std::vector<uint64_t> &from, bool north) {
    auto &edge = north ? northEdge : southEdge;
    auto &ghost = north ? northGhost : southGhost;
    unsigned in = north ? kNorth : kSouth;
    for (uint64_t rec : from) {
      uint32_t x = uint32_t(rec >> kColumnShift) & 0xffff;
      Pe *pe = edge.at(x);
      if (rec & kPopRecord) {
        unsigned color = unsigned(rec & 31);
        --ghost.at(x)->rqCount[cfg.rqIndex(north ? kSouth : kNorth, color)];
        bandWakes.push_back(pe->index);
        continue;
      }
      pe->inLatch[in] = (rec & ((uint64_t(1) << kColumnShift) - 1)) |
                        kLatchFull;
      stepOut.woken.push_back(pe->index);
    }
  };
  apply(fromNorth, true);
  apply(fromSouth, false);
}

/// The first commit error of the cycle (wrong port, overflow) among the
/// PEs that commit, as an error key; UINT64_MAX when there is none.
uint64_t Engine::arrivalErrorKey(std::string &pending) {
  uint64_t key = UINT64_MAX;
  auto check = [&](uint32_t i) {
    if (i >= ghostBase)
      return;
    const Pe &pe = *pes[i];
    if (!(pe.inLatch[0] | pe.inLatch[1] | pe.inLatch[2] | pe.inLatch[3] |
          pe.inLatch[4]))
      return;
    uint64_t k = makeErrorKey(2, globalOf(i), 0);
    if (k >= key)
      return;
    std::string e = checkArrivals(pe, cfg, now);
    if (!e.empty()) {
      key = k;
      pending = e;
    }
  };
  for (uint32_t i : current)
    check(i);
  for (uint32_t i : stepOut.woken)
    check(i);
  return key;
}

/// The end-of-cycle reduction: whether any rank made progress, whether
/// every output is complete, and what the fast mode's idle-cycle skip
/// needs; then endCycle with the whole fabric's answers.
bool Engine::reduceEndOfCycle(bool anyProgress) {
  bool busy = !current.empty();
  for (size_t k = 0; !busy && k < hostPorts.size(); ++k) {
    const HostPort &hp = hostPorts[k];
    for (unsigned si : hp.streams) {
      const StreamState &s = streams[si];
      const RowState &row = s.rows[hp.pe->y - s.io->firstRow];
      busy |= row.next < row.payloads.size() &&
              hp.pe->rqCount[cfg.rqIndex(hp.dir, s.io->color)] < cfg.rqDepth;
    }
  }
  uint64_t v[5] = {
      anyProgress ? 0u : 1u,
      anyProgress || outputsComplete() ? 1u : 0u,
      busy ? 0u : 1u,
      busy || !timers ? UINT64_MAX : firstTimer(),
      sleeping ? 0u : 1u,
  };
  exchange->allMin(v, 5);
  bandBusy = v[2] == 0;
  bandFirstTimer = v[3];
  bandSleeping = v[4] == 0;
  return endCycle(v[0] == 0, v[1] == 1);
}

/// idleCyclesAhead over the whole fabric, from the last reduction.
uint64_t Engine::idleCyclesAheadBand(uint64_t limit) const {
  if (bandBusy || bandFirstTimer == UINT64_MAX || !bandSleeping)
    return 0;
  uint64_t at = bandFirstTimer;
  if (at < now + 2)
    return 0;
  return std::min(limit, at - 1 - now);
}

//===----------------------------------------------------------------------===//
// The end of the run: rank 0 gathers the fabric's results
//===----------------------------------------------------------------------===//

std::vector<uint8_t> Engine::packBand() const {
  Writer w;
  w.put(localErrorKey);
  w.putString(msg);
  Stats local;
  {
    // stats() of this band (gathered is false on every rank here).
    local = stats();
  }
  w.put(hostIn);
  w.put(hostOut);
  w.put(firstInjection);
  w.put(lastArrival);
  w.put(local.peakActivePEs);
  w.put(local.peSteps);
  w.put(local.stateBytes);
  w.put(local.allocatedPEs);
  for (unsigned c = 0; c < 32; ++c)
    w.put(local.hopsPerColor[c]);
  w.put(leftoverCount());
  w.putVector(sampleDone);
  for (const StreamState &s : streams)
    for (uint64_t y = s.io->firstRow; y < s.io->endRow; ++y) {
      if (!inBand(y))
        continue;
      const RowState &row = s.rows[y - s.io->firstRow];
      w.put(row.next);
      w.put(row.received);
      w.putVector(row.got);
    }
  std::vector<PeRecord> recs(pes.size());
  for (size_t i = 0; i < pes.size(); ++i) {
    recs[i].global = globalOf(uint32_t(i));
    recs[i].st = pes[i]->st;
  }
  w.putVector(recs);
  std::vector<std::pair<uint32_t, std::string>> stuck;
  if (st == Status::Deadlock)
    stuck = stuckLines();
  w.put(uint64_t(stuck.size()));
  for (auto &[index, line] : stuck) {
    w.put(index);
    w.putString(line);
  }
  std::vector<TraceEvent> ev = trace;
  for (TraceEvent &e : ev)
    e.pe = globalOf(e.pe);
  w.putVector(ev);
  w.put(uint8_t(traceTruncated));
  return std::move(w.bytes);
}

void Engine::gatherBand() {
  std::vector<std::vector<uint8_t>> parts = exchange->gather(packBand());
  if (exchange->rank() == 0)
    mergeGathered(parts);
}

/// Rank 0: the whole fabric's statistics, outputs, message and trace from
/// every rank's part, as the single-process engine has them.
void Engine::mergeGathered(const std::vector<std::vector<uint8_t>> &parts) {
  Stats s;
  s.cycles = now;
  uint64_t leftover = 0, first = UINT64_MAX, last = 0;
  std::string errorMsg = msg;
  allPes.clear();
  allStuck.clear();
  std::vector<TraceEvent> events;
  bool truncated = false;
  std::vector<uint64_t> done(opts.samples, 0);
  for (const std::vector<uint8_t> &part : parts) {
    Reader r(part);
    uint64_t key = r.get<uint64_t>();
    std::string m = r.getString();
    if (errorKey != UINT64_MAX && key == errorKey)
      errorMsg = m;
    s.hostWaveletsIn += r.get<uint64_t>();
    s.hostWaveletsOut += r.get<uint64_t>();
    first = std::min(first, r.get<uint64_t>());
    last = std::max(last, r.get<uint64_t>());
    s.peakActivePEs += r.get<uint64_t>();
    s.peSteps += r.get<uint64_t>();
    s.stateBytes += r.get<uint64_t>();
    s.allocatedPEs += r.get<uint64_t>();
    for (unsigned c = 0; c < 32; ++c)
      s.hopsPerColor[c] += r.get<uint64_t>();
    leftover += r.get<uint64_t>();
    std::vector<uint64_t> sd = r.getVector<uint64_t>();
    for (size_t i = 0; i < sd.size() && i < done.size(); ++i)
      done[i] = std::max(done[i], sd[i]);
    // The rows of that rank's band: the same partition on every rank.
    unsigned rank = unsigned(&part - parts.data());
    auto [rowsBegin, rowsEnd] = bandRows(rank);
    for (StreamState &st : streams)
      for (uint64_t y = st.io->firstRow; y < st.io->endRow; ++y) {
        if (y < rowsBegin || y >= rowsEnd)
          continue;
        RowState &row = st.rows[y - st.io->firstRow];
        row.next = r.get<uint64_t>();
        row.received = r.get<uint64_t>();
        row.got = r.getVector<uint32_t>();
      }
    std::vector<PeRecord> recs = r.getVector<PeRecord>();
    allPes.insert(allPes.end(), recs.begin(), recs.end());
    uint64_t stuck = r.get<uint64_t>();
    for (uint64_t k = 0; k < stuck; ++k) {
      uint32_t index = r.get<uint32_t>();
      allStuck.emplace_back(index, r.getString());
    }
    std::vector<TraceEvent> ev = r.getVector<TraceEvent>();
    events.insert(events.end(), ev.begin(), ev.end());
    truncated |= r.get<uint8_t>() != 0;
  }
  std::sort(allPes.begin(), allPes.end(),
            [](const PeRecord &a, const PeRecord &b) {
              return a.global < b.global;
            });
  std::sort(allStuck.begin(), allStuck.end());
  // (Rank 0's own counters stay its band's: a run sliced by a cycle budget
  // goes on from them after a gather.)
  s.firstInjection = first == UINT64_MAX ? 0 : first;
  s.lastArrival = last;
  s.sampleDone = done;
  for (const PeRecord &p : allPes) {
    s.pes.push_back(p.st);
    s.busyPeCycles += p.st.busyCycles;
    s.instructions += p.st.instructions;
    s.flops += p.st.flops;
    s.macs += p.st.macs;
    s.memoryHighWaterBytes = std::max<uint64_t>(
        s.memoryHighWaterBytes, 2 * uint64_t(p.st.memoryHighWater));
    addMemoryAccesses(s, p.st);
    for (unsigned d = 0; d < 5; ++d)
      s.hops += p.st.hops[d];
  }
  gatheredStats = std::move(s);
  gathered = true;
  // The trace: every rank's events, cut to the limit in canonical order.
  std::sort(events.begin(), events.end(),
            [](const TraceEvent &a, const TraceEvent &b) {
              return std::tie(a.ts, a.pe, a.kind, a.a, a.b, a.dur) <
                     std::tie(b.ts, b.pe, b.kind, b.a, b.b, b.dur);
            });
  if (events.size() > opts.traceLimit) {
    events.resize(opts.traceLimit);
    truncated = true;
  }
  gatheredTrace = std::move(events);
  gatheredTraceTruncated = truncated;
  switch (st) {
  case Status::Error:
    msg = errorMsg;
    break;
  case Status::Deadlock:
    msg = deadlockReport();
    break;
  case Status::Done:
    msg = leftover ? "warning: " + std::to_string(leftover) +
                         " wavelet(s) are still queued at the end of the run"
                   : std::string();
    break;
  default:
    break;
  }
}

} // namespace detail
} // namespace weft::sim
