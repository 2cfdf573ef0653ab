//===- FabricOps.h - fabric operations --------------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_DIALECTS_FABRIC_FABRICOPS_H
#define WEFT_DIALECTS_FABRIC_FABRICOPS_H

#include "fabric/FabricAttrs.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "fabric/FabricOps.h.inc"

#endif // WEFT_DIALECTS_FABRIC_FABRICOPS_H
