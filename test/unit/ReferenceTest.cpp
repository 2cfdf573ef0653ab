//===- ReferenceTest.cpp - Host reference execution and comparison --------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Reference/Compare.h"
#include "weft/Reference/Reference.h"
#include "weft/Machine/Numerics.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace weft;
using namespace weft::reference;
using tensorio::DType;
using tensorio::HostTensor;

namespace {

template <typename T>
HostTensor makeTensor(DType dtype, std::vector<int64_t> shape,
                      std::vector<T> values) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.resize(values.size() * sizeof(T));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

template <typename T> std::vector<T> valuesOf(const HostTensor &t) {
  std::vector<T> v(t.bytes.size() / sizeof(T));
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

HostTensor f32(std::vector<int64_t> shape, std::vector<float> values) {
  return makeTensor(DType::F32, std::move(shape), std::move(values));
}

class ReferenceTest : public ::testing::Test {
protected:
  ReferenceTest() {
    mlir::DialectRegistry registry;
    registerReferenceDialects(registry);
    ctx = std::make_unique<mlir::MLIRContext>(
        registry, mlir::MLIRContext::Threading::DISABLED);
    ctx->loadAllAvailableDialects();
  }

  mlir::OwningOpRef<mlir::ModuleOp> parse(llvm::StringRef source) {
    return mlir::parseSourceString<mlir::ModuleOp>(source, ctx.get());
  }

  std::unique_ptr<mlir::MLIRContext> ctx;
};

// y = tanh(x + w) with w a dense_resource blob, plus a strided slice of y as
// a second output: weights, math through libm, a view that must be copied
// into its out-parameter, and onnx.name matching.
constexpr const char *kTanhModel = R"mlir(
func.func @main_graph(%x: tensor<1x3xf32> {onnx.name = "x"})
    -> (tensor<1x3xf32> {onnx.name = "y"}, tensor<2xf32> {onnx.name = "tail"}) {
  %w = arith.constant dense_resource<w> : tensor<1x3xf32>
  %e = tensor.empty() : tensor<1x3xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : tensor<1x3xf32>, tensor<1x3xf32>) outs(%e : tensor<1x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<1x3xf32>
  %c = tensor.collapse_shape %r [[0, 1]] : tensor<1x3xf32> into tensor<3xf32>
  %tail = tensor.extract_slice %c[1] [2] [1] : tensor<3xf32> to tensor<2xf32>
  return %r, %tail : tensor<1x3xf32>, tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x04000000000000BF0000000000000040"
    }
  }
#-}
)mlir";

TEST_F(ReferenceTest, RunsWeightsMathAndViews) {
  auto module = parse(kTanhModel);
  ASSERT_TRUE(module);
  auto exe = ReferenceExecutable::compile(*module);
  ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
  ASSERT_EQ((*exe)->inputs().size(), 1u);
  EXPECT_EQ((*exe)->inputs()[0].name, "x");
  ASSERT_EQ((*exe)->outputs().size(), 2u);
  EXPECT_EQ((*exe)->outputs()[1].name, "tail");
  EXPECT_EQ((*exe)->outputs()[1].shape, std::vector<int64_t>{2});

  std::vector<float> x = {0.25f, -1.0f, 3.0f};
  std::vector<float> w = {-0.5f, 0.0f, 2.0f};
  auto outputs = (*exe)->run({{"x", f32({1, 3}, x)}});
  ASSERT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
  std::vector<float> y = valuesOf<float>((*outputs)[0]);
  std::vector<float> tail = valuesOf<float>((*outputs)[1]);
  ASSERT_EQ(y.size(), 3u);
  ASSERT_EQ(tail.size(), 2u);
  for (int i = 0; i < 3; ++i)
    EXPECT_FLOAT_EQ(y[i], std::tanh(x[i] + w[i]));
  EXPECT_EQ(tail[0], y[1]);
  EXPECT_EQ(tail[1], y[2]);

  // Runs are repeatable and positional inputs work too.
  auto again = (*exe)->run({{"", f32({1, 3}, x)}});
  ASSERT_TRUE(bool(again));
  EXPECT_EQ((*again)[0], (*outputs)[0]);
}

