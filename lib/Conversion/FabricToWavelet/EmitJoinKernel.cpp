//===- JoinKernel.cpp - Elementwise ops of two streams ----------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// y = a op b on one column of PEs (docs/execution-model.md, "Join kernels"):
// the per-PE program, its cost model and its memory bound.
//
// Every piece of work runs on a microthread, and each microthread's
// completion activates the local task that launches its next instruction:
//
//   task 33 (utid 0): copy     fifo <- the buffered input (one chunk)
//   task 34 (utid 1): compute  out <- unbuffered op fifo       (one step)
//   or, for the two-step ops,
//   task 34 (utid 1): step 1   buf <- f(unbuffered input)
//   task 35 (utid 2): step 2   out <- buf op fifo
//   or, with a fused ReLU,
//   task 34 (utid 1): step 1   relu fifo <- unbuffered op fifo
//   task 35 (utid 2): step 2   out <- max(+0, relu fifo)
//   or, with b per channel (a squeeze-and-excitation scale),
//   task 34 (utid 1): step 1   scale <- b (the chunk's Lc channels)
//   task 35 (utid 2): step 2   out <- scale (repeated per pixel) * fifo
//
// The main thread only picks these tasks and launches (one cycle each), so
// it never waits: the copy is relaunched as soon as it finishes a chunk,
// whatever the compute is waiting for, and takes the buffered input off the
// fabric until the FIFO is full. That independence is the point of the
// kernel: a long-running main-thread task would keep the picker from
// relaunching the copy.
//
//===----------------------------------------------------------------------===//
#include "weft/Conversion/JoinKernel.h"

#include "WaveletBuilder.h"
#include "weft/Kernels/ColumnSequences.h"

#include "fabric/FabricOps.h"
#include "wavelet/WaveletOps.h"

#include "weft/Machine/ISA.h"
#include "weft/Machine/Target.h"

#include <algorithm>
#include <vector>

using namespace mlir;
namespace wt = weft::machine;
namespace fab = weft::fabric;
namespace wv = weft::wavelet;

namespace weft::conversion {

using namespace join;
using column::kDataBase;
using column::kDsdBase;

namespace {

using DirSet = uint8_t;

class Emitter : WaveletBuilder {
public:
  Emitter(OpBuilder &b, Location loc, const JoinKernel &k, StringRef name,
          StringRef layer, const RouteTable &routes)
      : WaveletBuilder(b, loc), k(k), name(name), layer(layer), routes(routes) {
  }
  /// The PEs of rows [r0, r1), all with chunks of L elements.
  void emitGroup(int64_t r0, int64_t r1, int64_t L);

private:
  void dsd(StringRef sym, Rec index, const DsdFields &fields) {
    dsdAt(sym, kDsdBase + 4 * index, fields);
  }
  /// A local task whose only instruction launches `s` and ends the task.
  void launchTask(StringRef sym, const Step &s, ArrayRef<wv::OperandAttr> args,
                  bool active);

  const JoinKernel &k;
  StringRef name, layer;
  const RouteTable &routes;
};

void Emitter::launchTask(StringRef sym, const Step &s,
                         ArrayRef<wv::OperandAttr> args, bool active) {
  wv::TaskOp t = task(sym, wv::TaskKind::local, s.task, active);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&t.getBody().front());
  inst(wv::toOpcode(s.op), args, /*term=*/true);
}

void Emitter::emitGroup(int64_t r0, int64_t r1, int64_t L) {
  const int64_t h = r1 - r0, y = k.layout.y0 + r0;
  std::string sym =
      (name + "_r" + Twine(r0) + (h > 1 ? "_" + Twine(r1 - 1) : Twine())).str();
  Block *body = peOrGroup(sym, k.x, y, 1, h, layer);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);

  // Both inputs from the west to the ramp, the result from the ramp east.
  routesAt(routes, k.x, y);

  const JoinPlan plan = planOf(k);
  const bool two = isTwoStep(k);
  const Step &last = plan.compute.back();
  const int64_t inColor = k.buffered ? k.colorB : k.colorA;
  const int64_t otherColor = k.buffered ? k.colorA : k.colorB;

