//===- ISA.h - Instruction set, encoding and cost table ---------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Instructions are 20 bits, in five families told apart by their leading bits
// (docs/architecture.md, "Instruction set"):
//
//   0....  Imm  4-bit opcode, 4-bit register, 11-bit immediate (or a 15-bit
//               jump target): DSR loads/stores, MOVI/MOVH, JMP/BRT/BRF
//   10...  Vec  5-bit opcode, T, op0 (dst = src0), op1 (src1): FMAC, FADD ...
//   110..  Un   5-bit opcode, T, dst, src: MOV32, conversions, reductions ...
//   1110.  Cmp  4-bit opcode, T, src0 (GPR), src1: set the condition flag
//   1111.  Ctl  4-bit opcode, T, 11-bit operand: NOP, BLOCK, ACTIVATE ...
//
// Every opcode has one row in a table that holds its family, code, element
// types and cycle cost, so the encoder, the verifiers, the simulator and the
// compiler's cost model read the same numbers.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_MACHINE_ISA_H
#define WEFT_MACHINE_ISA_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::machine {

enum class Family : uint8_t { Imm, Vec, Un, Cmp, Ctl };
const char *familyName(Family f);

/// Element types an instruction reads or writes.
enum class ElemType : uint8_t { None, F32, F16, I16, I32 };
/// Size in 16-bit words of one element (0 for None).
unsigned elemWords(ElemType t);
const char *elemTypeName(ElemType t);

