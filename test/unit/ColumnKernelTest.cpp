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
                     const std::vector<float> &in, int64_t y0 = 0,
                     const std::vector<std::vector<float>> &params = {}) {
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
    if (size_t(i) < params.size())
      k.params = params[size_t(i)];
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

/// Softmax / LogSoftmax per group of G elements I apart (blocks of G I).
std::vector<double> exactAxisSoftmax(ColumnOp op, const float *x, int64_t n,
                                     int64_t G, int64_t I) {
  std::vector<double> y(static_cast<size_t>(n));
  std::vector<float> g(static_cast<size_t>(G));
  ColumnOp whole =
      op == ColumnOp::AxisSoftmax ? ColumnOp::Softmax : ColumnOp::LogSoftmax;
  for (int64_t b = 0; b < n; b += G * I)
    for (int64_t i = 0; i < I; ++i) {
      for (int64_t a = 0; a < G; ++a)
        g[size_t(a)] = x[b + a * I + i];
      std::vector<double> e = exactSoftmax(whole, g.data(), G);
      for (int64_t a = 0; a < G; ++a)
        y[size_t(b + a * I + i)] = e[size_t(a)];
    }
  return y;
}

struct AxisShape {
  int64_t n, rows, G, I;
};
// Contiguous groups (I = 1) and strided ones; chunks of whole blocks.
const AxisShape kAxisShapes[] = {
    {20, 1, 5, 1},   {60, 3, 5, 1},   {60, 4, 5, 1},  {12, 2, 1, 1},
    {1000, 8, 5, 1}, {60, 1, 4, 5},   {60, 3, 4, 5},  {60, 1, 3, 20},
    {24, 2, 3, 4},   {784, 4, 7, 28}, {256, 4, 2, 32}};

double maxAxisSoftmaxRel = 0, maxAxisLogSoftmaxErr = 0;

TEST(ColumnKernel, AxisSoftmaxOnTheFabric) {
  for (ColumnOp op : {ColumnOp::AxisSoftmax, ColumnOp::AxisLogSoftmax})
    for (AxisShape sh : kAxisShapes)
      for (float scale : {3.0f, 1000.0f}) {
        SCOPED_TRACE(
            std::string(columnOpName(op)) + " n=" + std::to_string(sh.n) +
            " rows=" + std::to_string(sh.rows) + " G=" + std::to_string(sh.G) +
            " I=" + std::to_string(sh.I) + " scale=" + std::to_string(scale));
        ASSERT_TRUE(
            columnRowsAllowed(op, {float(sh.G), float(sh.I)}, sh.n, sh.rows));
        std::vector<float> in =
            randomInputs(sh.n * 10, scale, unsigned(sh.n * 3 + sh.G));
        SimRun run = simulateChain({op}, sh.n, sh.rows, in, 0,
                                   {{float(sh.G), float(sh.I)}});
        ASSERT_TRUE(run.error.empty()) << run.error;
        for (size_t s = 0; s < 10; ++s) {
          std::vector<double> e =
              exactAxisSoftmax(op, &in[s * size_t(sh.n)], sh.n, sh.G, sh.I);
          for (int64_t i = 0; i < sh.n; ++i) {
            float y = run.out[s * size_t(sh.n) + size_t(i)];
            double ref = e[size_t(i)];
            if (op == ColumnOp::AxisSoftmax) {
              if (ref > 1e-30)
                maxAxisSoftmaxRel =
                    std::max(maxAxisSoftmaxRel, std::fabs(y - ref) / ref);
              ASSERT_LE(std::fabs(y - ref), kSoftmaxRel * ref + 1e-37)
                  << "sample " << s << " element " << i;
            } else {
              double err = std::fabs(y - ref) / std::max(1.0, std::fabs(ref));
              maxAxisLogSoftmaxErr = std::max(maxAxisLogSoftmaxErr, err);
              ASSERT_LE(err, kLogSoftmaxAbs)
                  << "sample " << s << " element " << i;
            }
          }
        }
        // Every PE loops on its own: the model is exact.
        EXPECT_EQ(double(run.predicted), run.period());
        if (scale == 3.0f)
          std::printf("%-14s n=%-4lld rows=%-2lld G=%-3lld I=%-3lld predicted "
                      "%6lld simulated %8.1f\n",
                      columnOpName(op), (long long)sh.n, (long long)sh.rows,
                      (long long)sh.G, (long long)sh.I,
                      (long long)run.predicted, run.period());
      }
  std::printf("axis softmax: max rel error %.3g (results > 1e-30); axis "
              "log-softmax: max error %.3g (absolute below 1, relative "
              "above)\n",
              maxAxisSoftmaxRel, maxAxisLogSoftmaxErr);
}

TEST(ColumnKernel, AxisSoftmaxOfEqualAndInfiniteInputs) {
  // Groups of 4, 3 apart: all equal gives exactly 1/4; a -inf element
  // contributes exp(-inf) = 0 to its group only.
  const int64_t n = 24;
  std::vector<float> in(n * 6, 7.0f);
  in[n + 4] = -INFINITY; // sample 1, block 0, group 1, element 1
  SimRun run =
      simulateChain({ColumnOp::AxisSoftmax}, n, 2, in, 0, {{4.0f, 3.0f}});
  ASSERT_TRUE(run.error.empty()) << run.error;
  for (size_t i = 0; i < in.size(); ++i) {
    size_t s = i / n, j = i % n;
    bool group1 = s == 1 && j < 12 && j % 3 == 1;
    float expect = group1 ? (j == 4 ? 0.0f : 1.0f / 3) : 0.25f;
    EXPECT_NEAR(run.out[i], expect, 1e-7) << i;
  }
}

TEST(ColumnKernel, AxisSoftmaxRows) {
  // Chunks must hold whole blocks of G I elements.
  const std::vector<float> contiguous = {5, 1}, strided = {4, 5};
  EXPECT_EQ(columnChunkMultiple(ColumnOp::AxisSoftmax, strided), 20);
  EXPECT_EQ(columnChunkMultiple(ColumnOp::Softmax, {}), 1);
  EXPECT_TRUE(columnRowsAllowed(ColumnOp::AxisSoftmax, contiguous, 60, 4));
  EXPECT_FALSE(columnRowsAllowed(ColumnOp::AxisSoftmax, contiguous, 60, 5));
  EXPECT_TRUE(columnRowsAllowed(ColumnOp::AxisLogSoftmax, strided, 60, 3));
  EXPECT_FALSE(columnRowsAllowed(ColumnOp::AxisLogSoftmax, strided, 60, 2));
  // ceil(60 / 4) = 15 is a multiple of 5, but of 20 it is not.
  EXPECT_FALSE(columnRowsAllowed(ColumnOp::AxisLogSoftmax, strided, 60, 4));
  EXPECT_TRUE(columnRowsAllowed(ColumnOp::Relu, {}, 60, 7));

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
      "wavelet.program @t attributes {target = #fabric.target<1x8>} {}", &ctx);
  ASSERT_TRUE(module);
  auto program = *module->getOps<wv::ProgramOp>().begin();
  mlir::OpBuilder b(&ctx);
  b.setInsertionPointToEnd(&program.getBody().front());
  ColumnKernel k;
  k.op = ColumnOp::AxisSoftmax;
  k.layout = {60, 2, 0};
  k.params = strided;
  k.inColor = 1;
  k.outColor = 2;
  EXPECT_TRUE(mlir::failed(emitColumnKernel(b, program.getLoc(), k, "k", "k")));
  EXPECT_EQ(diags, "column kernel k (AxisSoftmax): 2 rows cut its 60 elements "
                   "into chunks of 30, which split its blocks of 20 elements "
                   "(each PE must hold whole groups)");
  k.params = {7, 1};
  k.layout = {60, 1, 0};
  EXPECT_TRUE(mlir::failed(emitColumnKernel(b, program.getLoc(), k, "k", "k")));
  EXPECT_EQ(diags, "column kernel k (AxisSoftmax) has groups of 7 elements 1 "
                   "apart, which do not tile its 60 elements");
  k.params = {2, 300};
  k.layout = {600, 1, 0};
  EXPECT_TRUE(mlir::failed(emitColumnKernel(b, program.getLoc(), k, "k", "k")));
  EXPECT_EQ(diags, "column kernel k (AxisSoftmax): the elements of a group are "
                   "300 apart, beyond the 255-element stride of a DSD; the "
                   "softmax axis needs fewer elements after it");
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
    auto op = matchColumnKernel(ret.getOperand(0), input, why, &params);
    inputIsArg = input && input == fn.getArgument(0);
    return op;
  }
  mlir::DialectRegistry registry;
  std::unique_ptr<mlir::MLIRContext> ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<float> params;
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

