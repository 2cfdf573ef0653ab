//===- PlacedRoutes.h - The routes and colors of a fabric.program -*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// What the lowerings to wavelet programs read of --weft-route-streams and
// --weft-allocate-colors: every PE's router settings and the color of
// every stream and kernel channel, and the check that the emitted programs
// route exactly that. Both the inference lowering (LowerToWavelet.cpp) and
// the training lowering (LowerTraining.cpp) read their routes here.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_CONVERSION_FABRICTOWAVELET_PLACEDROUTES_H
#define WEFT_LIB_CONVERSION_FABRICTOWAVELET_PLACEDROUTES_H

#include "weft/Conversion/DenseLayer.h"
#include "weft/FabricTransforms/Graph.h"
#include "weft/Kernels/Routing.h"

#include "fabric/FabricOps.h"

#include "llvm/ADT/DenseMap.h"

#include <array>
#include <map>
#include <string>
#include <tuple>

namespace weft::conversion {

struct PlacedRoutes {
  /// The router settings by PE.
  RouteTable table;
  /// The color of every route by (stream or kernel symbol, channel); a
  /// stream's channel is "".
  std::map<std::pair<std::string, std::string>, int64_t> colorOf;
  /// Which route set (PE, color), for the error messages.
  llvm::DenseMap<std::tuple<int64_t, int64_t, int64_t>, std::string> owner;

  /// Reads the fabric.route ops of `program`; fails (with an error on the
  /// op) when a route has no color or a stream no route.
  static mlir::FailureOr<PlacedRoutes> read(fabric::ProgramOp program);

  /// The color of stream `s` (every stream has one once read).
  int64_t stream(fabric::StreamOp s) const {
    return colorOf.at({s.getSymName().str(), ""});
  }
  /// The color of `node`'s `channel`, -1 when it has none (a plan that
  /// needs no switch, such as a one-row kernel's reductions).
  int64_t channel(llvm::StringRef node, llvm::StringRef channel) const {
    auto it = colorOf.find({node.str(), channel.str()});
    return it == colorOf.end() ? -1 : it->second;
  }

  /// The colors of dense (or convolution) stage `s`: its input and output
  /// streams, its turn's column stream, its partial sums' two parities (-1
  /// for a parity no hop uses, on one or two columns).
  DenseColors dense(const Graph &g, const Stage &s) const;
  /// The colors of a column all-reduce's three channels (-1 for one no PE
  /// uses, e.g. the even reduction over two rows).
  std::array<int64_t, 3> columnReduce(llvm::StringRef kernel) const;

  /// Every PE's emitted router settings in `wprog` must be exactly these
  /// (the emitters share PEs' code by groups and state their own routes):
  /// an internal error on `program` otherwise.
  mlir::LogicalResult check(mlir::Operation *wprog,
                            fabric::ProgramOp program) const;
};

} // namespace weft::conversion

#endif // WEFT_LIB_CONVERSION_FABRICTOWAVELET_PLACEDROUTES_H
