//===- FabricDialect.td - The fabric dialect ---------------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_FABRIC_DIALECT_TD
#define WEFT_FABRIC_DIALECT_TD

include "mlir/IR/OpBase.td"

def Fabric_Dialect : Dialect {
  let name = "fabric";
  let summary = "The placed dataflow graph of a network on the fabric";
  let description = [{
    `fabric` describes a network as it sits on the wafer: layers as kernels on
    rectangles of PEs, logical streams between them and to the host ports,
    explicit redistribution between layouts, routes (logical, then per-PE
    switch settings), color assignments and training checkpoint markers.
    The target, rectangles and port enums come from the `weft` dialect
    (`#weft.target`, `#weft.rect`), which `wavelet` uses too.
  }];
  let cppNamespace = "::weft::fabric";
  let dependentDialects = ["::weft::common::WeftDialect"];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
}

class Fabric_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fabric_Dialect, mnemonic, traits>;

#endif // WEFT_FABRIC_DIALECT_TD