//===----------------------------------------------------------------------===//
// Elementwise ops with constants
//===----------------------------------------------------------------------===//

namespace {

/// One elementwise op with its constants and its exact function.
struct Unary {
  ColumnOp op;
  std::vector<float> params;
  double (*ref)(double x, const std::vector<float> &p);
  float lo, hi; ///< the sweep's range
  const char *label;
};

double sel(bool c, double a, double b) { return c ? a : b; }

const Unary kUnaries[] = {
    {ColumnOp::Copy, {}, [](double x, auto &) { return x; }, -100, 100, "Copy"},
    {ColumnOp::Abs,
     {},
     [](double x, auto &) { return std::fabs(x); },
     -100,
     100,
     "Abs"},
    {ColumnOp::Neg, {}, [](double x, auto &) { return -x; }, -100, 100, "Neg"},
    {ColumnOp::Exp,
     {},
     [](double x, auto &) { return std::exp(x); },
     -87,
     88,
     "Exp"},
    {ColumnOp::Log,
     {},
     [](double x, auto &) { return std::log(x); },
     1e-30f,
     1e30f,
     "Log"},
    {ColumnOp::Sqrt,
     {},
     [](double x, auto &) { return std::sqrt(x); },
     0,
     1e30f,
     "Sqrt"},
    {ColumnOp::Reciprocal,
     {},
     [](double x, auto &) { return 1 / x; },
     1e-30f,
     1e30f,
     "Reciprocal"},
    {ColumnOp::LeakyRelu,
     {0.1f},
     [](double x, auto &p) { return sel(x < 0, x * p[0], x); },
     -100,
     100,
     "LeakyRelu(0.1)"},
    {ColumnOp::LeakyRelu,
     {3.0f},
     [](double x, auto &p) { return sel(x < 0, x * p[0], x); },
     -100,
     100,
     "LeakyRelu(3)"},
    {ColumnOp::LeakyRelu,
     {-0.5f},
     [](double x, auto &p) { return sel(x < 0, x * p[0], x); },
     -100,
     100,
     "LeakyRelu(-0.5)"},
    {ColumnOp::ThresholdedRelu,
     {1.0f},
     [](double x, auto &p) { return sel(x > p[0], x, 0); },
     -10,
     10,
     "ThresholdedRelu(1)"},
    {ColumnOp::Elu,
     {2.0f},
     [](double x, auto &p) { return sel(x < 0, p[0] * std::expm1(x), x); },
     -20,
     20,
     "Elu(2)"},
    {ColumnOp::Selu,
     {1.67326319f, 1.05070102f},
     [](double x, auto &p) {
       return p[1] * sel(x > 0, x, p[0] * std::expm1(x));
     },
     -20,
     20,
     "Selu"},
    {ColumnOp::Softplus,
     {},
     [](double x, auto &) { return std::log1p(std::exp(x)); },
     -20,
     20,
     "Softplus"},
    {ColumnOp::Softsign,
     {},
     [](double x, auto &) { return x / (1 + std::fabs(x)); },
     -100,
     100,
     "Softsign"},
    {ColumnOp::HardSigmoid,
     {0.2f, 0.5f},
     [](double x, auto &p) {
       return std::max(0.0, std::min(1.0, double(p[0]) * x + p[1]));
     },
     -5,
     5,
     "HardSigmoid"},
    {ColumnOp::HardSwish,
     {1.0f / 6, 0.5f},
     [](double x, auto &p) {
       return x * std::max(0.0, std::min(1.0, double(p[0]) * x + p[1]));
     },
     -5,
     5,
     "HardSwish"},
    {ColumnOp::Clip,
     {-1.0f, 2.0f},
     [](double x, auto &p) {
       return std::min(std::max(x, double(p[0])), double(p[1]));
     },
     -5,
     5,
     "Clip(-1, 2)"},
    {ColumnOp::Clip,
     {-INFINITY, 2.0f},
     [](double x, auto &p) { return std::min(x, double(p[1])); },
     -5,
     5,
     "Clip(max 2)"},
    {ColumnOp::Clip,
     {-1.0f, INFINITY},
     [](double x, auto &p) { return std::max(x, double(p[0])); },
     -5,
     5,
     "Clip(min -1)"},
    {ColumnOp::AddScalar,
     {0.3f},
     [](double x, auto &p) { return x + double(p[0]); },
     -5,
     5,
     "x + 0.3"},
    {ColumnOp::SubScalar,
     {0.3f},
     [](double x, auto &p) { return x - double(p[0]); },
     -5,
     5,
     "x - 0.3"},
    {ColumnOp::ScalarSub,
     {0.3f},
     [](double x, auto &p) { return double(p[0]) - x; },
     -5,
     5,
     "0.3 - x"},
    {ColumnOp::MulScalar,
     {0.3f},
     [](double x, auto &p) { return x * double(p[0]); },
     -5,
     5,
     "x * 0.3"},
    {ColumnOp::DivScalar,
     {3.0f},
     [](double x, auto &p) { return x / double(p[0]); },
     -5,
     5,
     "x / 3"},
    {ColumnOp::Sign,
     {},
     [](double x, auto &) { return sel(x > 0, 1, sel(x < 0, -1, 0)); },
     -5,
     5,
     "Sign"},
    {ColumnOp::Floor,
     {},
     [](double x, auto &) { return std::floor(x); },
     -1e4,
     1e4,
     "Floor"},
    {ColumnOp::Ceil,
     {},
     [](double x, auto &) { return std::ceil(x); },
     -1e4,
     1e4,
     "Ceil"},
    {ColumnOp::Round,
     {},
     [](double x, auto &) { return std::nearbyint(x); },
     -1e4,
     1e4,
     "Round"},
    {ColumnOp::Sin,
     {},
     [](double x, auto &) { return std::sin(x); },
     -100,
     100,
     "Sin"},
    {ColumnOp::Cos,
     {},
     [](double x, auto &) { return std::cos(x); },
     -100,
     100,
     "Cos"},
    {ColumnOp::Sin,
     {},
     [](double x, auto &) { return std::sin(x); },
     -1e4,
     1e4,
     "Sin (wide)"},
    {ColumnOp::Cos,
     {},
     [](double x, auto &) { return std::cos(x); },
     -1e4,
     1e4,
     "Cos (wide)"},
    {ColumnOp::Erf,
     {},
     [](double x, auto &) { return std::erf(x); },
     -6,
     6,
     "Erf"},
    {ColumnOp::Erf,
     {},
     [](double x, auto &) { return std::erf(x); },
     -1,
     1,
     "Erf (near 0)"},
    {ColumnOp::Celu,
     {2.0f},
     [](double x, auto &p) {
       return std::max(0.0, x) +
              std::min(0.0, double(p[0]) * std::expm1(x / double(p[0])));
     },
     -20,
     20,
     "Celu(2)"},
    {ColumnOp::Square,
     {},
     [](double x, auto &) { return x * x; },
     -1e3,
     1e3,
     "Square"},
    {ColumnOp::PowScalar,
     {3.0f},
     [](double x, auto &p) { return std::pow(x, double(p[0])); },
     -100,
     100,
     "Pow(x, 3)"},
    {ColumnOp::PowScalar,
     {5.0f},
     [](double x, auto &p) { return std::pow(x, double(p[0])); },
     -10,
     10,
     "Pow(x, 5)"},
    {ColumnOp::PowScalar,
     {-2.0f},
     [](double x, auto &p) { return std::pow(x, double(p[0])); },
     1e-3f,
     1e3f,
     "Pow(x, -2)"},
    {ColumnOp::PowScalar,
     {0.5f},
     [](double x, auto &p) { return std::pow(x, double(p[0])); },
     1e-30f,
     1e30f,
     "Pow(x, 0.5)"},
    {ColumnOp::PowScalar,
     {1.5f},
     [](double x, auto &p) { return std::pow(x, double(p[0])); },
     1e-3f,
     1e3f,
     "Pow(x, 1.5)"},
    {ColumnOp::PowScalar,
     {0.0f},
     [](double x, auto &p) { return std::pow(x, double(p[0])); },
     -100,
     100,
     "Pow(x, 0)"},
};

/// Error of `y` against the exact `e`: in ulps of the float nearest to e
/// where that is a normal float, and absolutely below.
double ulpError(float y, double e) {
  if (std::isinf(e))
    return y == float(e) ? 0 : INFINITY;
  if (std::fabs(e) < 1.17549435e-38)
    return std::fabs(double(y) - e) / 1.4e-45; // in subnormal ulps
  return ulps(y, e);
}

} // namespace

