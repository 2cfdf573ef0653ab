//===- TrainedDenseTest.cpp - A trained dense layer on the simulator ------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// One dense layer's training program (docs/training.md) alone on a fabric
// as wide as its columns: the host streams the inputs x on the west ports
// and, on the east ports, a gradient dL/dy per sample (any values: the
// layer does not care where they come from); the layer sends y east and
// dL/dx west. A host model replays the same operations in the same order
// (every product and sum rounded to f32 where the PEs round it), so y, dx
// and the weights and bias read back from the PEs' memories at the end must
// match bit for bit, for SGD and MBGD, with and without ReLU and bias, on
// layouts whose diagonals lie inside and below the rectangle.
//
//===----------------------------------------------------------------------===//

#include "TrainedDenseModel.h"

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
#include <cstring>
#include <random>

using namespace weft::conversion;
using namespace weft::test;

namespace {

constexpr int64_t kA = 0, kB = 1, kP0 = 2, kP1 = 3, kOut = 4;

struct SimRun {
  std::string error;
  Trace tr;
  uint64_t cycles = 0;
  /// The busiest PE's CE cycles (progress only: no waits).
  uint64_t busiestCe = 0;
};

SimRun simulate(const Case &cs, const DenseLayer &layer, const DenseTraining &t,
             const std::vector<float> &xs, const std::vector<float> &dys) {
  SimRun run;
  DenseMapping m;
  m.smear = cs.S;
  m.rows = cs.R;
  DenseColors colors;
  colors.in = kA;
  colors.column = kB;
  colors.psum[0] = kP0;
  colors.psum[1] = kP1;
  colors.out = kOut;
  TrainingColors tc; // 6 .. 10
  RouteTable routes;
  addRoute(routes, denseRowsToDiagonal(m), kA);
  addRoute(routes, denseColumns(m), kB);
  addRoute(routes, densePartialSums(m, 0), kP0);
  addRoute(routes, densePartialSums(m, 1), kP1);
  addRoute(routes, denseResults(m), kOut);
  addRoute(routes, denseGradientIn(m), tc.gradIn);
  addRoute(routes, denseDeltaRows(m), tc.deltaRow);
  if (t.inputGradient) {
    addRoute(routes, denseGradientReduce(m, 0), tc.reduce[0]);
    addRoute(routes, denseGradientReduce(m, 1), tc.reduce[1]);
    addRoute(routes, denseGradientOut(m), tc.gradOut);
  }

  mlir::DialectRegistry registry;
  weft::registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  auto io = [](const std::string &sym, const char *dir, const char *edge,
               int64_t rows, int64_t color, int64_t n) {
    return "  wavelet.io @" + sym + " " + dir + " " + edge + " rows 0 to " +
           std::to_string(rows) + " color " + std::to_string(color) +
           " \"dense32\" : tensor<1x" + std::to_string(n) + "xf32>\n";
  };
  std::string src =
      "wavelet.program @t attributes {target = #weft.target<" +
      std::to_string(cs.S) + "x" + std::to_string(m.footprint()) +
      ">, layers = [\"fc\"]} {\n" + io("x", "input", "west", cs.S, kA, cs.K) +
      io("dy", "input", "east", cs.R, tc.gradIn, cs.M) +
      io("y", "output", "east", cs.R, kOut, cs.M) +
      (t.inputGradient ? io("dx", "output", "west", cs.S, tc.gradOut, cs.K)
                       : "") +
      "}\n";
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
  emitTrainedDenseLayer(builder, program.getLoc(), layer, m, colors, tc, t,
                        "fc", routes);
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
  opts.mode = cs.mode;
  opts.samples = uint64_t(cs.samples);
  opts.maxCycles = 10'000'000;
  std::string err;
  auto sim = weft::sim::Simulator::create(*bin, opts, &err);
  if (!sim) {
    run.error = "load: " + err;
    return run;
  }
  auto bind = [&](const char *name, const std::vector<float> &v) {
    std::vector<uint8_t> bytes(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return sim->bindInput(name, bytes, &err);
  };
  if (!bind("x", xs) || !bind("dy", dys)) {
    run.error = "bind: " + err;
    return run;
  }
  weft::sim::Status status = sim->run();
  run.cycles = sim->cycle();
  if (status != weft::sim::Status::Done) {
    run.error = std::string(weft::sim::statusName(status)) + ": " +
                sim->message();
    return run;
  }
  auto floats = [](const std::vector<uint8_t> &bytes) {
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  };
  for (const weft::sim::PeStats &pe : sim->stats().pes)
    run.busiestCe = std::max(run.busiestCe, pe.ceBusyCycles);
  run.tr.y = floats(sim->output("y"));
  if (t.inputGradient) {
    // The host gives dx in the row-major order of each sample; the model
    // lists it by column chunk, which is the same order.
    run.tr.dx = floats(sim->output("dx"));
  }
  auto read = [&](const WordPlace &p) {
    std::vector<uint16_t> words;
    if (!sim->readMemory(uint32_t(p.x), uint32_t(p.y), uint32_t(p.word), 2,
                         words, &err))
      run.error = "read: " + err;
    uint32_t bits = uint32_t(words.size() == 2 ? words[0] : 0) |
                    (uint32_t(words.size() == 2 ? words[1] : 0) << 16);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  };
  for (int64_t k = 0; k < cs.K; ++k)
    for (int64_t n = 0; n < cs.M; ++n)
      run.tr.w.push_back(read(trainedWeightPlace(cs.K, cs.M, cs.bias,
                                                 cs.relu, m, t, k, n)));
  if (cs.bias)
    for (int64_t n = 0; n < cs.M; ++n)
      run.tr.b.push_back(read(trainedBiasPlace(cs.K, cs.M, cs.relu, m, t, n)));
  return run;
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

/// The layer, its samples and its training, seeded by the case.
struct LayerCase {
  DenseLayer layer;
  std::vector<float> xs, dys;
  DenseTraining t;
};

LayerCase setup(const Case &cs) {
  LayerCase su;
  std::mt19937 rng(unsigned(cs.K * 131 + cs.M * 17 + cs.S * 5 + cs.R));
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  DenseLayer &layer = su.layer;
  layer.K = cs.K;
  layer.M = cs.M;
  layer.relu = cs.relu;
  for (int64_t i = 0; i < cs.K * cs.M; ++i)
    layer.weights.push_back(0.5f * u(rng));
  if (cs.bias)
    for (int64_t n = 0; n < cs.M; ++n)
      layer.bias.push_back(0.1f * u(rng));
  for (int64_t i = 0; i < cs.samples * cs.K; ++i)
    su.xs.push_back(u(rng));
  for (int64_t i = 0; i < cs.samples * cs.M; ++i)
    su.dys.push_back(0.2f * u(rng));
  su.t.mbgd = cs.mbgd;
  su.t.batch = cs.batch;
  su.t.lr = 0.125f;
  su.t.inputGradient = cs.inputGradient;
  return su;
}

void check(const Case &cs) {
  SCOPED_TRACE(describe(cs));
  LayerCase su = setup(cs);
  const DenseLayer &layer = su.layer;
  const std::vector<float> &xs = su.xs, &dys = su.dys;
  const DenseTraining &t = su.t;
  SimRun run = simulate(cs, layer, t, xs, dys);
  ASSERT_EQ(run.error, "");
  Trace want = hostModel(
      cs, layer.weights, layer.bias, xs, t.lr,
      [&](int64_t s, const std::vector<float> &, float *dy) {
        std::copy_n(&dys[size_t(s * cs.M)], cs.M, dy);
      });
  expectSame(run.tr.y, want.y, "y");
  expectSame(run.tr.dx, want.dx, "dx");
  expectSame(run.tr.w, want.w, "W");
  expectSame(run.tr.b, want.b, "b");
  // Training changed the weights (the test would not see a missing update
  // otherwise).
  EXPECT_NE(run.tr.w, layer.weights);
}

TEST(TrainedDense, SgdOnOnePe) { check({6, 4, 1, 1}); }

TEST(TrainedDense, SgdWithTheGradientOfTheInput) {
  check({7, 5, 2, 3});
  check({12, 6, 3, 3, /*relu=*/false, /*bias=*/false});
  check({10, 10, 3, 4});
}

TEST(TrainedDense, DiagonalsBelowTheRectangle) {
  check({9, 4, 3, 2});
  check({8, 3, 4, 1});
}

TEST(TrainedDense, TheFirstLayerSendsNoGradient) {
  check({9, 5, 3, 2, true, true, /*inputGradient=*/false});
}

TEST(TrainedDense, MiniBatches) {
  Case c{10, 10, 3, 4};
  c.mbgd = true;
  c.batch = 3;
  c.samples = 6;
  check(c);
  Case d{9, 4, 3, 2, true, false};
  d.mbgd = true;
  d.batch = 2;
  d.samples = 5; // the last step is incomplete: its gradient stays in g
  check(d);
}

TEST(TrainedDense, FastModeAgrees) {
  Case c{10, 10, 3, 4};
  c.mode = weft::sim::Mode::Fast;
  check(c);
}

/// predictTrainedDenseCycles (what the partitioner balances a training
/// pipeline by) against the simulated busiest PE: its CE cycles per sample
/// (progress only, so a PE that waits for the host is not charged for it).
TEST(TrainedDense, PredictedCyclesMatchTheBusiestPe) {
  std::vector<Case> cases = {{32, 16, 1, 1}, {40, 24, 2, 3},
                             {48, 30, 3, 2, false, true},
                             {36, 40, 4, 4, true, false},
                             {30, 12, 3, 2, true, true, false},
                             {64, 8, 2, 1}};
  Case mb{40, 24, 2, 3};
  mb.mbgd = true;
  mb.batch = 4;
  mb.samples = 8;
  cases.push_back(mb);
  // CPGD's rounds (lag 2): the values are not checked here (the host's
  // dL/dy does not depend on y), only the cycles.
  Case cp{40, 24, 2, 3}, cp1{36, 40, 4, 4};
  cp.samples = cp1.samples = -2;
  cases.push_back(cp);
  cases.push_back(cp1);
  for (Case cs : cases) {
    const bool cpgd = cs.samples == -2;
    if (!cs.mbgd)
      cs.samples = 6;
    SCOPED_TRACE(describe(cs) + (cpgd ? ", cpgd lag 2" : ""));
    LayerCase su = setup(cs);
    if (cpgd) {
      su.t.lag = 2;
      su.t.samples = cs.samples;
    }
    SimRun run = simulate(cs, su.layer, su.t, su.xs, su.dys);
    ASSERT_EQ(run.error, "");
    DenseMapping m;
    m.smear = cs.S;
    m.rows = cs.R;
    double predicted = double(predictTrainedDenseCycles(
        cs.K, cs.M, cs.bias, cs.relu, m, su.t));
    double simulated = double(run.busiestCe) / double(cs.samples);
    EXPECT_NEAR(predicted, simulated, 0.03 * simulated)
        << "predicted " << predicted << ", simulated " << simulated;
  }
}

} // namespace
