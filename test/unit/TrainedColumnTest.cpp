//===- TrainedColumnTest.cpp - Training column kernels on the simulator ---===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The column kernels of a training program (docs/training.md) alone on the
// simulator: Relu and Tanh (x from the west, dL/dy from the east; y east,
// dL/dx west) and the softmax cross-entropy loss (logits from the west,
// labels from the east; p east, dL/dz west), against a host model of the
// same f32 operations (FEXP is the host's expf, FRCP correctly rounded), bit
// for bit; and one dense layer with the loss after it, trained by SGD and
// MBGD, against the same models chained.
//
//===----------------------------------------------------------------------===//

#include "TrainedDenseModel.h"

#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/DenseLayer.h"
#include "weft/InitDialects.h"
#include "weft/Kernels/Chunks.h"
#include "weft/Kernels/DenseTraining.h"
#include "weft/Sim/Simulator.h"
#include "weft/Translate/Wfb.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

using namespace weft::conversion;
using Kind = TrainedColumn::Kind;

namespace {

struct Io {
  std::string name;
  bool output;
  bool east;
  int64_t rows, color, n;
  bool i16 = false;
};

struct Sim {
  std::string error;
  std::map<std::string, std::vector<uint8_t>> outputs;
  std::unique_ptr<weft::sim::Simulator> sim;
};

/// Parses a wavelet.program of the given size and host streams, lets
/// `emit` fill it, lowers and simulates it over `samples` samples.
Sim simulate(int64_t width, int64_t height, const std::vector<Io> &ios,
             const std::function<bool(mlir::OpBuilder &, mlir::Location)> &emit,
             const std::map<std::string, std::vector<uint8_t>> &inputs,
             int64_t samples, weft::sim::Mode mode) {
  Sim run;
  static mlir::DialectRegistry registry = [] {
    mlir::DialectRegistry r;
    weft::registerAllDialects(r);
    return r;
  }();
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  std::string src = "wavelet.program @t attributes {target = #weft.target<" +
                    std::to_string(width) + "x" + std::to_string(height) +
                    ">, layers = [\"k\", \"fc\", \"loss\"]} {\n";
  for (const Io &io : ios)
    src += "  wavelet.io @" + io.name + (io.output ? " output " : " input ") +
           (io.east ? "east" : "west") + " rows 0 to " +
           std::to_string(io.rows) + " color " + std::to_string(io.color) +
           (io.i16 ? " \"dense16x2\" : tensor<1x" : " \"dense32\" : tensor<1x") +
           std::to_string(io.n) + (io.i16 ? "xi16>\n" : "xf32>\n");
  src += "}\n";
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
  auto program = *module->getOps<weft::wavelet::ProgramOp>().begin();
  mlir::OpBuilder builder(&ctx);
  builder.setInsertionPointToEnd(&program.getBody().front());
  if (!emit(builder, program.getLoc())) {
    run.error = "emit: " + diags;
    return run;
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
  opts.mode = mode;
  opts.samples = uint64_t(samples);
  opts.maxCycles = 10'000'000;
  std::string err;
  run.sim = weft::sim::Simulator::create(*bin, opts, &err);
  if (!run.sim) {
    run.error = "load: " + err;
    return run;
  }
  for (auto &[name, bytes] : inputs)
    if (!run.sim->bindInput(name, bytes, &err)) {
      run.error = "bind: " + err;
      return run;
    }
  weft::sim::Status status = run.sim->run();
  if (status != weft::sim::Status::Done) {
    run.error = std::string(weft::sim::statusName(status)) + ": " +
                run.sim->message();
    return run;
  }
  for (const Io &io : ios)
    if (io.output)
      run.outputs[io.name] = run.sim->output(io.name);
  return run;
}

std::vector<uint8_t> bytesOf(const std::vector<float> &v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
std::vector<uint8_t> bytesOf(const std::vector<int16_t> &v) {
  std::vector<uint8_t> b(v.size() * 2);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
std::vector<float> floatsOf(const std::vector<uint8_t> &b) {
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

void expectSame(const std::vector<float> &got, const std::vector<float> &want,
                const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    uint32_t u, v;
    std::memcpy(&u, &got[i], 4);
    std::memcpy(&v, &want[i], 4);
    EXPECT_EQ(u, v) << what << "[" << i << "]: " << got[i] << " vs "
                    << want[i];
  }
}

constexpr int64_t kIn = 0, kOut = 1, kGradIn = 2, kGradOut = 3, kLabel = 4,
                  kRed0 = 5, kRed1 = 6, kBc = 7;

RouteTable columnRoutes(const TrainedColumn &k, int64_t width) {
  RouteTable routes;
  const RowChunks &l = k.layout;
  addRoute(routes, columnInputs(k.x, l.y0, l.rows), k.inColor);
  addRoute(routes, columnResults(k.x, l.y0, l.rows), k.outColor);
  addRoute(routes, columnGradientOut(k.x, l.y0, l.rows), k.gradOut);
  if (k.kind == Kind::Loss) {
    addRoute(routes, columnLabels(k.x, width, l.y0, l.rows), k.labelColor);
    for (int j = 0; j < 3; ++j)
      addRoute(routes, columnReduce(k.x, l.y0, l.rows, j), k.internal[j]);
  } else {
    addRoute(routes, columnGradientIn(k.x, l.y0, l.rows), k.gradIn);
  }
  return routes;
}

TrainedColumn columnOf(Kind kind, int64_t n, int64_t rows, int64_t batch) {
  TrainedColumn k;
  k.kind = kind;
  k.layout = {n, rows, 0};
  k.inColor = kIn;
  k.outColor = kOut;
  k.gradOut = kGradOut;
  if (kind == Kind::Loss) {
    k.labelColor = kLabel;
    k.internal[0] = kRed0;
    k.internal[1] = kRed1;
    k.internal[2] = kBc;
    k.batch = batch;
  } else {
    k.gradIn = kGradIn;
  }
  return k;
}

/// The host model of the loss over one sample of z: p and dL/dz.
void hostLoss(const float *z, int64_t n, int64_t rows, int16_t label,
              int64_t batch, std::vector<float> &p, std::vector<float> &dz) {
  float m = z[0];
  for (int64_t i = 0; i < n; ++i)
    m = std::max(m, z[i]);
  std::vector<float> e(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    e[size_t(i)] = std::exp(z[i] - m);
  // Each row sums its chunk; rows R-1 .. 0 add theirs in turn.
  float total = 0;
  for (int64_t r = rows - 1; r >= 0; --r) {
    float s = 0;
    for (int64_t i = chunkBegin(n, rows, r);
         i < chunkBegin(n, rows, r) + chunkSize(n, rows, r); ++i)
      s = s + e[size_t(i)];
    total = r == rows - 1 ? s : s + total;
  }
  float inv = 1.0f / total, invB = 1.0f / float(batch);
  for (int64_t i = 0; i < n; ++i) {
    float pi = e[size_t(i)] * inv;
    float d = pi - (i == label ? 1.0f : 0.0f);
    if (batch > 1)
      d = d * invB;
    p.push_back(pi);
    dz.push_back(d);
  }
}

void checkColumn(Kind kind, int64_t n, int64_t rows, int64_t batch = 1) {
  SCOPED_TRACE(std::string(kind == Kind::Relu   ? "Relu"
                           : kind == Kind::Tanh ? "Tanh"
                                                : "Loss") +
               " of " + std::to_string(n) + " on " + std::to_string(rows) +
               " rows");
  const int64_t samples = 4, width = 2;
  TrainedColumn k = columnOf(kind, n, rows, batch);
  RouteTable routes = columnRoutes(k, width);
  // Relay the east-side streams through column 1 (the kernel sits at 0).
  for (int64_t r = 0; r < rows; ++r) {
    routes[{1, r}][kOut] = {DirSet(1u << unsigned(weft::machine::Dir::West)),
                           DirSet(1u << unsigned(weft::machine::Dir::East)),
                           {}};
    if (kind != Kind::Loss)
      routes[{1, r}][kGradIn] = {
          DirSet(1u << unsigned(weft::machine::Dir::East)),
          DirSet(1u << unsigned(weft::machine::Dir::West)),
          {}};
  }
  std::mt19937 rng(unsigned(n * 7 + rows));
  std::uniform_real_distribution<float> u(-3.f, 3.f);
  std::vector<float> xs, dys;
  std::vector<int16_t> labels;
  for (int64_t i = 0; i < samples * n; ++i)
    xs.push_back(u(rng));
  for (int64_t i = 0; i < samples * n; ++i)
    dys.push_back(u(rng));
  for (int64_t s = 0; s < samples; ++s)
    labels.push_back(int16_t((s * 5 + 3) % n));
  if (kind == Kind::Relu)
    xs[1] = 0.0f; // y == 0 exactly: no gradient
  std::vector<Io> ios = {{"x", false, false, rows, kIn, n},
                         {"y", true, true, rows, kOut, n},
                         {"dx", true, false, rows, kGradOut, n}};
  std::map<std::string, std::vector<uint8_t>> inputs = {{"x", bytesOf(xs)}};
  if (kind == Kind::Loss) {
    ios.push_back({"labels", false, true, 1, kLabel, 1, /*i16=*/true});
    inputs["labels"] = bytesOf(labels);
  } else {
    ios.push_back({"dy", false, true, rows, kGradIn, n});
    inputs["dy"] = bytesOf(dys);
  }
  // Column 1 has a program only for its routes.
  auto emit = [&](mlir::OpBuilder &b, mlir::Location loc) {
    if (mlir::failed(emitTrainedColumn(b, loc, k, "k", "k", routes)))
      return false;
    for (int64_t r = 0; r < rows; ++r) {
      auto pe = weft::wavelet::PeOp::create(b, loc,
                                            "relay_r" + std::to_string(r), 1, r);
      pe->setAttr("layer", b.getStringAttr("k"));
      mlir::OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&pe.getRegion().emplaceBlock());
      for (const auto &[color, sw] : routes[{1, r}])
        weft::wavelet::RouteOp::create(b, loc, color, sw.in, sw.out, nullptr);
    }
    return true;
  };
  Sim run = simulate(width, rows, ios, emit, inputs, samples,
                     weft::sim::Mode::Reference);
  ASSERT_EQ(run.error, "");
  std::vector<float> y, dx;
  for (int64_t s = 0; s < samples; ++s) {
    const float *x = &xs[size_t(s * n)], *dy = &dys[size_t(s * n)];
    if (kind == Kind::Loss) {
      hostLoss(x, n, rows, labels[size_t(s)], batch, y, dx);
      continue;
    }
    for (int64_t i = 0; i < n; ++i) {
      float yi, di;
      if (kind == Kind::Relu) {
        yi = std::max(x[i], 0.0f);
        di = yi == 0 ? 0.0f : dy[i];
      } else {
        float e = std::exp(x[i] * 2.0f);
        float r = 1.0f / (e + 1.0f);
        yi = 1.0f - (r + r);
        float t = yi * yi;
        t = 1.0f - t;
        di = dy[i] * t;
      }
      y.push_back(yi);
      dx.push_back(di);
    }
  }
  expectSame(floatsOf(run.outputs["y"]), y, "y");
  expectSame(floatsOf(run.outputs["dx"]), dx, "dx");
}

TEST(TrainedColumn, ReluAndTanh) {
  for (Kind kind : {Kind::Relu, Kind::Tanh}) {
    checkColumn(kind, 7, 1);
    checkColumn(kind, 10, 3);
  }
}

TEST(TrainedColumn, SoftmaxCrossEntropy) {
  checkColumn(Kind::Loss, 5, 1);
  checkColumn(Kind::Loss, 10, 3);
  checkColumn(Kind::Loss, 10, 4, /*batch=*/4);
  checkColumn(Kind::Loss, 9, 2, /*batch=*/3);
}

/// A dense layer (S x R at column 0) and the loss column after it (column
/// S), trained on labelled samples: the whole training step of a one-layer
/// network on the fabric.
void checkDenseWithLoss(weft::test::Case cs, bool mbgd, int64_t batch) {
  cs.mbgd = mbgd;
  cs.batch = batch;
  cs.inputGradient = false;
  SCOPED_TRACE(weft::test::describe(cs));
  const int64_t K = cs.K, M = cs.M;
  DenseLayer layer;
  layer.K = K;
  layer.M = M;
  layer.relu = cs.relu;
  std::mt19937 rng(unsigned(K * 3 + M));
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int64_t i = 0; i < K * M; ++i)
    layer.weights.push_back(0.5f * u(rng));
  if (cs.bias)
    for (int64_t n = 0; n < M; ++n)
      layer.bias.push_back(0.1f * u(rng));
  std::vector<float> xs;
  std::vector<int16_t> labels;
  for (int64_t i = 0; i < cs.samples * K; ++i)
    xs.push_back(u(rng));
  for (int64_t s = 0; s < cs.samples; ++s)
    labels.push_back(int16_t((s * 3 + 1) % M));

  DenseMapping m;
  m.smear = cs.S;
  m.rows = cs.R;
  DenseColors colors;
  colors.in = 0;
  colors.column = 1;
  colors.psum[0] = 2;
  colors.psum[1] = 3;
  colors.out = 4;
  TrainingColors tc; // gradIn 6, deltaRow 7 (no input gradient)
  DenseTraining t;
  t.mbgd = mbgd;
  t.batch = batch;
  t.lr = 0.25f;
  TrainedColumn loss;
  loss.kind = Kind::Loss;
  loss.x = cs.S;
  loss.layout = {M, cs.R, 0};
  loss.inColor = colors.out;
  loss.outColor = 10;
  loss.gradOut = tc.gradIn;
  loss.labelColor = 11;
  loss.internal[0] = 12;
  loss.internal[1] = 13;
  loss.internal[2] = 14;
  loss.batch = mbgd ? batch : 1;
  const int64_t width = cs.S + 1;
  RouteTable routes;
  addRoute(routes, denseRowsToDiagonal(m), colors.in);
  addRoute(routes, denseColumns(m), colors.column);
  addRoute(routes, densePartialSums(m, 0), colors.psum[0]);
  addRoute(routes, densePartialSums(m, 1), colors.psum[1]);
  addRoute(routes, denseResults(m), colors.out);
  addRoute(routes, denseGradientIn(m), tc.gradIn);
  addRoute(routes, denseDeltaRows(m), tc.deltaRow);
  RouteTable lossRoutes = columnRoutes(loss, width);
  for (auto &[pe, byColor] : lossRoutes)
    for (auto &[color, sw] : byColor)
      routes[pe][color] = sw;
  addRoute(routes, columnInputs(loss.x, 0, cs.R), colors.out);

  std::vector<Io> ios = {{"x", false, false, cs.S, colors.in, K},
                         {"labels", false, true, 1, loss.labelColor, 1, true},
                         {"p", true, true, cs.R, loss.outColor, M}};
  auto emit = [&](mlir::OpBuilder &b, mlir::Location loc) {
    emitTrainedDenseLayer(b, loc, layer, m, colors, tc, t, "fc", routes);
    return mlir::succeeded(
        emitTrainedColumn(b, loc, loss, "loss", "loss", routes));
  };
  Sim run = simulate(width, m.footprint(), ios, emit,
                     {{"x", bytesOf(xs)}, {"labels", bytesOf(labels)}},
                     cs.samples, weft::sim::Mode::Fast);
  ASSERT_EQ(run.error, "");

  std::vector<float> p;
  weft::test::Trace want = weft::test::hostModel(
      cs, layer.weights, layer.bias, xs, t.lr,
      [&](int64_t s, const std::vector<float> &y, float *dy) {
        std::vector<float> dz;
        hostLoss(y.data(), M, cs.R, labels[size_t(s)], loss.batch, p, dz);
        std::copy(dz.begin(), dz.end(), dy);
      });
  expectSame(floatsOf(run.outputs["p"]), p, "p");
  std::vector<float> w, bias;
  auto read = [&](const WordPlace &pl) {
    std::vector<uint16_t> words;
    std::string err;
    EXPECT_TRUE(run.sim->readMemory(uint32_t(pl.x), uint32_t(pl.y),
                                    uint32_t(pl.word), 2, words, &err))
        << err;
    uint32_t bits = words.size() == 2 ? uint32_t(words[0]) |
                                            (uint32_t(words[1]) << 16)
                                      : 0;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  };
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < M; ++n)
      w.push_back(read(trainedWeightPlace(K, M, cs.bias, cs.relu, m, t, k, n)));
  if (cs.bias)
    for (int64_t n = 0; n < M; ++n)
      bias.push_back(read(trainedBiasPlace(K, M, cs.relu, m, t, n)));
  expectSame(w, want.w, "W");
  expectSame(bias, want.b, "b");
  EXPECT_NE(w, layer.weights);
}

TEST(TrainedColumn, OneDenseLayerAndTheLoss) {
  weft::test::Case c{12, 10, 3, 4, /*relu=*/false};
  c.samples = 6;
  checkDenseWithLoss(c, /*mbgd=*/false, 1);
  checkDenseWithLoss(c, /*mbgd=*/true, 3);
  weft::test::Case d{8, 5, 2, 1, /*relu=*/true};
  d.samples = 4;
  checkDenseWithLoss(d, false, 1);
  checkDenseWithLoss(d, true, 2);
}

} // namespace
