//===- ColumnKernelTest.cpp - Activations and softmax on a column ---------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits column kernels into a wavelet.program, lowers it to a binary and
// runs it in the simulator over several samples, against a double-precision
// reference; measures the accuracy of the instruction sequences
// (docs/execution-model.md, "Column kernels") and checks the cost model
// against the simulated steady state. Also matches the importer's linalg
// forms.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/DenseLayer.h"
#include "weft/InitDialects.h"
#include "weft/Sim/Simulator.h"
#include "weft/Translate/Wfb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace weft::conversion;
namespace wv = weft::wavelet;

namespace {

double exact(ColumnOp op, double x) {
  switch (op) {
  case ColumnOp::Relu:
    return x > 0 ? x : 0;
  case ColumnOp::Sigmoid:
    return 1 / (1 + std::exp(-x));
  case ColumnOp::Tanh:
    return std::tanh(x);
  default:
    return NAN;
  }
}

/// Softmax / LogSoftmax of one sample in double precision.
std::vector<double> exactSoftmax(ColumnOp op, const float *x, int64_t n) {
  double m = -INFINITY;
  for (int64_t i = 0; i < n; ++i)
    m = std::max(m, double(x[i]));
  double s = 0;
  for (int64_t i = 0; i < n; ++i)
    s += std::exp(double(x[i]) - m);
  std::vector<double> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    y[size_t(i)] = op == ColumnOp::Softmax ? std::exp(double(x[i]) - m) / s
                                           : double(x[i]) - m - std::log(s);
  return y;
}

/// Distance of `y` from the exact value in units of the last place of the
/// float nearest to it.
double ulps(float y, double e) {
  float r = float(e);
  float ulp = std::nextafter(std::fabs(r), INFINITY) - std::fabs(r);
  return std::fabs(double(y) - e) / double(ulp);
}

struct SimRun {
  std::vector<float> out;
  std::vector<uint64_t> sampleDone;
  int64_t predicted = 0;
  std::string error;
  /// Steady-state cycles per sample from the second half of the run.
  double period() const {
    size_t s = sampleDone.size(), h = s / 2;
    return double(sampleDone[s - 1] - sampleDone[h]) / double(s - 1 - h);
  }
};

/// A 1 x (y0 + rows) fabric: host input on the west ports of rows
/// y0 .. y0+rows on color 1, the kernel at column 0, output east on color 2.
/// Several kernels chain west to east, kernel i at column i, each sending
/// on the color the next one receives.
SimRun simulateChain(const std::vector<ColumnOp> &ops, int64_t n, int64_t rows,
                     const std::vector<float> &in, int64_t y0 = 0) {
  const int64_t width = int64_t(ops.size());
  const int64_t firstColor = 6;
  SimRun run;
  mlir::DialectRegistry registry;
  weft::registerAllDialects(registry);
  registry.insert<mlir::math::MathDialect>();
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  std::string src =
      "wavelet.program @t attributes {target = #fabric.target<" +
      std::to_string(width) + "x" + std::to_string(y0 + rows) +
      ">, layers = [\"k\"]} {\n" + "  wavelet.io @x input west rows " +
      std::to_string(y0) + " to " + std::to_string(y0 + rows) + " color " +
      std::to_string(firstColor) + " \"dense32\" : tensor<1x" +
      std::to_string(n) + "xf32>\n" + "  wavelet.io @y output east rows " +
      std::to_string(y0) + " to " + std::to_string(y0 + rows) + " color " +
      std::to_string(firstColor + width) + " \"dense32\" : tensor<1x" +
      std::to_string(n) + "xf32>\n}\n";
  std::string diags;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    diags += d.str() + "\n";
    return mlir::success();
  });
  auto module = mlir::parseSourceString<mlir::ModuleOp>(src, &ctx);
  if (!module) {
    run.error = "parse: " + diags;
    return run;
  }
  auto program = *module->getOps<wv::ProgramOp>().begin();
  mlir::OpBuilder b(&ctx);
  b.setInsertionPointToEnd(&program.getBody().front());
  for (int64_t i = 0; i < width; ++i) {
    ColumnKernel k;
    k.op = ops[size_t(i)];
    k.x = i;
    k.layout = {n, rows, y0};
    k.inColor = firstColor + i;
    k.outColor = firstColor + i + 1;
    // Internal colors stay inside their column, so columns can share them.
    k.internal = {1, 2, 3};
    if (mlir::failed(emitColumnKernel(b, program.getLoc(), k,
                                      "k" + std::to_string(i), "k"))) {
      run.error = "emit: " + diags;
      return run;
    }
    run.predicted = std::max(run.predicted, predictColumnKernelCycles(k));
  }
  if (mlir::failed(mlir::verify(*module))) {
    run.error = "verify: " + diags;
    return run;
  }
  auto bin = weft::translate::lowerToBinary(program);
  if (mlir::failed(bin)) {
    run.error = "lower: " + diags;
    return run;
  }
  weft::sim::Options opts;
  opts.samples = in.size() / size_t(n);
  opts.maxCycles = 50'000'000;
  std::string err;
  auto sim = weft::sim::Simulator::create(*bin, opts, &err);
  if (!sim) {
    run.error = "load: " + err;
    return run;
  }
  std::vector<uint8_t> bytes(in.size() * 4);
  std::memcpy(bytes.data(), in.data(), bytes.size());
  if (!sim->bindInput("x", bytes, &err)) {
    run.error = "bind: " + err;
    return run;
  }
  weft::sim::Status s = sim->run();
  if (s != weft::sim::Status::Done) {
    run.error = std::string(weft::sim::statusName(s)) + ": " + sim->message();
    return run;
  }
  std::vector<uint8_t> y = sim->output("y");
  run.out.resize(y.size() / 4);
  std::memcpy(run.out.data(), y.data(), y.size());
  run.sampleDone = sim->stats().sampleDone;
  return run;
}

