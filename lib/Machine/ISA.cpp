//===- ISA.cpp - Instruction encodings and the cost table -----------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Machine/ISA.h"
#include "weft/Machine/Target.h"

#include <memory>
#include <sstream>

using namespace weft::machine;

const char *weft::machine::familyName(Family f) {
  switch (f) {
  case Family::Imm:
    return "imm";
  case Family::Vec:
    return "vec";
  case Family::Un:
    return "un";
  case Family::Cmp:
    return "cmp";
  case Family::Ctl:
    return "ctl";
  }
  return "?";
}

unsigned weft::machine::elemWords(ElemType t) {
  switch (t) {
  case ElemType::None:
    return 0;
  case ElemType::F16:
  case ElemType::I16:
    return 1;
  case ElemType::F32:
  case ElemType::I32:
    return 2;
  }
  return 0;
}

const char *weft::machine::elemTypeName(ElemType t) {
  switch (t) {
  case ElemType::None:
    return "none";
  case ElemType::F32:
    return "f32";
  case ElemType::F16:
    return "f16";
  case ElemType::I16:
    return "i16";
  case ElemType::I32:
    return "i32";
  }
  return "?";
}

const std::vector<OpcodeInfo> &weft::machine::opcodeTable() {
  static const std::vector<OpcodeInfo> table = {
#define WEFT_X(E, MN, FAM, CODE, DT, ST, SIMD, START, CPG, FLOPS, MACS)        \
  OpcodeInfo{Opcode::E,       MN,    Family::FAM, CODE,  ElemType::DT,         \
             ElemType::ST,    SIMD,  START,       CPG,   FLOPS,                \
             MACS},
      WEFT_ISA_OPCODES(WEFT_X)
#undef WEFT_X
  };
  return table;
}

const OpcodeInfo &weft::machine::info(Opcode op) {
  return opcodeTable()[unsigned(op)];
}

unsigned weft::machine::numOpcodes() { return unsigned(opcodeTable().size()); }

std::optional<Opcode> weft::machine::parseMnemonic(const std::string &m) {
  for (const OpcodeInfo &i : opcodeTable())
    if (m == i.mnemonic)
      return i.opcode;
  return std::nullopt;
}

uint64_t weft::machine::instructionCycles(Opcode op, uint64_t n, bool vector) {
  const OpcodeInfo &i = info(op);
  if (!vector)
    return i.cyclesPerGroup;
  uint64_t groups = (n + i.simd - 1) / i.simd;
  return i.startup + groups * i.cyclesPerGroup;
}

unsigned weft::machine::peakMacsPerCycle(bool mixedPrecision) {
  return info(mixedPrecision ? Opcode::FMACHS : Opcode::FMAC).simd;
}

const char *weft::machine::operandKindName(OperandKind k) {
  switch (k) {
  case OperandKind::None:
    return "none";
  case OperandKind::Dsr:
    return "dsr";
  case OperandKind::Ddsr:
    return "ddsr";
  case OperandKind::S0dsr:
    return "s0dsr";
  case OperandKind::S1dsr:
    return "s1dsr";
  case OperandKind::Gpr:
    return "gpr";
  case OperandKind::Imm:
    return "imm";
  }
  return "?";
}

std::optional<OperandKind> weft::machine::parseOperandKind(const std::string &s) {
  for (unsigned k = 0; k <= unsigned(OperandKind::Imm); ++k)
    if (s == operandKindName(OperandKind(k)))
      return OperandKind(k);
  return std::nullopt;
}

const char *weft::machine::smallImmName(unsigned i) {
  static const char *names[] = {"0", "1", "-1", "2", "0.5", "prng"};
  return i < kNumSmallImms ? names[i] : "?";
}

//===----------------------------------------------------------------------===//
// Operand field codes per family.
//===----------------------------------------------------------------------===//

