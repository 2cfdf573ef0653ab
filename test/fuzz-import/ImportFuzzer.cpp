//===- ImportFuzzer.cpp - libFuzzer target for the ONNX importer ----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Built with clang++-22 -fsanitize=fuzzer,address from the lib/Import sources
// against the shared libMLIR.so (test/fuzz-import/CMakeLists.txt): the whole
// importer runs, from protobuf parsing through IR construction and
// verification. Every input must give a module or a diagnostic, never a
// crash, a sanitizer report or a huge allocation. External data is refused
// (no model directory), so the fuzzer never reads files.
//
//===----------------------------------------------------------------------===//

#include "weft/Import/ONNXImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context per input: blobs live as long as their context.
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(
      &ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  weft::import::ImportOptions options;
  mlir::OwningOpRef<mlir::ModuleOp> module = weft::import::importOnnxBuffer(
      ctx, llvm::StringRef(reinterpret_cast<const char *>(data), size),
      /*modelDir=*/"", options);
  (void)module;
  return 0;
}