  // The FIFO (fifoSamples chunks, or fifoPixels pixels of a feature map),
  // then (two-step ops) the scratch chunk, or (ReLU) its FIFO and zero.
  const int64_t capacity = joinFifoCapacity(k), fifoWords = 2 * capacity;
  dsd("fifo", kRecFifo, DsdFields::fifo(capacity, kDataBase));
  dsd("in", kRecIn,
      DsdFields::fabin(L, inColor)
          .withUtid(plan.copy.utid)
          .withAc(plan.copy.next));
  dsd("out", kRecOut,
      DsdFields::fabout(L, k.outColor).withUtid(last.utid).withAc(last.next));
  if (isBroadcast(k)) {
    // The chunk's channel values, and a 4-D vector reading them once per
    // pixel (dimension 0 the channels, stride 1; the pixels over the
    // others, stride 0), which the emitter checked exists.
    const Step &first = plan.compute.front();
    const int64_t lc = joinBroadcastLength(k);
    dsd("other", kRecOther,
        DsdFields::fabin(lc, otherColor)
            .withUtid(first.utid)
            .withAc(first.next));
    dsd("buf", kRecBuf, DsdFields::mem1d(lc, kDataBase + fifoWords));
    dsd("scale", kRecScale,
        DsdFields::mem4d(kDataBase + fifoWords, kXdsrScale));
    wv::XdsdOp::create(
        b, loc, "x_scale", uint64_t(kDsdBase + 4 * kRecXScale),
        joinBroadcastDims(k),
        ArrayRef<int64_t>{kSelOne, kSelZero, kSelZero, kSelZero});
  } else if (two) {
    const Step &first = plan.compute.front();
    dsd("other", kRecOther,
        DsdFields::fabin(L, otherColor)
            .withUtid(first.utid)
            .withAc(first.next));
    dsd("buf", kRecBuf, DsdFields::mem1d(L, kDataBase + fifoWords));
  } else if (k.relu) {
    // Step 1 reads it and relaunches itself; step 2 does with the fabout.
    const Step &first = plan.compute.front();
    dsd("other", kRecOther,
        DsdFields::fabin(L, otherColor)
            .withUtid(first.utid)
            .withAc(first.next));
    const int64_t reluBase = kDataBase + fifoWords,
                  zero = reluBase + 2 * kReluFifo;
    dsd("relu", kRecRelu, DsdFields::fifo(kReluFifo, reluBase));
    dsd("zero", kRecZero, DsdFields::mem1d(L, zero).withStride(0));
    wv::SegmentOp::create(
        b, loc, "zero_data", zero, /*per_pe=*/false,
        DenseElementsAttr::get(RankedTensorType::get({1}, b.getF32Type()),
                               0.0f));
  } else {
    // Read by the compute, whose fabout launches and activates.
    dsd("other", kRecOther, DsdFields::fabin(L, otherColor));
  }

  using RF = wv::RegFile;

