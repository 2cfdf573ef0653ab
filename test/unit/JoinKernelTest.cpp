//===- JoinKernelTest.cpp - Elementwise ops of two streams ----------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits join kernels (y = a op b of two streams) into a wavelet.program,
// lowers it to a binary and runs it in the simulator in both modes over
// several samples: every op, with and without a fused ReLU, chunking,
// buffered input and FIFO depth against a op b (max(a op b, 0)) computed
// in float, bit for bit; the cost model against the simulated steady
// state; a fork whose long branch needs a whole chunk before it sends
// anything (the deadlock the FIFO exists for); and the kernels
// emitJoinKernel refuses (docs/execution-model.md, "Join kernels").
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/JoinKernel.h"
#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/DenseLayer.h"
#include "weft/Conversion/PoolKernel.h"
#include "weft/InitDialects.h"
#include "weft/Sim/Simulator.h"
#include "weft/Translate/Wfb.h"

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
namespace wt = weft::machine;

namespace {

const JoinOp kOps[] = {JoinOp::Add, JoinOp::Sub, JoinOp::Mul,
                       JoinOp::Div, JoinOp::Max, JoinOp::Min};

/// maxNum / minNum with -0 < +0 (docs/architecture.md §11).
float maxNum(float a, float b, bool max) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  if (a == b)
    return (std::signbit(a) == max) ? b : a;
  return (a > b) == max ? a : b;
}

/// a op b as the kernel computes it, in float.
float reference(JoinOp op, float a, float b) {
  switch (op) {
  case JoinOp::Add:
    return a + b;
  case JoinOp::Sub:
    return a - b;
  case JoinOp::Mul:
    return a * b;
  case JoinOp::Div:
    return a * (1.0f / b); // a times the correctly rounded reciprocal
  case JoinOp::Max:
    return maxNum(a, b, true);
  case JoinOp::Min:
    return maxNum(a, b, false);
  }
  return NAN;
}

/// What kernel `k` computes of a and b: a op b, then with a fused ReLU
/// fmax against +0 (maxNum: a NaN gives 0, -0 gives +0).
float reference(const JoinKernel &k, float a, float b) {
  float y = reference(k.op, a, b);
  return k.relu ? maxNum(y, 0.0f, true) : y;
}

/// The kernels with a ReLU that emitJoinKernel refuses: sub and div with a
/// buffered, which take two steps before it.
bool reluRefused(const JoinKernel &k) { return k.relu && join::isTwoStep(k); }

/// Bitwise equality, any NaN equal to any NaN (the machine's is canonical).
bool sameFloat(float x, float y) {
  if (std::isnan(x) || std::isnan(y))
    return std::isnan(x) && std::isnan(y);
  uint32_t u, v;
  std::memcpy(&u, &x, 4);
  std::memcpy(&v, &y, 4);
  return u == v;
}

struct SimRun {
  std::vector<float> out;
  std::vector<uint64_t> sampleDone;
  /// The CE-busy cycles of the join's busiest PE over the run.
  uint64_t joinBusy = 0;
  int64_t predicted = 0;
  std::string error;
  weft::sim::Status status = weft::sim::Status::Done;
  /// Steady-state cycles per sample from the second half of the run.
  double period() const {
    size_t s = sampleDone.size(), h = s / 2;
    return double(sampleDone[s - 1] - sampleDone[h]) / double(s - 1 - h);
  }
};

/// What feeds the join.
enum class Feed {
  /// a and b from two host streams on the west ports of the join's rows
  /// (one port per row, so the host alternates them).
  TwoInputs,
  /// A fork: the host's x multicast at column 0 to the join (a = x) and to
  /// a column kernel (`forkOp`) whose result is b, the join at column 1.
  Fork,
  /// The same fork into a global max pooling (`pool`) of the feature map
  /// x: b is per channel (a squeeze-and-excitation block's y = x s).
  ForkPool,
};

constexpr int64_t kColorA = 3, kColorB = 5, kColorOut = 7;

struct Case {
  JoinKernel k;
  Feed feed = Feed::TwoInputs;
  ColumnOp forkOp = ColumnOp::Neg;
  PoolShape pool;
  int64_t samples = 4;
  weft::sim::Mode mode = weft::sim::Mode::Fast;
};

