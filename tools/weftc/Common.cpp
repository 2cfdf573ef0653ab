//===- Common.cpp - Helpers shared by weftc's commands --------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "weft/Import/ONNXImporter.h"
#include "weft/InitDialects.h"
#include "weft/Reference/Reference.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// The message, prefixed with file:line:col for a .mlir input. The
/// importer's messages name the node and op themselves.
static std::string formatDiagnostic(Diagnostic &diag) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto loc = dyn_cast<FileLineColLoc>(diag.getLocation());
  if (loc && loc.getLine() > 0)
    os << loc.getFilename().getValue() << ":" << loc.getLine() << ":"
       << loc.getColumn() << ": ";
  os << diag;
  return text;
}

std::unique_ptr<MLIRContext> weftc::createContext() {
  DialectRegistry registry;
  weft::import::registerImportDialects(registry);
  weft::reference::registerReferenceDialects(registry);
  weft::registerAllDialects(registry);
  return std::make_unique<MLIRContext>(registry,
                                       MLIRContext::Threading::DISABLED);
}

OwningOpRef<ModuleOp> weftc::loadModel(MLIRContext &ctx, llvm::StringRef path,
                                         int64_t batchSize,
                                         std::string &error) {
  error.clear();
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return success();
    if (!error.empty())
      error += "\n";
    error += formatDiagnostic(diag);
    return success();
  });
  OwningOpRef<ModuleOp> module;
  if (path.ends_with(".mlir")) {
    module = parseSourceFile<ModuleOp>(path, &ctx);
  } else {
    weft::import::ImportOptions options;
    options.batchSize = batchSize;
    module = weft::import::importOnnxFile(ctx, path, options);
  }
  if (!module && error.empty())
    error = "the importer failed without a diagnostic";
  return module;
}
