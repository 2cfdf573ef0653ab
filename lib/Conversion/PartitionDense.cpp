//===- PartitionDense.cpp - A balanced pipeline for a chain of kernels ----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-partition-dense: the kernels of a fabric.program form one chain
// (host input -> k0 -> ... -> kn -> host output, in stream order); each is
// a dense layer (matchDenseLayer) or a column kernel (matchColumnKernel).
// partitionChain (ChainPartition.h) lays them out west to east as a
// balanced pipeline; this pass records the result: rect, smear, precision
// and predicted cycles per sample on every kernel, and the rows of the host
// ports (docs/execution-model.md, "A network on the fabric"). With
// grid=auto, chooseGrid picks the fabric first.
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricOps.h"
#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/DenseLayer.h"
#include "weft/Kernels/ChainPartition.h"
#include "weft/Transforms/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/DebugLog.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "weft-partition-dense"

namespace weft {
#define GEN_PASS_DEF_PARTITIONDENSE
#include "weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;
using namespace weft;
namespace wf = weft::fabric;
namespace wc = weft::conversion;

/// The chain of a program: its host ports and its kernels in stream order.
struct Chain {
  wf::IoOp in, out;
  SmallVector<wf::KernelOp> kernels;
  std::vector<wc::ChainLayer> layers;
};

/// Follows the streams from the host input to the host output. Fails with
/// a diagnostic when the program is not one chain.
static FailureOr<Chain> findChain(wf::ProgramOp program) {
  Block &body = program.getBody().front();
  Chain chain;
  for (auto io : body.getOps<wf::IoOp>()) {
    wf::IoOp &slot =
        io.getDirection() == wf::PortDir::input ? chain.in : chain.out;
    if (slot)
      return program.emitOpError()
             << "has more than one host "
             << (io.getDirection() == wf::PortDir::input ? "input" : "output")
             << " (@" << slot.getSymName() << " and @" << io.getSymName()
             << "); the partitioner maps one chain";
    slot = io;
  }
  SmallVector<wf::KernelOp> all(body.getOps<wf::KernelOp>());
  if (all.empty())
    return chain; // nothing to partition
  // The one stream leaving each node, and the nodes streams enter.
  llvm::StringMap<wf::StreamOp> from;
  llvm::StringSet<> entered;
  for (auto s : body.getOps<wf::StreamOp>()) {
    if (!from.try_emplace(s.getSrc(), s).second)
      return s.emitOpError() << "is a second stream leaving @" << s.getSrc()
                             << "; the partitioner maps one chain";
    entered.insert(s.getDst());
  }
  // The chain starts at the host input, or (a program without host ports,
  // as in tests) at the one kernel no stream enters.
  StringRef at;
  if (chain.in) {
    at = chain.in.getSymName();
  } else {
    for (wf::KernelOp k : all)
      if (!entered.contains(k.getSymName())) {
        if (!chain.kernels.empty())
          return program.emitOpError()
                 << "has no host input and two kernels no stream enters (@"
                 << chain.kernels.front().getSymName() << " and @"
                 << k.getSymName() << "); the partitioner maps one chain";
        chain.kernels.push_back(k);
      }
    if (chain.kernels.empty())
      return program.emitOpError() << "has no host input and every kernel "
                                      "is entered by a stream";
    at = chain.kernels.front().getSymName();
  }
  while (!chain.out || at != chain.out.getSymName()) {
    auto it = from.find(at);
    if (it == from.end()) {
      if (!chain.out)
        break;
      return program.emitOpError() << "has no stream leaving @" << at
                                   << "; the kernels must form one chain to @"
                                   << chain.out.getSymName();
    }
    StringRef next = it->second.getDst();
    if (chain.out && next == chain.out.getSymName())
      break;
    auto k = dyn_cast_or_null<wf::KernelOp>(
        SymbolTable::lookupSymbolIn(program, it->second.getDstAttr()));
    if (!k)
      return it->second.emitOpError()
             << "ends at @" << next << ", which is not a kernel";
    if (llvm::is_contained(chain.kernels, k))
      return it->second.emitOpError() << "closes a cycle at @" << next;
    chain.kernels.push_back(k);
    at = next;
  }
  if (chain.kernels.size() != all.size())
    return program.emitOpError()
           << "has " << all.size() << " kernels but its chain passes "
           << chain.kernels.size() << "; the partitioner maps one chain";
  return chain;
}

/// What the partitioner needs to know of `kernel`.
static FailureOr<wc::ChainLayer> classify(wf::KernelOp kernel) {
  auto yield = cast<wf::YieldOp>(kernel.getBody().front().getTerminator());
  if (yield.getResults().size() != 1)
    return kernel.emitOpError() << "yields " << yield.getResults().size()
                                << " values; a kernel of a chain yields one";
  Value result = yield.getResults()[0];
  std::string denseWhy, columnWhy;
  FailureOr<wc::DenseLayer> dense = wc::matchDenseLayer(result, denseWhy);
  if (succeeded(dense))
    return wc::ChainLayer::dense(dense->K, dense->M, !dense->bias.empty());
  Value input;
  std::vector<float> params;
  FailureOr<wc::ColumnOp> op =
      wc::matchColumnKernel(result, input, columnWhy, &params);
  if (succeeded(op)) {
    auto type = cast<RankedTensorType>(result.getType());
    return wc::ChainLayer::column(*op, type.getNumElements(),
                                  std::move(params));
  }
  return kernel.emitOpError() << "is neither a dense layer (" << denseWhy
                              << ") nor a column kernel (" << columnWhy << ")";
}

/// "WxH" plus the options of `base` (memory, colors, queues).
static std::optional<target::Target> withSize(const target::Target &base,
                                              int64_t w, int64_t h) {
  target::TargetConfig c = base.config();
  c.width = unsigned(w);
  c.height = unsigned(h);
  return target::Target::create(c);
}

namespace {

struct PartitionDense : weft::impl::PartitionDenseBase<PartitionDense> {
  using Base::Base;

