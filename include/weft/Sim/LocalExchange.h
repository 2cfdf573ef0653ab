//===- LocalExchange.h - BandExchange between threads -----------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The in-process implementation of BandExchange: `n` endpoints, one per
// thread, meeting at a spinning barrier and exchanging through shared slots.
// The fast mode's threads run one band of rows each over it
// (docs/simulator.md, "Threads"); the unit tests of distributed runs use it
// for their ranks.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SIM_LOCALEXCHANGE_H
#define WEFT_SIM_LOCALEXCHANGE_H

#include "weft/Sim/Exchange.h"

#include <memory>
#include <vector>

namespace weft::sim {

/// `n` endpoints of one exchange: element k is rank k. Each must be used by
/// one thread at a time; the endpoints share their meeting point, which
/// lives as long as any of them.
std::vector<std::unique_ptr<BandExchange>> createLocalExchanges(unsigned n);

} // namespace weft::sim

#endif // WEFT_SIM_LOCALEXCHANGE_H
