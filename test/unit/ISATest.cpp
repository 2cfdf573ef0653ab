//===- ISATest.cpp - Instruction encodings and the cost table -------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Machine/ISA.h"
#include "weft/Machine/Target.h"

#include <gtest/gtest.h>

#include <set>

using namespace weft::machine;

/// Every operand an operand slot could be asked to hold.
static std::vector<Operand> allOperands() {
  std::vector<Operand> out;
  for (unsigned k = 1; k <= unsigned(OperandKind::Imm); ++k)
    for (unsigned v = 0; v < 16; ++v)
      out.push_back(Operand{OperandKind(k), uint8_t(v)});
  return out;
}

/// All valid instructions of one opcode, by brute force over the fields.
static std::vector<Instruction> validForms(Opcode op) {
  std::vector<Instruction> out;
  const OpcodeInfo &i = info(op);
  auto keep = [&](const Instruction &in) {
    if (in.validate().empty())
      out.push_back(in);
  };
  switch (i.family) {
  case Family::Imm:
    if (op == Opcode::JMP || op == Opcode::BRT || op == Opcode::BRF) {
      for (unsigned t : {0u, 1u, 320u, 12287u, 32767u})
        keep(Instruction::jump(op, uint16_t(t)));
    } else {
      for (unsigned r = 0; r < 16; ++r)
        for (unsigned imm : {0u, 1u, 255u, 2047u})
          keep(Instruction::immOp(op, uint8_t(r), uint16_t(imm)));
    }
    break;
  case Family::Vec:
  case Family::Un:
  case Family::Cmp:
    for (Operand a : allOperands())
      for (Operand b : allOperands())
        for (bool t : {false, true}) {
          Instruction in = Instruction::vec(op, a, b, t);
          keep(in);
        }
    break;
  case Family::Ctl:
    for (unsigned mode = 0; mode < 3; ++mode)
      for (unsigned v = 0; v < 64; ++v)
        for (bool t : {false, true})
          keep(Instruction::ctl(op, CtlMode(mode), uint16_t(v), t));
    break;
  }
  return out;
}

TEST(ISA, EveryOpcodeHasValidFormsThatRoundTrip) {
  std::set<uint32_t> seen;
  for (const OpcodeInfo &i : opcodeTable()) {
    std::vector<Instruction> forms = validForms(i.opcode);
    EXPECT_FALSE(forms.empty()) << i.mnemonic;
    for (const Instruction &in : forms) {
      uint32_t w = in.encode();
      ASSERT_EQ(w >> 20, 0u) << in.str();
      std::string err;
      auto back = Instruction::decode(w, &err);
      ASSERT_TRUE(back) << in.str() << ": " << err;
      EXPECT_EQ(back->opcode, in.opcode) << in.str();
      EXPECT_EQ(back->encode(), w) << in.str();
      EXPECT_EQ(back->str(), in.str());
      // No two distinct instructions share an encoding.
      EXPECT_TRUE(seen.insert(w).second) << in.str();
    }
  }
}

TEST(ISA, EveryWordDecodesToItselfOrIsRejected) {
  // Exhaustive over all 2^20 words: decoding is total and never aliases.
  unsigned valid = 0;
  for (uint32_t w = 0; w < (1u << 20); ++w) {
    std::string err;
    auto in = Instruction::decode(w, &err);
    if (!in) {
      EXPECT_FALSE(err.empty()) << std::hex << w;
      continue;
    }
    ++valid;
    ASSERT_EQ(in->encode(), w) << std::hex << w << " " << in->str();
  }
  EXPECT_GT(valid, 100000u);
  EXPECT_FALSE(Instruction::decode(1u << 20));
}

TEST(ISA, MnemonicsAndCodesAreUnique) {
  std::set<std::string> names;
  std::set<std::pair<int, int>> codes;
  for (const OpcodeInfo &i : opcodeTable()) {
    EXPECT_TRUE(names.insert(i.mnemonic).second) << i.mnemonic;
    EXPECT_TRUE(codes.insert({int(i.family), i.code}).second) << i.mnemonic;
    EXPECT_EQ(parseMnemonic(i.mnemonic), i.opcode);
    unsigned limit =
        (i.family == Family::Vec || i.family == Family::Un) ? 32 : 16;
    EXPECT_LT(i.code, limit) << i.mnemonic;
  }
  EXPECT_FALSE(parseMnemonic("frobnicate"));
}