/// Every instruction of the machine. The X-macro lists
///   (Enum, mnemonic, family, code, dstType, srcType,
///    simd, startup, cyclesPerGroup, flopsPerElem, macsPerElem)
/// where the cost of a vector instruction of n elements is
///   startup + ceil(n / simd) * cyclesPerGroup
/// and of a scalar instruction (GPR destination, or no destination) is
///   cyclesPerGroup.
#define WEFT_ISA_OPCODES(X)                                                    \
  /* Immediate family: 4-bit opcode. */                                        \
  X(LDS0, "lds0", Imm, 0, None, None, 1, 0, 1, 0, 0)                           \
  X(LDS1, "lds1", Imm, 1, None, None, 1, 0, 1, 0, 0)                           \
  X(LDD, "ldd", Imm, 2, None, None, 1, 0, 1, 0, 0)                             \
  X(LDX, "ldx", Imm, 3, None, None, 1, 0, 1, 0, 0)                             \
  X(STS0, "sts0", Imm, 4, None, None, 1, 0, 1, 0, 0)                           \
  X(STS1, "sts1", Imm, 5, None, None, 1, 0, 1, 0, 0)                           \
  X(STD, "std", Imm, 6, None, None, 1, 0, 1, 0, 0)                             \
  X(STX, "stx", Imm, 7, None, None, 1, 0, 1, 0, 0)                             \
  X(LDSR, "ldsr", Imm, 8, None, None, 1, 0, 1, 0, 0)                           \
  X(STSR, "stsr", Imm, 9, None, None, 1, 0, 1, 0, 0)                           \
  X(MOVI, "movi", Imm, 10, I16, None, 1, 0, 1, 0, 0)                           \
  X(MOVH, "movh", Imm, 11, I16, None, 1, 0, 1, 0, 0)                           \
  X(JMP, "jmp", Imm, 12, None, None, 1, 0, 1, 0, 0)                            \
  X(BRT, "brt", Imm, 13, None, None, 1, 0, 1, 0, 0)                            \
  X(BRF, "brf", Imm, 14, None, None, 1, 0, 1, 0, 0)                            \
  /* Vector family: dst = op(src0, src1), 5-bit opcode. */                     \
  X(FADD, "fadd", Vec, 0, F32, F32, 1, 1, 1, 1, 0)                             \
  X(FSUB, "fsub", Vec, 1, F32, F32, 1, 1, 1, 1, 0)                             \
  X(FMUL, "fmul", Vec, 2, F32, F32, 1, 1, 1, 1, 0)                             \
  X(FMAC, "fmac", Vec, 3, F32, F32, 1, 1, 1, 2, 1)                             \
  X(FMAX, "fmax", Vec, 4, F32, F32, 1, 1, 1, 1, 0)                             \
  X(FMIN, "fmin", Vec, 5, F32, F32, 1, 1, 1, 1, 0)                             \
  X(FCLT, "fclt", Vec, 6, I32, F32, 1, 1, 1, 1, 0)                             \
  X(FCEQ, "fceq", Vec, 7, I32, F32, 1, 1, 1, 1, 0)                             \
  X(SEL32, "sel32", Vec, 8, I32, I32, 1, 1, 1, 0, 0)                           \
  X(FADDH, "faddh", Vec, 9, F16, F16, 4, 1, 1, 1, 0)                           \
  X(FSUBH, "fsubh", Vec, 10, F16, F16, 4, 1, 1, 1, 0)                          \
  X(FMULH, "fmulh", Vec, 11, F16, F16, 4, 1, 1, 1, 0)                          \
  X(FMACH, "fmach", Vec, 12, F16, F16, 4, 1, 1, 2, 1)                          \
  X(FMACHS, "fmachs", Vec, 13, F32, F16, 4, 1, 1, 2, 1)                        \
  X(FMAXH, "fmaxh", Vec, 14, F16, F16, 4, 1, 1, 1, 0)                          \
  X(FMINH, "fminh", Vec, 15, F16, F16, 4, 1, 1, 1, 0)                          \
  X(FCLTH, "fclth", Vec, 16, I16, F16, 4, 1, 1, 1, 0)                          \
  X(SEL16, "sel16", Vec, 17, I16, I16, 4, 1, 1, 0, 0)                          \
  X(ADD16, "add16", Vec, 18, I16, I16, 4, 1, 1, 0, 0)                          \
  X(SUB16, "sub16", Vec, 19, I16, I16, 4, 1, 1, 0, 0)                          \
  X(MUL16, "mul16", Vec, 20, I16, I16, 4, 1, 1, 0, 0)                          \
  X(AND16, "and16", Vec, 21, I16, I16, 4, 1, 1, 0, 0)                          \
  X(OR16, "or16", Vec, 22, I16, I16, 4, 1, 1, 0, 0)                            \
  X(XOR16, "xor16", Vec, 23, I16, I16, 4, 1, 1, 0, 0)                          \
  X(SHL16, "shl16", Vec, 24, I16, I16, 4, 1, 1, 0, 0)                          \
  X(SHR16, "shr16", Vec, 25, I16, I16, 4, 1, 1, 0, 0)                          \
  X(SAR16, "sar16", Vec, 26, I16, I16, 4, 1, 1, 0, 0)                          \
  /* Unary family: dst = op(src), 5-bit opcode. */                             \
  X(MOV32, "mov32", Un, 0, I32, I32, 1, 1, 1, 0, 0)                            \
  X(MOV16, "mov16", Un, 1, I16, I16, 4, 1, 1, 0, 0)                            \
  X(FNEG, "fneg", Un, 2, F32, F32, 1, 1, 1, 1, 0)                              \
  X(FABS, "fabs", Un, 3, F32, F32, 1, 1, 1, 1, 0)                              \
  X(FNEGH, "fnegh", Un, 4, F16, F16, 4, 1, 1, 1, 0)                            \
  X(FABSH, "fabsh", Un, 5, F16, F16, 4, 1, 1, 1, 0)                            \
  X(FH2F, "fh2f", Un, 6, F32, F16, 2, 1, 1, 0, 0)                              \
  X(FF2H, "ff2h", Un, 7, F16, F32, 2, 1, 1, 0, 0)                              \
  X(FF2I, "ff2i", Un, 8, I16, F32, 1, 1, 1, 0, 0)                              \
  X(FI2F, "fi2f", Un, 9, F32, I16, 1, 1, 1, 0, 0)                              \
  X(FEXP, "fexp", Un, 10, F32, F32, 1, 1, 8, 1, 0)                             \
  X(FLOG, "flog", Un, 11, F32, F32, 1, 1, 8, 1, 0)                             \
  X(FRCP, "frcp", Un, 12, F32, F32, 1, 1, 4, 1, 0)                             \
  X(FSQRT, "fsqrt", Un, 13, F32, F32, 1, 1, 8, 1, 0)                           \
  X(FSUM, "fsum", Un, 14, F32, F32, 1, 1, 1, 1, 0)                             \
  X(FMAXR, "fmaxr", Un, 15, F32, F32, 1, 1, 1, 1, 0)                           \
  X(FSUMHS, "fsumhs", Un, 16, F32, F16, 1, 1, 1, 1, 0)                         \
  /* Compare family: set the condition flag from (GPR, src1). */               \
  X(CLT16, "clt16", Cmp, 0, None, I16, 1, 0, 1, 0, 0)                          \
  X(CEQ16, "ceq16", Cmp, 1, None, I16, 1, 0, 1, 0, 0)                          \
  X(CLTU16, "cltu16", Cmp, 2, None, I16, 1, 0, 1, 0, 0)                        \
  X(FCLTS, "fclts", Cmp, 3, None, F32, 1, 0, 1, 1, 0)                          \
  X(FCEQS, "fceqs", Cmp, 4, None, F32, 1, 0, 1, 1, 0)                          \
  /* Control family: 11-bit operand. */                                        \
  X(NOP, "nop", Ctl, 0, None, None, 1, 0, 1, 0, 0)                             \
  X(BLOCK, "block", Ctl, 1, None, None, 1, 0, 1, 0, 0)                         \
  X(UNBLOCK, "unblock", Ctl, 2, None, None, 1, 0, 1, 0, 0)                     \
  X(ACTIVATE, "activate", Ctl, 3, None, None, 1, 0, 1, 0, 0)                   \
  X(DEACTIVATE, "deactivate", Ctl, 4, None, None, 1, 0, 1, 0, 0)