  // init: every DSR once (loading the fifo record resets the FIFO, so it is
  // never loaded again), then start the copy and the compute.
  {
    wv::TaskOp t = task("init", wv::TaskKind::local, kInitTask, true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&t.getBody().front());
    dsrLoad(RF::ddsr, kDsrFifo, "fifo");
    dsrLoad(RF::s1dsr, kDsrFifo, "fifo");
    dsrLoad(RF::s0dsr, kDsrCopy, "in");
    dsrLoad(RF::ddsr, kDsrLast, "out");
    if (isBroadcast(k)) {
      dsrLoad(RF::xdsr, kXdsrScale, "x_scale");
      dsrLoad(RF::s0dsr, kDsrLast, "scale");
      dsrLoad(RF::ddsr, kDsrFirst, "buf");
      dsrLoad(RF::s0dsr, kDsrFirst, "other");
    } else if (two) {
      dsrLoad(RF::s0dsr, kDsrLast, "buf");
      dsrLoad(RF::ddsr, kDsrFirst, "buf");
      dsrLoad(RF::s0dsr, kDsrFirst, "other");
    } else if (k.relu) {
      // FIFO 4 through DDSR 4 and S1DSR 4; S0DSR 4 holds the fabin, which
      // is no FIFO's register.
      dsrLoad(RF::s0dsr, kDsrLast, "zero");
      dsrLoad(RF::ddsr, kDsrRelu, "relu");
      dsrLoad(RF::s1dsr, kDsrRelu, "relu");
      dsrLoad(RF::s0dsr, kDsrRelu, "other");
    } else {
      dsrLoad(RF::s0dsr, kDsrLast, "other");
    }
    for (int64_t task : plan.start)
      inst(Opcode::ACTIVATE, {lit(task)});
    inst(Opcode::NOP, {}, /*term=*/true);
  }
  // copy: fifo <- in (1 / in for Div with b buffered).
  launchTask("copy", plan.copy, {ddsr(kDsrFifo), s0(kDsrCopy)}, false);
  if (two) {
    // step 1: buf <- -other (Sub), 1 / other (Div) or other (a broadcast);
    // step 2: out <- buf op fifo (a broadcast's buf through `scale`).
    launchTask("step1", plan.compute[0], {ddsr(kDsrFirst), s0(kDsrFirst)},
               false);
    launchTask("step2", plan.compute[1], {dsr(kDsrLast), s1(kDsrFifo)}, false);
  } else if (k.relu) {
    // step 1: relu fifo <- other op fifo; step 2: out <- max(+0, relu
    // fifo).
    launchTask("step1", plan.compute[0], {dsr(kDsrRelu), s1(kDsrFifo)}, false);
    launchTask("step2", plan.compute[1], {dsr(kDsrLast), s1(kDsrRelu)}, false);
  } else {
    // out <- other op fifo.
    launchTask("compute", plan.compute[0], {dsr(kDsrLast), s1(kDsrFifo)},
               false);
  }
}

} // namespace

