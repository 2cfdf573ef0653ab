//===- WaveletAttrs.td - wavelet attributes ----------------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_WAVELET_ATTRS_TD
#define WEFT_WAVELET_ATTRS_TD

include "wavelet/WaveletDialect.td"
include "wavelet/WaveletEnums.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Wavelet_OpcodeAttr : EnumAttr<Wavelet_Dialect, Wavelet_Opcode, "opcode">;

def Wavelet_OperandAttr : AttrDef<Wavelet_Dialect, "Operand"> {
  let mnemonic = "operand";
  let summary = "One operand of a machine instruction: what it names and which";
  let description = [{
    `kind` is `dsr` (destination DDSR n and first source S0DSR n of a vector
    instruction), `ddsr`, `s0dsr`, `s1dsr`, `gpr`, `imm` (an entry of the
    small-immediate table: 0 zero, 1 one, 2 minus_one, 3 two, 4 half,
    5 prng), `lit` (a literal: the movi/movh immediate, a control
    instruction's color or task id) or `all` (every color; value 0).
    `wavelet.inst` prints its operands without the attribute syntax
    (`dsr 4`, `imm one`, `-5`, `all`).

    Example:
    ```mlir
    #wavelet.operand<dsr, 4>
    ```
  }];
  let parameters = (ins "OperandKind":$kind, "int64_t":$value);
  let assemblyFormat = "`<` $kind `,` $value `>`";
}

#endif // WEFT_WAVELET_ATTRS_TD
