//===- weft-lsp-server.cpp - language server for weft's IR -----------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A Language Server Protocol server for .mlir files in weft's dialects (fabric,
// wavelet, the shared weft attributes) and the upstream ones weft-opt parses
// (func, arith, math, tensor, linalg). MLIR's LSP server library does the
// protocol: a document is parsed and verified on every change, so the
// diagnostics an editor shows are weft's own verifiers' (overlapping
// rectangles, routes on missing links, unknown stream ends, ...); hover shows
// an operation, value or symbol; go-to-definition and find-references follow
// SSA values, blocks and symbol references (`@kernel`, `@stream`) to their
// definitions. docs/editor.md says how to use it from VS Code and Neovim.
//
//===----------------------------------------------------------------------===//

#include "weft/InitDialects.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"

#include <cstdlib>

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  weft::registerAllDialects(registry);
  // The imported networks' elementwise activations (weft-opt gets math from
  // the ONNX importer's registration, lib/Import).
  registry.insert<mlir::math::MathDialect>();
  return mlir::succeeded(mlir::MlirLspServerMain(argc, argv, registry))
             ? EXIT_SUCCESS
             : EXIT_FAILURE;
}