SimRun simulate(Case su, const std::vector<float> &a,
                const std::vector<float> &b) {
  SimRun run;
  JoinKernel &k = su.k;
  const RowChunks lay = k.layout;
  const bool fork = su.feed != Feed::TwoInputs;
  k.x = fork ? 1 : 0;
  k.colorA = kColorA;
  k.colorB = kColorB;
  k.outColor = kColorOut;
  mlir::DialectRegistry registry;
  weft::registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  auto io = [&](const std::string &sym, const char *dir, const char *edge,
                int64_t color) {
    return "  wavelet.io @" + sym + " " + dir + " " + edge + " rows 0 to " +
           std::to_string(lay.rows) + " color " + std::to_string(color) +
           " \"dense32\" : tensor<1x" + std::to_string(lay.n) + "xf32>\n";
  };
  std::string src = "wavelet.program @t attributes {target = "
                    "#weft.target<" +
                    std::to_string(k.x + 1) + "x" + std::to_string(lay.rows) +
                    ">, layers = [\"j\"" +
                    (su.feed == Feed::ForkPool ? ", \"f\"" : "") + "]} {\n" +
                    io("a", "input", "west", kColorA) +
                    (fork ? "" : io("b", "input", "west", kColorB)) +
                    io("y", "output", "east", kColorOut) + "}\n";
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
  mlir::OpBuilder builder(&ctx);
  builder.setInsertionPointToEnd(&program.getBody().front());
  if (fork) {
    // Column 0: x (color A) to the east and to the own CE at once; the
    // kernel's result (color B) to the east.
    ColumnKernel ck;
    ck.op = su.forkOp;
    ck.x = 0;
    ck.layout = lay;
    ck.inColor = kColorA;
    ck.outColor = kColorB;
    RouteTable routes;
    for (int64_t r = 0; r < lay.rows; ++r) {
      routes[{0, r}][kColorA] = {
          DirSet(1u << unsigned(wt::Dir::West)),
          DirSet((1u << unsigned(wt::Dir::Ramp)) |
                 (1u << unsigned(wt::Dir::East))),
          {}};
      routes[{0, r}][kColorB] = {DirSet(1u << unsigned(wt::Dir::Ramp)),
                                 DirSet(1u << unsigned(wt::Dir::East)), {}};
    }
    if (su.feed == Feed::ForkPool) {
      PoolKernel pk;
      pk.shape = su.pool;
      pk.x = 0;
      pk.rows = lay.rows;
      pk.inColor = kColorA;
      pk.outColor = kColorB;
      if (mlir::failed(
              emitPoolKernel(builder, program.getLoc(), pk, "f", routes))) {
        run.error = "emit pool: " + diags;
        return run;
      }
    } else if (mlir::failed(emitColumnKernel(builder, program.getLoc(), ck,
                                             "f", "j", &routes))) {
      run.error = "emit fork: " + diags;
      return run;
    }
  }
  if (mlir::failed(emitJoinKernel(builder, program.getLoc(), k, "j", "j"))) {
    run.error = "emit: " + diags;
    return run;
  }
  run.predicted = predictJoinKernelCycles(k);
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
  opts.mode = su.mode;
  opts.samples = uint64_t(su.samples);
  opts.maxCycles = 20'000'000;
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
  if (!bind("a", a) || (!fork && !bind("b", b))) {
    run.error = "bind: " + err;
    return run;
  }
  run.status = sim->run();
  if (run.status != weft::sim::Status::Done) {
    run.error = std::string(weft::sim::statusName(run.status)) + ": " +
                sim->message();
    return run;
  }
  std::vector<uint8_t> y = sim->output("y");
  run.out.resize(y.size() / 4);
  std::memcpy(run.out.data(), y.data(), y.size());
  run.sampleDone = sim->stats().sampleDone;
  for (const weft::sim::PeStats &pe : sim->stats().pes)
    if (int64_t(pe.x) == k.x)
      run.joinBusy = std::max(run.joinBusy, pe.ceBusyCycles);
  return run;
}

std::vector<float> randomInputs(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4, 4);
  std::vector<float> v(static_cast<size_t>(count));
  for (float &x : v)
    x = u(rng);
  return v;
}

