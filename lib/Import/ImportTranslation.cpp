//===- ImportTranslation.cpp - weft-translate --import-onnx ---------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Import/ImportTranslation.h"
#include "Importer.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

static llvm::cl::opt<int64_t> batchSize(
    "batch-size",
    llvm::cl::desc("Size bound to a symbolic leading dimension of the ONNX "
                   "graph inputs (--import-onnx)"),
    llvm::cl::init(1));

void weft::import::registerOnnxImportTranslation() {
  static TranslateToMLIRRegistration registration(
      "import-onnx", "import an ONNX model (protobuf) into upstream MLIR",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *ctx) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        StringRef path = buffer->getBufferIdentifier();
        // External data resolves next to the model; stdin has no directory.
        SmallString<256> dir;
        if (path != "<stdin>" && !path.empty()) {
          dir = path;
          llvm::sys::path::remove_filename(dir);
          if (dir.empty())
            dir = ".";
        }
        ImportOptions options;
        options.batchSize = batchSize;
        OwningOpRef<ModuleOp> module = detail::importModelBytes(
            *ctx, buffer->getBuffer(), dir, path, options);
        return OwningOpRef<Operation *>(module.release());
      },
      [](DialectRegistry &registry) { registerImportDialects(registry); });
}
