//===- MpiExchange.h - BandExchange over MPI --------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The MPI implementation of BandExchange (library WeftSimMPI, built when
// CMake finds MPI). The header does not include <mpi.h>.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SIM_MPIEXCHANGE_H
#define WEFT_SIM_MPIEXCHANGE_H

#include "weft/Sim/Exchange.h"

#include <memory>
#include <string>

namespace weft::sim {

/// Whether this process was started by mpirun (or another MPI launcher)
/// with more than one rank, from the launcher's environment variables;
/// MPI is not initialised to find out.
bool launchedWithSeveralRanks();

/// Initialises MPI and returns the exchange over MPI_COMM_WORLD; MPI is
/// finalised when it is destroyed. Null with `error` set when MPI cannot
/// be initialised.
std::unique_ptr<BandExchange> createMpiExchange(int *argc, char ***argv,
                                                std::string *error);

} // namespace weft::sim

#endif // WEFT_SIM_MPIEXCHANGE_H
