//===- MatchColumnKernelTest.cpp - Column kernels in the linalg IR --------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Matches the importer's linalg forms of the column kernels (and refuses
// the near misses, saying why); the expressions are also compiled and
// simulated against a double-precision reference.
//
//===----------------------------------------------------------------------===//

#include "ColumnKernelTestUtil.h"

namespace {

const char *kRelu = "    %c0 = arith.constant 0.000000e+00 : f32\n"
                    "    %2 = arith.maximumf %in, %c0 : f32\n"
                    "    linalg.yield %2 : f32\n";
// The importer's sigmoid, and the one after --weft-import-cleanup (the
// constants hoisted and CSE'd, the sum commuted).
const char *kSigmoid = "    %2 = arith.negf %in : f32\n"
                       "    %3 = math.exp %2 : f32\n"
                       "    %c1 = arith.constant 1.000000e+00 : f32\n"
                       "    %4 = arith.addf %c1, %3 : f32\n"
                       "    %c1b = arith.constant 1.000000e+00 : f32\n"
                       "    %5 = arith.divf %c1b, %4 : f32\n"
                       "    linalg.yield %5 : f32\n";
const char *kSigmoidClean = "    %2 = arith.negf %in : f32\n"
                            "    %3 = math.exp %2 : f32\n"
                            "    %4 = arith.addf %3, %cst : f32\n"
                            "    %5 = arith.divf %cst, %4 : f32\n"
                            "    linalg.yield %5 : f32\n";
const char *kTanh = "    %2 = math.tanh %in : f32\n"
                    "    linalg.yield %2 : f32\n";

TEST_F(Match, Elementwise) {
  std::string why;
  bool arg = false;
  const char *rank2 = "(d0, d1) -> (d0, d1)";
  const char *par2 = "\"parallel\", \"parallel\"";
  auto r = match(unary("1x10", rank2, par2, kRelu), why, arg);
  ASSERT_TRUE(mlir::succeeded(r)) << why;
  EXPECT_EQ(*r, ColumnOp::Relu);
  EXPECT_TRUE(arg);
  r = match(unary("10", "(d0) -> (d0)", "\"parallel\"", kSigmoid), why, arg);
  ASSERT_TRUE(mlir::succeeded(r)) << why;
  EXPECT_EQ(*r, ColumnOp::Sigmoid);
  EXPECT_TRUE(arg);
  r = match(unary("1x10", rank2, par2, kSigmoidClean), why, arg);
  ASSERT_TRUE(mlir::succeeded(r)) << why;
  EXPECT_EQ(*r, ColumnOp::Sigmoid);
  r = match(unary("1x10", rank2, par2, kTanh), why, arg);
  ASSERT_TRUE(mlir::succeeded(r)) << why;
  EXPECT_EQ(*r, ColumnOp::Tanh);
}

TEST_F(Match, ElementwiseFailures) {
  std::string why;
  bool arg = false;
  const char *rank2 = "(d0, d1) -> (d0, d1)";
  const char *par2 = "\"parallel\", \"parallel\"";
  auto r = match(unary("1x10", rank2, par2,
                       "    %2 = math.atan %in : f32\n"
                       "    linalg.yield %2 : f32\n"),
                 why, arg);
  EXPECT_TRUE(mlir::failed(r));
  EXPECT_EQ(why,
            "its elementwise body is none of the per-row ops weft maps "
            "(Relu, Sigmoid, Tanh, Abs, Neg, Exp, Log, Sqrt, Reciprocal, "
            "LeakyRelu, ThresholdedRelu, Elu, Celu, Selu, Softplus, "
            "Softsign, HardSigmoid, HardSwish, Clip, Sign, Floor, Ceil, "
            "Round, Sin, Cos, Erf, Pow with a scalar exponent, or x with a "
            "scalar constant: + - * /), and as an expression its fused "
            "body has math.atan (no column kernel computes it)");
  // max(x, 1) is not a ReLU but a Clip from below.
  r = match(unary("1x10", rank2, par2,
                  "    %2 = arith.maximumf %in, %cst : f32\n"
                  "    linalg.yield %2 : f32\n"),
            why, arg);
  ASSERT_TRUE(mlir::succeeded(r)) << why;
  EXPECT_EQ(*r, ColumnOp::Clip);
  EXPECT_EQ(params, (std::vector<float>{1.0f, INFINITY}));
  // x * x reads x twice: Square, not a product with a constant.
  r = match(unary("1x10", rank2, par2,
                  "    %2 = arith.mulf %in, %in : f32\n"
                  "    linalg.yield %2 : f32\n"),
            why, arg);
  ASSERT_TRUE(mlir::succeeded(r)) << why;
  EXPECT_EQ(*r, ColumnOp::Square);
  // x * x + x is none of the ops: an Expression.
  r = match(unary("1x10", rank2, par2,
                  "    %2 = arith.mulf %in, %in : f32\n"
                  "    %3 = arith.addf %2, %in : f32\n"
                  "    linalg.yield %3 : f32\n"),
            why, arg);
  ASSERT_TRUE(mlir::succeeded(r)) << why;
  EXPECT_EQ(*r, ColumnOp::Expression);
  r = match("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  return %a : tensor<4xf32>\n}\n",
            why, arg);
  EXPECT_TRUE(mlir::failed(r));
  EXPECT_EQ(why, "it is not computed by a linalg.generic");
}

/// The importer's Softmax/LogSoftmax on tensor<shape> reducing the dims
/// marked "reduction" in `iters` (`rmap`: the reduced map, `bmap`: the
/// broadcast map, `kept`: the reduced tensor type, `reshape`: the
/// expand_shape to the broadcast operand).
std::string softmax(bool log, const std::string &shape,
                    const std::string &idmap, const std::string &rmap,
                    const std::string &bmap, const std::string &iters,
                    const std::string &par, const std::string &kept,
                    const std::string &bshape, const std::string &reassoc) {
  std::string t = "tensor<" + shape + "xf32>";
  std::string kt = "tensor<" + kept + ">", bt = "tensor<" + bshape + ">";
  // The expand_shape's output_shape: bshape's sizes ("1x1x5xf32": 1, 1, 5).
  std::string outShape;
  for (size_t p = 0, q; (q = bshape.find('x', p)) != std::string::npos;
       p = q + 1)
    outShape += (outShape.empty() ? "" : ", ") + bshape.substr(p, q - p);
  std::string s =
      "#map = affine_map<" + idmap + ">\n#map1 = affine_map<" + rmap +
      ">\n#map2 = affine_map<" + bmap +
      ">\n"
      "func.func @f(%arg0: " +
      t + ") -> " + t +
      " {\n"
      "  %cst = arith.constant 0.000000e+00 : f32\n"
      "  %cst_0 = arith.constant 0xFF800000 : f32\n"
      "  %0 = tensor.empty() : " +
      kt +
      "\n"
      "  %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : " +
      kt + ") -> " + kt +
      "\n"
      "  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types "
      "= [" +
      iters + "]} ins(%arg0 : " + t + ") outs(%1 : " + kt +
      ") {\n"
      "  ^bb0(%in: f32, %out: f32):\n"
      "    %9 = arith.maximumf %out, %in : f32\n"
      "    linalg.yield %9 : f32\n"
      "  } -> " +
      kt +
      "\n"
      "  %e = tensor.expand_shape %2 " +
      reassoc + " output_shape [" + outShape + "] : " + kt + " into " + bt +
      "\n"
      "  %3 = tensor.empty() : " +
      t +
      "\n"
      "  %4 = linalg.generic {indexing_maps = [#map, #map2, #map], "
      "iterator_types = [" +
      par + "]} ins(%arg0, %e : " + t + ", " + bt + ") outs(%3 : " + t +
      ") {\n"
      "  ^bb0(%in: f32, %in_2: f32, %out: f32):\n"
      "    %9 = arith.subf %in, %in_2 : f32\n"
      "    linalg.yield %9 : f32\n"
      "  } -> " +
      t +
      "\n"
      "  %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = "
      "[" +
      par + "]} ins(%4 : " + t + ") outs(%3 : " + t +
      ") {\n"
      "  ^bb0(%in: f32, %out: f32):\n"
      "    %9 = math.exp %in : f32\n"
      "    linalg.yield %9 : f32\n"
      "  } -> " +
      t +
      "\n"
      "  %6 = linalg.fill ins(%cst : f32) outs(%0 : " +
      kt + ") -> " + kt +
      "\n"
      "  %7 = linalg.generic {indexing_maps = [#map, #map1], iterator_types "
      "= [" +
      iters + "]} ins(%5 : " + t + ") outs(%6 : " + kt +
      ") {\n"
      "  ^bb0(%in: f32, %out: f32):\n"
      "    %9 = arith.addf %out, %in : f32\n"
      "    linalg.yield %9 : f32\n"
      "  } -> " +
      kt +
      "\n"
      "  %e1 = tensor.expand_shape %7 " +
      reassoc + " output_shape [" + outShape + "] : " + kt + " into " + bt +
      "\n"
      "  %8 = linalg.generic {indexing_maps = [#map, #map2, #map], "
      "iterator_types = [" +
      par + "]} ins(" + (log ? "%4" : "%5") + ", %e1 : " + t + ", " + bt +
      ") outs(%3 : " + t +
      ") {\n"
      "  ^bb0(%in: f32, %in_2: f32, %out: f32):\n" +
      (log ? "    %l = math.log %in_2 : f32\n"
             "    %9 = arith.subf %in, %l : f32\n"
           : "    %9 = arith.divf %in, %in_2 : f32\n") +
      "    linalg.yield %9 : f32\n"
      "  } -> " +
      t +
      "\n"
      "  return %8 : " +
      t + "\n}\n";
  return s;
}

std::string softmax2d(bool log, const std::string &shape) {
  return softmax(log, shape, "(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0)",
                 "(d0, d1) -> (d0, 0)", "\"parallel\", \"reduction\"",
                 "\"parallel\", \"parallel\"", "1xf32", "1x1xf32", "[[0, 1]]");
}

TEST_F(Match, Softmax) {
  std::string why;
  bool arg = false;
  for (bool log : {false, true}) {
    auto r = match(softmax2d(log, "1x10"), why, arg);
    ASSERT_TRUE(mlir::succeeded(r)) << why;
    EXPECT_EQ(*r, log ? ColumnOp::LogSoftmax : ColumnOp::Softmax);
    EXPECT_TRUE(arg);
    // The rank-1 form reduces to tensor<f32>.
    r = match(softmax(log, "10", "(d0) -> (d0)", "(d0) -> ()", "(d0) -> (0)",
                      "\"reduction\"", "\"parallel\"", "f32", "1xf32", "[]"),
              why, arg);
    ASSERT_TRUE(mlir::succeeded(r)) << why;
    EXPECT_EQ(*r, log ? ColumnOp::LogSoftmax : ColumnOp::Softmax);
    EXPECT_TRUE(arg);
  }
}

TEST_F(Match, SoftmaxFailures) {
  std::string why;
  bool arg = false;
  // Softmax over rows of a [2, 10] tensor is two softmaxes per sample: an
  // AxisSoftmax of groups of 10.
  std::string two = softmax2d(false, "2x10");
  for (std::string from : {"tensor<1xf32>", "tensor<1x1xf32>"}) {
    size_t p;
    while ((p = two.find(from)) != std::string::npos)
      two.replace(p, from.size(),
                  from == "tensor<1xf32>" ? "tensor<2xf32>"
                                          : "tensor<2x1xf32>");
  }
  size_t p;
  while ((p = two.find("output_shape [1, 1]")) != std::string::npos)
    two.replace(p, 19, "output_shape [2, 1]");
  auto r = match(two, why, arg);
  ASSERT_TRUE(mlir::succeeded(r)) << why;
  EXPECT_EQ(*r, ColumnOp::AxisSoftmax);
  EXPECT_EQ(params, (std::vector<float>{10, 1}));
  // a * b instead of a / b.
  std::string mul = softmax2d(false, "1x10");
  mul.replace(mul.find("arith.divf"), 10, "arith.mulf");
  r = match(mul, why, arg);
  EXPECT_TRUE(mlir::failed(r));
  EXPECT_EQ(why, "its two-input body is neither a / b (Softmax) nor "
                 "a - log(b) (LogSoftmax)");
  // The maximum starting from 0 instead of -inf.
  std::string zero = softmax2d(true, "1x10");
  zero.replace(zero.find("ins(%cst_0 : f32)"), 17, "ins(%cst : f32)");
  r = match(zero, why, arg);
  EXPECT_TRUE(mlir::failed(r));
  EXPECT_EQ(why, "the maximum of its LogSoftmax does not start its reduction "
                 "from -inf");
}

TEST_F(Match, AxisSoftmax) {
  std::string why;
  bool arg = false;
  for (bool log : {false, true}) {
    ColumnOp want = log ? ColumnOp::AxisLogSoftmax : ColumnOp::AxisSoftmax;
    // ONNX axis 1 of [N, 4, 5] on one sample: groups of 4, 5 apart.
    auto r =
        match(softmax(log, "1x4x5", "(d0, d1, d2) -> (d0, d1, d2)",
                      "(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d0, 0, d2)",
                      "\"parallel\", \"reduction\", \"parallel\"",
                      "\"parallel\", \"parallel\", \"parallel\"", "1x5xf32",
                      "1x1x5xf32", "[[0], [1, 2]]"),
              why, arg);
    ASSERT_TRUE(mlir::succeeded(r)) << why;
    EXPECT_EQ(*r, want);
    EXPECT_TRUE(arg);
    EXPECT_EQ(params, (std::vector<float>{4, 5}));
    // The last axis: contiguous groups of 5.
    r = match(softmax(log, "1x4x5", "(d0, d1, d2) -> (d0, d1, d2)",
                      "(d0, d1, d2) -> (d0, d1)", "(d0, d1, d2) -> (d0, d1, 0)",
                      "\"parallel\", \"parallel\", \"reduction\"",
                      "\"parallel\", \"parallel\", \"parallel\"", "1x4xf32",
                      "1x4x1xf32", "[[0], [1, 2]]"),
              why, arg);
    ASSERT_TRUE(mlir::succeeded(r)) << why;
    EXPECT_EQ(*r, want);
    EXPECT_EQ(params, (std::vector<float>{5, 1}));
    // The whole tensor as one sample, axis 0 of [3, 4, 5]: groups of 3, 20
    // apart.
    r = match(softmax(log, "3x4x5", "(d0, d1, d2) -> (d0, d1, d2)",
                      "(d0, d1, d2) -> (d1, d2)", "(d0, d1, d2) -> (0, d1, d2)",
                      "\"reduction\", \"parallel\", \"parallel\"",
                      "\"parallel\", \"parallel\", \"parallel\"", "4x5xf32",
                      "1x4x5xf32", "[[0, 1], [2]]"),
              why, arg);
    ASSERT_TRUE(mlir::succeeded(r)) << why;
    EXPECT_EQ(*r, want);
    EXPECT_EQ(params, (std::vector<float>{3, 20}));
  }
  // Reducing dimensions 1 and 3 around a kept dimension 2.
  auto r =
      match(softmax(false, "1x3x4x5", "(d0, d1, d2, d3) -> (d0, d1, d2, d3)",
                    "(d0, d1, d2, d3) -> (d0, d2)",
                    "(d0, d1, d2, d3) -> (d0, 0, d2, 0)",
                    "\"parallel\", \"reduction\", \"parallel\", \"reduction\"",
                    "\"parallel\", \"parallel\", \"parallel\", \"parallel\"",
                    "1x4xf32", "1x1x4x1xf32", "[[0], [1, 2, 3]]"),
            why, arg);
  EXPECT_TRUE(mlir::failed(r));
  EXPECT_EQ(why, "its Softmax reduces dimensions 1 and 3 but keeps dimension 2 "
                 "of size 4 between them; weft maps a softmax over adjacent "
                 "dimensions");
  // The maximum broadcast along the wrong dimension: max over d1, read back
  // as if it were over d2.
  r = match(softmax(false, "1x5x5", "(d0, d1, d2) -> (d0, d1, d2)",
                    "(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d0, d1, 0)",
                    "\"parallel\", \"reduction\", \"parallel\"",
                    "\"parallel\", \"parallel\", \"parallel\"", "1x5xf32",
                    "1x5x1xf32", "[[0], [1, 2]]"),
            why, arg);
  EXPECT_TRUE(mlir::failed(r));
  EXPECT_EQ(why, "its Softmax does not broadcast the maximum or the sum back "
                 "along the dimensions it reduced");
}

} // namespace
TEST_F(Match, UnaryOps) {
  // The importer's bodies (and the clean-up's Elu with alpha = 1, whose
  // product by 1 is folded away).
  struct Case {
    const char *body;
    ColumnOp op;
    std::vector<float> params;
  };
  const Case cases[] = {
      {"    linalg.yield %in : f32\n", ColumnOp::Copy, {}},
      {"    %2 = math.absf %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::Abs,
       {}},
      {"    %2 = arith.negf %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::Neg,
       {}},
      {"    %2 = math.exp %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::Exp,
       {}},
      {"    %2 = math.log %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::Log,
       {}},
      {"    %2 = math.sqrt %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::Sqrt,
       {}},
      {"    %2 = arith.divf %cst, %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::Reciprocal,
       {}},
      {"    %a = arith.constant 1.0e-01 : f32\n"
       "    %2 = arith.mulf %in, %a : f32\n"
       "    %z = arith.constant 0.0 : f32\n"
       "    %3 = arith.cmpf olt, %in, %z : f32\n"
       "    %4 = arith.select %3, %2, %in : f32\n    linalg.yield %4 : f32\n",
       ColumnOp::LeakyRelu,
       {0.1f}},
      {"    %z = arith.constant 0.0 : f32\n"
       "    %t = arith.constant 2.0 : f32\n"
       "    %2 = arith.cmpf ogt, %in, %t : f32\n"
       "    %3 = arith.select %2, %in, %z : f32\n    linalg.yield %3 : f32\n",
       ColumnOp::ThresholdedRelu,
       {2.0f}},
      {"    %2 = math.exp %in : f32\n    %3 = arith.subf %2, %cst : f32\n"
       "    %a = arith.constant 2.0 : f32\n    %4 = arith.mulf %3, %a : f32\n"
       "    %z = arith.constant 0.0 : f32\n"
       "    %5 = arith.cmpf olt, %in, %z : f32\n"
       "    %6 = arith.select %5, %4, %in : f32\n    linalg.yield %6 : f32\n",
       ColumnOp::Elu,
       {2.0f}},
      {"    %2 = math.exp %in : f32\n    %3 = arith.subf %2, %cst : f32\n"
       "    %z = arith.constant 0.0 : f32\n"
       "    %5 = arith.cmpf olt, %in, %z : f32\n"
       "    %6 = arith.select %5, %3, %in : f32\n    linalg.yield %6 : f32\n",
       ColumnOp::Elu,
       {1.0f}},
      {"    %a = arith.constant 1.5 : f32\n    %g = arith.constant 1.25 : f32\n"
       "    %2 = math.exp %in : f32\n    %3 = arith.mulf %2, %a : f32\n"
       "    %4 = arith.subf %3, %a : f32\n    %z = arith.constant 0.0 : f32\n"
       "    %5 = arith.cmpf ogt, %in, %z : f32\n"
       "    %6 = arith.select %5, %in, %4 : f32\n"
       "    %7 = arith.mulf %g, %6 : f32\n    linalg.yield %7 : f32\n",
       ColumnOp::Selu,
       {1.5f, 1.25f}},
      {"    %2 = math.exp %in : f32\n    %3 = arith.addf %2, %cst : f32\n"
       "    %4 = math.log %3 : f32\n    linalg.yield %4 : f32\n",
       ColumnOp::Softplus,
       {}},
      {"    %2 = math.absf %in : f32\n    %3 = arith.addf %cst, %2 : f32\n"
       "    %4 = arith.divf %in, %3 : f32\n    linalg.yield %4 : f32\n",
       ColumnOp::Softsign,
       {}},
      {"    %b = arith.constant 0.5 : f32\n    %a = arith.constant 0.25 : f32\n"
       "    %2 = arith.mulf %in, %a : f32\n    %3 = arith.addf %2, %b : f32\n"
       "    %4 = arith.minimumf %cst, %3 : f32\n"
       "    %z = arith.constant 0.0 : f32\n"
       "    %5 = arith.maximumf %z, %4 : f32\n    linalg.yield %5 : f32\n",
       ColumnOp::HardSigmoid,
       {0.25f, 0.5f}},
      {"    %b = arith.constant 0.5 : f32\n    %a = arith.constant 0.25 : f32\n"
       "    %2 = arith.mulf %in, %a : f32\n    %3 = arith.addf %2, %b : f32\n"
       "    %4 = arith.minimumf %cst, %3 : f32\n"
       "    %z = arith.constant 0.0 : f32\n"
       "    %5 = arith.maximumf %z, %4 : f32\n"
       "    %6 = arith.mulf %in, %5 : f32\n    linalg.yield %6 : f32\n",
       ColumnOp::HardSwish,
       {0.25f, 0.5f}},
      {"    %l = arith.constant -2.0 : f32\n"
       "    %2 = arith.maximumf %in, %l : f32\n"
       "    %3 = arith.minimumf %2, %cst : f32\n    linalg.yield %3 : f32\n",
       ColumnOp::Clip,
       {-2.0f, 1.0f}},
      {"    %2 = arith.minimumf %in, %cst : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::Clip,
       {-INFINITY, 1.0f}},
      {"    %2 = arith.addf %cst, %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::AddScalar,
       {1.0f}},
      {"    %2 = arith.subf %in, %cst : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::SubScalar,
       {1.0f}},
      {"    %2 = arith.subf %cst, %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::ScalarSub,
       {1.0f}},
      {"    %2 = arith.mulf %in, %cst : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::MulScalar,
       {1.0f}},
      {"    %t = arith.constant 4.0 : f32\n"
       "    %2 = arith.divf %in, %t : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::DivScalar,
       {4.0f}},
      {"    %2 = math.floor %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::Floor,
       {}},
      {"    %2 = math.ceil %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::Ceil,
       {}},
      {"    %2 = math.roundeven %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::Round,
       {}},
      {"    %2 = math.sin %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::Sin,
       {}},
      {"    %2 = math.cos %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::Cos,
       {}},
      {"    %2 = math.erf %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::Erf,
       {}},
      {"    %2 = arith.mulf %in, %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::Square,
       {}},
      {"    %e = arith.constant 3.0 : f32\n"
       "    %2 = math.powf %in, %e : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::PowScalar,
       {3.0f}},
      // The importer's Celu, and with alpha = 1 folded away.
      {"    %a = arith.constant 2.0 : f32\n    %z = arith.constant 0.0 : f32\n"
       "    %2 = arith.divf %in, %a : f32\n    %3 = math.exp %2 : f32\n"
       "    %4 = arith.subf %3, %cst : f32\n    %5 = arith.maximumf %z, %in : "
       "f32\n    %6 = arith.mulf %4, %a : f32\n"
       "    %7 = arith.minimumf %z, %6 : f32\n"
       "    %8 = arith.addf %5, %7 : f32\n    linalg.yield %8 : f32\n",
       ColumnOp::Celu,
       {2.0f}},
      {"    %z = arith.constant 0.0 : f32\n"
       "    %3 = math.exp %in : f32\n"
       "    %4 = arith.subf %3, %cst : f32\n    %5 = arith.maximumf %z, %in : "
       "f32\n    %7 = arith.minimumf %z, %4 : f32\n"
       "    %8 = arith.addf %5, %7 : f32\n    linalg.yield %8 : f32\n",
       ColumnOp::Celu,
       {1.0f}},
  };
  for (const Case &c : cases) {
    std::string why;
    bool arg = false;
    auto r = match(unary("3x4", "(d0, d1) -> (d0, d1)",
                         "\"parallel\", \"parallel\"", c.body),
                   why, arg);
    ASSERT_TRUE(mlir::succeeded(r)) << c.body << why;
    EXPECT_EQ(*r, c.op) << c.body;
    EXPECT_TRUE(arg);
    EXPECT_EQ(params, c.params) << c.body;
    EXPECT_EQ(int64_t(params.size()), columnParamCount(c.op));
  }
  // Not matched: atan.
  std::string why;
  bool arg = false;
  auto r =
      match(unary("3x4", "(d0, d1) -> (d0, d1)", "\"parallel\", \"parallel\"",
                  "    %2 = math.atan %in : f32\n    linalg.yield %2 : "
                  "f32\n"),
            why, arg);
  EXPECT_TRUE(mlir::failed(r));
  EXPECT_NE(why.find("none of the per-row ops"), std::string::npos) << why;
}