SimRun simulate(ColumnOp op, int64_t n, int64_t rows,
                const std::vector<float> &in, int64_t y0 = 0) {
  return simulateChain({op}, n, rows, in, y0);
}

std::vector<float> randomInputs(int64_t count, float scale, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(static_cast<size_t>(count));
  for (float &x : v)
    x = u(rng);
  return v;
}

// Accuracy of the sequences, measured by the sweep tests below and recorded
// in docs/execution-model.md. Sigmoid: ulps where the result is a normal
// float (x > -87), absolute error everywhere. Tanh: absolute error.
constexpr double kSigmoidUlps = 3, kSigmoidAbs = 1.2e-38;
constexpr double kTanhAbs = 2e-7;
constexpr double kSoftmaxRel = 1e-5, kLogSoftmaxAbs = 1e-5;

void checkElementwise(ColumnOp op, const std::vector<float> &in,
                      const std::vector<float> &out) {
  ASSERT_EQ(in.size(), out.size());
  for (size_t i = 0; i < in.size(); ++i) {
    double e = exact(op, in[i]);
    if (op == ColumnOp::Relu)
      ASSERT_EQ(out[i], float(e)) << "x = " << in[i];
    else if (op == ColumnOp::Sigmoid)
      ASSERT_LE(std::fabs(out[i] - e), std::max(kSigmoidAbs, 4e-7 * e))
          << "x = " << in[i];
    else
      ASSERT_LE(std::fabs(out[i] - e), kTanhAbs) << "x = " << in[i];
  }
}

double maxSoftmaxRel = 0, maxLogSoftmaxAbs = 0;

