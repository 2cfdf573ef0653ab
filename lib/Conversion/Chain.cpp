//===- Chain.cpp - A placed chain of kernels, analysed --------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/Chain.h"
#include "weft/Conversion/KernelScheme.h"

#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;
namespace fab = weft::fabric;

namespace weft::conversion {

/// The kernel's layer and placement, or an error on the kernel.
static LogicalResult analyzeKernel(fab::KernelOp kernel, Stage &st) {
  st.kernel = kernel;
  std::optional<fab::RectAttr> rect = kernel.getRect();
  if (!rect)
    return kernel.emitOpError("is not placed: run --weft-partition-dense "
                              "first");
  FailureOr<KernelInfo> info = kernelInfo(kernel);
  if (failed(info))
    return failure();
  Precision precision = info->precision;
  if (info->isDense()) {
    DenseLayer *layer = &info->dense;
    st.dense = true;
    DenseMapping &m = st.m;
    m.x0 = rect->getX();
    m.y0 = rect->getY();
    m.smear = int64_t(kernel.getSmear());
    m.rows = rect->getHeight();
    m.precision = precision;
    if (int64_t(rect->getWidth()) != m.smear)
      return kernel.emitOpError("rectangle is ")
             << rect->getWidth() << " columns wide but the smear factor is "
             << m.smear << "; a dense layer uses one column per input chunk";
    if (m.y0 != 0)
      return kernel.emitOpError("must start at row 0, where input chunk 0 "
                                "enters");
    if (m.smear > layer->K || chunkSize(layer->K, m.smear, m.smear - 1) == 0)
      return kernel.emitOpError("smear factor ")
             << m.smear << " leaves an input chunk of " << layer->K
             << " inputs empty";
    if (m.rows > layer->M || chunkSize(layer->M, m.rows, m.rows - 1) == 0)
      return kernel.emitOpError("")
             << m.rows << " rows leave a neuron chunk of " << layer->M
             << " neurons empty";
    st.layer = std::move(*layer);
    st.x = m.x0;
    st.width = m.smear;
    st.height = std::max(m.smear, m.rows);
    st.inRows = m.smear;
    st.outRows = m.rows;
    st.inN = st.layer.K;
    st.outN = st.layer.M;
    return success();
  }
  int64_t n = info->outN;
  if (rect->getWidth() != 1 || rect->getY() != 0)
    return kernel.emitOpError("is a ")
           << columnOpName(info->column.op)
           << " layer and must occupy one column from row 0, not "
           << rect->getWidth() << " columns from row " << rect->getY();
  int64_t rows = rect->getHeight();
  if (rows > n || chunkSize(n, rows, rows - 1) == 0)
    return kernel.emitOpError("")
           << rows << " rows leave a chunk of its " << n << " elements empty";
  st.column = std::move(info->column);
  st.column.x = rect->getX();
  st.column.layout = RowChunks{n, rows, 0};
  st.x = rect->getX();
  st.width = 1;
  st.height = rows;
  st.inRows = st.outRows = rows;
  st.inN = st.outN = n;
  return success();
}

/// The chain @in -> k0 -> ... -> kn -> @out the streams describe, with the
/// redistribution feeding each kernel (if routing has inserted one).
static LogicalResult chainOf(fab::ProgramOp program, fab::IoOp &in,
                             fab::IoOp &out,
                             SmallVectorImpl<fab::KernelOp> &kernels,
                             SmallVectorImpl<fab::RedistributeOp> &turns) {
  Block &body = program.getBody().front();
  llvm::StringMap<StringRef> next;
  for (auto s : body.getOps<fab::StreamOp>()) {
    if (!next.try_emplace(s.getSrc(), s.getDst()).second)
      return s.emitOpError("leaves @")
             << s.getSrc()
             << ", which already has a stream out; the lowering handles a "
                "single chain of layers";
  }
  for (auto io : body.getOps<fab::IoOp>()) {
    if (io.getDirection() == fab::PortDir::input) {
      if (in)
        return io.emitOpError("is a second host input; the lowering "
                              "handles one");
      in = io;
    } else {
      if (out)
        return io.emitOpError("is a second host output; the lowering "
                              "handles one");
      out = io;
    }
  }
  if (!in || !out)
    return program.emitOpError("needs a stream from a host input and one "
                               "to a host output");
  StringRef at = in.getSymName();
  fab::RedistributeOp pending;
  int64_t steps = 0;
  while (at != out.getSymName()) {
    auto it = next.find(at);
    if (it == next.end())
      return program.emitOpError("has no stream out of @")
             << at << "; the chain from @" << in.getSymName()
             << " does not reach @" << out.getSymName();
    at = it->second;
    if (at == out.getSymName())
      break;
    Operation *node = SymbolTable::lookupSymbolIn(
        program, StringAttr::get(program.getContext(), at));
    if (auto rd = dyn_cast_or_null<fab::RedistributeOp>(node)) {
      if (pending)
        return rd.emitOpError("follows redistribution @")
               << pending.getSymName() << "; one is enough between kernels";
      if (++steps > 2000)
        return rd.emitOpError("is on a cycle of streams");
      pending = rd;
      continue;
    }
    auto k = dyn_cast_or_null<fab::KernelOp>(node);
    if (!k)
      return program.emitOpError("has a stream into @")
             << at << ", which is not a kernel or redistribution";
    if (kernels.size() > 1000 || llvm::is_contained(kernels, k))
      return k.emitOpError("is on a cycle of streams");
    kernels.push_back(k);
    turns.push_back(pending);
    pending = nullptr;
  }
  if (pending)
    return pending.emitOpError("feeds the host output; a redistribution "
                               "feeds a kernel");
  if (kernels.empty())
    return program.emitOpError("has no kernel between its host ports");
  size_t all = llvm::range_size(body.getOps<fab::KernelOp>());
  if (all != kernels.size())
    return program.emitOpError("has ")
           << all << " kernels but only " << kernels.size()
           << " are on the chain from the input to the output";
  return success();
}

FailureOr<Chain> analyzeChain(fab::ProgramOp program) {
  Chain chain;
  SmallVector<fab::KernelOp> kernels;
  SmallVector<fab::RedistributeOp> turns;
  if (failed(chainOf(program, chain.in, chain.out, kernels, turns)))
    return failure();
  auto target = program.getTargetAttr();
  int64_t gridW = target.getWidth(), gridH = target.getHeight();

  std::vector<Stage> &stages = chain.stages;
  stages.resize(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (failed(analyzeKernel(kernels[i], stages[i])))
      return failure();
    stages[i].turn = turns[i];
  }
  // Placement and layouts must line up along the chain.
  int64_t x = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    Stage &st = stages[i];
    if (st.x != x)
      return st.kernel.emitOpError("starts at column ")
             << st.x << " but the previous layer ends at column " << x
             << "; layers are placed side by side from column 0";
    if (st.height > gridH || st.x + st.width > gridW)
      return st.kernel.emitOpError("rectangle does not fit the ")
             << gridW << "x" << gridH << " fabric (it needs " << st.width
             << " columns and " << st.height << " rows at column " << st.x
             << ")";
    if (i > 0 &&
        (stages[i - 1].outRows != st.inRows || stages[i - 1].outN != st.inN))
      return st.kernel.emitOpError("receives ")
             << st.inN << " elements in " << st.inRows << " row chunks, but @"
             << stages[i - 1].kernel.getSymName() << " sends "
             << stages[i - 1].outN << " in " << stages[i - 1].outRows
             << " rows; a redistribution between different row chunkings "
                "is not implemented (the partitioner lines them up)";
    x += st.width;
  }
  chain.endX = x;
  auto inType = cast<RankedTensorType>(chain.in.getType());
  auto outType = cast<RankedTensorType>(chain.out.getType());
  if (inType.getNumElements() != stages.front().inN ||
      outType.getNumElements() != stages.back().outN)
    return stages.front().kernel.emitOpError("host tensors ")
           << inType << " and " << outType
           << " do not carry one sample in and out of the chain";
  return chain;
}

} // namespace weft::conversion
