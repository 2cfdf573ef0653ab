//===- ColumnKernelTestUtil.h - Column kernels on the simulator -*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// What the column-kernel tests share: emitting kernels into a
// wavelet.program, lowering it to a binary and simulating it over several
// samples; double-precision references; and the fixture that parses a
// function and matches the value it returns.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TEST_UNIT_COLUMNKERNELTESTUTIL_H
#define WEFT_TEST_UNIT_COLUMNKERNELTESTUTIL_H

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

inline double exact(ColumnOp op, double x) {
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
inline std::vector<double> exactSoftmax(ColumnOp op, const float *x, int64_t n) {
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
inline double ulps(float y, double e) {
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
inline SimRun simulateChain(const std::vector<ColumnOp> &ops, int64_t n, int64_t rows,
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
      "wavelet.program @t attributes {target = #weft.target<" +
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

inline SimRun simulate(ColumnOp op, int64_t n, int64_t rows,
                const std::vector<float> &in, int64_t y0 = 0) {
  return simulateChain({op}, n, rows, in, y0);
}

inline std::vector<float> randomInputs(int64_t count, float scale, unsigned seed) {
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

inline void checkElementwise(ColumnOp op, const std::vector<float> &in,
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

inline void checkSoftmax(ColumnOp op, int64_t n, const std::vector<float> &in,
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

inline std::string unary(const std::string &shape, const std::string &map,
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

} // namespace

#endif // WEFT_TEST_UNIT_COLUMNKERNELTESTUTIL_H