void checkSoftmax(ColumnOp op, int64_t n, const std::vector<float> &in,
                  const std::vector<float> &out) {
  ASSERT_EQ(in.size(), out.size());
  for (size_t s = 0; s < in.size() / size_t(n); ++s) {
    std::vector<double> e = exactSoftmax(op, &in[s * size_t(n)], n);
    for (int64_t i = 0; i < n; ++i) {
      float y = out[s * size_t(n) + size_t(i)];
      double ref = e[size_t(i)];
      if (op == ColumnOp::Softmax && ref > 1e-30)
        maxSoftmaxRel = std::max(maxSoftmaxRel, std::fabs(y - ref) / ref);
      if (op == ColumnOp::LogSoftmax)
        maxLogSoftmaxAbs =
            std::max(maxLogSoftmaxAbs,
                     std::fabs(y - ref) / std::max(1.0, std::fabs(ref)));
      if (op == ColumnOp::Softmax)
        ASSERT_LE(std::fabs(y - ref), kSoftmaxRel * ref + 1e-37)
            << "sample " << s << " element " << i;
      else
        ASSERT_LE(std::fabs(y - ref),
                  kLogSoftmaxAbs * std::max(1.0, std::fabs(ref)))
            << "sample " << s << " element " << i;
    }
  }
}

struct Shape {
  int64_t n, rows;
};
const Shape kShapes[] = {{1, 1},   {7, 1},  {10, 3}, {7, 2},
                         {129, 4}, {64, 5}, {5, 5},  {33, 2}};

TEST(ColumnKernel, ElementwiseOnTheFabric) {
  for (ColumnOp op : {ColumnOp::Relu, ColumnOp::Sigmoid, ColumnOp::Tanh})
    for (Shape sh : kShapes) {
      SCOPED_TRACE(std::string(columnOpName(op)) + " n=" +
                   std::to_string(sh.n) + " rows=" + std::to_string(sh.rows));
      std::vector<float> in = randomInputs(sh.n * 9, 6, unsigned(sh.n));
      SimRun run = simulate(op, sh.n, sh.rows, in);
      ASSERT_TRUE(run.error.empty()) << run.error;
      checkElementwise(op, in, run.out);
    }
}

TEST(ColumnKernel, SoftmaxOnTheFabric) {
  for (ColumnOp op : {ColumnOp::Softmax, ColumnOp::LogSoftmax})
    for (Shape sh : kShapes)
      for (float scale : {3.0f, 1000.0f}) {
        SCOPED_TRACE(std::string(columnOpName(op)) + " n=" +
                     std::to_string(sh.n) + " rows=" + std::to_string(sh.rows) +
                     " scale=" + std::to_string(scale));
        // Large magnitudes overflow exp unless the maximum is subtracted.
        std::vector<float> in =
            randomInputs(sh.n * 9, scale, unsigned(sh.n * 7 + sh.rows));
        SimRun run = simulate(op, sh.n, sh.rows, in);
        ASSERT_TRUE(run.error.empty()) << run.error;
        checkSoftmax(op, sh.n, in, run.out);
      }
  std::printf("softmax: max rel error %.3g (results > 1e-30); log-softmax: "
              "max error %.3g (absolute below 1, relative above)\n",
              maxSoftmaxRel, maxLogSoftmaxAbs);
}

TEST(ColumnKernel, RowsBelowTheTopEdge) {
  std::vector<float> in = randomInputs(10 * 8, 4, 5);
  SimRun run = simulate(ColumnOp::Softmax, 10, 3, in, /*y0=*/2);
  ASSERT_TRUE(run.error.empty()) << run.error;
  checkSoftmax(ColumnOp::Softmax, 10, in, run.out);
}