namespace {
/// Maps an operand kind to its 2-bit (or 1-bit) type code in one operand slot;
/// -1 when the slot cannot hold it.
struct SlotCodes {
  OperandKind kinds[4];
  int code(OperandKind k) const {
    for (int i = 0; i < 4; ++i)
      if (kinds[i] == k && k != OperandKind::None)
        return i;
    return -1;
  }
};
} // namespace

static constexpr SlotCodes kVecOp0 = {
    {OperandKind::Dsr, OperandKind::Gpr, OperandKind::None, OperandKind::None}};
static constexpr SlotCodes kVecOp1 = {{OperandKind::S1dsr, OperandKind::Gpr,
                                       OperandKind::Imm, OperandKind::None}};
static constexpr SlotCodes kUnDst = {{OperandKind::Ddsr, OperandKind::Gpr,
                                      OperandKind::None, OperandKind::None}};
static constexpr SlotCodes kUnSrc = {{OperandKind::S0dsr, OperandKind::Gpr,
                                      OperandKind::Imm, OperandKind::S1dsr}};
static constexpr SlotCodes kCmpSrc = kVecOp1;

static bool isReduction(Opcode op) {
  return op == Opcode::FSUM || op == Opcode::FMAXR || op == Opcode::FSUMHS;
}

static std::string checkOperand(const char *what, Operand o, ElemType type,
                                const SlotCodes &slot) {
  std::ostringstream os;
  if (slot.code(o.kind) < 0) {
    os << what << " cannot be " << operandKindName(o.kind);
    return os.str();
  }
  switch (o.kind) {
  case OperandKind::Dsr:
  case OperandKind::Ddsr:
  case OperandKind::S0dsr:
  case OperandKind::S1dsr:
    if (o.value >= Arch::kNumDSRs) {
      os << what << " names " << operandKindName(o.kind) << " "
         << unsigned(o.value) << " but there are " << Arch::kNumDSRs;
      return os.str();
    }
    break;
  case OperandKind::Gpr:
    if (o.value >= Arch::kNumGPRs) {
      os << what << " names gpr " << unsigned(o.value) << " but there are "
         << Arch::kNumGPRs;
      return os.str();
    }
    if (elemWords(type) == 2 && (o.value % 2 != 0 || o.value + 1 >= 16)) {
      os << what << " is the 32-bit register pair gpr " << unsigned(o.value)
         << ", which must be even";
      return os.str();
    }
    break;
  case OperandKind::Imm:
    if (o.value >= kNumSmallImms) {
      os << what << " names immediate " << unsigned(o.value)
         << " but the table has " << kNumSmallImms << " entries";
      return os.str();
    }
    break;
  case OperandKind::None:
    break;
  }
  return "";
}

namespace {
/// An ostringstream made on first use: validate() runs for every
/// instruction a program loads and almost never has anything to say, and
/// making a stream (its locale) costs more than the checks.
class LazyStream {
public:
  template <typename T> LazyStream &operator<<(const T &v) {
    if (!s)
      s = std::make_unique<std::ostringstream>();
    *s << v;
    return *this;
  }
  std::string str() const { return s ? s->str() : std::string(); }

private:
  std::unique_ptr<std::ostringstream> s;
};
} // namespace