TEST(ColumnKernel, UnaryOpsAccuracy) {
  // A sweep of 4096 points over each op's range (geometric for Log, Sqrt
  // and Reciprocal, whose ranges span decades), on 3 rows.
  const int64_t n = 4096, rows = 3;
  for (const Unary &u : kUnaries) {
    SCOPED_TRACE(u.label);
    std::vector<float> in(static_cast<size_t>(n));
    bool geometric = u.lo > 0;
    for (int64_t i = 0; i < n; ++i) {
      double t = double(i) / double(n - 1);
      in[size_t(i)] =
          geometric ? float(double(u.lo) * std::pow(double(u.hi) / u.lo, t))
                    : float(u.lo + (u.hi - u.lo) * t);
    }
    SimRun run = simulateChain({u.op}, n, rows, in, 0, {u.params});
    ASSERT_TRUE(run.error.empty()) << run.error;
    double worst = 0;
    float at = 0;
    for (int64_t i = 0; i < n; ++i) {
      double e = u.ref(in[size_t(i)], u.params);
      double err = ulpError(run.out[size_t(i)], e);
      if (err > worst) {
        worst = err;
        at = in[size_t(i)];
      }
    }
    std::printf("%-20s on [%g, %g]: max %.2f ulp (at x = %g)\n", u.label,
                double(u.lo), double(u.hi), worst, double(at));
    // Exp/Log/Softplus/Elu/Selu ride on the host's expf/logf (<= 1 ulp);
    // Softsign and x / c round twice; everything else once or not at all.
    double bound = 0.5;
    switch (u.op) {
    case ColumnOp::Copy:
    case ColumnOp::Abs:
    case ColumnOp::Neg:
    case ColumnOp::Clip:
      bound = 0;
      break;
    case ColumnOp::Exp:
    case ColumnOp::Log:
      bound = 1;
      break;
    case ColumnOp::DivScalar:
      bound = 1;
      break;
    case ColumnOp::Softsign:
      bound = 2;
      break;
    case ColumnOp::Floor:
    case ColumnOp::Ceil:
    case ColumnOp::Round:
      bound = 0;
      break;
    case ColumnOp::Square:
      bound = 0.5;
      break;
    case ColumnOp::Sin:
    case ColumnOp::Cos:
    case ColumnOp::Erf:
      // A polynomial with rounding at every step (documented figures).
      bound = 3;
      break;
    case ColumnOp::PowScalar:
      // Products round once each (x^5: three times, x^-2 twice, x^3
      // measured 1.28 ulp, x^5 2.74);
      // exp(c log x) multiplies log's rounding by c log x (up to ~10 here).
      bound = u.params[0] == 1.5f ? 16 : 3;
      break;
    case ColumnOp::Celu:
    case ColumnOp::HardSigmoid:
    case ColumnOp::HardSwish:
      // alpha x + beta cancels near its zero: bounded absolutely, below.
    case ColumnOp::Softplus:
    case ColumnOp::Elu:
    case ColumnOp::Selu:
      // expm1 near 0 cancels: measured in ulps of the result, exp(x) - 1
      // loses the low bits of exp(x) (documented, absolute error below).
      bound = INFINITY;
      break;
    default:
      break;
    }
    EXPECT_LE(worst, bound);
    if (std::isinf(bound)) {
      double abs = 0;
      for (int64_t i = 0; i < n; ++i)
        abs = std::max(
            abs,
            std::fabs(run.out[size_t(i)] - u.ref(in[size_t(i)], u.params)) /
                std::max(1.0, std::fabs(u.ref(in[size_t(i)], u.params))));
      std::printf("%-20s error %.3g (absolute below 1, relative above)\n",
                  u.label, abs);
      EXPECT_LE(abs, 3e-7);
    }
  }
}

