//===- WaveletEnums.td - wavelet enums ---------------------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_WAVELET_ENUMS_TD
#define WEFT_WAVELET_ENUMS_TD

include "mlir/IR/EnumAttr.td"

def Wavelet_TaskKind : I32EnumAttr<"TaskKind", "what starts a task", [
    I32EnumAttrCase<"data", 0>, I32EnumAttrCase<"local", 1>,
    I32EnumAttrCase<"control", 2>]> {
  let cppNamespace = "::weft::wavelet";
}

def Wavelet_DsdKind : I32EnumAttr<"DsdKind", "data structure descriptor kind", [
    I32EnumAttrCase<"fabin", 0>, I32EnumAttrCase<"fabout", 1>,
    I32EnumAttrCase<"mem1d", 2>, I32EnumAttrCase<"mem4d", 3>,
    I32EnumAttrCase<"fifo", 4>]> {
  let cppNamespace = "::weft::wavelet";
}

def Wavelet_RegFile : I32EnumAttr<"RegFile", "a DSR file", [
    I32EnumAttrCase<"s0dsr", 0>, I32EnumAttrCase<"s1dsr", 1>,
    I32EnumAttrCase<"ddsr", 2>, I32EnumAttrCase<"xdsr", 3>,
    I32EnumAttrCase<"stride", 4>]> {
  let cppNamespace = "::weft::wavelet";
}

def Wavelet_JumpCond : I32EnumAttr<"JumpCond", "when a jump is taken", [
    I32EnumAttrCase<"always", 0>, I32EnumAttrCase<"if_true", 1>,
    I32EnumAttrCase<"if_false", 2>]> {
  let cppNamespace = "::weft::wavelet";
}

#endif // WEFT_WAVELET_ENUMS_TD