enum class Opcode : uint8_t {
#define WEFT_X(E, ...) E,
  WEFT_ISA_OPCODES(WEFT_X)
#undef WEFT_X
};

/// One row of the opcode table.
struct OpcodeInfo {
  Opcode opcode;
  const char *mnemonic;
  Family family;
  uint8_t code;
  ElemType dstType;
  ElemType srcType;
  /// Elements per cycle the datapath takes for this opcode.
  uint8_t simd;
  /// Cycles before the first element group of a vector form.
  uint8_t startup;
  /// Cycles per group of `simd` elements (the whole cost of scalar forms).
  uint8_t cyclesPerGroup;
  /// Floating-point operations and multiply-accumulates per element.
  uint8_t flopsPerElem;
  uint8_t macsPerElem;
};

/// All opcodes, in enum order.
const std::vector<OpcodeInfo> &opcodeTable();
const OpcodeInfo &info(Opcode op);
/// Looks a mnemonic up; std::nullopt for an unknown one.
std::optional<Opcode> parseMnemonic(const std::string &mnemonic);
unsigned numOpcodes();

/// Cycles the CE spends on `op` over `n` elements when no operand stalls.
/// `vector` says whether the instruction walks a vector: a vector
/// destination, or a reduction (whose destination is scalar but whose source
/// has n elements). Scalar forms cost `cyclesPerGroup`.
uint64_t instructionCycles(Opcode op, uint64_t n, bool vector);
/// The vector form's cycles over `n` elements (the cost models' unit).
inline int64_t vectorCycles(Opcode op, int64_t n) {
  return int64_t(instructionCycles(op, uint64_t(n), true));
}
/// The peak multiply-accumulates per PE per cycle for a precision: the SIMD
/// width of the widest MAC opcode of that precision (FMAC: 1, FMACHS: 4).
unsigned peakMacsPerCycle(bool mixedPrecision);