TEST(ColumnKernel, UnaryOpsSpecialValues) {
  // NaN, infinities and signed zeros through the sequences that select.
  std::vector<float> in = {0.0f, -0.0f, INFINITY, -INFINITY, 1.0f, -1.0f};
  const int64_t n = int64_t(in.size());
  for (ColumnOp op : {ColumnOp::Elu, ColumnOp::Selu, ColumnOp::LeakyRelu,
                      ColumnOp::ThresholdedRelu}) {
    std::vector<float> p =
        op == ColumnOp::Selu
            ? std::vector<float>{1.5f, 1.25f}
            : std::vector<float>{op == ColumnOp::LeakyRelu ? -0.5f : 0.5f};
    SimRun run = simulateChain({op}, n, 2, in, 0, {p});
    ASSERT_TRUE(run.error.empty()) << run.error;
    for (int64_t i = 0; i < n; ++i) {
      const Unary *u = nullptr;
      for (const Unary &c : kUnaries)
        if (c.op == op)
          u = &c;
      double e = u->ref(in[size_t(i)], p);
      if (std::isinf(e))
        EXPECT_EQ(run.out[size_t(i)], float(e))
            << columnOpName(op) << " x = " << in[size_t(i)];
      else
        EXPECT_NEAR(run.out[size_t(i)], e, 1e-6 * std::max(1.0, std::fabs(e)))
            << columnOpName(op) << " x = " << in[size_t(i)];
    }
  }
}