std::string describe(const JoinKernel &k) {
  return std::string(joinOpName(k.op)) + (k.relu ? "+relu" : "") +
         " n=" + std::to_string(k.layout.n) +
         " rows=" + std::to_string(k.layout.rows) +
         " buffered=" + std::to_string(k.buffered) +
         " fifo=" + std::to_string(k.fifoSamples);
}

TEST(JoinKernel, EveryOpOnTheFabric) {
  struct Shape {
    int64_t n, rows;
  };
  const Shape shapes[] = {{1, 1},  {7, 1},  {7, 3},    {64, 1},  {64, 3},
                          {64, 8}, {1000, 3}, {1000, 8}};
  int runs = 0;
  for (bool relu : {false, true})
    for (JoinOp op : kOps)
      for (Shape sh : shapes)
        for (int buffered : {0, 1})
          for (int64_t fifo : {1, 3}) {
            Case su;
            su.k.op = op;
            su.k.relu = relu;
            su.k.layout = {sh.n, sh.rows, 0};
            su.k.buffered = buffered;
            su.k.fifoSamples = fifo;
            if (reluRefused(su.k))
              continue;
            su.samples = 5;
            // Both simulator modes on a third of the cases (they are tested
            // equivalent elsewhere; this checks the kernel's use of FIFOs and
            // microthreads in each).
            bool both = (runs++ % 3) == 0;
            SCOPED_TRACE(describe(su.k));
            std::vector<float> a = randomInputs(sh.n * su.samples, 11 + runs),
                               b = randomInputs(sh.n * su.samples, 97 + runs);
            SimRun run = simulate(su, a, b);
            ASSERT_TRUE(run.error.empty()) << run.error;
            ASSERT_EQ(run.out.size(), a.size());
            for (size_t i = 0; i < a.size(); ++i)
              ASSERT_TRUE(sameFloat(run.out[i], reference(su.k, a[i], b[i])))
                  << "element " << i << ": " << a[i] << " " << joinOpName(op)
                  << " " << b[i] << " gave " << run.out[i];
            if (both) {
              su.mode = weft::sim::Mode::Reference;
              SimRun ref = simulate(su, a, b);
              ASSERT_TRUE(ref.error.empty()) << ref.error;
              EXPECT_EQ(ref.out, run.out);
              EXPECT_EQ(ref.sampleDone, run.sampleDone);
            }
          }
}

TEST(JoinKernel, SpecialValues) {
  // Signed zeros, infinities, NaN, subnormals, both orders, every op and
  // both buffered inputs: bit for bit (any NaN for NaN).
  const float s[] = {0.0f,     -0.0f,   1.0f,     -1.0f,   INFINITY,
                     -INFINITY, NAN,    1e-45f,   -1e-45f, 3.0e38f,
                     -2.5f,    0.1f};
  std::vector<float> a, b;
  for (float x : s)
    for (float y : s) {
      a.push_back(x);
      b.push_back(y);
    }
  const int64_t n = int64_t(a.size()) / 4; // four samples of 36
  for (bool relu : {false, true})
    for (JoinOp op : kOps)
      for (int buffered : {0, 1}) {
        Case su;
        su.k.op = op;
        su.k.relu = relu;
        su.k.layout = {n, 3, 0};
        su.k.buffered = buffered;
        if (reluRefused(su.k))
          continue;
        su.samples = 4;
        SCOPED_TRACE(describe(su.k));
        SimRun run = simulate(su, a, b);
        ASSERT_TRUE(run.error.empty()) << run.error;
        for (size_t i = 0; i < a.size(); ++i)
          EXPECT_TRUE(sameFloat(run.out[i], reference(su.k, a[i], b[i])))
              << a[i] << " " << joinOpName(op) << " " << b[i] << " gave "
              << run.out[i];
      }
}

