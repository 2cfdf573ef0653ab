//===- Simulator.h - The cycle-level fabric simulator -----------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// libweftsim runs a weft binary on the machine of docs/architecture.md, cycle
// by cycle: routers, links, host ports, compute elements, microthreads.
// docs/simulator.md describes the implementation and its two modes.
//
//   std::string err;
//   auto sim = Simulator::create(program, options, &err);
//   sim->bindInput("x", bytes, &err);
//   Status s = sim->run();
//   std::vector<uint8_t> y = sim->output("y");
//
// No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SIM_SIMULATOR_H
#define WEFT_SIM_SIMULATOR_H

#include "weft/Binary/Binary.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace weft::sim {

class BandExchange;

enum class Mode {
  /// One thread, every PE every cycle: written to be obviously right.
  Reference,
  /// Only PEs that can make progress are stepped, on one thread or on
  /// `threads` bands of rows. Must give exactly the reference mode's
  /// outputs, cycles and statistics.
  Fast,
};

struct Options {
  Mode mode = Mode::Fast;
  /// Threads for the fast mode (1 = none): the fabric runs as that many
  /// bands of rows, one engine and thread each, at most one band per row
  /// that holds programmed PEs. A run on one such row, and a rank of a
  /// distributed run (`exchange`), runs on one thread.
  unsigned threads = 1;
  /// Stop with an error when the run reaches this many cycles.
  uint64_t maxCycles = 1'000'000'000;
  /// Record a Chrome trace (tasks per PE, wavelets per link) of at most
  /// `traceLimit` events.
  bool trace = false;
  uint64_t traceLimit = 2'000'000;
  /// Samples streamed through the program: every input is bound with
  /// `samples` tensors back to back and every output yields as many.
  uint64_t samples = 1;
  /// Distributed simulation (include/weft/Sim/Exchange.h): this process
  /// simulates its rank's band of rows and exchanges the wavelets and
  /// credits crossing the band's edges with the other ranks each cycle.
  /// Null or one rank: the whole fabric here. Not owned.
  BandExchange *exchange = nullptr;
};

enum class Status {
  /// The run can continue (run() was given a cycle budget).
  Running,
  /// Every output is complete and the fabric is quiet.
  Done,
  /// A quiet cycle with outputs incomplete; message() says who is stuck.
  Deadlock,
  /// Options::maxCycles reached.
  CycleLimit,
  /// A program error (docs/architecture.md §13); message() has the details.
  Error,
};
const char *statusName(Status s);

/// Statistics of a run (docs/simulator.md, "Statistics").
struct PeStats {
  uint32_t x = 0, y = 0;
  int32_t layer = -1;
  /// Cycles in which the router moved a wavelet or the CE made progress.
  uint64_t busyCycles = 0;
  /// Cycles in which the CE made progress (picks, instruction cycles).
  uint64_t ceBusyCycles = 0;
  /// Of those, the cycles in which a microthread's send (an instruction
  /// without a fabric input) had the datapath while the main thread waited
  /// for input (no task, or an empty fabric input queue); and the cycles in
  /// which the main thread made progress without the datapath (a record
  /// load, a startup, a jump, a pick) and no microthread used it. A kernel
  /// fed at its own pace would run those sends in those free cycles
  /// (docs/simulator.md, "Statistics").
  uint64_t sendWaitCycles = 0, freeCycles = 0;
  uint64_t instructions = 0, elements = 0, flops = 0, macs = 0;
  uint64_t picks = 0;
  /// Wavelets sent through each output port (N, E, S, W, ramp).
  uint64_t hops[5] = {0, 0, 0, 0, 0};
  /// Highest occupancy seen in any router input queue and CE queue.
  uint32_t routerQueueHigh = 0, ceQueueHigh = 0;
  /// Words of memory the binary initialises.
  uint32_t memoryWordsUsed = 0;
  /// The memory high-water mark in words: one past the highest word the
  /// binary initialises or an instruction reads or writes as data.
  uint32_t memoryHighWater = 0;
  /// Data memory accesses of the vector instructions' elements (sources,
  /// read destinations, FIFO slots), by element width: [0] 16-bit, [1]
  /// 32-bit accesses (docs/simulator.md, "Statistics").
  uint64_t memoryReads[2] = {0, 0}, memoryWrites[2] = {0, 0};
  /// Sliced-word reads (architecture §8.3, "Sliced vectors"), by lane width
  /// ([0] 16-bit, [1] 32-bit lanes) and by the slices enabled: [0] the mask
  /// only (no non-zero lane), [1] the mask and slice 1, [2] all three.
  uint64_t slicedReads[2][3] = {{0, 0, 0}, {0, 0, 0}};