TEST(ColumnKernel, UnaryCostModelIsExact) {
  const Shape shapes[] = {{1, 1}, {10, 3}, {129, 4}, {64, 5}, {784, 16}};
  for (const Unary &u : kUnaries)
    for (Shape sh : shapes) {
      std::vector<float> in = randomInputs(sh.n * 10, 5, 13);
      if (u.lo > 0)
        for (float &x : in)
          x = std::fabs(x) + 0.1f;
      SimRun run = simulateChain({u.op}, sh.n, sh.rows, in, 0, {u.params});
      ASSERT_TRUE(run.error.empty()) << run.error;
      EXPECT_EQ(double(run.predicted), run.period())
          << u.label << " n=" << sh.n << " rows=" << sh.rows;
      if (sh.n == 784)
        std::printf("%-20s n=784 rows=16: predicted %lld simulated %.1f\n",
                    u.label, (long long)run.predicted, run.period());
    }
}

TEST(ColumnKernel, UnaryChain) {
  // Celu's expansion: x / 2 -> Elu(1) -> 2 x, three columns.
  const int64_t n = 27, rows = 3;
  std::vector<float> in = randomInputs(n * 6, 4, 3);
  SimRun run =
      simulateChain({ColumnOp::DivScalar, ColumnOp::Elu, ColumnOp::MulScalar},
                    n, rows, in, 0, {{2.0f}, {1.0f}, {2.0f}});
  ASSERT_TRUE(run.error.empty()) << run.error;
  for (size_t i = 0; i < in.size(); ++i) {
    double x = in[i];
    double e = std::max(0.0, x) + std::min(0.0, 2 * std::expm1(x / 2));
    EXPECT_NEAR(run.out[i], e, 1e-6) << i;
  }
}

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

