//===- Step.h - One PE's cycle (internal) -----------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SIM_STEP_H
#define WEFT_LIB_SIM_STEP_H

#include "Machine.h"

namespace weft::sim::detail {

/// The fabric-wide constants a PE step needs.
struct FabricConfig {
  const machine::Target *target = nullptr;
  unsigned colors = 0;   ///< routable colors
  unsigned rqDepth = 0;  ///< router input queue depth
  unsigned cqDepth = 0;  ///< CE queue depth
  unsigned memWords = 0;
  unsigned descWords = 0;
  bool trace = false;
  /// Fast mode: run a main-thread instruction whose operands are all memory,
  /// GPRs or immediates in one go and keep the datapath busy for the cycles
  /// it takes (docs/simulator.md, "Fast mode"). The batch must end before
  /// cycle `batchLimit`.
  bool batch = false;
  uint64_t batchLimit = 0;

  unsigned rqIndex(unsigned port, unsigned color) const {
    return port * colors + color;
  }
};

/// A dequeue as Pe::popped records it: the port in bits 5.. and the color
/// in bits 0..4, so the commit finds both without a division.
inline uint16_t popCode(unsigned port, unsigned color) {
  return uint16_t(port << 5 | color);
}
inline unsigned popPort(uint16_t code) { return code >> 5; }
inline unsigned popColor(uint16_t code) { return code & 31; }

/// (a + b) mod d for a < d and b <= d: a ring buffer's index without the
/// division (queue depths are not powers of two in general).
inline unsigned ringAdd(unsigned a, unsigned b, unsigned d) {
  unsigned s = a + b;
  return s >= d ? s - d : s;
}

/// Steps one PE through the decide phase of cycle `now`: router, picker,
/// main thread, microthreads. Writes latches (own and neighbours'), records
/// woken PEs, host sends, errors and trace events in `out`.
void stepPe(Pe &pe, const FabricConfig &cfg, uint64_t now, ThreadOut &out);

/// The router part of stepPe alone, for a sleeping PE (fast mode): its CE
/// only counts down a held datapath, which the engine accounts when the PE
/// wakes, so the cycle's busy count is not touched here.
void stepRouterOnly(Pe &pe, const FabricConfig &cfg, uint64_t now,
                    ThreadOut &out);

/// Fast mode: the retirement of a sleeping PE's batched main-thread
/// instruction in cycle `now`, the cycle its held datapath comes free, when
/// the PE was not stepped in it (its CE does nothing else in that cycle).
void retireBatch(Pe &pe, const FabricConfig &cfg, uint64_t now,
                 ThreadOut &out);

/// Applies the PE's counted dequeues and latched wavelets (commit phase).
/// `wake` receives neighbours whose credits grew. Returns false and sets
/// `error` on a program error (a wavelet on a port its route does not list).
bool commitPe(Pe &pe, const FabricConfig &cfg, uint64_t now,
              std::vector<uint32_t> &wake, std::string &error);

/// The error commitPe would report for the PE's latched arrivals, or empty
/// (a distributed run checks before it commits).
std::string checkArrivals(const Pe &pe, const FabricConfig &cfg,
                          uint64_t now);

/// A one-line description of what the PE is doing or waiting for, and its
/// non-empty queues (for the hang report). Empty when the PE is idle.
std::string describeStuck(const Pe &pe, const FabricConfig &cfg);

/// Formats a program error of a PE.
std::string peError(const Pe &pe, uint64_t now, const std::string &what);

} // namespace weft::sim::detail

#endif // WEFT_LIB_SIM_STEP_H
