//===- WaveletDialect.td - The wavelet dialect -------------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_WAVELET_DIALECT_TD
#define WEFT_WAVELET_DIALECT_TD

include "mlir/IR/OpBase.td"

def Wavelet_Dialect : Dialect {
  let name = "wavelet";
  let summary = "Per-PE programs: router settings, tasks, DSDs, instructions";
  let description = [{
    `wavelet` is the machine level: what gets loaded into each PE. A
    `wavelet.pe_group` holds one program shared by a rectangle of PEs, with
    per-PE register initialisers (affine in the PE's position in the group)
    and per-PE memory segments, so a large fabric does not mean one copy of
    the code per PE. Instructions are the ISA of docs/architecture.md with
    registers already allocated; `wavelet.inst` covers every opcode through
    the machine model's opcode table. The target, rectangles and port enums
    come from the `weft` dialect; `wavelet` does not depend on `fabric`.
  }];
  let cppNamespace = "::weft::wavelet";
  let dependentDialects = ["::weft::common::WeftDialect"];
  let useDefaultAttributePrinterParser = 1;
}

class Wavelet_Op<string mnemonic, list<Trait> traits = []>
    : Op<Wavelet_Dialect, mnemonic, traits>;

#endif // WEFT_WAVELET_DIALECT_TD