/// What an operand field names.
enum class OperandKind : uint8_t {
  None,
  Dsr,   ///< Vec op0: dst = DDSR[n], src0 = S0DSR[n]
  Ddsr,  ///< Un dst: DDSR[n]
  S0dsr, ///< Un src: S0DSR[n]
  S1dsr, ///< Vec op1 / Un src: S1DSR[n]
  Gpr,   ///< GPR[n] (fp32 and 32-bit values use the pair n, n+1; n even)
  Imm,   ///< index into the small-immediate table
};
const char *operandKindName(OperandKind k);
std::optional<OperandKind> parseOperandKind(const std::string &s);

struct Operand {
  OperandKind kind = OperandKind::None;
  uint8_t value = 0;
  bool operator==(const Operand &o) const {
    return kind == o.kind && value == o.value;
  }
};

/// The small immediates an Imm operand can name, as exact values. Entry 5
/// reads the PE's pseudo-random generator. Interpreted in the opcode's
/// source element type.
enum class SmallImm : uint8_t {
  Zero = 0,
  One = 1,
  MinusOne = 2,
  Two = 3,
  Half = 4,
  Prng = 5,
};
constexpr unsigned kNumSmallImms = 6;
const char *smallImmName(unsigned i);

/// Control-family operand modes (bits [10:9]).
enum class CtlMode : uint8_t { ImmColor = 0, GprColor = 1, AllColors = 2 };

/// A decoded instruction. Which fields are meaningful depends on the family:
///  Imm: reg, imm (11-bit; MOVI sign-extends it, MOVH uses [7:0]) or
///       target (JMP/BRT/BRF, 15-bit slot address);
///  Vec: op0 (Dsr|Gpr), op1 (S1dsr|Gpr|Imm), terminate;
///  Un : op0 (Ddsr|Gpr), op1 (S0dsr|Gpr|Imm|S1dsr), terminate;
///  Cmp: op0 (Gpr), op1 (S1dsr|Gpr|Imm), terminate;
///  Ctl: ctlMode, imm (color or GPR number), terminate.
struct Instruction {
  Opcode opcode = Opcode::NOP;
  bool terminate = false;
  Operand op0, op1;
  uint8_t reg = 0;
  uint16_t imm = 0;
  uint16_t target = 0;
  CtlMode ctlMode = CtlMode::ImmColor;

  /// Encodes into the low 20 bits. The instruction must be valid.
  uint32_t encode() const;
  /// Decodes 20 bits; rejects reserved opcodes and operand types, and bits
  /// above bit 19.
  static std::optional<Instruction> decode(uint32_t bits,
                                           std::string *error = nullptr);
  /// An empty string when every field fits its encoding and names something
  /// that exists (register numbers, even pairs for 32-bit GPR operands,
  /// immediate table entries, colors); otherwise a sentence saying what is
  /// wrong.
  std::string validate() const;
  bool operator==(const Instruction &o) const;
  /// Assembly text, e.g. "fmac dsr 4, s1dsr 2 term".
  std::string str() const;

  // Convenience constructors.
  static Instruction vec(Opcode op, Operand dst, Operand src,
                         bool term = false);
  static Instruction un(Opcode op, Operand dst, Operand src, bool term = false);
  static Instruction cmp(Opcode op, uint8_t gpr, Operand src,
                         bool term = false);
  static Instruction ctl(Opcode op, CtlMode mode, uint16_t value,
                         bool term = false);
  static Instruction immOp(Opcode op, uint8_t reg, uint16_t imm);
  static Instruction jump(Opcode op, uint16_t target);
};

} // namespace weft::machine

#endif // WEFT_MACHINE_ISA_H
