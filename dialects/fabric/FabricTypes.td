//===- FabricTypes.td - fabric types -----------------------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_FABRIC_TYPES_TD
#define WEFT_FABRIC_TYPES_TD

include "fabric/FabricDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Fabric_WaveletsType : TypeDef<Fabric_Dialect, "Wavelets"> {
  let mnemonic = "wavelets";
  let summary = "The payload of a stream: N elements of one float type";
  let description = [{
    Example:
    ```mlir
    !fabric.wavelets<f32, 4096>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType, "int64_t":$count);
  let assemblyFormat = "`<` $elementType `,` $count `>`";
  let genVerifyDecl = 1;
}

#endif // WEFT_FABRIC_TYPES_TD
