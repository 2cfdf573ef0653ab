//===- Engine.h - The simulator's engine (internal) -------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The engine behind Simulator: the PEs, the host ports and the cycle loop
// (lib/Sim/Simulator.cpp), and the band of rows of a distributed run
// (lib/Sim/Band.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SIM_ENGINE_H
#define WEFT_LIB_SIM_ENGINE_H

#include "Load.h"
#include "Machine.h"
#include "Step.h"

#include "weft/Sim/Exchange.h"
#include "weft/Sim/Simulator.h"

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <sys/mman.h>

namespace weft::sim::detail {

using machine::Target;

/// How many PEs ahead of the one it steps a sweep prefetches.
constexpr size_t kPrefetchAhead = 8;
/// ... and how many ahead it prefetches what those PEs point to.
constexpr size_t kPrefetchData = 3;

/// One host port's input side: the streams it serves, round robin.
struct HostPort {
  Pe *pe = nullptr;
  unsigned dir = 0; ///< the PE's port: West or East
  std::vector<unsigned> streams;
  unsigned last = ~0u;
};

/// An I/O stream's per-row state.
struct RowState {
  std::vector<uint32_t> payloads; ///< inputs: wavelets to inject
  /// Inputs that skip zeros: which of `payloads` are control wavelets (a
  /// chunk's closeout); empty for every other stream.
  std::vector<bool> controls;
  uint64_t next = 0;              ///< inputs: next to inject
  uint64_t expected = 0;          ///< outputs: wavelets per sample
  uint64_t received = 0;
  std::vector<uint32_t> got;      ///< outputs: payloads in arrival order
  bool control = false;
};

struct StreamState {
  const binary::IoStream *io = nullptr;
  uint64_t chunk = 0; ///< elements per row (L)
  bool bound = false;
  std::vector<RowState> rows;
};

class Engine final : public Simulator {
public:
  /// The program is shared, read only, by the bands of a threaded run
  /// (lib/Sim/Bands.cpp).
  Engine(std::shared_ptr<const binary::Program> p, const Options &o,
         const Target &t)
      : progHolder(std::move(p)), prog(*progHolder), opts(o), target(t) {
    if (o.exchange && o.exchange->size() > 1)
      exchange = o.exchange;
  }
  ~Engine() override {
    if (memBase)
      munmap(memBase, memBytes);
    for (size_t i = 0; i < arenaCount; ++i)
      arena[i].~Pe();
    if (arena)
      munmap(arena, arenaBytes);
  }

  bool load(std::string *error);

  bool bindInput(const std::string &name, const std::vector<uint8_t> &bytes,
                 std::string *error) override;
  Status run(uint64_t cycles) override;
  Status runCycles(uint64_t cycles);
  Status status() const override { return st; }
  const std::string &message() const override { return msg; }
  uint64_t cycle() const override { return now; }
  std::vector<uint8_t> output(const std::string &name) const override;
  bool readMemory(uint32_t x, uint32_t y, uint32_t address, uint32_t count,
                  std::vector<uint16_t> &words,
                  std::string *error) const override;
  const binary::Program &program() const override { return prog; }
  /// Whether row `y` is this engine's (every row without an exchange).
  bool hasRow(uint32_t y) const { return inBand(y); }
  /// A band run stopped by a cycle budget gathers the fabric's results to
  /// rank 0 when asked (a collective: every rank must call it), not only
  /// at the end of the run (threads of one process; lib/Sim/Bands.cpp).
  void gatherNow() {
    if (distributed() && !gathered)
      gatherBand();
  }
  bool isGathered() const { return gathered; }
  Stats stats() const override;
  std::string statsJson() const override;
  std::string traceJson() const override;

private:
  /// PEs by position.
  struct PeGrid : std::unordered_map<uint64_t, Pe *> {
    Pe *at(uint64_t x, uint64_t y) const {
      auto it = find((y << 32) | x);
      return it == end() ? nullptr : it->second;
    }
  };
  // Loading (load() in the order it runs them).
  bool loadProgram(std::string &why);
  void configure();
  bool reserveMemories(size_t count, std::string &why);
  void allocateArena(size_t count);
  bool placePes(size_t count, const std::vector<QueueLayout> &layouts,
                PeGrid &grid, std::string &why);
  bool initPe(Pe &p, const binary::Group &g, uint32_t gx, uint32_t gy,
              const QueueLayout &layout, size_t queueAt, bool ghost,
              std::string &why);
  void loadPositions(Pe &p, const binary::CodeImage &img);
  void linkNeighbours(const PeGrid &grid);
  bool openStreams(const PeGrid &grid, std::string &why);
  void initSchedule();
  /// Sets `why` to `m` and returns false (a load error).
  static bool loadError(std::string &why, const std::string &m) {
    why = m;
    return false;
  }