TEST_F(ReferenceTest, RejectsBadInputs) {
  auto module = parse(kTanhModel);
  ASSERT_TRUE(module);
  auto exe = ReferenceExecutable::compile(*module);
  ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());

  auto message = [&](std::vector<NamedTensor> inputs) {
    auto outputs = (*exe)->run(inputs);
    EXPECT_FALSE(bool(outputs));
    return outputs ? std::string() : llvm::toString(outputs.takeError());
  };
  EXPECT_EQ(message({}), "graph input 0 'x' (f32[1, 3]) has no value");
  EXPECT_EQ(message({{"z", f32({1, 3}, {1, 2, 3})}}),
            "the graph has no input named 'z' (its inputs are 'x')");
  EXPECT_EQ(message({{"x", f32({3}, {1, 2, 3})}}),
            "input 'x' must be f32[1, 3], got f32[3]");
  EXPECT_EQ(
      message({{"x", makeTensor<int64_t>(DType::I64, {1, 3}, {1, 2, 3})}}),
      "input 'x' must be f32[1, 3], got i64[1, 3]");
  EXPECT_EQ(message({{"x", f32({1, 3}, {1, 2, 3})}, {"", f32({1, 3}, {1, 2, 3})}}),
            "too many inputs: the graph takes 1");
}

// Integer and boolean tensors, an output that is an input, and an output
// that is a constant: both need a copy into the caller's buffer.
TEST_F(ReferenceTest, IntegersBooleansAndPassThrough) {
  auto module = parse(R"mlir(
func.func @main_graph(%a: tensor<4xi64> {onnx.name = "a"},
                      %b: tensor<4xi64> {onnx.name = "b"})
    -> (tensor<4xi1> {onnx.name = "lt"}, tensor<4xi64> {onnx.name = "same"},
        tensor<2xi32> {onnx.name = "k"}) {
  %e = tensor.empty() : tensor<4xi1>
  %lt = linalg.generic {
      indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>,
                       affine_map<(i) -> (i)>],
      iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xi64>, tensor<4xi64>) outs(%e : tensor<4xi1>) {
  ^bb0(%x: i64, %y: i64, %o: i1):
    %c = arith.cmpi slt, %x, %y : i64
    linalg.yield %c : i1
  } -> tensor<4xi1>
  %k = arith.constant dense<[7, -9]> : tensor<2xi32>
  return %lt, %a, %k : tensor<4xi1>, tensor<4xi64>, tensor<2xi32>
}
)mlir");
  ASSERT_TRUE(module);
  HostTensor a = makeTensor<int64_t>(DType::I64, {4}, {1, 5, -3, 8});
  HostTensor b = makeTensor<int64_t>(DType::I64, {4}, {2, 5, -4, 9});
  auto outputs = runReference(*module, {{"b", b}, {"a", a}});
  ASSERT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
  EXPECT_EQ((*outputs)[0].dtype, DType::Bool);
  EXPECT_EQ(valuesOf<uint8_t>((*outputs)[0]),
            (std::vector<uint8_t>{1, 0, 0, 1}));
  EXPECT_EQ((*outputs)[1], a);
  EXPECT_EQ(valuesOf<int32_t>((*outputs)[2]), (std::vector<int32_t>{7, -9}));
}

// Named ops the importer emits: a padded convolution, a concat and a softmax
// (an aggregate op the lowering decomposes first).
TEST_F(ReferenceTest, ConvConcatSoftmax) {
  auto module = parse(R"mlir(
func.func @main_graph(%x: tensor<1x1x3x3xf32> {onnx.name = "x"})
    -> (tensor<1x2x3x3xf32> {onnx.name = "y"}, tensor<1x2xf32> {onnx.name = "p"}) {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<1.0> : tensor<1x1x3x3xf32>
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x1x3x3xf32> to tensor<1x1x5x5xf32>
  %e = tensor.empty() : tensor<1x1x3x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                    strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>)
      outs(%init : tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %y = tensor.concat dim(1) %x, %conv
      : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  %logits = tensor.extract_slice %y[0, 0, 1, 1] [1, 2, 1, 1] [1, 1, 1, 1]
      : tensor<1x2x3x3xf32> to tensor<1x2xf32>
  %pe = tensor.empty() : tensor<1x2xf32>
  %p = linalg.softmax dimension(1) ins(%logits : tensor<1x2xf32>)
      outs(%pe : tensor<1x2xf32>) -> tensor<1x2xf32>
  return %y, %p : tensor<1x2x3x3xf32>, tensor<1x2xf32>
}
)mlir");
  ASSERT_TRUE(module);
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto outputs = runReference(*module, {{"x", f32({1, 1, 3, 3}, x)}});
  ASSERT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
  std::vector<float> y = valuesOf<float>((*outputs)[0]);
  ASSERT_EQ(y.size(), 18u);
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(y[i], x[i]);
  // 3x3 box sums with zero padding.
  std::vector<float> sums = {12, 21, 16, 27, 45, 33, 24, 39, 28};
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(y[9 + i], sums[i]) << "at " << i;
  std::vector<float> p = valuesOf<float>((*outputs)[1]);
  float e0 = std::exp(5.0f - 45.0f);
  EXPECT_NEAR(p[0], e0 / (e0 + 1), 1e-12);
  EXPECT_NEAR(p[1], 1 / (e0 + 1), 1e-6);
}