TEST_F(Match, ScalarConstantsThroughInputs) {
  // Clip with its bounds as splat tensors (a frozen opset-11 input and a
  // linalg.fill), the form `weftc --constant` and PyTorch's exporter give.
  std::string why;
  bool arg = false;
  auto r = match(
      "#map = affine_map<(d0, d1) -> (d0, d1)>\n"
      "#s = affine_map<(d0, d1) -> ()>\n"
      "func.func @f(%arg0: tensor<3x4xf32>) -> tensor<3x4xf32> {\n"
      "  %lo = arith.constant dense<-5.0e-01> : tensor<f32>\n"
      "  %e = tensor.empty() : tensor<f32>\n"
      "  %h = arith.constant 5.0e-01 : f32\n"
      "  %hi = linalg.fill ins(%h : f32) outs(%e : tensor<f32>) -> "
      "tensor<f32>\n"
      "  %0 = tensor.empty() : tensor<3x4xf32>\n"
      "  %1 = linalg.generic {indexing_maps = [#map, #s, #s, #map], "
      "iterator_types = [\"parallel\", \"parallel\"]} ins(%arg0, %lo, %hi : "
      "tensor<3x4xf32>, tensor<f32>, tensor<f32>) outs(%0 : tensor<3x4xf32>) "
      "{\n"
      "  ^bb0(%in: f32, %a: f32, %b: f32, %out: f32):\n"
      "    %2 = arith.maximumf %in, %a : f32\n"
      "    %3 = arith.minimumf %2, %b : f32\n"
      "    linalg.yield %3 : f32\n"
      "  } -> tensor<3x4xf32>\n"
      "  return %1 : tensor<3x4xf32>\n}\n",
      why, arg);
  ASSERT_TRUE(mlir::succeeded(r)) << why;
  EXPECT_EQ(*r, ColumnOp::Clip);
  EXPECT_TRUE(arg);
  EXPECT_EQ(params, (std::vector<float>{-0.5f, 0.5f}));
}

