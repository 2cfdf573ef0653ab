//===- ImportTranslation.h - weft-translate --import-onnx -------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_IMPORT_IMPORTTRANSLATION_H
#define WEFT_IMPORT_IMPORTTRANSLATION_H

namespace weft::import {

/// Registers the `--import-onnx` translation (ONNX protobuf to MLIR) and its
/// `--batch-size` option with mlir-translate's registry.
void registerOnnxImportTranslation();

} // namespace weft::import

#endif // WEFT_IMPORT_IMPORTTRANSLATION_H