std::string Instruction::validate() const {
  const OpcodeInfo &i = info(opcode);
  LazyStream os;
  switch (i.family) {
  case Family::Imm: {
    if (terminate)
      return std::string(i.mnemonic) +
             " is an immediate-family instruction and has no terminate bit";
    unsigned regLimit = 16;
    switch (opcode) {
    case Opcode::LDS0:
    case Opcode::LDS1:
    case Opcode::LDD:
    case Opcode::STS0:
    case Opcode::STS1:
    case Opcode::STD:
      regLimit = Arch::kNumDSRs;
      break;
    case Opcode::LDX:
    case Opcode::STX:
      regLimit = Arch::kNumXDSRs;
      break;
    case Opcode::LDSR:
    case Opcode::STSR:
      regLimit = Arch::kNumStrideRegs;
      break;
    case Opcode::JMP:
    case Opcode::BRT:
    case Opcode::BRF:
      if (target >= (1u << 15)) {
        os << i.mnemonic << " target slot " << target
           << " does not fit 15 bits";
        return os.str();
      }
      return "";
    default:
      break;
    }
    if (reg >= regLimit) {
      os << i.mnemonic << " register " << unsigned(reg) << " out of range [0, "
         << regLimit << ")";
      return os.str();
    }
    unsigned immLimit = opcode == Opcode::MOVH ? 256 : 2048;
    if (imm >= immLimit) {
      os << i.mnemonic << " immediate " << imm << " does not fit "
         << (opcode == Opcode::MOVH ? 8 : 11) << " bits";
      return os.str();
    }
    return "";
  }
  case Family::Vec: {
    std::string e = checkOperand("destination", op0, i.dstType, kVecOp0);
    if (e.empty())
      e = checkOperand("second source", op1, i.srcType, kVecOp1);
    if (!e.empty())
      return std::string(i.mnemonic) + ": " + e;
    return "";
  }
  case Family::Un: {
    std::string e = checkOperand("destination", op0, i.dstType, kUnDst);
    if (e.empty())
      e = checkOperand("source", op1, i.srcType, kUnSrc);
    if (e.empty() && isReduction(opcode) && op1.kind != OperandKind::S0dsr &&
        op1.kind != OperandKind::S1dsr)
      e = "a reduction's source must be a vector (s0dsr or s1dsr)";
    if (!e.empty())
      return std::string(i.mnemonic) + ": " + e;
    return "";
  }
  case Family::Cmp: {
    Operand g{OperandKind::Gpr, op0.value};
    std::string e;
    if (op0.kind != OperandKind::Gpr)
      e = "first source must be a gpr";
    if (e.empty())
      e = checkOperand("first source", g, i.srcType, kVecOp0);
    if (e.empty())
      e = checkOperand("second source", op1, i.srcType, kCmpSrc);
    if (!e.empty())
      return std::string(i.mnemonic) + ": " + e;
    return "";
  }
  case Family::Ctl: {
    if (opcode == Opcode::NOP) {
      if (ctlMode != CtlMode::ImmColor || imm != 0)
        return "nop takes no operand";
      return "";
    }
    switch (ctlMode) {
    case CtlMode::ImmColor:
      if (imm >= Arch::kTaskIds) {
        os << i.mnemonic << " color " << imm << " is not a task id (0.."
           << Arch::kTaskIds - 1 << ")";
        return os.str();
      }
      return "";
    case CtlMode::GprColor:
      if (imm >= Arch::kNumGPRs) {
        os << i.mnemonic << " names gpr " << imm;
        return os.str();
      }
      return "";
    case CtlMode::AllColors:
      if (opcode != Opcode::BLOCK && opcode != Opcode::UNBLOCK)
        return std::string(i.mnemonic) + " cannot apply to all colors";
      if (imm != 0)
        return std::string(i.mnemonic) + " all takes no color";
      return "";
    }
    return "bad control mode";
  }
  }
  return "unknown family";
}