TEST(ColumnKernel, ChainOfKernels) {
  // Tanh -> Relu -> LogSoftmax -> Softmax -> Sigmoid, columns 0..4: the
  // pipeline runs at the pace of its slowest column.
  const int64_t n = 23, rows = 4;
  std::vector<ColumnOp> ops = {ColumnOp::Tanh, ColumnOp::Relu,
                               ColumnOp::LogSoftmax, ColumnOp::Softmax,
                               ColumnOp::Sigmoid};
  std::vector<float> in = randomInputs(n * 10, 3, 17);
  SimRun run = simulateChain(ops, n, rows, in);
  ASSERT_TRUE(run.error.empty()) << run.error;
  for (size_t s = 0; s < 10; ++s) {
    std::vector<double> v(in.begin() + long(s * n),
                          in.begin() + long((s + 1) * n));
    for (double &x : v)
      x = std::max(std::tanh(x), 0.0);
    std::vector<float> f(v.begin(), v.end());
    std::vector<double> ls = exactSoftmax(ColumnOp::LogSoftmax, f.data(), n);
    f.assign(ls.begin(), ls.end());
    std::vector<double> sm = exactSoftmax(ColumnOp::Softmax, f.data(), n);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(run.out[s * n + size_t(i)],
                  exact(ColumnOp::Sigmoid, sm[size_t(i)]), 1e-6)
          << "sample " << s << " element " << i;
  }
  double sim = run.period();
  std::printf("chain of 5: predicted %lld simulated %.1f\n",
              (long long)run.predicted, sim);
  EXPECT_LE(std::fabs(double(run.predicted) - sim), 0.1 * sim);
}

TEST(ColumnKernel, SoftmaxOfEqualAndInfiniteInputs) {
  // All equal: exactly 1/n. A -inf element contributes exp(-inf) = 0.
  std::vector<float> in(12 * 8, 42.0f);
  in[13] = -INFINITY;
  SimRun run = simulate(ColumnOp::Softmax, 12, 3, in);
  ASSERT_TRUE(run.error.empty()) << run.error;
  for (size_t i = 0; i < in.size(); ++i) {
    size_t s = i / 12;
    float expect = s == 1 ? (i == 13 ? 0.0f : 1.0f / 11) : 1.0f / 12;
    EXPECT_NEAR(run.out[i], expect, 1e-7) << i;
  }
}

