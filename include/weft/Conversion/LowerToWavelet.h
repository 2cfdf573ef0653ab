//===- LowerToWavelet.h - fabric -> wavelet lowering ------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// `--weft-lower-fabric-to-wavelet` replaces a routed and colored
// fabric.program (`--weft-route-streams`, `--weft-allocate-colors`, declared
// in Passes.td) by the `wavelet.program` that runs it
// (docs/execution-model.md).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_LOWERTOWAVELET_H
#define WEFT_CONVERSION_LOWERTOWAVELET_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace weft::conversion {

std::unique_ptr<mlir::Pass> createLowerFabricToWaveletPass();
void registerLowerFabricToWaveletPass();

} // namespace weft::conversion

#endif // WEFT_CONVERSION_LOWERTOWAVELET_H