LogicalResult emitJoinKernel(OpBuilder &b, Location loc, const JoinKernel &k,
                             StringRef name, StringRef layer,
                             const RouteTable *routes) {
  const RowChunks &lay = k.layout;
  const char *op = joinOpName(k.op);
  if (lay.n < 1 || lay.rows < 1 || lay.y0 < 0 || k.x < 0)
    return emitError(loc) << "join kernel " << name << " (" << op << ") has "
                          << lay.n << " elements on " << lay.rows
                          << " rows at (" << k.x << ", " << lay.y0
                          << "); it needs at least one of each";
  const int64_t L = chunkLength(k);
  if (chunkSize(lay.n, lay.rows, lay.rows - 1) < 1)
    return emitError(loc) << "join kernel " << name << ": " << lay.rows
                          << " rows leave the last chunk of " << lay.n
                          << " elements (chunks of " << L << ") empty";
  if (L > wt::Arch::kMaxVectorLength)
    return emitError(loc) << "join kernel " << name << ": a chunk of " << L
                          << " elements exceeds the "
                          << wt::Arch::kMaxVectorLength
                          << "-element vector length of a DSD";
  if (k.buffered != 0 && k.buffered != 1)
    return emitError(loc) << "join kernel " << name << ": buffered input "
                          << k.buffered << " is neither 0 (a) nor 1 (b)";
  if (k.relu && isTwoStep(k))
    return emitError(loc)
           << "join kernel " << name << ": cannot fuse a ReLU after " << op
           << " with a buffered (a third vector step, on memory alone, "
              "would need the main thread)";
  if (isBroadcast(k)) {
    if (k.op != JoinOp::Mul || k.relu || k.broadcast != 1 || k.buffered != 0)
      return emitError(loc)
             << "join kernel " << name << ": a per-channel input is only "
             << "implemented as b of a mul with a buffered and no ReLU (got "
             << op << (k.relu ? " + relu" : "") << ", broadcast input "
             << k.broadcast << ", buffered input " << k.buffered << ")";
    if (k.pixels < 1 || L % k.pixels ||
        chunkSize(lay.n, lay.rows, lay.rows - 1) != L)
      return emitError(loc)
             << "join kernel " << name << ": a per-channel input needs "
             << "equal chunks of whole channels of a feature map, but "
             << lay.n << " elements on " << lay.rows << " rows give chunks "
             << "of " << L << ", no multiple of its " << k.pixels
             << " pixels";
    if (joinBroadcastDims(k).empty())
      return emitError(loc)
             << "join kernel " << name << ": cannot repeat "
             << joinBroadcastLength(k) << " channel values over "
             << k.pixels << " pixels with one 4-D DSD (at most 4095 "
             << "channels, and the pixels a product of three factors of at "
             << "most 255)";
  } else if (k.fifoPixels > 0 && (k.pixels < 1 || L % k.pixels))
    return emitError(loc) << "join kernel " << name << ": a FIFO of "
                          << k.fifoPixels << " pixels needs chunks of whole "
                          << "channels of a feature map, but a chunk of " << L
                          << " elements is no multiple of its " << k.pixels
                          << " pixels";
  if (k.fifoPixels < 1 && k.fifoSamples < 1)
    return emitError(loc)
           << "join kernel " << name << ": a FIFO of " << k.fifoSamples
           << " chunks cannot hold the buffered input ("
           << (k.buffered ? "b" : "a")
           << "); without one whole chunk the fork feeding both inputs "
              "can deadlock";
  FailureOr<wt::Target> fits =
      columnTarget(b, loc, "join kernel " + name, k.x, lay.y0, lay.rows);
  if (failed(fits))
    return failure();
  wt::Target target = *fits;
  // The FIFO as the messages name it.
  std::string fifo =
      k.fifoPixels > 0
          ? (Twine(k.fifoPixels) + " pixels (" + Twine(joinFifoCapacity(k)) +
             " elements)")
                .str()
          : (Twine(k.fifoSamples) + " chunks of " + Twine(L) + " elements")
                .str();
  if (joinFifoCapacity(k) > wt::Arch::kMaxVectorLength)
    return emitError(loc) << "join kernel " << name << ": a FIFO of " << fifo
                          << " exceeds the " << wt::Arch::kMaxVectorLength
                          << "-element capacity of a fifo DSD (at most "
                          << wt::Arch::kMaxVectorLength / L
                          << " whole chunks)";
  const int64_t bytes = joinMemoryPerPE(k), have = 2 * target.memoryWords();
  if (bytes > have)
    return emitError(loc) << "join kernel " << name << ": a FIFO of " << fifo
                          << " needs " << bytes
                          << " bytes of PE memory, more than the " << have
                          << " available (at most "
                          << maxJoinFifoSamples(k, have) << " chunks fit)";
  const int64_t colors[] = {k.colorA, k.colorB, k.outColor};
  const char *what[] = {"a", "b", "the result"};
  for (int i = 0; i < 3; ++i) {
    if (!target.isRoutableColor(colors[i]))
      return emitError(loc) << "join kernel " << name << ": color "
                            << colors[i] << " of " << what[i]
                            << " is not routable on a target with "
                            << target.routableColors() << " colors";
    for (int j = 0; j < i; ++j)
      if (colors[i] == colors[j])
        return emitError(loc) << "join kernel " << name << " uses color "
                              << colors[i] << " for both " << what[j]
                              << " and " << what[i]
                              << " (the three colors must differ)";
  }

  // Without the fabric.route ops of a routed program (unit tests build
  // kernels directly), the column's own routes.
  RouteTable own;
  if (!routes) {
    addRoute(own, columnInputs(k.x, lay.y0, lay.rows), k.colorA);
    addRoute(own, columnInputs(k.x, lay.y0, lay.rows), k.colorB);
    addRoute(own, columnResults(k.x, lay.y0, lay.rows), k.outColor);
    routes = &own;
  }
  Emitter e(b, loc, k, name, layer, *routes);
  auto chunk = [&](int64_t r) { return chunkSize(lay.n, lay.rows, r); };
  forEachRowGroup(
      *routes, k.x, lay.y0, lay.rows,
      [&](int64_t r, int64_t r0) { return chunk(r) == chunk(r0); },
      [&](int64_t r0, int64_t r1) { e.emitGroup(r0, r1, chunk(r0)); });
  return success();
}

} // namespace weft::conversion
