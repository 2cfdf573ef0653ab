//===- LowerToWavelet.h - fabric -> wavelet lowering ------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The fabric back end (docs/execution-model.md): `--weft-route-streams`
// makes layout changes explicit and routes every stream PE by PE,
// `--weft-allocate-colors` colors the routes, and
// `--weft-lower-fabric-to-wavelet` replaces the routed fabric.program by the
// `wavelet.program` that runs it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_LOWERTOWAVELET_H
#define WEFT_CONVERSION_LOWERTOWAVELET_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace weft::conversion {

std::unique_ptr<mlir::Pass> createLowerFabricToWaveletPass();

/// `--weft-route-streams`: explicit redistributions and per-PE routes
/// (lib/Conversion/RouteStreams.cpp).
std::unique_ptr<mlir::Pass> createRouteStreamsPass();
/// `--weft-allocate-colors`: a color for every route.
std::unique_ptr<mlir::Pass> createAllocateColorsPass();
void registerRoutingPasses();

/// Registers --weft-lower-fabric-to-wavelet and the routing passes.
void registerLowerFabricToWaveletPass();

} // namespace weft::conversion

#endif // WEFT_CONVERSION_LOWERTOWAVELET_H