TEST(JoinKernel, CostModelMatchesSimulation) {
  // The join at column 1 behind a fork through a Neg column kernel (L + 2
  // cycles per sample), so the join sets the pace: y = x op (-x).
  struct Shape {
    int64_t n, rows;
  };
  const Shape shapes[] = {{1, 1}, {7, 1}, {7, 3}, {64, 1}, {64, 8}, {1000, 8}};
  for (bool relu : {false, true})
    for (JoinOp op : kOps)
      for (Shape sh : shapes)
        for (int buffered : {0, 1})
          for (int64_t fifo : {1, 3}) {
            Case su;
            su.k.op = op;
            su.k.relu = relu;
            su.k.layout = {sh.n, sh.rows, 0};
            su.k.buffered = buffered;
            su.k.fifoSamples = fifo;
            if (reluRefused(su.k))
              continue;
            su.feed = Feed::Fork;
            // The two-step ops (Sub, Div with a buffered) and a fused ReLU
            // settle only once the copy has filled the FIFO, which it gains a
            // few elements per sample; until then they run up to 3 % faster.
            bool twoStep = join::isTwoStep(su.k);
            su.samples = twoStep || relu ? 200 : 16;
            SCOPED_TRACE(describe(su.k));
            std::vector<float> x = randomInputs(sh.n * su.samples, 5);
            SimRun run = simulate(su, x, {});
            ASSERT_TRUE(run.error.empty()) << run.error;
            for (size_t i = 0; i < x.size(); ++i)
              ASSERT_TRUE(sameFloat(run.out[i], reference(su.k, x[i], -x[i])))
                  << "element " << i;
            double sim = run.period();
            // One step: the replay is the simulator's schedule, to the cycle.
            // With a ReLU too once settled; over the second half of 200
            // samples the mean is still 3 cycles short in all (within
            // 0.4 %).
            // Two steps: step 1 takes b only in bursts of a chunk, and the
            // fork ties a to b, so the copy does not always find its input
            // (the replay assumes it does): within 1.5 % from chunks of 64 on,
            // up to 8 % for chunks of 7.
            if (twoStep)
              EXPECT_LE(std::fabs(double(run.predicted) - sim),
                        (sh.n / sh.rows >= 64 ? 0.02 : 0.08) * sim)
                  << "predicted " << run.predicted << " simulated " << sim;
            else if (relu)
              EXPECT_LE(std::fabs(double(run.predicted) - sim), 0.004 * sim)
                  << "predicted " << run.predicted << " simulated " << sim;
            else
              EXPECT_EQ(double(run.predicted), sim);
            if (fifo == 3)
              std::printf(
                  "join %-3s%s n=%-4lld rows=%lld buffered=%d fifo=%lld "
                  "predicted %6lld simulated %8.1f\n",
                  joinOpName(op), relu ? "+relu" : "     ", (long long)sh.n,
                  (long long)sh.rows, buffered, (long long)fifo,
                  (long long)run.predicted, sim);
          }
}