/// Sweeps the activation over [lo, hi] and reports its accuracy.
void sweep(ColumnOp op, float lo, float hi, bool tiny, double &maxUlp,
           double &maxAbs, double &maxRel, float &worst) {
  const int64_t n = 8192, rows = 4;
  std::vector<float> in(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    in[size_t(i)] = lo + (hi - lo) * float(i) / float(n - 1);
  // Add tiny magnitudes, where tanh's relative error is worst.
  for (int64_t i = 0; tiny && i < 64; ++i)
    in[size_t(i)] = std::ldexp(1.0f, -int(i)) * (i % 2 ? -1.0f : 1.0f);
  SimRun run = simulate(op, n, rows, in);
  ASSERT_TRUE(run.error.empty()) << run.error;
  maxUlp = maxAbs = maxRel = 0;
  for (int64_t i = 0; i < n; ++i) {
    double e = exact(op, in[size_t(i)]);
    float y = run.out[size_t(i)];
    double abs = std::fabs(y - e);
    maxAbs = std::max(maxAbs, abs);
    if (e != 0)
      maxRel = std::max(maxRel, abs / std::fabs(e));
    if (std::fabs(e) >= 1.17549435e-38) { // normal results
      double u = ulps(y, e);
      if (u > maxUlp) {
        maxUlp = u;
        worst = in[size_t(i)];
      }
    }
  }
}

TEST(ColumnKernel, SigmoidAccuracy) {
  double ulp, abs, rel;
  float worst = 0;
  sweep(ColumnOp::Sigmoid, -87.0f, 30.0f, true, ulp, abs, rel, worst);
  std::printf("sigmoid on [-87, 30]: max %.2f ulp (at x = %g), max abs "
              "error %.3g, max rel error %.3g\n",
              ulp, worst, abs, rel);
  EXPECT_LE(ulp, kSigmoidUlps);
  sweep(ColumnOp::Sigmoid, -104.0f, -87.0f, false, ulp, abs, rel, worst);
  std::printf("sigmoid on [-104, -87] (subnormal results): max abs error "
              "%.3g\n",
              abs);
  EXPECT_LE(abs, kSigmoidAbs);
}

TEST(ColumnKernel, TanhAccuracy) {
  double ulp, abs, rel;
  float worst = 0;
  sweep(ColumnOp::Tanh, -12.0f, 12.0f, true, ulp, abs, rel, worst);
  std::printf("tanh on [-12, 12]: max abs error %.3g, max %.3g ulp (at x = "
              "%g), max rel error %.3g\n",
              abs, ulp, worst, rel);
  EXPECT_LE(abs, kTanhAbs);
  double ulp1, abs1, rel1;
  sweep(ColumnOp::Tanh, 0.55f, 12.0f, false, ulp1, abs1, rel1, worst);
  std::printf("tanh on [0.55, 12]: max %.2f ulp (at x = %g)\n", ulp1, worst);
  sweep(ColumnOp::Tanh, -12.0f, -0.55f, false, ulp1, abs1, rel1, worst);
  std::printf("tanh on [-12, -0.55]: max %.2f ulp (at x = %g)\n", ulp1, worst);
}

TEST(ColumnKernel, CostModelMatchesSimulation) {
  const Shape shapes[] = {{1, 1},   {10, 3},   {129, 4}, {64, 5},
                          {256, 1}, {784, 16}, {10, 10}, {1000, 8}};
  for (ColumnOp op : {ColumnOp::Relu, ColumnOp::Sigmoid, ColumnOp::Tanh,
                      ColumnOp::Softmax, ColumnOp::LogSoftmax})
    for (Shape sh : shapes) {
      std::vector<float> in = randomInputs(sh.n * 10, 5, 11);
      SimRun run = simulate(op, sh.n, sh.rows, in);
      ASSERT_TRUE(run.error.empty()) << run.error;
      double sim = run.period();
      std::printf("%-10s n=%-5lld rows=%-3lld predicted %6lld simulated "
                  "%8.1f (%+.1f%%)\n",
                  columnOpName(op), (long long)sh.n, (long long)sh.rows,
                  (long long)run.predicted, sim,
                  100.0 * (double(run.predicted) - sim) / sim);
      EXPECT_LE(std::fabs(double(run.predicted) - sim), 0.1 * sim)
          << columnOpName(op) << " n=" << sh.n << " rows=" << sh.rows;
    }
}

TEST(ColumnKernel, EmitErrors) {
  mlir::DialectRegistry registry;
  weft::registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  std::string diags;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    diags = d.str();
    return mlir::success();
  });
  auto module = mlir::parseSourceString<mlir::ModuleOp>(
      "wavelet.program @t attributes {target = #fabric.target<1x4>} {}", &ctx);
  ASSERT_TRUE(module);
  auto program = *module->getOps<wv::ProgramOp>().begin();
  mlir::OpBuilder b(&ctx);
  b.setInsertionPointToEnd(&program.getBody().front());
  ColumnKernel k;
  k.op = ColumnOp::Softmax;
  k.layout = {5, 4, 0};
  k.inColor = 1;
  k.outColor = 2;
  k.internal = {3, 4, 5};
  // ceil(5 / 4) = 2: chunks 2, 2, 1, 0.
  EXPECT_TRUE(mlir::failed(emitColumnKernel(b, program.getLoc(), k, "k", "k")));
  EXPECT_NE(diags.find("leave the last chunk of 5 elements"), std::string::npos)
      << diags;
  k.layout = {8, 4, 0};
  k.internal = {3, 4};
  EXPECT_TRUE(mlir::failed(emitColumnKernel(b, program.getLoc(), k, "k", "k")));
  EXPECT_NE(diags.find("needs 3 internal colors, got 2"), std::string::npos)
      << diags;
  k.internal = {3, 4, 2};
  EXPECT_TRUE(mlir::failed(emitColumnKernel(b, program.getLoc(), k, "k", "k")));
  EXPECT_NE(diags.find("uses color 2 twice"), std::string::npos) << diags;
  k.layout = {10, 5, 0};
  k.internal = {3, 4, 5};
  EXPECT_TRUE(mlir::failed(emitColumnKernel(b, program.getLoc(), k, "k", "k")));
  EXPECT_NE(diags.find("does not fit the 1x4 fabric"), std::string::npos)
      << diags;
  EXPECT_EQ(internalColors(ColumnOp::Relu), 0);
  EXPECT_EQ(internalColors(ColumnOp::LogSoftmax), 3);
}

