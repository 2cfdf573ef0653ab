//===- ONNXImporter.h - ONNX models to upstream MLIR ------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Reads an ONNX model (protobuf) and produces one `func.func @main_graph` on
// statically shaped tensors in upstream dialects: func, tensor, arith, math
// and linalg. Initializers become dense_resource blobs that share the bytes
// the parser produced. Shape-computing subgraphs (Shape/Gather/Concat/...)
// are evaluated at import. See docs/import.md for the op coverage table.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_IMPORT_ONNXIMPORTER_H
#define WEFT_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace weft::import {

/// Knobs of the import.
struct ImportOptions {
  /// The size bound to a symbolic (or unknown) leading dimension of a graph
  /// input. Any other symbolic dimension is an error.
  int64_t batchSize = 1;
};

/// Parses and imports the model in `path`; external data is resolved relative
/// to the file's directory. On failure emits diagnostics (node name, op,
/// reason) on `ctx` and returns nullptr.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxFile(mlir::MLIRContext &ctx, llvm::StringRef path,
               const ImportOptions &options);

/// Like importOnnxFile for a model already in memory. External-data paths are
/// resolved relative to `modelDir`; an empty `modelDir` refuses external data.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxBuffer(mlir::MLIRContext &ctx, llvm::StringRef bytes,
                 llvm::StringRef modelDir, const ImportOptions &options);

/// Registers every dialect the imported IR uses.
void registerImportDialects(mlir::DialectRegistry &registry);

} // namespace weft::import

#endif // WEFT_IMPORT_ONNXIMPORTER_H
