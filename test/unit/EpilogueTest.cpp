//===- EpilogueTest.cpp - Activations fused into convolutions -------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The kernel library's fused activations (lib/Kernels/Epilogue.cpp): the
// column ops as expression programs compile to the column kernels' own
// instruction sequences, and the convolution's and depthwise convolution's
// cost models and memory maps count the epilogue's steps, DSR loads,
// buffers and constants.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ConvMapping.h"
#include "weft/Kernels/DepthwiseMapping.h"
#include "weft/Kernels/Epilogue.h"
#include "weft/Machine/ISA.h"

#include <gtest/gtest.h>

using namespace weft::conversion;
using namespace weft::conversion::column;
namespace wt = weft::machine;

namespace {

std::vector<float> program(ColumnOp op, std::vector<float> params = {}) {
  std::optional<std::vector<float>> p = epilogueProgram(op, params);
  EXPECT_TRUE(p.has_value()) << columnOpName(op);
  return p.value_or(std::vector<float>());
}

std::vector<wt::Opcode> opcodes(const EpilogueCode &e) {
  std::vector<wt::Opcode> ops;
  for (const Step &s : e.code.steps)
    ops.push_back(s.op);
  return ops;
}

TEST(Epilogue, ColumnOpsCompileToTheirKernelsSequences) {
  using O = wt::Opcode;
  // Sigmoid: the Sigmoid kernel's fneg, fexp, fadd 1, frcp, x read once
  // (from the output buffer) and the result written last, in place.
  EpilogueCode sig = compileEpilogue(program(ColumnOp::Sigmoid));
  ASSERT_EQ(sig.code.error, "");
  EXPECT_EQ(opcodes(sig),
            (std::vector<O>{O::FNEG, O::FEXP, O::FADD, O::FRCP}));
  EXPECT_EQ(sig.code.steps.front().src0, kVecIn);
  EXPECT_EQ(sig.code.steps.back().dst, kVecOut);
  EXPECT_EQ(sig.code.buffers, 1);
  EXPECT_TRUE(sig.code.consts.empty()); // 1 is an immediate
  EXPECT_EQ(epilogueRecords(sig), 1);
  // HardSwish(1/6, 1/2): the HardSwish kernel's six steps, two buffers and
  // its constant 1/6 in a GPR pair (1/2, 1 and 0 are immediates).
  EpilogueCode hs =
      compileEpilogue(program(ColumnOp::HardSwish, {1.0f / 6, 0.5f}));
  ASSERT_EQ(hs.code.error, "");
  EXPECT_EQ(opcodes(hs), (std::vector<O>{O::MOV32, O::FMUL, O::FADD, O::FMIN,
                                         O::FMAX, O::FMUL}));
  EXPECT_EQ(hs.code.buffers, 2);
  EXPECT_EQ(hs.code.consts, (std::vector<float>{1.0f / 6}));
  EXPECT_EQ(hs.memoryConstants(), 0);
  // HardSigmoid reads x once: no copy.
  EXPECT_EQ(opcodes(compileEpilogue(
                program(ColumnOp::HardSigmoid, {0.2f, 0.5f}))),
            (std::vector<O>{O::FMUL, O::FADD, O::FMIN, O::FMAX}));
  // Tanh, and an expression as it is.
  EXPECT_EQ(compileEpilogue(program(ColumnOp::Tanh)).code.error, "");
  std::vector<float> silu = program(ColumnOp::Sigmoid);
  silu.insert(silu.end(), {float(int(ExprKind::Mul)), 0, 5, 0});
  EXPECT_EQ(program(ColumnOp::Expression, silu), silu);
  // LeakyRelu, Clip, Softplus and Softsign as their kernels.
  EXPECT_EQ(opcodes(compileEpilogue(program(ColumnOp::LeakyRelu, {0.1f}))),
            (std::vector<O>{O::MOV32, O::FMUL, O::FMAX}));
  EXPECT_EQ(opcodes(compileEpilogue(program(ColumnOp::LeakyRelu, {2.0f}))),
            (std::vector<O>{O::MOV32, O::FMUL, O::FMIN}));
  EXPECT_EQ(compileEpilogue(program(ColumnOp::LeakyRelu, {-0.5f})).code.error,
            "");
  EXPECT_EQ(opcodes(compileEpilogue(program(ColumnOp::Clip, {-1.0f, 1.0f}))),
            (std::vector<O>{O::FMAX, O::FMIN}));
  EXPECT_EQ(opcodes(compileEpilogue(program(ColumnOp::Softplus))),
            (std::vector<O>{O::FEXP, O::FADD, O::FLOG}));
  EXPECT_EQ(opcodes(compileEpilogue(program(ColumnOp::Softsign))),
            (std::vector<O>{O::MOV32, O::FABS, O::FADD, O::FRCP, O::FMUL}));
  // Ops with a constant tensor, softmax and the others have no epilogue
  // form.
  for (ColumnOp op : {ColumnOp::Softmax, ColumnOp::LogSoftmax,
                      ColumnOp::AddTensor, ColumnOp::PRelu, ColumnOp::Elu,
                      ColumnOp::AxisSoftmax})
    EXPECT_FALSE(epilogueProgram(op, {}).has_value()) << columnOpName(op);
}

TEST(Epilogue, CostsItsStepsAndLoadsPerRow) {
  EpilogueCode sig = compileEpilogue(program(ColumnOp::Sigmoid));
  // fneg buf <- out loads both registers; fexp buf <- buf the source only;
  // fadd buf <- buf, 1 none (an immediate needs no second source); frcp
  // out <- buf the destination only: 4 loads of a cycle each.
  std::vector<EpilogueLoads> loads = epilogueLoads(sig);
  ASSERT_EQ(loads.size(), 4u);
  EXPECT_EQ(loads[0].count(), 2);
  EXPECT_TRUE(loads[1].s0 && !loads[1].d);
  EXPECT_EQ(loads[2].count(), 0);
  EXPECT_TRUE(loads[3].d && !loads[3].s0);
  int64_t L = 32;
  EXPECT_EQ(epilogueCycles(sig, L),
            4 + wt::vectorCycles(wt::Opcode::FNEG, L) +
                wt::vectorCycles(wt::Opcode::FEXP, L) +
                wt::vectorCycles(wt::Opcode::FADD, L) +
                wt::vectorCycles(wt::Opcode::FRCP, L));
  EXPECT_EQ(epilogueInstructions(sig), 4 + 4);
  // HardSwish's last fmul reads both buffers: a second source load.
  EpilogueCode hs =
      compileEpilogue(program(ColumnOp::HardSwish, {1.0f / 6, 0.5f}));
  EXPECT_TRUE(epilogueLoads(hs).back().s1);
  EXPECT_EQ(epilogueWords(sig, L), 2 * L);
}

TEST(Epilogue, ConvolutionCountsItOnTheLastColumn) {
  ConvShape s;
  s.cin = 8, s.hin = 8, s.win = 8, s.cout = 16, s.kh = s.kw = 3;
  s.pt = s.pl = s.pb = s.pr = 1;
  DenseMapping m;
  m.smear = 2;
  m.rows = 4;
  int64_t plain = predictConvCycles(s, m);
  ConvMemoryMap before = convMemoryMap(s, m);
  s.epilogue = program(ColumnOp::HardSwish, {1.0f / 6, 0.5f});
  ASSERT_EQ(s.check(), "");
  EpilogueCode e = compileEpilogue(s.epilogue);
  // 8 output rows of Lm x wout = 4 x 8 on the last column, the slowest.
  EXPECT_EQ(predictConvCycles(s, m), plain + 8 * epilogueCycles(e, 4 * 8));
  // Its buffers (two rows) after the output buffers, and one record per
  // vector besides the output buffer.
  ConvMemoryMap mm = convMemoryMap(s, m);
  EXPECT_EQ(mm.end - mm.epilogue, 2 * 2 * 4 * 8);
  EXPECT_EQ(mm.numRecords, before.numRecords + epilogueRecords(e));
  EXPECT_GE(convMemoryPerPE(s, m), 2 * mm.end);
  // Never with a ReLU, and only a program a PE can run.
  s.relu = true;
  EXPECT_NE(s.check(), "");
  s.relu = false;
  s.epilogue = {float(int(ExprKind::Unary)), 0, float(int(ColumnOp::Softmax)),
                0};
  EXPECT_NE(s.check(), "");
}

TEST(Epilogue, DepthwiseCountsItInTheRowAndItsGaps) {
  ConvShape d;
  d.cin = d.groups = d.cout = 2;
  d.hin = d.win = 4;
  d.kh = d.kw = 3;
  d.pt = d.pl = d.pb = d.pr = 1;
  int64_t plain = predictDepthwiseCycles(d, 1);
  d.epilogue = program(ColumnOp::Sigmoid);
  ASSERT_EQ(d.check(), "");
  EpilogueCode e = compileEpilogue(d.epilogue);
  // 4 output rows of 4 x 2 elements; the epilogue's 4 loads and 4 startups
  // give the send room, so the last row's stall of 2 (see
  // DepthwiseCost.CountsTheProgram) is gone.
  EXPECT_EQ(epilogueFreeCycles(e), 8);
  EXPECT_EQ(predictDepthwiseCycles(d, 1), plain + 4 * epilogueCycles(e, 8) - 2);
  DepthwiseMemoryMap mm = depthwiseMemoryMap(d, 1);
  EXPECT_EQ(mm.end - mm.epilogue, 2 * 8);
}

} // namespace