/// The ops with a constant tensor and their double references.
struct TensorCase {
  ColumnOp op;
  double (*ref)(double x, double c);
  double bound; // ulps
};
const TensorCase kTensorCases[] = {
    {ColumnOp::AddTensor, [](double x, double c) { return x + c; }, 0.5},
    {ColumnOp::SubTensor, [](double x, double c) { return x - c; }, 0.5},
    {ColumnOp::TensorSub, [](double x, double c) { return c - x; }, 0.5},
    {ColumnOp::MulTensor, [](double x, double c) { return x * c; }, 0.5},
    // x (1 / C) rounds twice.
    {ColumnOp::DivTensor, [](double x, double c) { return x / c; }, 2},
    {ColumnOp::MaxTensor, [](double x, double c) { return std::max(x, c); }, 0},
    {ColumnOp::MinTensor, [](double x, double c) { return std::min(x, c); }, 0},
    {ColumnOp::PRelu, [](double x, double c) { return x < 0 ? x * c : x; },
     0.5},
};

} // namespace

TEST(ColumnKernel, TensorConstantOps) {
  // Every PE reads its own chunk of C; checked against double on shapes
  // with uneven chunks, and the cost model against the simulator.
  const Shape shapes[] = {{1, 1},   {7, 2},  {10, 3},
                          {129, 4}, {64, 5}, {784, 16}};
  for (const TensorCase &t : kTensorCases)
    for (Shape sh : shapes) {
      SCOPED_TRACE(std::string(columnOpName(t.op)) + " n=" +
                   std::to_string(sh.n) + " rows=" + std::to_string(sh.rows));
      std::vector<float> c = randomInputs(sh.n, 3, 29);
      if (t.op == ColumnOp::DivTensor)
        for (float &v : c)
          v = v < 0 ? v - 0.25f : v + 0.25f;
      std::vector<float> in = randomInputs(sh.n * 10, 5, 31);
      SimRun run = simulateChain({t.op}, sh.n, sh.rows, in, 0, {c});
      ASSERT_TRUE(run.error.empty()) << run.error;
      for (size_t i = 0; i < in.size(); ++i) {
        double e = t.ref(in[i], c[i % size_t(sh.n)]);
        ASSERT_LE(ulpError(run.out[i], e), t.bound)
            << "x = " << in[i] << " c = " << c[i % size_t(sh.n)] << " got "
            << run.out[i];
      }
      EXPECT_EQ(double(run.predicted), run.period());
      if (sh.n == 784)
        std::printf("%-10s n=784 rows=16: predicted %lld simulated %.1f\n",
                    columnOpName(t.op), (long long)run.predicted, run.period());
    }
}

