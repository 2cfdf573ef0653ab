//===- ExtractKernels.cpp - A slice of a placed network -------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-extract-kernels: keeps the consecutive kernels A..B (in the
// topological order partitioning laid them out in) of a partitioned
// fabric.program with every decision partitioning wrote into them (rect,
// smear, tiles, merge, precision, predicted cycles, join FIFOs), turns the
// streams that enter the slice into host inputs and the streams that leave
// it into host outputs, and moves the slice to column 0 of a fabric just
// large enough for it. Routing, color allocation and the lowering then run
// on the slice as on any program (docs/weftc.md, "Slices").
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricOps.h"
#include "weft/FabricTransforms/Graph.h"
#include "weft/FabricTransforms/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

namespace weft {
#define GEN_PASS_DEF_EXTRACTKERNELS
#include "weft/FabricTransforms/Passes.h.inc"
} // namespace weft

using namespace mlir;
using namespace weft;
namespace wf = weft::fabric;
namespace wc = weft::conversion;

/// The symbol `base`, or `base_N` for the first N that is free.
static std::string freeName(SymbolTable &table, StringRef base) {
  std::string name = base.str();
  for (unsigned i = 1; table.lookup(name); ++i)
    name = (base + "_" + Twine(i)).str();
  return name;
}

/// One end of a kernel range: a 0-based index in the topological order or
/// a kernel's symbol name.
static FailureOr<int64_t> findKernel(wf::ProgramOp program, wc::Graph &g,
                                     StringRef end) {
  end = end.trim();
  int64_t index;
  if (!end.getAsInteger(10, index)) {
    if (index < 0 || index >= int64_t(g.stages.size()))
      return program.emitOpError("has ")
             << g.stages.size() << " kernels (0 to " << g.stages.size() - 1
             << "); kernel index " << index << " is out of range";
    return index;
  }
  for (auto [i, st] : llvm::enumerate(g.stages))
    if (wf::KernelOp(st.kernel).getSymName() == end)
      return int64_t(i);
  return program.emitOpError("has no kernel '") << end << "'";
}

namespace {

struct ExtractKernels : weft::impl::ExtractKernelsBase<ExtractKernels> {
  using Base::Base;

  void runOnOperation() override {
    if (kernels.empty())
      return;
    for (auto program :
         llvm::make_early_inc_range(getOperation().getOps<wf::ProgramOp>()))
      if (failed(extract(program)))
        return signalPassFailure();
  }

  LogicalResult extract(wf::ProgramOp program);
};

} // namespace