TEST(JoinKernel, PerChannelScaleBehindAGlobalPool) {
  // y = x * s with s = GlobalMaxPool(x) per channel: the fork sends the
  // feature map x to the join (a, buffered: the pool sends s only once it
  // has all of x) and to the pooling. Chunk r of x holds Lc = C / R
  // channels pixel by pixel, element (c, p) at p Lc + c, so the scale of
  // element i of chunk r is s[r Lc + i % Lc]. Exact, and the cost model
  // against the simulated pace (the join's or the pool's, the slower).
  struct Shape {
    int64_t c, h, w, rows, fifo;
  };
  const Shape shapes[] = {{8, 6, 6, 1, 1},   {8, 6, 6, 4, 2},
                          {8, 6, 6, 8, 1},   {3, 5, 7, 3, 1},
                          {16, 16, 16, 4, 2}, {24, 4, 4, 6, 3}};
  for (Shape sh : shapes) {
    Case su;
    su.feed = Feed::ForkPool;
    su.pool.max = true;
    su.pool.c = sh.c;
    su.pool.hin = su.pool.kh = sh.h;
    su.pool.win = su.pool.kw = sh.w;
    const int64_t pixels = sh.h * sh.w, n = sh.c * pixels;
    su.k.op = JoinOp::Mul;
    su.k.layout = {n, sh.rows, 0};
    su.k.buffered = 0;
    su.k.broadcast = 1;
    su.k.pixels = pixels;
    su.k.fifoSamples = sh.fifo;
    su.samples = 8;
    SCOPED_TRACE("C=" + std::to_string(sh.c) + " " + std::to_string(sh.h) +
                 "x" + std::to_string(sh.w) + " rows=" +
                 std::to_string(sh.rows) + " fifo=" +
                 std::to_string(sh.fifo));
    const int64_t L = n / sh.rows, lc = sh.c / sh.rows;
    EXPECT_EQ(joinBroadcastLength(su.k), lc);
    std::vector<float> x = randomInputs(n * su.samples, 17 + int(n));
    for (weft::sim::Mode mode :
         {weft::sim::Mode::Fast, weft::sim::Mode::Reference}) {
      su.mode = mode;
      SimRun run = simulate(su, x, {});
      ASSERT_TRUE(run.error.empty()) << run.error;
      ASSERT_EQ(run.out.size(), x.size());
      for (int64_t smp = 0; smp < su.samples; ++smp)
        for (int64_t r = 0; r < sh.rows; ++r) {
          const float *chunk = x.data() + smp * n + r * L;
          for (int64_t i = 0; i < L; ++i) {
            float scale = -INFINITY;
            for (int64_t p = 0; p < pixels; ++p)
              scale = std::max(scale, chunk[p * lc + i % lc]);
            size_t at = size_t(smp * n + r * L + i);
            ASSERT_TRUE(sameFloat(run.out[at], chunk[i] * scale))
                << "sample " << smp << " row " << r << " element " << i;
          }
        }
      if (mode != weft::sim::Mode::Fast)
        continue;
      // The pooling, about as fast, sets the pipeline's pace; the join's
      // own cycles are its PE's CE-busy cycles per sample (as weftc run
      // reports a kernel's), which the replay predicts.
      double busy = double(run.joinBusy) / double(su.samples);
      std::printf("per-channel C=%lld %lldx%lld R=%lld: join predicted %lld, "
                  "busy %.1f per sample; pipeline %.1f\n",
                  (long long)sh.c, (long long)sh.h, (long long)sh.w,
                  (long long)sh.rows, (long long)run.predicted, busy,
                  run.period());
      // The datapath per sample: the copy and the product (L each) and the
      // scale's receive (Lc).
      EXPECT_GE(run.predicted, 2 * L + lc);
      // (Within 3 % and 8 cycles: the busy cycles also count `init`'s
      // loads, spread over the samples, and the picks of tasks the
      // scale's late arrival leaves waiting.)
      EXPECT_NEAR(busy, double(run.predicted),
                  0.03 * double(run.predicted) + 8);
    }
  }
}

TEST(JoinKernel, PerChannelCostAndMemory) {
  // The join sets the pace when its inputs are always at hand: the replay
  // against the datapath's 2 L + Lc, and the memory bound against the
  // FIFO and the scale's Lc words.
  JoinKernel k;
  k.op = JoinOp::Mul;
  k.broadcast = 1;
  k.buffered = 0;
  k.pixels = 256;
  k.layout = {16 * 256, 4, 0}; // L = 1024, Lc = 4
  k.fifoSamples = 2;
  EXPECT_EQ(joinBroadcastLength(k), 4);
  EXPECT_EQ(joinBroadcastDims(k), (std::vector<int64_t>{4, 128, 2, 1}));
  int64_t t = predictJoinKernelCycles(k);
  EXPECT_GE(t, 2 * 1024 + 4);
  EXPECT_LE(t, 2 * 1024 + 4 + 16);
  EXPECT_EQ(joinMemoryPerPE(k), 2 * (1152 + 2 * 2 * 1024 + 2 * 4));
  // 48 KiB: (24576 - 1152 - 8) / 2048 = 11 whole samples of the chunk.
  EXPECT_EQ(maxJoinFifoSamples(k, 48 * 1024), 11);
  // 257 pixels (a prime) cannot be split over the XDSD's 8-bit lengths.
  k.pixels = 257;
  k.layout = {4 * 257, 1, 0};
  EXPECT_TRUE(joinBroadcastDims(k).empty());
}