//===----------------------------------------------------------------------===//
// Matching the importer's forms
//===----------------------------------------------------------------------===//

class Match : public ::testing::Test {
protected:
  Match() {
    weft::registerAllDialects(registry);
    registry.insert<mlir::math::MathDialect>();
    ctx = std::make_unique<mlir::MLIRContext>(registry);
    ctx->loadAllAvailableDialects();
  }
  /// Parses a function and matches the value it returns.
  mlir::FailureOr<ColumnOp> match(const std::string &src, std::string &why,
                                  bool &inputIsArg) {
    module = mlir::parseSourceString<mlir::ModuleOp>(src, ctx.get());
    EXPECT_TRUE(module);
    if (!module)
      return mlir::failure();
    auto fn = *module->getOps<mlir::func::FuncOp>().begin();
    auto ret =
        mlir::cast<mlir::func::ReturnOp>(fn.getBody().front().getTerminator());
    mlir::Value input;
    auto op = matchColumnKernel(ret.getOperand(0), input, why);
    inputIsArg = input && input == fn.getArgument(0);
    return op;
  }
  mlir::DialectRegistry registry;
  std::unique_ptr<mlir::MLIRContext> ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

std::string unary(const std::string &shape, const std::string &map,
                  const std::string &iters, const std::string &body) {
  return "#map = affine_map<" + map +
         ">\n"
         "func.func @f(%arg0: tensor<" +
         shape + "xf32>) -> tensor<" + shape +
         "xf32> {\n"
         "  %cst = arith.constant 1.000000e+00 : f32\n"
         "  %0 = tensor.empty() : tensor<" +
         shape +
         "xf32>\n"
         "  %1 = linalg.generic {indexing_maps = [#map, #map], "
         "iterator_types = [" +
         iters + "]} ins(%arg0 : tensor<" + shape + "xf32>) outs(%0 : tensor<" +
         shape +
         "xf32>) {\n"
         "  ^bb0(%in: f32, %out: f32):\n" +
         body + "  } -> tensor<" + shape +
         "xf32>\n"
         "  return %1 : tensor<" +
         shape + "xf32>\n}\n";
}

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
                       "    %2 = arith.mulf %in, %cst : f32\n"
                       "    linalg.yield %2 : f32\n"),
                 why, arg);
  EXPECT_TRUE(mlir::failed(r));
  EXPECT_EQ(why, "its elementwise body is not Relu (maximumf with 0), "
                 "Sigmoid (1 / (1 + exp(-x))) or Tanh (math.tanh)");
  // max(x, 1) is not a ReLU.
  r = match(unary("1x10", rank2, par2,
                  "    %2 = arith.maximumf %in, %cst : f32\n"
                  "    linalg.yield %2 : f32\n"),
            why, arg);
  EXPECT_TRUE(mlir::failed(r));
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
      reassoc + " output_shape [" + (bshape == "1x1xf32" ? "1, 1" : "1") +
      "] : " + kt + " into " + bt +
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
      reassoc + " output_shape [" + (bshape == "1x1xf32" ? "1, 1" : "1") +
      "] : " + kt + " into " + bt +
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
  // Softmax over rows of a [2, 10] tensor is two softmaxes per sample.
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
  EXPECT_TRUE(mlir::failed(r));
  EXPECT_EQ(why, "the normalizer of its Softmax keeps dimension 0 of size 2, "
                 "so it is not one softmax over the whole sample");
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

} // namespace