LogicalResult ExtractKernels::extract(wf::ProgramOp program) {
  Block &body = program.getBody().front();
  for (Operation &op : body)
    if (isa<wf::RouteOp, wf::RedistributeOp>(op))
      return op.emitOpError("is already in the program; --weft-extract-kernels "
                            "runs after partitioning and before routing");
  for (auto k : body.getOps<wf::KernelOp>())
    if (!k.getRect())
      return k.emitOpError("is not placed; --weft-extract-kernels runs after "
                           "--weft-partition-dense");
  FailureOr<wc::Graph> graph =
      wc::analyzeGraph(program, /*placed=*/true, /*withData=*/false);
  if (failed(graph))
    return failure();
  StringRef range = kernels;
  if (!range.contains(".."))
    return program.emitOpError("kernel range '")
           << range << "' is not FIRST..LAST (indices or kernel names)";
  auto [firstText, lastText] = range.split("..");
  FailureOr<int64_t> first = findKernel(program, *graph, firstText);
  if (failed(first))
    return failure();
  FailureOr<int64_t> last = findKernel(program, *graph, lastText);
  if (failed(last))
    return failure();
  if (*first > *last)
    return program.emitOpError("kernel range '")
           << range << "' is empty: kernel " << *first << " comes after kernel "
           << *last << " in the topological order";

  // (Read before the kernels outside the slice go.)
  int64_t whole = 0;
  for (wc::Stage &st : graph->stages)
    whole =
        std::max<int64_t>(whole, st.kernel.getPredictedCycles().value_or(0));
  int64_t x0 = graph->stages[size_t(*first)].x;
  size_t numKernels = graph->stages.size();

  MLIRContext *ctx = program.getContext();
  OpBuilder b(ctx);
  SymbolTable symbols(program);
  auto kept = [&](int64_t stage) { return stage >= *first && stage <= *last; };
  llvm::DenseSet<StringRef> keptNames;
  for (int64_t i = *first; i <= *last; ++i)
    keptNames.insert(graph->stages[size_t(i)].kernel.getSymName());

  // Every stream, by its producer and consumers: kept as it is, cut at the
  // slice's edge into a host port, or dropped.
  SmallVector<Operation *> dead;
  for (wc::GraphStream &s : graph->streams) {
    wf::StreamOp op = s.op;
    if (!op)
      continue;
    bool keepSrc = s.producer >= 0 && kept(s.producer);
    SmallVector<Attribute> dsts;
    SmallVector<int64_t> ports;
    for (auto [dst, port] : llvm::zip(
             op.getDsts().getAsRange<FlatSymbolRefAttr>(), op.getDstPorts())) {
      bool keepDst = keptNames.contains(dst.getValue());
      if (!keepDst && keepSrc)
        if (auto io = symbols.lookup<wf::IoOp>(dst.getValue()))
          keepDst = io.getDirection() == common::PortDir::output;
      if (keepDst) {
        dsts.push_back(dst);
        ports.push_back(port);
      }
    }
    int64_t rows =
        s.producer >= 0
            ? graph->stages[size_t(s.producer)].outRows
            : (s.consumers.empty()
                   ? 1
                   : graph->stages[size_t(s.consumers[0].first)].inRows);
    IntegerAttr pixels = op.getPixelsAttr();
    auto tensorType = [&]() -> RankedTensorType {
      if (s.producer >= 0)
        return cast<RankedTensorType>(graph->stages[size_t(s.producer)]
                                          .kernel.getFunctionType()
                                          .getResult(op.getSrcPort()));
      return cast<RankedTensorType>(s.input.getType());
    };
    b.setInsertionPoint(op);
    if (dsts.empty() && !keepSrc) {
      dead.push_back(op);
      continue;
    }
    if (dsts.empty()) {
      // The slice's result leaves on the east edge.
      auto io = wf::IoOp::create(
          b, op.getLoc(),
          b.getStringAttr(freeName(symbols, (op.getSymName() + "_out").str())),
          common::PortDirAttr::get(ctx, common::PortDir::output),
          common::EdgeAttr::get(ctx, common::Edge::east),
          b.getI64IntegerAttr(0), b.getI64IntegerAttr(rows),
          TypeAttr::get(tensorType()), pixels);
      symbols.insert(io);
      dsts.push_back(FlatSymbolRefAttr::get(io.getSymNameAttr()));
      ports.push_back(0);
    }
    if (!keepSrc && s.producer >= 0) {
      // What a kernel outside the slice sent enters from the host.
      auto io = wf::IoOp::create(
          b, op.getLoc(),
          b.getStringAttr(freeName(symbols, (op.getSymName() + "_in").str())),
          common::PortDirAttr::get(ctx, common::PortDir::input),
          common::EdgeAttr::get(ctx, common::Edge::west),
          b.getI64IntegerAttr(0), b.getI64IntegerAttr(rows),
          TypeAttr::get(tensorType()), pixels);
      symbols.insert(io);
      op.setSrcAttr(FlatSymbolRefAttr::get(io.getSymNameAttr()));
      op.setSrcPort(0);
    }
    op.setDstsAttr(b.getArrayAttr(dsts));
    op.setDstPorts(ports);
  }
  // Host ports no stream uses any more, and kernels outside the slice.
  for (Operation &op : body) {
    if (auto k = dyn_cast<wf::KernelOp>(op);
        k && !keptNames.contains(k.getSymName()))
      dead.push_back(k);
  }
  for (Operation *op : dead) {
    symbols.erase(op);
  }
  dead.clear();
  llvm::DenseSet<StringRef> used;
  for (auto s : body.getOps<wf::StreamOp>()) {
    used.insert(s.getSrc());
    for (StringRef d : s.getDstNames())
      used.insert(d);
  }
  for (auto io : llvm::make_early_inc_range(body.getOps<wf::IoOp>()))
    if (!used.contains(io.getSymName()))
      symbols.erase(io);

  // The slice from column 0, on a fabric as wide as it and as tall as its
  // tallest rectangle or host port.
  int64_t width = 0, height = 1;
  for (auto k : body.getOps<wf::KernelOp>()) {
    common::RectAttr r = k.getRectAttr();
    k.setRectAttr(common::RectAttr::get(ctx, r.getX() - x0, r.getY(),
                                        r.getWidth(), r.getHeight()));
    width = std::max<int64_t>(width, r.getX() - x0 + r.getWidth());
    height = std::max<int64_t>(height, r.getY() + r.getHeight());
  }
  for (auto io : body.getOps<wf::IoOp>())
    height = std::max<int64_t>(height, io.getEndRow());
  machine::TargetConfig c = program.getModel().config();
  c.width = unsigned(width);
  c.height = unsigned(std::min<int64_t>(height, c.height));
  if (!machine::Target::create(c))
    return program.emitOpError("the slice's fabric ")
           << width << "x" << height << " is not a valid target";
  program.setTargetAttr(common::TargetAttr::get(ctx, c));

  // A join of feature maps holds only the rows one branch runs ahead of
  // the other behind the fork they share: the slice must keep that fork.
  FailureOr<wc::Graph> sliced =
      wc::analyzeGraph(program, /*placed=*/false, /*withData=*/false);
  if (failed(sliced))
    return failure();
  for (wc::Stage &st : sliced->stages) {
    auto scheme = dyn_cast<wf::JoinSchemeAttr>(st.kernel.getScheme());
    if (!scheme || scheme.getFifoPixels() == 0)
      continue;
    auto [rowsA, rowsB] = wc::joinRowReadiness(*sliced, st);
    if (rowsA.ready.empty() || rowsB.ready.size() != rowsA.ready.size())
      return st.kernel.emitOpError("joins feature maps in a FIFO of ")
             << scheme.getFifoPixels() << " pixels, but kernel range '" << range
             << "' leaves out the fork feeding both its inputs: start the "
                "slice at or before the kernels that fork (a whole residual "
                "block)";
  }
  program->setAttr(
      "weft.slice",
      b.getStringAttr((Twine("kernels ") + Twine(*first) + ".." + Twine(*last) +
                       " of " + Twine(numKernels) + " from column " +
                       Twine(x0) + "; the whole network predicts " +
                       Twine(whole) + " cycles per sample")
                          .str()));
  return success();
}
