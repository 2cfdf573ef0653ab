//===- Exchange.h - Distributed simulation across processes -----*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The simulator can run one fabric over several processes ("ranks"): each
// rank owns a band of rows and steps only its PEs (docs/simulator.md,
// "Distributed simulation"). The engine speaks to the other ranks through
// this interface alone, so libweftsim stays plain C++: weft-sim implements
// it over MPI (lib/Sim/MPI, built when CMake finds MPI), the unit tests over
// threads of one process.
//
//   std::unique_ptr<BandExchange> ex = ...;   // rank r of n
//   Options opts;
//   opts.exchange = ex.get();
//   auto sim = Simulator::create(program, opts, &err);   // same on all ranks
//   sim->bindInput(...);                                 // all inputs, all ranks
//   sim->run();              // every rank, in lockstep; returns the same status
//   if (ex->rank() == 0) { sim->statsJson(); sim->output("y"); ... }
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SIM_EXCHANGE_H
#define WEFT_SIM_EXCHANGE_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace weft::sim {

/// The collective operations a band of rows needs from the other ranks.
/// Every rank calls the same operations in the same order.
class BandExchange {
public:
  virtual ~BandExchange();

  virtual unsigned rank() const = 0;
  virtual unsigned size() const = 0;

  /// Sends `toNorth` to rank - 1 and `toSouth` to rank + 1 (rank 0 has no
  /// northern neighbour, the last rank no southern one: their vectors are
  /// empty and ignored) and receives what they sent this rank. A message
  /// never holds more than `maxWords` words.
  virtual void swapEdges(const std::vector<uint64_t> &toNorth,
                         const std::vector<uint64_t> &toSouth,
                         std::vector<uint64_t> &fromNorth,
                         std::vector<uint64_t> &fromSouth,
                         size_t maxWords) = 0;

  /// Replaces each of the `n` values by its minimum over all ranks.
  virtual void allMin(uint64_t *values, size_t n) = 0;

  /// Rank 0 receives every rank's bytes, in rank order (its own first);
  /// the other ranks receive nothing.
  virtual std::vector<std::vector<uint8_t>>
  gather(const std::vector<uint8_t> &mine) = 0;

  /// Bytes this rank has sent through swapEdges (for the statistics of the
  /// communication volume).
  uint64_t edgeBytesSent = 0;
  uint64_t edgeMessages = 0;
};

} // namespace weft::sim

#endif // WEFT_SIM_EXCHANGE_H
