//===- weft-opt.cpp - opt-style driver for weft -----------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Parses, verifies, transforms and prints fabric, wavelet and the upstream
// dialects imported networks use. Upstream passes such as --canonicalize and
// --cse are available; weft's own passes register here as they land.
//
//===----------------------------------------------------------------------===//

#include "weft/Import/ONNXImporter.h"
#include "weft/InitDialects.h"
#include "weft/Pipeline/Pipeline.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::DialectRegistry registry;
  weft::registerAllDialects(registry);
  weft::import::registerImportDialects(registry);
  weft::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "weft optimizer driver\n", registry));
}