TEST(JoinKernel, DelayedBranchNeedsTheFifo) {
  // y = x * sigmoid(x): the fork sends x to the join (a) and to a Sigmoid
  // column, which reads its whole chunk of 125 before it sends anything
  // (b). With a buffered the join takes all of x off the fabric while b is
  // still being computed; the run completes.
  Case su;
  su.k.op = JoinOp::Mul;
  su.k.layout = {1000, 8, 0};
  su.k.buffered = 0;
  su.k.fifoSamples = 1;
  su.feed = Feed::Fork;
  su.forkOp = ColumnOp::Sigmoid;
  su.samples = 6;
  std::vector<float> x = randomInputs(1000 * su.samples, 3);
  for (weft::sim::Mode mode :
       {weft::sim::Mode::Fast, weft::sim::Mode::Reference}) {
    su.mode = mode;
    SimRun run = simulate(su, x, {});
    ASSERT_TRUE(run.error.empty()) << run.error;
    for (size_t i = 0; i < x.size(); ++i) {
      // The Sigmoid column: fneg, fexp (the host's expf), fadd 1, frcp.
      float e = std::exp(-x[i]);
      float sig = 1.0f / (1.0f + e);
      ASSERT_TRUE(sameFloat(run.out[i], x[i] * sig)) << "element " << i;
    }
  }
  // Buffering the delayed input instead leaves the join reading x (a) only
  // pairwise with b: x backs up into the fork, whose multicast is
  // all-or-nothing, so the Sigmoid column never gets its whole chunk. The
  // simulator reports the deadlock, naming the stuck PEs and colors.
  su.k.buffered = 1;
  su.mode = weft::sim::Mode::Fast;
  SimRun stuck = simulate(su, x, {});
  EXPECT_EQ(stuck.status, weft::sim::Status::Deadlock) << stuck.error;
  EXPECT_NE(stuck.error.find("PE (0, 0)"), std::string::npos) << stuck.error;
  EXPECT_NE(stuck.error.find("PE (1, 0)"), std::string::npos) << stuck.error;
  EXPECT_NE(stuck.error.find("color 3"), std::string::npos) << stuck.error;
  std::printf("wrong buffered input: %s\n",
              stuck.error.substr(0, stuck.error.find('\n', 200)).c_str());
}

TEST(JoinKernel, FifoSizing) {
  JoinKernel k;
  k.layout = {1000, 8, 0}; // L = 125
  k.fifoSamples = 3;
  EXPECT_EQ(joinMemoryPerPE(k), 2 * (1152 + 2 * 3 * 125));
  k.op = JoinOp::Div; // a buffered: one chunk of scratch for 1 / b
  EXPECT_EQ(joinMemoryPerPE(k), 2 * (1152 + 2 * 4 * 125));
  k.buffered = 1;
  EXPECT_EQ(joinMemoryPerPE(k), 2 * (1152 + 2 * 3 * 125));
  // A fused ReLU: its FIFO of 2 elements and the word of its zero.
  k.op = JoinOp::Add;
  k.relu = true;
  EXPECT_EQ(joinMemoryPerPE(k), 2 * (1152 + 2 * 3 * 125 + 2 * 2 + 2));
  EXPECT_EQ(maxJoinFifoSamples(k, 49152), 93);
  k.op = JoinOp::Div;
  k.relu = false;
  // 48 KiB: (24576 - 1152) / 250 = 93 chunks; the fifo's 15-bit capacity
  // allows 262.
  EXPECT_EQ(maxJoinFifoSamples(k, 49152), 93);
  EXPECT_EQ(maxJoinFifoSamples(k, 65536), 126);
  k.layout = {15000, 1, 0};
  EXPECT_EQ(maxJoinFifoSamples(k, 65536), 1);
  EXPECT_EQ(maxJoinFifoSamples(k, 49152), 0);
  k.layout = {1000, 8, 0};
  // ceil(difference / interval) + 1, capped by memory.
  EXPECT_EQ(joinFifoSamplesFor(k, 0, 250, 49152), 1);
  EXPECT_EQ(joinFifoSamplesFor(k, 1000, 250, 49152), 5);
  EXPECT_EQ(joinFifoSamplesFor(k, 1001, 250, 49152), 6);
  EXPECT_EQ(joinFifoSamplesFor(k, 1'000'000, 250, 49152), 93);
}