// Family prefixes and layouts (bit 19 is the most significant):
//  Imm: 0 | op4 [18:15] | reg [14:11] | imm11 [10:0]   (jumps: target [14:0])
//  Vec: 10 | op5 [17:13] | T [12] | t0 [11:10] v0 [9:6] | t1 [5:4] v1 [3:0]
//  Un : 110 | op5 [16:12] | T [11] | t0 [10] v0 [9:6] | t1 [5:4] v1 [3:0]
//  Cmp: 1110 | op4 [15:12] | T [11] | 0 [10] g [9:6] | t1 [5:4] v1 [3:0]
//  Ctl: 1111 | op4 [15:12] | T [11] | mode [10:9] | 000 [8:6] | val [5:0]
uint32_t Instruction::encode() const {
  const OpcodeInfo &i = info(opcode);
  uint32_t b = 0;
  switch (i.family) {
  case Family::Imm:
    b = (uint32_t(i.code) << 15);
    if (opcode == Opcode::JMP || opcode == Opcode::BRT ||
        opcode == Opcode::BRF)
      b |= target & 0x7fffu;
    else
      b |= (uint32_t(reg & 0xf) << 11) | (imm & 0x7ffu);
    break;
  case Family::Vec:
    b = (0x2u << 18) | (uint32_t(i.code) << 13) | (uint32_t(terminate) << 12) |
        (uint32_t(kVecOp0.code(op0.kind)) << 10) |
        (uint32_t(op0.value & 0xf) << 6) |
        (uint32_t(kVecOp1.code(op1.kind)) << 4) | (op1.value & 0xfu);
    break;
  case Family::Un:
    b = (0x6u << 17) | (uint32_t(i.code) << 12) | (uint32_t(terminate) << 11) |
        (uint32_t(kUnDst.code(op0.kind)) << 10) |
        (uint32_t(op0.value & 0xf) << 6) |
        (uint32_t(kUnSrc.code(op1.kind)) << 4) | (op1.value & 0xfu);
    break;
  case Family::Cmp:
    b = (0xeu << 16) | (uint32_t(i.code) << 12) | (uint32_t(terminate) << 11) |
        (uint32_t(op0.value & 0xf) << 6) |
        (uint32_t(kCmpSrc.code(op1.kind)) << 4) | (op1.value & 0xfu);
    break;
  case Family::Ctl:
    b = (0xfu << 16) | (uint32_t(i.code) << 12) | (uint32_t(terminate) << 11) |
        (uint32_t(ctlMode) << 9) | (imm & 0x3fu);
    break;
  }
  return b;
}

static const OpcodeInfo *findCode(Family f, unsigned code) {
  for (const OpcodeInfo &i : opcodeTable())
    if (i.family == f && i.code == code)
      return &i;
  return nullptr;
}

std::optional<Instruction> Instruction::decode(uint32_t b, std::string *error) {
  auto bad = [&](const std::string &m) -> std::optional<Instruction> {
    if (error)
      *error = m;
    return std::nullopt;
  };
  if (b >> Arch::kInstructionBits)
    return bad("instruction word has bits set above bit 19");
  Family fam;
  unsigned code;
  if (!(b >> 19)) {
    fam = Family::Imm;
    code = (b >> 15) & 0xf;
  } else if (((b >> 18) & 0x3) == 0x2) {
    fam = Family::Vec;
    code = (b >> 13) & 0x1f;
  } else if (((b >> 17) & 0x7) == 0x6) {
    fam = Family::Un;
    code = (b >> 12) & 0x1f;
  } else if (((b >> 16) & 0xf) == 0xe) {
    fam = Family::Cmp;
    code = (b >> 12) & 0xf;
  } else {
    fam = Family::Ctl;
    code = (b >> 12) & 0xf;
  }
  const OpcodeInfo *oi = findCode(fam, code);
  if (!oi)
    return bad(std::string("reserved opcode ") + std::to_string(code) +
               " in the " + familyName(fam) + " family");
  Instruction in;
  in.opcode = oi->opcode;
  auto slot = [&](const SlotCodes &s, unsigned type, unsigned value,
                  Operand &out, const char *what) -> bool {
    OperandKind k = type < 4 ? s.kinds[type] : OperandKind::None;
    if (k == OperandKind::None) {
      if (error)
        *error = std::string(oi->mnemonic) + ": reserved " + what +
                 " operand type " + std::to_string(type);
      return false;
    }
    out = Operand{k, uint8_t(value)};
    return true;
  };
  switch (fam) {
  case Family::Imm:
    if (in.opcode == Opcode::JMP || in.opcode == Opcode::BRT ||
        in.opcode == Opcode::BRF)
      in.target = uint16_t(b & 0x7fff);
    else {
      in.reg = uint8_t((b >> 11) & 0xf);
      in.imm = uint16_t(b & 0x7ff);
    }
    break;
  case Family::Vec:
    in.terminate = (b >> 12) & 1;
    if (!slot(kVecOp0, (b >> 10) & 3, (b >> 6) & 0xf, in.op0, "destination") ||
        !slot(kVecOp1, (b >> 4) & 3, b & 0xf, in.op1, "source"))
      return std::nullopt;
    break;
  case Family::Un:
    in.terminate = (b >> 11) & 1;
    if (!slot(kUnDst, (b >> 10) & 1, (b >> 6) & 0xf, in.op0, "destination") ||
        !slot(kUnSrc, (b >> 4) & 3, b & 0xf, in.op1, "source"))
      return std::nullopt;
    break;
  case Family::Cmp:
    in.terminate = (b >> 11) & 1;
    if ((b >> 10) & 1)
      return bad(std::string(oi->mnemonic) + ": reserved bit 10 is set");
    in.op0 = Operand{OperandKind::Gpr, uint8_t((b >> 6) & 0xf)};
    if (!slot(kCmpSrc, (b >> 4) & 3, b & 0xf, in.op1, "source"))
      return std::nullopt;
    break;
  case Family::Ctl:
    in.terminate = (b >> 11) & 1;
    if (((b >> 9) & 3) == 3)
      return bad(std::string(oi->mnemonic) + ": reserved control mode 3");
    if ((b >> 6) & 7)
      return bad(std::string(oi->mnemonic) + ": reserved bits [8:6] are set");
    in.ctlMode = CtlMode((b >> 9) & 3);
    in.imm = uint16_t(b & 0x3f);
    break;
  }
  std::string err = in.validate();
  if (!err.empty())
    return bad(err);
  return in;
}

