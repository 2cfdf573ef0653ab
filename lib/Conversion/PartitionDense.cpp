//===- PartitionDense.cpp - Rectangles and smear factors for dense kernels ===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-partition-dense: every fabric.kernel holding a dense layer gets the
// mapping the cost model chooses (chooseDenseMapping, docs/execution-model.md):
// a rectangle of `smear` columns (input chunks) by `rows` rows (neuron
// chunks), the predicted steady-state cycles per sample and the precision.
// The host ports follow the mapping: input chunk c enters on row c of the
// west edge, and neuron chunk r leaves on row y0 + r of the east edge.
//
//===----------------------------------------------------------------------===//

#include "fabric/FabricOps.h"
#include "weft/Conversion/DenseLayer.h"
#include "weft/Transforms/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/DebugLog.h"

#define DEBUG_TYPE "weft-partition-dense"

namespace weft {
#define GEN_PASS_DEF_PARTITIONDENSE
#include "weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;
using namespace weft;
namespace wf = weft::fabric;
namespace wc = weft::conversion;

/// The host port at the other end of `kernel`'s input or output stream, or
/// null when it is not connected to one.
static wf::IoOp hostPortOf(wf::ProgramOp program, wf::KernelOp kernel,
                           bool input) {
  for (auto s : program.getBody().front().getOps<wf::StreamOp>()) {
    StringRef kernelEnd = input ? s.getDst() : s.getSrc();
    if (kernelEnd != kernel.getSymName())
      continue;
    Operation *other = SymbolTable::lookupSymbolIn(
        program, input ? s.getSrcAttr() : s.getDstAttr());
    if (auto io = dyn_cast_or_null<wf::IoOp>(other))
      return io;
  }
  return nullptr;
}

static LogicalResult partitionKernel(wf::ProgramOp program, wf::KernelOp kernel,
                                     wc::Precision precision,
                                     int64_t &predicted) {
  auto yield = cast<wf::YieldOp>(kernel.getBody().front().getTerminator());
  if (yield.getResults().size() != 1)
    return kernel.emitOpError() << "yields " << yield.getResults().size()
                                << " values; a dense kernel yields one";
  std::string why;
  FailureOr<wc::DenseLayer> layer =
      wc::matchDenseLayer(yield.getResults()[0], why);
  if (failed(layer))
    return kernel.emitOpError() << "is not a dense layer: " << why;

  target::Target t = program.getModel();
  FailureOr<wc::DenseMapping> mapping =
      wc::chooseDenseMapping(layer->K, layer->M, precision, t, why);
  if (failed(mapping))
    return kernel.emitOpError() << "does not fit: " << why;

  const wc::DenseMapping &m = *mapping;
  MLIRContext *ctx = kernel.getContext();
  Builder b(ctx);
  kernel.setRectAttr(wf::RectAttr::get(ctx, m.x0, m.y0, m.smear, m.rows));
  kernel.setSmear(m.smear);
  kernel->setAttr(
      "weft.precision",
      b.getStringAttr(precision == wc::Precision::Mixed ? "mixed" : "fp32"));
  predicted = wc::predictCyclesPerSample(layer->K, layer->M, m);
  kernel->setAttr("weft.predicted_cycles", b.getI64IntegerAttr(predicted));

  // Input chunk c enters the west edge on row c; neuron chunk r leaves the
  // east edge on row y0 + r.
  if (wf::IoOp in = hostPortOf(program, kernel, /*input=*/true)) {
    in.setFirstRow(0);
    in.setEndRow(m.smear);
  }
  if (wf::IoOp out = hostPortOf(program, kernel, /*input=*/false)) {
    out.setFirstRow(m.y0);
    out.setEndRow(m.y0 + m.rows);
  }
  LDBG() << "@" << kernel.getSymName() << ": " << layer->K << " -> " << layer->M
         << " on " << m.smear << " x " << m.rows << " PEs at (" << m.x0 << ", "
         << m.y0 << "), " << predicted << " cycles per sample, "
         << wc::memoryPerPE(layer->K, layer->M, m) << " bytes per PE";
  return success();
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
    for (auto program : getOperation().getOps<wf::ProgramOp>()) {
      for (auto kernel : program.getBody().front().getOps<wf::KernelOp>()) {
        int64_t predicted = 0;
        if (failed(partitionKernel(program, kernel, p, predicted)))
          return signalPassFailure();
        ++numPartitioned;
      }
    }
  }
};

} // namespace
