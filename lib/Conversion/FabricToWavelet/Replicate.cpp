//===- Replicate.cpp - Copies of a lowered network on bands of rows -------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// --weft-replicate: stacks copies of each wavelet.program on bands of rows
// (docs/execution-model.md, "Replicas"). Placement, routing and the
// lowering lay a network out from row 0; a copy moved down is then a
// translation of its PE programs (their register parameters and per-PE
// segments are relative to their group), with its host ports on the same
// edges, and copies on disjoint rows share no router, so every copy keeps
// the original's colors. How many copies fit is layoutReplicas
// (lib/Kernels/Replicas.cpp).
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/Passes.h"

#include "wavelet/WaveletOps.h"
#include "weft/Kernels/Replicas.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"

namespace weft {
#define GEN_PASS_DEF_REPLICATE
#include "weft/Conversion/Passes.h.inc"
} // namespace weft

using namespace mlir;
namespace common = weft::common;
namespace wv = weft::wavelet;

/// The rows [0, h) a program's PEs and host ports occupy.
static int64_t usedRows(wv::ProgramOp program) {
  int64_t rows = 1;
  for (Operation &op : program.getBody().front()) {
    if (auto g = dyn_cast<wv::PeGroupOp>(op))
      rows =
          std::max<int64_t>(rows, g.getRect().getY() + g.getRect().getHeight());
    else if (auto pe = dyn_cast<wv::PeOp>(op))
      rows = std::max<int64_t>(rows, pe.getY() + 1);
    else if (auto io = dyn_cast<wv::IoOp>(op))
      rows = std::max<int64_t>(rows, io.getEndRow());
  }
  return rows;
}

namespace {

struct Replicate : weft::impl::ReplicateBase<Replicate> {
  using Base::Base;

  void runOnOperation() override {
    for (auto program : getOperation().getOps<wv::ProgramOp>())
      if (failed(replicate(program)))
        return signalPassFailure();
  }

  LogicalResult replicate(wv::ProgramOp program);
};

} // namespace

LogicalResult Replicate::replicate(wv::ProgramOp program) {
  Attribute count = program->getAttr("weft.replicas");
  if (!count)
    return success();
  auto copies = dyn_cast<IntegerAttr>(count);
  if (!copies)
    return program.emitOpError("'weft.replicas' must be an integer");
  if (program->hasAttr("weft.replica_rows"))
    return program.emitOpError("is replicated already (weft.replica_rows)");
  weft::machine::TargetConfig config = program.getTarget().getModel().config();
  int64_t h = usedRows(program);
  // Copies side by side already (weft.replica_columns, made before routing)
  // and bands of them to stack.
  int64_t columns = 1;
  if (Attribute a = program->getAttr("weft.replica_columns")) {
    auto c = dyn_cast<IntegerAttr>(a);
    if (!c || c.getInt() < 1 || copies.getInt() % c.getInt())
      return program.emitOpError("'weft.replica_columns' must be a positive "
                                 "integer that divides 'weft.replicas'");
    columns = c.getInt();
  }
  for (auto io : program.getBody().front().getOps<wv::IoOp>()) {
    Attribute k = io->getAttr("weft.replica");
    if (k && (!isa<IntegerAttr>(k) || cast<IntegerAttr>(k).getInt() < 0 ||
              cast<IntegerAttr>(k).getInt() >= columns))
      return io.emitOpError("'weft.replica' must be an integer from 0 to ")
             << columns - 1 << " (the copies side by side)";
    if (!k && columns > 1)
      return io.emitOpError("needs 'weft.replica' in a program of copies "
                            "side by side");
  }
  std::string why;
  std::optional<std::vector<int64_t>> rows = weft::conversion::stackReplicas(
      h, int64_t(config.height), copies.getInt() / columns, why);
  if (!rows)
    return program.emitOpError("cannot hold its copies on the ")
           << config.width << "x" << config.height << " fabric: " << why;

  MLIRContext *ctx = program.getContext();
  Block &body = program.getBody().front();
  SymbolTable symbols(program);
  // The original's ops, before any copy is added.
  SmallVector<Operation *> originals;
  for (Operation &op : body)
    if (isa<wv::PeGroupOp, wv::PeOp, wv::IoOp>(op))
      originals.push_back(&op);
  SmallVector<Attribute> layers;
  if (auto a = program->getAttrOfType<ArrayAttr>("layers"))
    layers.assign(a.begin(), a.end());
  SmallVector<Attribute> originalLayers = layers;
  auto suffixed = [](StringRef name, int64_t k) {
    return (name + "_r" + Twine(k)).str();
  };

  OpBuilder b(ctx);
  for (Operation *op : originals)
    if (isa<wv::IoOp>(op) && !op->hasAttr("weft.replica"))
      op->setAttr("weft.replica", b.getI64IntegerAttr(0));
  b.setInsertionPointToEnd(&body);
  for (auto [band, dy] : llvm::enumerate(*rows)) {
    if (band == 0)
      continue;
    // Copy j of band `band` is copy band * columns + j.
    int64_t k = int64_t(band) * columns;
    for (Operation *op : originals) {
      Operation *copy = b.clone(*op);
      StringRef name = SymbolTable::getSymbolName(op).getValue();
      int64_t index = k;
      if (auto io = dyn_cast<wv::IoOp>(op)) {
        index += cast<IntegerAttr>(io->getAttr("weft.replica")).getInt();
        if (auto of = io->getAttrOfType<StringAttr>("weft.replica_of"))
          name = of.getValue();
      }
      // A deterministic free name: <name>_r<k>, or <name>_r<k>_<i>.
      std::string base = suffixed(name, index), fresh = base;
      for (unsigned i = 1; symbols.lookup(fresh); ++i)
        fresh = (base + "_" + Twine(i)).str();
      SymbolTable::setSymbolName(copy, fresh);
      symbols.insert(copy);
      if (auto g = dyn_cast<wv::PeGroupOp>(copy)) {
        common::RectAttr r = g.getRect();
        g.setRectAttr(common::RectAttr::get(ctx, r.getX(), r.getY() + dy,
                                            r.getWidth(), r.getHeight()));
      } else if (auto pe = dyn_cast<wv::PeOp>(copy)) {
        pe.setY(pe.getY() + dy);
      } else if (auto io = dyn_cast<wv::IoOp>(copy)) {
        io.setFirstRow(io.getFirstRow() + dy);
        io.setEndRow(io.getEndRow() + dy);
        io->setAttr("weft.replica", b.getI64IntegerAttr(index));
        io->setAttr("weft.replica_of", b.getStringAttr(name));
      }
      if (auto layer = copy->getAttrOfType<StringAttr>("layer"))
        copy->setAttr("layer", b.getStringAttr(suffixed(layer.getValue(), k)));
    }
    for (Attribute l : originalLayers)
      layers.push_back(
          b.getStringAttr(suffixed(cast<StringAttr>(l).getValue(), k)));
  }
  if (!originalLayers.empty())
    program->setAttr("layers", b.getArrayAttr(layers));
  program->setAttr("weft.replica_rows", b.getI64IntegerAttr(h));
  numCopies += copies.getInt();
  return success();
}