  // The cycle loop (cycleOnce() and its phases, in order).
  bool cycleOnce();
  bool decide(bool &anyProgress);
  void stepCurrent();
  bool steppedProgress();
  uint32_t firstStepError(std::string &err) const;
  bool commit();
  void collectTrace();
  void scheduleNext();
  void dropSleepers(uint64_t nextMark);
  void fireTimers(uint64_t nextMark);
  bool endCycle(bool anyProgress, bool complete);
  std::string leftoverWarning() const;
  void injectHost(ThreadOut &out);
  bool collectHost(ThreadOut &out);
  /// Delivers a wavelet that PE `pe` sent to its west (side 0) or east
  /// host port. Returns the error, or empty; changes nothing on an error.
  std::string hostArrival(Pe &pe, unsigned side, uint64_t latch, bool apply);
  std::string deadlockReport() const;
  bool outputsComplete() const;
  std::string cycleLimitMessage() const {
    return "the run reached the cycle limit of " +
           std::to_string(opts.maxCycles) +
           " cycles before its outputs were complete";
  }
  void packInput(StreamState &s, const std::vector<uint8_t> &bytes);
  void fail(const std::string &m) {
    st = Status::Error;
    msg = m;
  }

  // A band of rows of a distributed run (lib/Sim/Band.cpp). Without an
  // exchange the band is the whole fabric and nothing below is used.
  bool distributed() const { return exchange != nullptr; }
  bool planBand(std::string &why);
  std::pair<uint32_t, uint32_t> bandRows(unsigned rank) const;
  bool inBand(uint64_t y) const { return y >= bandBegin && y < bandEnd; }
  bool isProgrammed(uint32_t x, uint32_t y) const;
  void linkGhosts();
  bool cycleBand();
  bool decideBand(bool &anyProgress);
  void swapEdges();
  uint64_t arrivalErrorKey(std::string &pending);
  bool reduceEndOfCycle(bool anyProgress);
  uint64_t idleCyclesAheadBand(uint64_t limit) const;
  void gatherBand();
  void mergeGathered(const std::vector<std::vector<uint8_t>> &parts);
  std::vector<uint8_t> packBand() const;
  uint64_t leftoverCount() const;
  uint32_t globalOf(uint32_t local) const {
    return globalIndex.empty() ? local : globalIndex[local];
  }

  BandExchange *exchange = nullptr;
  /// Rows [bandBegin, bandEnd) are this rank's.
  uint32_t bandBegin = 0, bandEnd = UINT32_MAX;
  /// Local PEs are pes[0, ghostBase); ghosts (the programmed PEs of the
  /// rows just outside the band, never stepped) have indices from
  /// ghostBase on and live in `ghosts`.
  uint32_t ghostBase = UINT32_MAX;
  std::vector<Pe *> ghosts;
  /// Each local PE's index in the single-process numbering (group order).
  std::vector<uint32_t> globalIndex;
  /// Edge PEs by column: the local PEs of the band's first (last) row with
  /// a ghost to the north (south), and the ghosts by column.
  std::unordered_map<uint32_t, Pe *> northEdge, southEdge, northGhost,
      southGhost;
  std::vector<Pe *> edgePes;
  std::vector<uint64_t> toNorth, toSouth, fromNorth, fromSouth;
  size_t maxEdgeWords = 0;
  /// Local PEs upstream of a queue the other rank dequeued (credits).
  std::vector<uint32_t> bandWakes;
  /// The cycle's first error, as a key ordered like the single-process
  /// engine finds errors: (phase << 40) | (global PE << 1) | side, with
  /// phase 0 a step, 1 a host port, 2 a commit. UINT64_MAX: none.
  uint64_t localErrorKey = UINT64_MAX, errorKey = UINT64_MAX;
  std::string commitErrorMsg;
  /// Host-port deliveries of the cycle, held until the error check.
  std::vector<std::tuple<uint64_t, Pe *, unsigned>> hostPending;
  /// The whole fabric's state at the end of the run, or of a slice after
  /// gatherNow() (rank 0; stale once the run goes on).
  bool gathered = false;
  std::vector<TraceEvent> gatheredTrace;
  bool gatheredTraceTruncated = false;
  /// Fast mode, for the idle-cycle skip: whether some rank has a PE to step
  /// or a port that can inject, the first timer, whether some PE sleeps.
  bool bandBusy = true, bandSleeping = false;
  uint64_t bandFirstTimer = UINT64_MAX;
  struct PeRecord {
    uint32_t global;
    PeStats st;
  };
  std::vector<PeRecord> allPes;
  Stats gatheredStats;
  std::vector<std::pair<uint32_t, std::string>> stuckLines() const;
  std::vector<std::pair<uint32_t, std::string>> allStuck;

