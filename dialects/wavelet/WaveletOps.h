//===- WaveletOps.h - wavelet operations ------------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_DIALECTS_WAVELET_WAVELETOPS_H
#define WEFT_DIALECTS_WAVELET_WAVELETOPS_H

#include "common/WeftAttrs.h"
#include "wavelet/WaveletDialect.h"
#include "weft/Machine/DSD.h"
#include "weft/Machine/ISA.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"

#include "wavelet/WaveletEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "wavelet/WaveletAttrs.h.inc"

#define GET_OP_CLASSES
#include "wavelet/WaveletOps.h.inc"

namespace weft::wavelet {

/// The machine model's opcode for `op` (the two enums agree by value; see
/// WaveletOps.cpp).
inline weft::machine::Opcode toTarget(Opcode op) {
  return weft::machine::Opcode(unsigned(op));
}
/// The `#wavelet<opcode ...>` case of a machine model opcode.
inline Opcode toOpcode(weft::machine::Opcode op) { return Opcode(unsigned(op)); }

} // namespace weft::wavelet

#endif // WEFT_DIALECTS_WAVELET_WAVELETOPS_H