TEST(JoinKernel, FeatureMapFifoInRows) {
  // A ResNet basic block on 6 rows: the skip input (b) is the fork itself,
  // the other (a) two 3x3 convolutions with pad 1 behind it, row h ready
  // once fork row h + 2 has arrived (the last rows together with the last
  // input row). While the join waits for a's row 0, b's rows 0..2 have
  // arrived: 3 rows, plus the one in flight and two for the pace.
  std::vector<int64_t> fork = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> twoConvs = {3, 4, 5, 6, 6, 6};
  EXPECT_EQ(joinFifoRows(twoConvs, fork), 6);
  // The convolutions never run ahead of the fork: nothing to buffer.
  EXPECT_EQ(joinFifoRows(fork, twoConvs), 0);
  // Two branches that keep pace (two elementwise ops) still agree row by
  // row: nothing runs ahead.
  EXPECT_EQ(joinFifoRows(fork, fork), 0);
  // A strided downsampling branch (1x1, stride 2) against 3x3 stride 2
  // then 3x3 stride 1 on a map of 8 rows (4 out): b's row h is fork row 2h,
  // a's row h needs fork row 2 (h + 1) + 1, clamped.
  std::vector<int64_t> down = {1, 3, 5, 7};
  std::vector<int64_t> main = {4, 6, 8, 8};
  EXPECT_EQ(joinFifoRows(main, down), 5);

  // The FIFO of a feature-map join holds pixels of the PE's channels: 16
  // pixels of a 4-channel chunk of an 8 x 8 map (L = 256).
  JoinKernel k;
  k.layout = {8 * 64, 2, 0};
  k.fifoSamples = 0;
  k.pixels = 64;
  k.fifoPixels = 16;
  EXPECT_EQ(joinFifoCapacity(k), 64);
  EXPECT_EQ(joinMemoryPerPE(k), 2 * (1152 + 2 * 64));
  k.fifoPixels = 0;
  k.fifoSamples = 2;
  EXPECT_EQ(joinFifoCapacity(k), 512);
}

TEST(JoinKernel, FifoSmallerThanAChunk) {
  // y = x + (-x) behind a fork through a Neg column: a FIFO of a quarter of
  // a chunk still lets the copy and the compute stream element by element
  // (a push waits while the FIFO is full), and the results are exact.
  Case su;
  su.k.op = JoinOp::Add;
  su.k.layout = {256, 2, 0};
  su.k.buffered = 1;
  su.k.fifoSamples = 0;
  su.k.pixels = 32;
  su.k.fifoPixels = 8;
  su.feed = Feed::Fork;
  su.samples = 8;
  std::vector<float> x = randomInputs(256 * su.samples, 9);
  SimRun run = simulate(su, x, {});
  ASSERT_TRUE(run.error.empty()) << run.error;
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_TRUE(sameFloat(run.out[i], x[i] + -x[i])) << "element " << i;
}

TEST(JoinKernel, FusedReluOfFeatureMaps) {
  // A join with its ReLU as a ResNet block's Add then Relu runs: b
  // buffered in a FIFO of pixels smaller than a chunk, behind a fork
  // through a Neg column. relu(x + (-x)) and relu(x * (-x)) are +0
  // everywhere (the fmax against the +0 immediate turns -0 into +0),
  // relu(max(x, -x)) is |x|.
  for (JoinOp op : {JoinOp::Add, JoinOp::Mul, JoinOp::Max}) {
    Case su;
    su.k.op = op;
    su.k.relu = true;
    su.k.layout = {256, 2, 0};
    su.k.buffered = 1;
    su.k.fifoSamples = 0;
    su.k.pixels = 32;
    su.k.fifoPixels = 8;
    su.feed = Feed::Fork;
    su.samples = 8;
    SCOPED_TRACE(describe(su.k));
    std::vector<float> x = randomInputs(256 * su.samples, 9);
    SimRun run = simulate(su, x, {});
    ASSERT_TRUE(run.error.empty()) << run.error;
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_TRUE(sameFloat(run.out[i], reference(su.k, x[i], -x[i])))
          << "element " << i;
    if (op != JoinOp::Max) {
      for (float y : run.out)
        ASSERT_TRUE(sameFloat(y, 0.0f));
    }
    if (op == JoinOp::Max) {
      for (size_t i = 0; i < x.size(); ++i)
        ASSERT_EQ(run.out[i], std::fabs(x[i]));
    }
  }
}