  std::shared_ptr<const binary::Program> progHolder;
  const binary::Program &prog;
  Options opts;
  Target target;
  FabricConfig cfg;
  std::vector<DecodeCache> caches;
  /// PEs live contiguously in `arena`, in group order, on huge pages where
  /// the OS gives them (a sweep touches PEs all over the arena).
  Pe *arena = nullptr;
  size_t arenaBytes = 0, arenaCount = 0;
  std::vector<Pe *> pes;
  /// Router and CE queue entries of all PEs, PE after PE.
  std::vector<uint64_t> queueStore;
  /// The PEs' memories (see load()).
  uint16_t *memBase = nullptr;
  size_t memStride = 0, memBytes = 0;
  std::vector<HostPort> hostPorts;
  std::vector<StreamState> streams;
  std::map<std::tuple<unsigned, unsigned, unsigned>, unsigned> outputByPort;
  /// What the PEs' steps of the cycle wrote besides their own state
  /// (woken PEs, host sends, errors, trace events).
  ThreadOut stepOut;

  // Fast-mode scheduling (docs/simulator.md, "Fast mode").
  /// The PEs to step this cycle.
  std::vector<uint32_t> current;
  /// cycle + 1 at which a PE was last put in the commit / next set.
  std::vector<uint64_t> commitStamp, nextStamp;
  /// cycle + 1 at which a wavelet or a credit last reached a PE.
  std::vector<uint64_t> eventStamp;
  std::vector<uint32_t> commitSet, nextSet;
  /// The cycle's first commit error (by PE index), and that PE.
  std::string commitError;
  uint32_t commitErrorPe = UINT32_MAX;
  /// PEs a commit credited.
  std::vector<uint32_t> credited;
  /// Sleeping PEs' wake-up cycles in a timing wheel: bucket `at % kWheel`
  /// holds (at, token << 32 | PE index). Entries of PEs woken earlier stay
  /// until their bucket comes round (the token tells them apart).
  static constexpr uint64_t kWheel = 4096;
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> wheel;
  uint64_t timers = 0;   ///< entries in the wheel
  uint64_t sleeping = 0; ///< PEs asleep
  uint64_t firstTimer() const;
  void catchUp(Pe &pe, uint64_t upTo);
  void wake(Pe &pe, uint64_t at);
  bool maySleep(const Pe &pe) const;
  uint64_t idleCyclesAhead(uint64_t limit) const;
  uint64_t residentMemoryBytes() const;

  uint64_t now = 0;
  Status st = Status::Running;
  std::string msg;
  bool started = false;
  uint64_t lastProgress = 0;
  uint64_t firstInjection = UINT64_MAX, lastArrival = 0;
  uint64_t hostIn = 0, hostOut = 0;
  uint64_t peakActive = 0;
  uint64_t peSteps = 0;
  std::vector<uint64_t> sampleDone;
  std::vector<TraceEvent> trace;
  bool traceTruncated = false;
};

/// A simulator of `bands` > 1 engines, one band of rows each, each run on
/// its own thread (lib/Sim/Bands.cpp). Null with `error` set when the
/// program cannot be loaded; throws std::bad_alloc when memory runs out.
std::unique_ptr<Simulator>
createBandThreads(std::shared_ptr<const binary::Program> program,
                  const Options &options, const Target &target,
                  unsigned bands, std::string *error);

/// Adds a PE's memory accesses, bytes and access energy to the totals.
void addMemoryAccesses(Stats &s, const PeStats &p);

} // namespace weft::sim::detail

#endif // WEFT_LIB_SIM_ENGINE_H