TEST(ColumnKernel, TensorConstantNeedsOnePerElement) {
  std::vector<float> in = randomInputs(10, 1, 1);
  SimRun run = simulateChain({ColumnOp::AddTensor}, 10, 3, in, 0,
                             {std::vector<float>(9, 1.0f)});
  EXPECT_NE(run.error.find("takes 10 constants, got 9"), std::string::npos)
      << run.error;
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

TEST(ColumnKernel, SignSpecialValues) {
  std::vector<float> in = {0.0f,      -0.0f,   1.4e-45f, -1.4e-45f, INFINITY,
                           -INFINITY, 3.4e38f, -2.5f,    1e-30f,    -1e-38f};
  const int64_t n = int64_t(in.size());
  SimRun run = simulateChain({ColumnOp::Sign}, n, 3, in);
  ASSERT_TRUE(run.error.empty()) << run.error;
  for (int64_t i = 0; i < n; ++i) {
    float x = in[size_t(i)];
    float e = x > 0 ? 1.0f : x < 0 ? -1.0f : 0.0f;
    EXPECT_EQ(run.out[size_t(i)], e) << "x = " << x;
  }
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

namespace {

/// Bit-exact comparison that treats every NaN alike.
bool sameFloat(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

} // namespace

TEST(ColumnKernel, RoundingIsExact) {
  // Floor, Ceil and Round bit for bit (signed zeros included) against the
  // host: special values, ties, the edges of 2^22 and 2^23, and random bit
  // patterns over every exponent.
  std::vector<float> in = {
      0.0f,        -0.0f,      0.5f,        -0.5f,       1.5f,
      -1.5f,       2.5f,       -2.5f,       0.49999997f, -0.49999997f,
      0.7f,        -0.7f,      4194304.5f,  -4194304.5f, 4194305.5f,
      -4194305.5f, 8388607.5f, -8388607.5f, 8388607.0f,  8388608.0f,
      -8388608.0f, 8388609.0f, -8388609.0f, 16777217.0f, 1e30f,
      -1e30f,      3.4e38f,    -3.4e38f,    INFINITY,    -INFINITY,
      NAN,         1.4e-45f,   -1.4e-45f,   1e-38f,      -1e-38f,
      3e-8f,       -3e-8f,     1.0f,        -1.0f,       99.5f};
  std::mt19937 rng(7);
  while (in.size() < 4000) {
    uint32_t bits = uint32_t(rng());
    // Bias toward the interesting exponents (2^-2 .. 2^24).
    if (in.size() % 2)
      bits = (bits & 0x807fffffu) | (uint32_t(125 + rng() % 24) << 23);
    float f;
    std::memcpy(&f, &bits, 4);
    in.push_back(f);
  }
  const int64_t n = int64_t(in.size());
  for (ColumnOp op : {ColumnOp::Floor, ColumnOp::Ceil, ColumnOp::Round}) {
    SimRun run = simulateChain({op}, n, 3, in);
    ASSERT_TRUE(run.error.empty()) << run.error;
    int bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      float x = in[size_t(i)];
      float e = op == ColumnOp::Floor  ? std::floor(x)
                : op == ColumnOp::Ceil ? std::ceil(x)
                                       : std::nearbyint(x);
      if (!sameFloat(run.out[size_t(i)], e) && bad++ < 10)
        ADD_FAILURE() << columnOpName(op) << "(" << x
                      << ") = " << run.out[size_t(i)] << ", want " << e;
    }
    EXPECT_EQ(bad, 0) << columnOpName(op);
  }
}

TEST(ColumnKernel, TranscendentalSpecialValues) {
  std::vector<float> in = {0.0f, -0.0f,  INFINITY, -INFINITY,
                           NAN,  1e-30f, -1e-30f,  1.4e-45f};
  const int64_t n = int64_t(in.size());
  for (ColumnOp op : {ColumnOp::Sin, ColumnOp::Cos, ColumnOp::Erf}) {
    SimRun run = simulateChain({op}, n, 2, in);
    ASSERT_TRUE(run.error.empty()) << run.error;
    for (int64_t i = 0; i < n; ++i) {
      float x = in[size_t(i)];
      float e = op == ColumnOp::Sin   ? std::sin(x)
                : op == ColumnOp::Cos ? std::cos(x)
                                      : std::erf(x);
      // sin(-0) is +0: r + r z S(z) adds +0 to r = -0 (documented).
      if (op == ColumnOp::Sin && x == 0)
        e = 0.0f;
      // erf of a tiny x is 1.128 x: within an ulp, not bit for bit.
      if (op == ColumnOp::Erf && std::isfinite(x) && x != 0)
        EXPECT_NEAR(run.out[size_t(i)], e, std::fabs(e) * 2.4e-7)
            << columnOpName(op) << "(" << x << ")";
      else
        EXPECT_TRUE(sameFloat(run.out[size_t(i)], e))
            << columnOpName(op) << "(" << x << ") = " << run.out[size_t(i)]
            << ", want " << e;
    }
  }
}

TEST(ColumnKernel, PowSpecialCases) {
  // Integer exponents by products: negative bases, zeros, infinities.
  std::vector<float> in = {-2.0f,     -0.0f,    0.0f, 3.0f,
                           -INFINITY, INFINITY, 0.5f, -1.5f};
  const int64_t n = int64_t(in.size());
  for (float c : {2.0f, 3.0f, -1.0f, -2.0f, 1.0f, 0.0f, 7.0f, -3.0f}) {
    SimRun run = simulateChain({ColumnOp::PowScalar}, n, 2, in, 0, {{c}});
    ASSERT_TRUE(run.error.empty()) << run.error;
    for (int64_t i = 0; i < n; ++i) {
      float x = in[size_t(i)];
      float e = float(std::pow(double(x), double(c)));
      EXPECT_TRUE(sameFloat(run.out[size_t(i)], e))
          << "pow(" << x << ", " << c << ") = " << run.out[size_t(i)]
          << ", want " << e;
    }
  }
}

TEST(ColumnKernel, ConstantsInMemoryAndDsrReloads) {
  // Erf keeps 7 of its 13 constants in the memory table and uses 14
  // (dst, src0) pairs, 3 of them through the scratch DSR: the cost model
  // counts the reloads (UnaryCostModelIsExact checks every op).
  std::vector<float> in = randomInputs(60, 3, 5);
  SimRun run = simulateChain({ColumnOp::Erf}, 20, 2, in);
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(double(run.predicted), run.period());
  for (size_t i = 0; i < in.size(); ++i)
    EXPECT_NEAR(run.out[i], std::erf(double(in[i])), 2.4e-7) << in[i];
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
