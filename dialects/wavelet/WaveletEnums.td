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

def Wavelet_Opcode : I32EnumAttr<"Opcode", "a machine opcode", [
    I32EnumAttrCase<"LDS0", 0, "lds0">, I32EnumAttrCase<"LDS1", 1, "lds1">,
    I32EnumAttrCase<"LDD", 2, "ldd">, I32EnumAttrCase<"LDX", 3, "ldx">,
    I32EnumAttrCase<"STS0", 4, "sts0">, I32EnumAttrCase<"STS1", 5, "sts1">,
    I32EnumAttrCase<"STD", 6, "std">, I32EnumAttrCase<"STX", 7, "stx">,
    I32EnumAttrCase<"LDSR", 8, "ldsr">, I32EnumAttrCase<"STSR", 9, "stsr">,
    I32EnumAttrCase<"MOVI", 10, "movi">, I32EnumAttrCase<"MOVH", 11, "movh">,
    I32EnumAttrCase<"JMP", 12, "jmp">, I32EnumAttrCase<"BRT", 13, "brt">,
    I32EnumAttrCase<"BRF", 14, "brf">, I32EnumAttrCase<"FADD", 15, "fadd">,
    I32EnumAttrCase<"FSUB", 16, "fsub">, I32EnumAttrCase<"FMUL", 17, "fmul">,
    I32EnumAttrCase<"FMAC", 18, "fmac">, I32EnumAttrCase<"FMAX", 19, "fmax">,
    I32EnumAttrCase<"FMIN", 20, "fmin">, I32EnumAttrCase<"FCLT", 21, "fclt">,
    I32EnumAttrCase<"FCEQ", 22, "fceq">, I32EnumAttrCase<"SEL32", 23, "sel32">,
    I32EnumAttrCase<"FADDH", 24, "faddh">,
    I32EnumAttrCase<"FSUBH", 25, "fsubh">,
    I32EnumAttrCase<"FMULH", 26, "fmulh">,
    I32EnumAttrCase<"FMACH", 27, "fmach">,
    I32EnumAttrCase<"FMACHS", 28, "fmachs">,
    I32EnumAttrCase<"FMAXH", 29, "fmaxh">,
    I32EnumAttrCase<"FMINH", 30, "fminh">,
    I32EnumAttrCase<"FCLTH", 31, "fclth">,
    I32EnumAttrCase<"SEL16", 32, "sel16">,
    I32EnumAttrCase<"ADD16", 33, "add16">,
    I32EnumAttrCase<"SUB16", 34, "sub16">,
    I32EnumAttrCase<"MUL16", 35, "mul16">,
    I32EnumAttrCase<"AND16", 36, "and16">, I32EnumAttrCase<"OR16", 37, "or16">,
    I32EnumAttrCase<"XOR16", 38, "xor16">,
    I32EnumAttrCase<"SHL16", 39, "shl16">,
    I32EnumAttrCase<"SHR16", 40, "shr16">,
    I32EnumAttrCase<"SAR16", 41, "sar16">,
    I32EnumAttrCase<"MOV32", 42, "mov32">,
    I32EnumAttrCase<"MOV16", 43, "mov16">, I32EnumAttrCase<"FNEG", 44, "fneg">,
    I32EnumAttrCase<"FABS", 45, "fabs">, I32EnumAttrCase<"FNEGH", 46, "fnegh">,
    I32EnumAttrCase<"FABSH", 47, "fabsh">, I32EnumAttrCase<"FH2F", 48, "fh2f">,
    I32EnumAttrCase<"FF2H", 49, "ff2h">, I32EnumAttrCase<"FF2I", 50, "ff2i">,
    I32EnumAttrCase<"FI2F", 51, "fi2f">, I32EnumAttrCase<"FEXP", 52, "fexp">,
    I32EnumAttrCase<"FLOG", 53, "flog">, I32EnumAttrCase<"FRCP", 54, "frcp">,
    I32EnumAttrCase<"FSQRT", 55, "fsqrt">, I32EnumAttrCase<"FSUM", 56, "fsum">,
    I32EnumAttrCase<"FMAXR", 57, "fmaxr">,
    I32EnumAttrCase<"FSUMHS", 58, "fsumhs">,
    I32EnumAttrCase<"CLT16", 59, "clt16">,
    I32EnumAttrCase<"CEQ16", 60, "ceq16">,
    I32EnumAttrCase<"CLTU16", 61, "cltu16">,
    I32EnumAttrCase<"FCLTS", 62, "fclts">,
    I32EnumAttrCase<"FCEQS", 63, "fceqs">, I32EnumAttrCase<"NOP", 64, "nop">,
    I32EnumAttrCase<"BLOCK", 65, "block">,
    I32EnumAttrCase<"UNBLOCK", 66, "unblock">,
    I32EnumAttrCase<"ACTIVATE", 67, "activate">,
    I32EnumAttrCase<"DEACTIVATE", 68, "deactivate">]> {
  // The rows of WEFT_ISA_OPCODES in include/weft/Machine/ISA.h, in its order
  // and with its enumerator names, so a wavelet::Opcode converts to a
  // weft::machine::Opcode by value. WaveletOps.cpp checks at compile time that
  // every row has its case with the same value and that there are no others;
  // the unit tests check the mnemonics.
  let cppNamespace = "::weft::wavelet";
  let genSpecializedAttr = 0;
}

def Wavelet_OperandKind : I32EnumAttr<"OperandKind",
    "what an instruction operand names", [
    I32EnumAttrCase<"dsr", 1>, I32EnumAttrCase<"ddsr", 2>,
    I32EnumAttrCase<"s0dsr", 3>, I32EnumAttrCase<"s1dsr", 4>,
    I32EnumAttrCase<"gpr", 5>, I32EnumAttrCase<"imm", 6>,
    I32EnumAttrCase<"lit", 7>, I32EnumAttrCase<"all", 8>]> {
  // dsr..imm have the values of weft::machine::OperandKind; `lit` (a literal:
  // the movi/movh immediate, a control instruction's color or task id) and
  // `all` (every color, for control instructions) are fields of the other
  // instruction forms.
  let cppNamespace = "::weft::wavelet";
  let genSpecializedAttr = 0;
}

#endif // WEFT_WAVELET_ENUMS_TD