namespace {

std::string withTensor(const std::string &cmap, const std::string &ctype,
                       const std::string &cvalue, const std::string &body) {
  return "#map = affine_map<(d0, d1) -> (d0, d1)>\n"
         "#c = affine_map<" +
         cmap +
         ">\n"
         "func.func @f(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
         "  %k = arith.constant " +
         cvalue + " : " + ctype +
         "\n"
         "  %0 = tensor.empty() : tensor<2x3xf32>\n"
         "  %1 = linalg.generic {indexing_maps = [#map, #c, #map], "
         "iterator_types = [\"parallel\", \"parallel\"]} ins(%arg0, %k : "
         "tensor<2x3xf32>, " +
         ctype +
         ") outs(%0 : tensor<2x3xf32>) {\n"
         "  ^bb0(%in: f32, %b: f32, %out: f32):\n" +
         body +
         "  } -> tensor<2x3xf32>\n"
         "  return %1 : tensor<2x3xf32>\n}\n";
}

} // namespace

TEST_F(Match, TensorConstants) {
  std::string why;
  bool arg = false;
  const std::string full = "dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]>";
  const std::string fullT = "tensor<2x3xf32>";
  struct Case {
    const char *body;
    ColumnOp op;
  } cases[] = {
      {"    %2 = arith.addf %b, %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::AddTensor},
      {"    %2 = arith.subf %in, %b : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::SubTensor},
      {"    %2 = arith.subf %b, %in : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::TensorSub},
      {"    %2 = arith.mulf %in, %b : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::MulTensor},
      {"    %2 = arith.divf %in, %b : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::DivTensor},
      {"    %2 = arith.maximumf %in, %b : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::MaxTensor},
      {"    %2 = arith.minimumf %in, %b : f32\n    linalg.yield %2 : f32\n",
       ColumnOp::MinTensor},
      {"    %z = arith.constant 0.0 : f32\n"
       "    %c = arith.cmpf olt, %in, %z : f32\n"
       "    %m = arith.mulf %in, %b : f32\n"
       "    %s = arith.select %c, %m, %in : f32\n"
       "    linalg.yield %s : f32\n",
       ColumnOp::PRelu},
  };
  for (const Case &c : cases) {
    auto r = match(withTensor("(d0, d1) -> (d0, d1)", fullT, full, c.body), why,
                   arg);
    ASSERT_TRUE(mlir::succeeded(r)) << why << "\n" << c.body;
    EXPECT_EQ(*r, c.op);
    EXPECT_TRUE(arg);
    EXPECT_EQ(params, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  }
  // Broadcast at compile time: a row [3] and a column [2x1].
  auto r = match(withTensor("(d0, d1) -> (d1)", "tensor<3xf32>",
                            "dense<[1.0, 2.0, 3.0]>", cases[0].body),
                 why, arg);
  ASSERT_TRUE(mlir::succeeded(r)) << why;
  EXPECT_EQ(params, (std::vector<float>{1, 2, 3, 1, 2, 3}));
  r = match(withTensor("(d0, d1) -> (d0, 0)", "tensor<2x1xf32>",
                       "dense<[[1.0], [2.0]]>", cases[0].body),
            why, arg);
  ASSERT_TRUE(mlir::succeeded(r)) << why;
  EXPECT_EQ(params, (std::vector<float>{1, 1, 1, 2, 2, 2}));
  // Not one of the ops.
  r = match(withTensor("(d0, d1) -> (d0, d1)", fullT, full,
                       "    %2 = math.powf %in, %b : f32\n"
                       "    linalg.yield %2 : f32\n"),
            why, arg);
  EXPECT_TRUE(mlir::failed(r));
  EXPECT_NE(why.find("constant tensor"), std::string::npos) << why;
}

TEST_F(Match, Sign) {
  std::string why;
  bool arg = false;
  auto r =
      match(unary("2x3", "(d0, d1) -> (d0, d1)", "\"parallel\", \"parallel\"",
                  "    %z = arith.constant 0.0 : f32\n"
                  "    %p = arith.constant 1.0 : f32\n"
                  "    %m = arith.constant -1.0 : f32\n"
                  "    %gt = arith.cmpf ogt, %in, %z : f32\n"
                  "    %lt = arith.cmpf olt, %in, %z : f32\n"
                  "    %s0 = arith.select %lt, %m, %z : f32\n"
                  "    %s1 = arith.select %gt, %p, %s0 : f32\n"
                  "    linalg.yield %s1 : f32\n"),
            why, arg);
  ASSERT_TRUE(mlir::succeeded(r)) << why;
  EXPECT_EQ(*r, ColumnOp::Sign);
  EXPECT_TRUE(arg);
}

TEST_F(Match, CeluWithDifferentAlphas) {
  // exp(x / 2) scaled by 3 is not a Celu, but an Expression.
  std::string why;
  bool arg = false;
  auto r = match(
      unary("2x3", "(d0, d1) -> (d0, d1)", "\"parallel\", \"parallel\"",
            "    %a = arith.constant 2.0 : f32\n"
            "    %b = arith.constant 3.0 : f32\n"
            "    %z = arith.constant 0.0 : f32\n"
            "    %2 = arith.divf %in, %a : f32\n    %3 = math.exp %2 : f32\n"
            "    %4 = arith.subf %3, %cst : f32\n"
            "    %5 = arith.maximumf %z, %in : f32\n"
            "    %6 = arith.mulf %4, %b : f32\n"
            "    %7 = arith.minimumf %z, %6 : f32\n"
            "    %8 = arith.addf %5, %7 : f32\n    linalg.yield %8 : f32\n"),
      why, arg);
  ASSERT_TRUE(mlir::succeeded(r)) << why;
  EXPECT_EQ(*r, ColumnOp::Expression);
}

//===----------------------------------------------------------------------===//
// Expressions: fused bodies no single op matches
//===----------------------------------------------------------------------===//

namespace {

struct ExprCase {
  const char *label;
  const char *body; ///< the fused generic's body (x is %in, 1.0 is %cst)
  double (*ref)(double);
  ColumnOp op;     ///< what it matches
  double bound;    ///< max |y - e| / max(1, |e|) on [-8, 8], measured
  double ulpBound; ///< max ulp where |e| >= 1 (none of these cancel there)
};

double silu(double x) { return x / (1 + std::exp(-x)); }
double geluErf(double x) {
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}
double geluTanh(double x) {
  return 0.5 * x *
         (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
double hardSwish(double x) {
  return x * std::max(0.0, std::min(1.0, x / 6 + 0.5));
}
double softsign(double x) { return x / (1 + std::fabs(x)); }
double mish(double x) { return x * std::tanh(std::log1p(std::exp(x))); }
double reluSquareSel(double x) { return x > 0 ? x * x : 0.1 * x; }

const ExprCase kExprs[] = {
    {"SiLU",
     "    %2 = arith.negf %in : f32\n    %3 = math.exp %2 : f32\n"
     "    %4 = arith.addf %3, %cst : f32\n    %5 = arith.divf %cst, %4 : f32\n"
     "    %6 = arith.mulf %in, %5 : f32\n    linalg.yield %6 : f32\n",
     silu, ColumnOp::Expression, 1e-6, 4},
    {"GELU (erf)",
     "    %s = arith.constant 1.41421354 : f32\n"
     "    %h = arith.constant 5.000000e-01 : f32\n"
     "    %2 = arith.divf %in, %s : f32\n    %3 = math.erf %2 : f32\n"
     "    %4 = arith.addf %3, %cst : f32\n    %5 = arith.mulf %in, %4 : f32\n"
     "    %6 = arith.mulf %5, %h : f32\n    linalg.yield %6 : f32\n",
     geluErf, ColumnOp::Expression, 1e-6, 4},
    {"GELU (tanh)",
     "    %a = arith.constant 4.471500e-02 : f32\n"
     "    %k = arith.constant 0.797884583 : f32\n"
     "    %h = arith.constant 5.000000e-01 : f32\n"
     "    %2 = arith.mulf %in, %in : f32\n    %3 = arith.mulf %2, %in : f32\n"
     "    %4 = arith.mulf %3, %a : f32\n    %5 = arith.addf %in, %4 : f32\n"
     "    %6 = arith.mulf %5, %k : f32\n    %7 = math.tanh %6 : f32\n"
     "    %8 = arith.addf %7, %cst : f32\n    %9 = arith.mulf %in, %8 : f32\n"
     "    %10 = arith.mulf %9, %h : f32\n    linalg.yield %10 : f32\n",
     geluTanh, ColumnOp::Expression, 1e-6, 4},
    {"HardSwish (expanded)",
     "    %z = arith.constant 0.000000e+00 : f32\n"
     "    %a = arith.constant 0.166666672 : f32\n"
     "    %b = arith.constant 5.000000e-01 : f32\n"
     "    %2 = arith.mulf %in, %a : f32\n    %3 = arith.addf %2, %b : f32\n"
     "    %4 = arith.minimumf %3, %cst : f32\n"
     "    %5 = arith.maximumf %4, %z : f32\n"
     "    %6 = arith.mulf %in, %5 : f32\n    linalg.yield %6 : f32\n",
     hardSwish, ColumnOp::HardSwish, 1e-6, 4},
    {"Softsign (expanded)",
     "    %2 = math.absf %in : f32\n    %3 = arith.addf %2, %cst : f32\n"
     "    %4 = arith.divf %in, %3 : f32\n    linalg.yield %4 : f32\n",
     softsign, ColumnOp::Softsign, 2e-7, 4},
    {"Mish",
     "    %2 = math.exp %in : f32\n    %3 = arith.addf %2, %cst : f32\n"
     "    %4 = math.log %3 : f32\n    %5 = math.tanh %4 : f32\n"
     "    %6 = arith.mulf %in, %5 : f32\n    linalg.yield %6 : f32\n",
     mish, ColumnOp::Expression, 2e-6, 8},
    {"select(x > 0, x * x, 0.1 x)",
     "    %z = arith.constant 0.000000e+00 : f32\n"
     "    %t = arith.constant 1.000000e-01 : f32\n"
     "    %2 = arith.cmpf ogt, %in, %z : f32\n"
     "    %3 = arith.mulf %in, %in : f32\n    %4 = arith.mulf %in, %t : f32\n"
     "    %5 = arith.select %2, %3, %4 : f32\n    linalg.yield %5 : f32\n",
     reluSquareSel, ColumnOp::Expression, 1e-7, 1},
};

} // namespace

TEST_F(Match, ExpressionsAccuracyAndCost) {
  const int64_t n = 4096, rows = 3;
  for (const ExprCase &c : kExprs) {
    SCOPED_TRACE(c.label);
    std::string why;
    bool arg = false;
    auto op =
        match(unary("4096", "(d0) -> (d0)", "\"parallel\"", c.body), why, arg);
    ASSERT_TRUE(succeeded(op)) << why;
    EXPECT_EQ(*op, c.op);
    EXPECT_TRUE(arg);
    std::vector<float> in(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      in[size_t(i)] = float(-8.0 + 16.0 * double(i) / double(n - 1));
    SimRun run = simulateChain({*op}, n, rows, in, 0, {params});
    ASSERT_TRUE(run.error.empty()) << run.error;
    // Near the zeros of these functions (GELU's 1 + erf(x / sqrt 2) for
    // x << 0, HardSwish's x / 6 + 1/2 at -3) the f32 formula itself
    // cancels, so the error is measured against max(1, |e|).
    double worstAbs = 0, worstMixed = 0, worstUlp = 0;
    for (int64_t i = 0; i < n; ++i) {
      double e = c.ref(double(in[size_t(i)]));
      double y = double(run.out[size_t(i)]);
      worstAbs = std::max(worstAbs, std::fabs(y - e));
      worstMixed =
          std::max(worstMixed, std::fabs(y - e) / std::max(1.0, std::fabs(e)));
      if (std::fabs(e) >= 1)
        worstUlp = std::max(worstUlp, ulps(run.out[size_t(i)], e));
    }
    std::printf("%-28s %-10s on [-8, 8]: max abs %.2e, max mixed %.2e, max "
                "%.2f ulp (|e| >= 1), %lld cycles/sample for 4096 on 3 rows\n",
                c.label, columnOpName(*op), worstAbs, worstMixed, worstUlp,
                (long long)run.predicted);
    EXPECT_LE(worstMixed, c.bound);
    EXPECT_LE(worstUlp, c.ulpBound);
    // The cost model equals the simulator on several shapes.
    const Shape shapes[] = {{1, 1}, {10, 3}, {129, 4}, {784, 16}};
    for (Shape sh : shapes) {
      std::vector<float> xs = randomInputs(sh.n * 10, 5, 17);
      SimRun r = simulateChain({*op}, sh.n, sh.rows, xs, 0, {params});
      ASSERT_TRUE(r.error.empty()) << r.error;
      EXPECT_EQ(double(r.predicted), r.period())
          << "n=" << sh.n << " rows=" << sh.rows;
    }
  }
}

TEST_F(Match, ExpressionFailures) {
  std::string why;
  bool arg = false;
  // atan has no sequence.
  auto op = match(unary("8", "(d0) -> (d0)", "\"parallel\"",
                        "    %2 = math.atan %in : f32\n"
                        "    %3 = arith.mulf %in, %2 : f32\n"
                        "    linalg.yield %3 : f32\n"),
                  why, arg);
  EXPECT_TRUE(failed(op));
  EXPECT_NE(why.find("math.atan"), std::string::npos) << why;
  // A malformed program is refused before emission.
  std::string err;
  EXPECT_FALSE(checkExpression({1, 0, 5, 0}, err));
  EXPECT_FALSE(checkExpression({1, 0}, err));
}