TEST(ISA, CostTableCoversEveryInstruction) {
  for (const OpcodeInfo &i : opcodeTable()) {
    EXPECT_GE(i.simd, 1) << i.mnemonic;
    EXPECT_GE(i.cyclesPerGroup, 1) << i.mnemonic;
    EXPECT_GE(instructionCycles(i.opcode, 1, false), 1u) << i.mnemonic;
    // A vector of n elements costs startup + ceil(n / simd) groups.
    uint64_t n = 1000;
    EXPECT_EQ(instructionCycles(i.opcode, n, true),
              i.startup + (n + i.simd - 1) / i.simd * i.cyclesPerGroup)
        << i.mnemonic;
    if (i.macsPerElem) {
      EXPECT_EQ(i.flopsPerElem, 2 * i.macsPerElem) << i.mnemonic;
    }
  }
  EXPECT_EQ(peakMacsPerCycle(false), 1u);
  EXPECT_EQ(peakMacsPerCycle(true), 4u);
  EXPECT_EQ(instructionCycles(Opcode::FMAC, 256, true), 257u);
  EXPECT_EQ(instructionCycles(Opcode::FMACH, 256, true), 65u);
}

TEST(ISA, ValidationSaysWhatIsWrong) {
  Instruction odd = Instruction::vec(Opcode::FADD, {OperandKind::Gpr, 3},
                                     {OperandKind::Imm, 1});
  EXPECT_NE(odd.validate().find("must be even"), std::string::npos);
  Instruction bigDsr = Instruction::vec(Opcode::FMAC, {OperandKind::Dsr, 12},
                                        {OperandKind::S1dsr, 0});
  EXPECT_NE(bigDsr.validate().find("there are 12"), std::string::npos);
  Instruction wrongSlot = Instruction::vec(
      Opcode::FMAC, {OperandKind::S1dsr, 1}, {OperandKind::S1dsr, 0});
  EXPECT_NE(wrongSlot.validate().find("cannot be s1dsr"), std::string::npos);
  Instruction reduceScalar = Instruction::un(
      Opcode::FSUM, {OperandKind::Gpr, 0}, {OperandKind::Gpr, 2});
  EXPECT_NE(reduceScalar.validate().find("vector"), std::string::npos);
  Instruction color = Instruction::ctl(Opcode::ACTIVATE, CtlMode::ImmColor, 64);
  EXPECT_NE(color.validate().find("not a task id"), std::string::npos);
  Instruction allAct =
      Instruction::ctl(Opcode::ACTIVATE, CtlMode::AllColors, 0);
  EXPECT_NE(allAct.validate(), "");
  Instruction movh = Instruction::immOp(Opcode::MOVH, 1, 256);
  EXPECT_NE(movh.validate().find("8 bits"), std::string::npos);
  Instruction ldx = Instruction::immOp(Opcode::LDX, 6, 0);
  EXPECT_NE(ldx.validate().find("out of range"), std::string::npos);
  Instruction immTerm = Instruction::immOp(Opcode::MOVI, 1, 0);
  immTerm.terminate = true;
  EXPECT_NE(immTerm.validate().find("terminate"), std::string::npos);
}

TEST(ISA, KnownEncodings) {
  // Pin a few words so the documented layouts cannot drift silently.
  // fmac dsr 4, s1dsr 2 term: 10 00011 1 00 0100 00 0010
  EXPECT_EQ(Instruction::vec(Opcode::FMAC, {OperandKind::Dsr, 4},
                             {OperandKind::S1dsr, 2}, true)
                .encode(),
            0b10000111000100000010u);
  // activate 33: 1111 0011 0 00 000 100001
  EXPECT_EQ(Instruction::ctl(Opcode::ACTIVATE, CtlMode::ImmColor, 33).encode(),
            0b11110011000000100001u);
  // jmp 320: 0 1100 000000101000000
  EXPECT_EQ(Instruction::jump(Opcode::JMP, 320).encode(),
            (12u << 15) | 320u);
  // mov32 gpr 2, s0dsr 1: 110 00000 0 1 0010 00 0001
  EXPECT_EQ(Instruction::un(Opcode::MOV32, {OperandKind::Gpr, 2},
                            {OperandKind::S0dsr, 1})
                .encode(),
            0b11000000010010000001u);
}
