//===- KernelsTest.cpp - The column ops and the expression compiler -------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The kernel library's column ops without MLIR: names, properties, the
// expression compiler's checks and the DSR plan of the sequences. The
// sequences' numbers are checked against the simulator in
// ColumnKernelTest.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ColumnKernel.h"
#include "weft/Kernels/ColumnSequences.h"
#include "weft/Kernels/Expression.h"

#include <gtest/gtest.h>

using namespace weft::conversion;

namespace {

constexpr ColumnOp kLastOp = ColumnOp::Expression;

TEST(ColumnOps, NamesRoundTrip) {
  for (int i = 0; i <= int(kLastOp); ++i) {
    ColumnOp op = ColumnOp(i);
    std::optional<ColumnOp> parsed = parseColumnOp(columnOpName(op));
    ASSERT_TRUE(parsed.has_value()) << columnOpName(op);
    EXPECT_EQ(*parsed, op);
  }
  EXPECT_FALSE(parseColumnOp("relu"));
  EXPECT_FALSE(parseColumnOp(""));
  EXPECT_FALSE(parseColumnOp("?"));
}

TEST(ColumnOps, Properties) {
  EXPECT_EQ(columnParamCount(ColumnOp::Relu), 0);
  EXPECT_EQ(columnParamCount(ColumnOp::LeakyRelu), 1);
  EXPECT_EQ(columnParamCount(ColumnOp::Clip), 2);
  EXPECT_EQ(columnParamCount(ColumnOp::AddTensor), 0);
  EXPECT_TRUE(columnTakesTensor(ColumnOp::PRelu));
  EXPECT_FALSE(columnTakesTensor(ColumnOp::AddScalar));
  EXPECT_EQ(internalColors(ColumnOp::Softmax), 3);
  EXPECT_EQ(internalColors(ColumnOp::AxisSoftmax), 0);
  EXPECT_EQ(columnBuffers(ColumnOp::Expression), kExpressionBuffers);
  // Axis softmax: chunks of whole blocks of G I elements.
  std::vector<float> groups = {4, 3};
  EXPECT_EQ(columnChunkMultiple(ColumnOp::AxisSoftmax, groups), 12);
  EXPECT_TRUE(columnRowsAllowed(ColumnOp::AxisSoftmax, groups, 48, 4));
  EXPECT_FALSE(columnRowsAllowed(ColumnOp::AxisSoftmax, groups, 48, 3));
  EXPECT_TRUE(columnRowsAllowed(ColumnOp::Relu, {}, 48, 3));
  // 10 elements on 4 rows: chunks of 3, 3, 3, 1; on 6 rows the last is
  // empty.
  EXPECT_TRUE(columnRowsAllowed(ColumnOp::Relu, {}, 10, 4));
  EXPECT_FALSE(columnRowsAllowed(ColumnOp::Relu, {}, 10, 6));
}

TEST(ColumnOps, CostGrowsWithTheChunk) {
  for (ColumnOp op :
       {ColumnOp::Relu, ColumnOp::Sigmoid, ColumnOp::Erf, ColumnOp::Softmax}) {
    ColumnKernel k;
    k.op = op;
    k.layout = RowChunks{64, 1, 0};
    int64_t one = predictColumnKernelCycles(k);
    k.layout.rows = 4;
    EXPECT_LT(predictColumnKernelCycles(k), one) << columnOpName(op);
  }
}

TEST(Expression, CheckRefusesMalformedPrograms) {
  std::string why;
  EXPECT_FALSE(checkExpression({1, 0, 5, 0}, why));
  EXPECT_FALSE(checkExpression({1, 0}, why));
  EXPECT_NE(why.find("not a positive multiple of 4"), std::string::npos) << why;
  EXPECT_FALSE(checkExpression({}, why));
  // x + x: one node, two steps (x copied, as it is read twice).
  std::optional<int64_t> steps = checkExpression({1, 0, 0, 0}, why);
  ASSERT_TRUE(steps.has_value()) << why;
  EXPECT_EQ(*steps, 2);
}

TEST(Expression, BuilderKeepsWhatTheResultReads) {
  using namespace column;
  ExpressionBuilder b;
  int32_t two = b.constant(2.0f);
  EXPECT_EQ(b.constant(2.0f), two); // shared
  int32_t dead = b.add(ExprKind::Mul, 0, two, 0);
  int32_t e = b.add(ExprKind::Unary, 0, int32_t(ColumnOp::Exp), 0);
  int32_t y = b.add(ExprKind::Add, e, two, 0);
  (void)dead;
  std::string why;
  std::optional<std::vector<float>> prog = b.finish(y, why);
  ASSERT_TRUE(prog.has_value()) << why;
  // The constant, exp(x) and their sum, renumbered 1..3.
  std::vector<float> want = {0, 0, 0, 2, 10, 0, float(ColumnOp::Exp),
                             0, 1, 2, 1, 0};
  EXPECT_EQ(*prog, want);
  ExprCode code = compileExpression(*prog);
  EXPECT_TRUE(code.error.empty()) << code.error;
  EXPECT_EQ(code.steps.back().dst, kVecOut);
}

TEST(Sequences, DsrPlanSharesTheScratchDsr) {
  using namespace column;
  ColumnKernel k;
  k.op = ColumnOp::Erf;
  std::vector<Step> steps = sequenceOf(k);
  DsrPlan plan = planDsrs(steps);
  ASSERT_EQ(plan.uses.size(), steps.size());
  EXPECT_LE(plan.pairs.size(), size_t(12));
  EXPECT_LE(plan.s1.size(), size_t(12));
  // Erf's 14 pairs: 11 permanent, 3 through DSR 11.
  int reloads = 0;
  for (const DsrPlan::Use &u : plan.uses)
    reloads += u.loadPair;
  EXPECT_GE(reloads, 3);
  EXPECT_GT(registerConstants(k).size(), size_t(kNumGprConsts));
}

} // namespace