  void runOnOperation() override {
    wc::Precision p;
    if (precision == "fp32") {
      p = wc::Precision::FP32;
    } else if (precision == "mixed") {
      p = wc::Precision::Mixed;
    } else {
      getOperation().emitError()
          << "precision must be fp32 or mixed, not '" << precision << "'";
      return signalPassFailure();
    }
    for (auto program : getOperation().getOps<wf::ProgramOp>())
      if (failed(partition(program, p)))
        return signalPassFailure();
  }

  /// The target to partition for: the program's, or `grid`.
  FailureOr<target::Target> chooseTarget(wf::ProgramOp program,
                                         const Chain &chain, wc::Precision p) {
    target::Target t = program.getModel();
    if (grid.empty())
      return t;
    std::string why;
    if (grid != "auto") {
      std::optional<target::Target> g = target::Target::parse(grid, &why);
      if (!g)
        return program.emitError() << "bad grid '" << grid << "': " << why;
      return *g;
    }
    std::optional<target::Target> largest =
        target::Target::parse(maxGrid, &why);
    if (!largest)
      return program.emitError() << "bad max-grid '" << maxGrid << "': " << why;
    std::optional<wc::GridChoice> choice =
        wc::chooseGrid(chain.layers, p, *largest, /*tolerance=*/0.05, why);
    if (!choice)
      return program.emitOpError()
             << "does not fit any fabric up to " << largest->width() << "x"
             << largest->height() << ": " << why;
    std::optional<target::Target> chosen =
        withSize(*largest, choice->width, choice->height);
    if (!chosen)
      return program.emitOpError() << "grid auto chose an invalid fabric";
    Builder b(program.getContext());
    program->setAttr(
        "weft.grid_auto",
        b.getStringAttr(
            llvm::formatv("{0}x{1}: predicted utilization "
                          "{2:P} (best {3:P} on {4}x{5}; {6} "
                          "grids fit up to {7}x{8})",
                          choice->width, choice->height, choice->utilization,
                          choice->bestUtilization, choice->bestWidth,
                          choice->bestHeight, choice->gridsFitting,
                          largest->width(), largest->height())
                .str()));
    return *chosen;
  }

  LogicalResult partition(wf::ProgramOp program, wc::Precision p) {
    FailureOr<Chain> chain = findChain(program);
    if (failed(chain))
      return failure();
    if (chain->kernels.empty())
      return success();
    for (wf::KernelOp k : chain->kernels) {
      FailureOr<wc::ChainLayer> layer = classify(k);
      if (failed(layer))
        return failure();
      chain->layers.push_back(*layer);
    }
    FailureOr<target::Target> t = chooseTarget(program, *chain, p);
    if (failed(t))
      return failure();
    MLIRContext *ctx = program.getContext();
    program.setTargetAttr(wf::TargetAttr::get(ctx, t->config()));

    // A dense layer that fits no rectangle of the fabric on its own is
    // named on its kernel, with what it needs.
    std::string why;
    for (auto [k, layer] : llvm::zip(chain->kernels, chain->layers))
      if (layer.kind == wc::ChainLayer::Kind::Dense &&
          !wc::chooseDenseMapping(layer.K, layer.M, p, *t, why))
        return k.emitOpError() << "does not fit: " << why;
    std::optional<wc::ChainMapping> mapping =
        wc::partitionChain(chain->layers, p, *t, why);
    if (!mapping)
      return program.emitOpError() << "does not fit: " << why;

    Builder b(ctx);
    StringRef precisionName = p == wc::Precision::Mixed ? "mixed" : "fp32";
    for (auto [k, layer, placed] :
         llvm::zip(chain->kernels, chain->layers, mapping->kernels)) {
      k.setRectAttr(
          wf::RectAttr::get(ctx, placed.x0, 0, placed.width, placed.rows));
      k.setSmear(placed.width);
      k->setAttr("weft.precision", b.getStringAttr(precisionName));
      k->setAttr("weft.predicted_cycles",
                 b.getI64IntegerAttr(placed.predictedCycles));
      LDBG() << "@" << k.getSymName() << ": " << layer.K << " -> " << layer.M
             << " on " << placed.width << " x " << placed.rows << " PEs at ("
             << placed.x0 << ", 0), footprint " << placed.footprint << " rows, "
             << placed.predictedCycles << " cycles per sample, "
             << placed.memoryPerPE << " bytes per PE";
      ++numPartitioned;
    }
    if (chain->in) {
      chain->in.setFirstRow(0);
      chain->in.setEndRow(mapping->inputRows);
    }
    if (chain->out) {
      chain->out.setFirstRow(0);
      chain->out.setEndRow(mapping->outputRows);
    }
    bottleneck = mapping->bottleneckCycles;
    return success();
  }
};

} // namespace
