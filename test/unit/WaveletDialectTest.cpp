//===- WaveletDialectTest.cpp - wavelet dialect vs. the machine model -----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The wavelet opcode enum mirrors the machine model's opcode table; the
// compiler checks the enumerators and values (WaveletOps.cpp), these tests
// the mnemonics, and that an instruction survives InstOp in both directions.
//
//===----------------------------------------------------------------------===//

#include "wavelet/WaveletOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <gtest/gtest.h>

namespace wt = weft::machine;
namespace wv = weft::wavelet;

namespace {

TEST(WaveletOpcode, MnemonicsAreTheMachineModels) {
  for (const wt::OpcodeInfo &row : wt::opcodeTable()) {
    wv::Opcode op = wv::toOpcode(row.opcode);
    EXPECT_EQ(wv::stringifyOpcode(op).str(), std::string(row.mnemonic));
    EXPECT_EQ(wv::symbolizeOpcode(row.mnemonic), op) << row.mnemonic;
    EXPECT_EQ(wv::toTarget(op), row.opcode) << row.mnemonic;
  }
  EXPECT_EQ(wv::getMaxEnumValForOpcode() + 1, wt::numOpcodes());
}

TEST(WaveletOpcode, InstructionsRoundTripThroughInstOp) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<wv::WaveletDialect>();
  mlir::OpBuilder b(&ctx);
  mlir::Location loc = b.getUnknownLoc();
  // Owned here: the task has no parent to free it (and its instructions).
  mlir::OwningOpRef<wv::TaskOp> task =
      wv::TaskOp::create(b, loc, "t", wv::TaskKind::local, 33,
                         /*active=*/false, /*blocked=*/false);
  task->getBody().emplaceBlock();
  b.setInsertionPointToStart(&task->getBody().front());
  using O = wt::Opcode;
  using K = wt::OperandKind;
  const wt::Instruction samples[] = {
      wt::Instruction::vec(O::FMAC, {K::Dsr, 4}, {K::S1dsr, 2}, true),
      wt::Instruction::vec(O::FMAX, {K::Dsr, 1}, {K::Imm, 0}),
      wt::Instruction::un(O::FSUM, {K::Gpr, 6}, {K::S0dsr, 1}),
      wt::Instruction::cmp(O::CLTU16, 4, {K::Gpr, 8}),
      wt::Instruction::ctl(O::ACTIVATE, wt::CtlMode::ImmColor, 33, true),
      wt::Instruction::ctl(O::BLOCK, wt::CtlMode::AllColors, 0),
      wt::Instruction::ctl(O::UNBLOCK, wt::CtlMode::GprColor, 3),
      wt::Instruction::ctl(O::NOP, wt::CtlMode::ImmColor, 0, true),
      wt::Instruction::immOp(O::MOVI, 3, uint16_t(-5 & 0x7ff)),
      wt::Instruction::immOp(O::MOVH, 3, 255),
  };
  for (const wt::Instruction &in : samples) {
    ASSERT_TRUE(in.validate().empty()) << in.str() << ": " << in.validate();
    auto op = wv::InstOp::create(b, loc, in);
    mlir::FailureOr<wt::Instruction> back = op.toInstruction();
    ASSERT_TRUE(mlir::succeeded(back)) << in.str();
    EXPECT_EQ(back->encode(), in.encode())
        << in.str() << " came back as " << back->str();
  }
}

} // namespace
