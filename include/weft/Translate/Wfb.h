//===- Wfb.h - wavelet dialect <-> .wfb binary ------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The emitter lowers a verified wavelet.program to the in-memory binary
// (weft/Binary/Binary.h): it lays out the code around the task table,
// resolves labels and record symbols to addresses, encodes instructions and
// descriptor records, packs segments into 16-bit words and extracts linear
// parameters. The importer is its inverse: it disassembles a binary back to
// an equivalent wavelet.program, using the binary's symbols for names.
//
// The emitter's output is canonical (routes by color, params by GPR,
// segments by address, tasks by kind and id), so program -> binary ->
// program -> binary gives the same bytes twice, and for binaries the emitter
// wrote, binary -> program -> binary is the identity.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TRANSLATE_WFB_H
#define WEFT_TRANSLATE_WFB_H

#include "wavelet/WaveletOps.h"
#include "weft/Binary/Binary.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

namespace weft::translate {

/// Lowers `program` (which must verify) to a binary. Emits a diagnostic on
/// the offending op and fails for what the binary cannot hold: a param that
/// is not linear in (x, y), a segment value that is not dense or
/// dense_resource, a control task marked blocked, a record out of reach.
mlir::FailureOr<binary::Program> lowerToBinary(wavelet::ProgramOp program);

/// Rebuilds an equivalent wavelet.program inside a new module. Emits a
/// diagnostic at `loc` and fails when the binary holds something the
/// dialect cannot express (code or records without symbols, jumps to
/// unlabelled slots, active bits without tasks).
mlir::OwningOpRef<mlir::ModuleOp> raiseFromBinary(const binary::Program &p,
                                                  mlir::MLIRContext *ctx,
                                                  mlir::Location loc);

/// Registers --wavelet-to-wfb and --wfb-to-wavelet with mlir-translate.
void registerWfbTranslations();

} // namespace weft::translate

#endif // WEFT_TRANSLATE_WFB_H