TEST(JoinKernel, EmitErrors) {
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
      "wavelet.program @t attributes {target = #weft.target<1x4>} {}", &ctx);
  ASSERT_TRUE(module);
  auto program = *module->getOps<wv::ProgramOp>().begin();
  mlir::OpBuilder b(&ctx);
  b.setInsertionPointToEnd(&program.getBody().front());
  auto refused = [&](const JoinKernel &k, const std::string &why) {
    diags.clear();
    EXPECT_TRUE(mlir::failed(emitJoinKernel(b, program.getLoc(), k, "j", "j")))
        << why;
    EXPECT_NE(diags.find(why), std::string::npos) << diags;
  };
  JoinKernel k;
  k.colorA = 1;
  k.colorB = 2;
  k.outColor = 3;
  k.layout = {0, 1, 0};
  refused(k, "join kernel j (add) has 0 elements on 1 rows");
  k.layout = {5, 4, 0}; // chunks 2, 2, 1, 0
  refused(k, "4 rows leave the last chunk of 5 elements (chunks of 2) empty");
  k.layout = {40000, 1, 0};
  refused(k, "a chunk of 40000 elements exceeds the 32767-element vector");
  k.layout = {8, 4, 0};
  k.fifoSamples = 0;
  refused(k, "a FIFO of 0 chunks cannot hold the buffered input (a)");
  k.fifoSamples = 1;
  k.buffered = 2;
  refused(k, "buffered input 2 is neither 0 (a) nor 1 (b)");
  k.buffered = 0;
  k.op = JoinOp::Sub;
  k.relu = true;
  refused(k, "join kernel j: cannot fuse a ReLU after sub with a buffered");
  k.op = JoinOp::Add;
  k.relu = false;
  k.buffered = 1;
  k.layout = {10, 5, 0};
  refused(k, "does not fit the 1x4 fabric");
  k.layout = {20000, 1, 0};
  k.fifoSamples = 2;
  refused(k, "a FIFO of 2 chunks of 20000 elements exceeds the "
             "32767-element capacity of a fifo DSD (at most 1 whole chunks)");
  k.layout = {16000, 1, 0};
  refused(k, "a FIFO of 2 chunks of 16000 elements needs 130304 bytes of PE "
             "memory, more than the 49152 available (at most 0 chunks fit)");
  k.layout = {8, 4, 0};
  k.fifoSamples = 1;
  k.outColor = 2;
  refused(k, "uses color 2 for both b and the result");
  k.outColor = 30;
  refused(k, "color 30 of the result is not routable on a target with 24");
  k.outColor = 3;
  // A per-channel b: only a mul with a buffered, of whole channels, whose
  // pixels one 4-D DSD can repeat over.
  JoinKernel se = k;
  se.op = JoinOp::Mul;
  se.broadcast = 1;
  se.buffered = 0;
  se.pixels = 2;
  se.layout = {8, 4, 0};
  se.op = JoinOp::Add;
  refused(se, "a per-channel input is only implemented as b of a mul with a "
              "buffered and no ReLU (got add, broadcast input 1, buffered "
              "input 0)");
  se.op = JoinOp::Mul;
  se.buffered = 1;
  refused(se, "(got mul, broadcast input 1, buffered input 1)");
  se.buffered = 0;
  se.pixels = 3;
  refused(se, "a per-channel input needs equal chunks of whole channels of "
              "a feature map, but 8 elements on 4 rows give chunks of 2, no "
              "multiple of its 3 pixels");
  se.pixels = 257;
  se.layout = {257 * 4, 4, 0};
  refused(se, "cannot repeat 1 channel values over 257 pixels with one 4-D "
              "DSD");
  se.pixels = 4;
  se.layout = {4 * 4000, 1, 0};
  se.fifoSamples = 2;
  refused(se, "a FIFO of 2 chunks of 16000 elements needs 146304 bytes of "
              "PE memory, more than the 49152 available");
  se.pixels = 2;
  se.layout = {8, 4, 0};
  se.fifoSamples = 1;
  EXPECT_TRUE(
      mlir::succeeded(emitJoinKernel(b, program.getLoc(), se, "se", "j")));
  EXPECT_TRUE(
      mlir::succeeded(emitJoinKernel(b, program.getLoc(), k, "ok", "j")));
  // Outside a wavelet.program.
  mlir::OpBuilder outside(&ctx);
  diags.clear();
  EXPECT_TRUE(
      mlir::failed(emitJoinKernel(outside, program.getLoc(), k, "j", "j")));
  EXPECT_NE(diags.find("must be emitted inside a wavelet.program"),
            std::string::npos)
      << diags;
}

} // namespace