bool Instruction::operator==(const Instruction &o) const {
  return encode() == o.encode() && opcode == o.opcode;
}

static void printOperand(std::ostream &os, Operand o) {
  os << operandKindName(o.kind) << " ";
  if (o.kind == OperandKind::Imm)
    os << smallImmName(o.value);
  else
    os << unsigned(o.value);
}

std::string Instruction::str() const {
  const OpcodeInfo &i = info(opcode);
  std::ostringstream os;
  os << i.mnemonic;
  switch (i.family) {
  case Family::Imm:
    if (opcode == Opcode::JMP || opcode == Opcode::BRT ||
        opcode == Opcode::BRF)
      os << " " << target;
    else
      os << " " << unsigned(reg) << ", " << imm;
    break;
  case Family::Vec:
  case Family::Un:
  case Family::Cmp:
    os << " ";
    printOperand(os, op0);
    os << ", ";
    printOperand(os, op1);
    break;
  case Family::Ctl:
    if (opcode == Opcode::NOP)
      break;
    if (ctlMode == CtlMode::AllColors)
      os << " all";
    else if (ctlMode == CtlMode::GprColor)
      os << " gpr " << imm;
    else
      os << " " << imm;
    break;
  }
  if (terminate)
    os << " term";
  return os.str();
}

Instruction Instruction::vec(Opcode op, Operand dst, Operand src, bool term) {
  Instruction i;
  i.opcode = op;
  i.op0 = dst;
  i.op1 = src;
  i.terminate = term;
  return i;
}
Instruction Instruction::un(Opcode op, Operand dst, Operand src, bool term) {
  return vec(op, dst, src, term);
}
Instruction Instruction::cmp(Opcode op, uint8_t gpr, Operand src, bool term) {
  return vec(op, Operand{OperandKind::Gpr, gpr}, src, term);
}
Instruction Instruction::ctl(Opcode op, CtlMode mode, uint16_t value,
                             bool term) {
  Instruction i;
  i.opcode = op;
  i.ctlMode = mode;
  i.imm = value;
  i.terminate = term;
  return i;
}
Instruction Instruction::immOp(Opcode op, uint8_t reg, uint16_t imm) {
  Instruction i;
  i.opcode = op;
  i.reg = reg;
  i.imm = imm;
  return i;
}
Instruction Instruction::jump(Opcode op, uint16_t target) {
  Instruction i;
  i.opcode = op;
  i.target = target;
  return i;
}