  uint64_t slicedReadCount() const {
    uint64_t n = 0;
    for (const auto &w : slicedReads)
      n += w[0] + w[1] + w[2];
    return n;
  }
  /// A sliced-word read is one access (one address drives every slice).
  uint64_t memoryReadCount() const {
    return memoryReads[0] + memoryReads[1] + slicedReadCount();
  }
  uint64_t memoryWriteCount() const {
    return memoryWrites[0] + memoryWrites[1];
  }
  /// Bytes enabled: a sliced-word read counts its mask and the slices it
  /// enables.
  uint64_t memoryReadBytes() const;
  uint64_t memoryWriteBytes() const {
    return 2 * memoryWrites[0] + 4 * memoryWrites[1];
  }
  /// The accesses' energy by the machine model's access energies
  /// (include/weft/Machine/Energy.h), in femtojoules.
  uint64_t memoryEnergyFj() const;
};

struct Stats {
  uint64_t cycles = 0;
  uint64_t busyPeCycles = 0;
  uint64_t instructions = 0, flops = 0, macs = 0;
  uint64_t hops = 0;
  uint64_t hopsPerColor[32] = {};
  uint64_t hostWaveletsIn = 0, hostWaveletsOut = 0;
  /// First injected input wavelet and last output arrival (cycles).
  uint64_t firstInjection = 0, lastArrival = 0;
  /// Per sample: the cycle its last output wavelet arrived.
  std::vector<uint64_t> sampleDone;
  /// Peak number of PEs stepped in one cycle by the fast mode.
  uint64_t peakActivePEs = 0;
  /// The largest memory high-water mark of any PE, in bytes.
  uint64_t memoryHighWaterBytes = 0;
  /// Sums of the PEs' memory accesses, bytes and access energy.
  uint64_t memoryReads = 0, memoryWrites = 0;
  uint64_t memoryReadBytes = 0, memoryWriteBytes = 0;
  /// Of the reads, those of sliced words, and of those the ones that
  /// enabled no data slice (an all-zero word).
  uint64_t memorySlicedReads = 0, memorySlicedZeroReads = 0;
  uint64_t memoryEnergyFj = 0;
  /// PE steps (decide phases) the engine ran: every PE every cycle in the
  /// reference mode, far fewer in the fast mode. A measure of the engine's
  /// work, not of the machine's, so it is not in statsJson().
  uint64_t peSteps = 0;
  /// PEs with state (those a group covers) and the bytes that state takes:
  /// registers, queues and the PE's memory.
  uint64_t allocatedPEs = 0;
  uint64_t stateBytes = 0;
  std::vector<PeStats> pes;
};

class Simulator {
public:
  /// Checks the program (binary::verify plus the load-time checks of
  /// architecture §13) and builds the initial fabric state. Returns nullptr
  /// and sets `error` when the program cannot be loaded.
  static std::unique_ptr<Simulator> create(const binary::Program &program,
                                           const Options &options,
                                           std::string *error);
  /// The same, taking the program over instead of copying it (a network's
  /// weights are most of a binary).
  static std::unique_ptr<Simulator> create(binary::Program &&program,
                                           const Options &options,
                                           std::string *error);
  virtual ~Simulator();

  /// Binds an input stream to `samples` tensors of raw little-endian
  /// elements of the stream's dtype. Every input must be bound before run().
  virtual bool bindInput(const std::string &name,
                         const std::vector<uint8_t> &bytes,
                         std::string *error) = 0;

  /// Runs until the program ends, fails, or `cycles` more cycles pass.
  virtual Status run(uint64_t cycles = UINT64_MAX) = 0;
  virtual Status status() const = 0;
  /// The error, deadlock report or cycle-limit message; warnings (wavelets
  /// left in queues) after a successful run.
  virtual const std::string &message() const = 0;
  virtual uint64_t cycle() const = 0;

  /// The raw bytes an output stream received (all samples).
  virtual std::vector<uint8_t> output(const std::string &name) const = 0;
  virtual const binary::Program &program() const = 0;
  /// `count` words of PE (x, y)'s memory from word `address`, as they are
  /// now (after run(): what the program left there, e.g. trained weights).
  /// False with `error` set for a PE no group covers (or, in a distributed
  /// run, outside this rank's band) or a range outside its memory.
  virtual bool readMemory(uint32_t x, uint32_t y, uint32_t address,
                          uint32_t count, std::vector<uint16_t> &words,
                          std::string *error) const = 0;

  virtual Stats stats() const = 0;
  virtual std::string statsJson() const = 0;
  /// Chrome trace-event JSON (empty unless Options::trace).
  virtual std::string traceJson() const = 0;
};

} // namespace weft::sim

#endif // WEFT_SIM_SIMULATOR_H