// Half and double precision, with math that has no LLVM intrinsic (erf)
// and math that has one (exp).
TEST_F(ReferenceTest, HalfAndDouble) {
  auto module = parse(R"mlir(
func.func @main_graph(%h: tensor<3xf16> {onnx.name = "h"},
                      %d: tensor<3xf64> {onnx.name = "d"})
    -> (tensor<3xf16> {onnx.name = "eh"}, tensor<3xf64> {onnx.name = "ed"}) {
  %he = tensor.empty() : tensor<3xf16>
  %eh = linalg.generic {
      indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
      iterator_types = ["parallel"]}
      ins(%h : tensor<3xf16>) outs(%he : tensor<3xf16>) {
  ^bb0(%a: f16, %o: f16):
    %e = math.exp %a : f16
    %r = math.erf %e : f16
    linalg.yield %r : f16
  } -> tensor<3xf16>
  %de = tensor.empty() : tensor<3xf64>
  %ed = linalg.generic {
      indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
      iterator_types = ["parallel"]}
      ins(%d : tensor<3xf64>) outs(%de : tensor<3xf64>) {
  ^bb0(%a: f64, %o: f64):
    %e = math.exp %a : f64
    %r = math.erf %e : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  return %eh, %ed : tensor<3xf16>, tensor<3xf64>
}
)mlir");
  ASSERT_TRUE(module);
  // 0x3800 = 0.5, 0xB800 = -0.5, 0x0000 = 0.
  HostTensor h = makeTensor<uint16_t>(DType::F16, {3}, {0x3800, 0xB800, 0});
  HostTensor d = makeTensor<double>(DType::F64, {3}, {0.5, -0.5, 0});
  auto outputs = runReference(*module, {{"h", h}, {"d", d}});
  ASSERT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
  std::vector<double> ed = valuesOf<double>((*outputs)[1]);
  for (int i = 0; i < 3; ++i)
    EXPECT_DOUBLE_EQ(ed[i], std::erf(std::exp(valuesOf<double>(d)[i])));
  std::vector<uint16_t> eh = valuesOf<uint16_t>((*outputs)[0]);
  for (int i = 0; i < 3; ++i) // f16 keeps about three decimal digits.
    EXPECT_NEAR(machine::f16ToF32(eh[i]), ed[i], 1e-3) << "at " << i;
}

TEST_F(ReferenceTest, ReportsUnsupportedSignatures) {
  auto module = parse(R"mlir(
func.func @main_graph(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}
)mlir");
  ASSERT_TRUE(module);
  auto exe = ReferenceExecutable::compile(*module);
  ASSERT_FALSE(bool(exe));
  std::string message = llvm::toString(exe.takeError());
  EXPECT_EQ(message, "input 0 has type tensor<?xf32>; the host reference "
                     "needs a static tensor");

  auto bf16 = parse(R"mlir(
func.func @main_graph(%x: tensor<2xf32>) -> (tensor<2xbf16> {onnx.name = "y"}) {
  %y = arith.truncf %x : tensor<2xf32> to tensor<2xbf16>
  return %y : tensor<2xbf16>
}
)mlir");
  ASSERT_TRUE(bf16);
  auto sig = readGraphSignature(*bf16);
  ASSERT_FALSE(bool(sig));
  EXPECT_EQ(llvm::toString(sig.takeError()),
            "output 0 'y' has type tensor<2xbf16>, whose elements the host "
            "reference does not exchange");

  auto noEntry = parse("func.func @other() { return }");
  ASSERT_TRUE(noEntry);
  auto missing = ReferenceExecutable::compile(*noEntry);
  ASSERT_FALSE(bool(missing));
  EXPECT_EQ(llvm::toString(missing.takeError()),
            "the module has no function @main_graph");
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

// A calibration run's figures for one result: the fraction of non-zeros,
// and per element of a sample (the first dimension) the fraction of samples
// where it is not zero; no profile for a result without zeros, one of rank
// 1, or one the predicate finds all non-zero.
TEST(DensityTest, OverallAndPerElement) {
  auto nz = [](float v) { return v != 0.0f; };
  NodeDensity d = measureDensity(
      f32({3, 2, 2}, {1, 0, 0, 0, /**/ 2, 0, 3, 0, /**/ -1, -0.0f, 0, 0}),
      nz);
  EXPECT_DOUBLE_EQ(d.density, 4.0 / 12.0);
  ASSERT_EQ(d.perElement.size(), 4u);
  EXPECT_DOUBLE_EQ(d.perElement[0], 1.0);
  EXPECT_DOUBLE_EQ(d.perElement[1], 0.0); // -0.0 is a zero
  EXPECT_DOUBLE_EQ(d.perElement[2], 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(d.perElement[3], 0.0);
  NodeDensity full = measureDensity(f32({2, 2}, {1, 2, 3, 4}), nz);
  EXPECT_DOUBLE_EQ(full.density, 1.0);
  EXPECT_TRUE(full.perElement.empty());
  NodeDensity flat = measureDensity(f32({4}, {1, 0, 0, 0}), nz);
  EXPECT_DOUBLE_EQ(flat.density, 0.25);
  EXPECT_TRUE(flat.perElement.empty());
  // Another notion of zero: what the host would not send.
  NodeDensity tiny = measureDensity(f32({1, 2}, {1e-9f, 1.0f}), [](float v) {
    return std::fabs(v) > 1e-6f;
  });
  EXPECT_DOUBLE_EQ(tiny.density, 0.5);
  EXPECT_EQ(tiny.perElement, (std::vector<double>{0.0, 1.0}));
}

TEST(CompareTest, ToleranceRule) {
  // |got - want| <= atol + rtol * |want|.
  Tolerance tol{1e-3, 1e-7};
  EXPECT_TRUE(compareTensors(f32({2}, {1000.9f, -1.0f}),
                             f32({2}, {1000.0f, -1.0f}), tol)
                  .equal);
  Comparison c = compareTensors(f32({2, 2}, {1, 2, 3, 4.01f}),
                                f32({2, 2}, {1, 2, 3, 4}), tol);
  EXPECT_FALSE(c.equal);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.worstIndex, (std::vector<int64_t>{1, 1}));
  EXPECT_NEAR(c.maxAbsError, 0.01, 1e-6);
  EXPECT_NE(c.message.find("1 of 4 elements differ"), std::string::npos)
      << c.message;
  // Near zero only atol counts.
  EXPECT_FALSE(compareTensors(f32({1}, {1e-6f}), f32({1}, {0.0f}), tol).equal);
  EXPECT_TRUE(compareTensors(f32({1}, {5e-8f}), f32({1}, {0.0f}), tol).equal);
}

TEST(CompareTest, NaNAndInfinity) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(compareTensors(f32({3}, {nan, inf, -inf}),
                             f32({3}, {nan, inf, -inf}))
                  .equal);
  Comparison c = compareTensors(f32({2}, {1, nan}), f32({2}, {1, 2}));
  EXPECT_FALSE(c.equal);
  EXPECT_TRUE(std::isinf(c.maxAbsError));
  EXPECT_FALSE(compareTensors(f32({1}, {2}), f32({1}, {nan})).equal);
  EXPECT_FALSE(compareTensors(f32({1}, {inf}), f32({1}, {-inf})).equal);
}

TEST(CompareTest, IntegersExactAndMismatchedMetadata) {
  HostTensor a = makeTensor<int64_t>(DType::I64, {2}, {1, 2});
  HostTensor b = makeTensor<int64_t>(DType::I64, {2}, {1, 3});
  EXPECT_TRUE(compareTensors(a, a).equal);
  Comparison c = compareTensors(a, b, Tolerance{1.0, 1.0});
  EXPECT_FALSE(c.equal) << "integers ignore tolerances";
  EXPECT_EQ(c.worstIndex, std::vector<int64_t>{1});

  EXPECT_EQ(compareTensors(a, f32({2}, {1, 2})).message,
            "dtype i64, expected f32");
  EXPECT_EQ(compareTensors(f32({1, 2}, {1, 2}), f32({2}, {1, 2})).message,
            "shape [1, 2], expected [2]");

  HostTensor t = makeTensor<uint8_t>(DType::Bool, {2}, {1, 0});
  HostTensor f = makeTensor<uint8_t>(DType::Bool, {2}, {1, 1});
  EXPECT_FALSE(compareTensors(t, f).equal);
}

} // namespace
