//===- Routes.h - Static check of a binary's routes -------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Before a compiled program is emitted, every route must be complete: a
// wavelet that leaves a PE through a link must be accepted by the PE on the
// other side, one leaving through a host port must belong to an output
// stream, every host input stream must enter a PE whose route accepts it, and
// every color a PE starts tasks on must reach its CE. Positioned routes are
// checked on the unions of their positions (docs/architecture.md §4.4),
// which must be consistent with the positions. The simulator's hang
// report is only the backstop for what this cannot see (timing).
//
// Plain C++ (no MLIR).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_BINARY_ROUTES_H
#define WEFT_BINARY_ROUTES_H

#include "weft/Binary/Binary.h"

#include <string>
#include <vector>

namespace weft::binary {

/// Every problem found, one sentence each naming the PE, the color and the
/// port; empty when the routes are complete.
std::vector<std::string> checkRoutes(const Program &program);

} // namespace weft::binary

#endif // WEFT_BINARY_ROUTES_H
