//===- WeftDialect.td - The weft base dialect --------------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_COMMON_DIALECT_TD
#define WEFT_COMMON_DIALECT_TD

include "mlir/IR/OpBase.td"

def Weft_Dialect : Dialect {
  let name = "weft";
  let summary = "The vocabulary the fabric and wavelet dialects share";
  let description = [{
    `weft` has no operations: it holds the attributes both levels of the
    compiler speak, so neither dialect depends on the other. The target a
    program is compiled for (`#weft.target`), rectangles of PEs
    (`#weft.rect`), router ports, fabric edges and host port directions
    (`#weft<dir ...>`, `#weft<edge ...>`, `#weft<port ...>`), and the
    `DirSet` custom directive that prints a set of router ports as
    `[west, ramp]`. Its discardable attributes (`weft.batch`) annotate the
    programs the compiler builds.
  }];
  let cppNamespace = "::weft::common";
  let useDefaultAttributePrinterParser = 1;
}

#endif // WEFT_COMMON_DIALECT_TD
