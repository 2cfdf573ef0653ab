//===- Densities.cpp - Non-zero fractions of a graph's node results -------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A calibration run: the entry function of a clone of the module returns,
// after its own results, the last value every ONNX node computes (the
// importer names each op after its node: a NameLoc), and the reference runs
// it on sample inputs. Each node's density is the fraction of the non-zero
// elements of that value, overall and per element of a sample; the
// compiler's sparse-activation decisions take it in place of a guess
// (docs/execution-model.md, "Sparse activations").
//
//===----------------------------------------------------------------------===//

#include "weft/Reference/Reference.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#include <cstring>

using namespace mlir;
using weft::tensorio::DType;
using weft::tensorio::HostTensor;

weft::reference::NodeDensity
weft::reference::measureDensity(const HostTensor &t, bool (*nonZero)(float)) {
  NodeDensity out;
  size_t n = t.bytes.size() / 4;
  if (!n || t.dtype != DType::F32)
    return out;
  // Samples along the first dimension (rank 2 or more).
  size_t samples = t.shape.size() >= 2 && t.shape[0] > 0 ? size_t(t.shape[0])
                                                         : 1;
  size_t perSample = t.shape.size() >= 2 ? n / samples : 0;
  std::vector<uint32_t> counts(
      perSample <= kMaxProfiledElements ? perSample : 0, 0);
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    float v;
    std::memcpy(&v, t.bytes.data() + 4 * i, 4);
    bool nz = nonZero(v);
    total += nz;
    if (!counts.empty() && nz)
      ++counts[i % perSample];
  }
  out.density = double(total) / double(n);
  if (out.density < 1.0)
    for (uint32_t c : counts)
      out.perElement.push_back(double(c) / double(samples));
  return out;
}

llvm::Expected<std::map<std::string, weft::reference::NodeDensity>>
weft::reference::measureNodeDensities(ModuleOp module,
                                      llvm::ArrayRef<NamedTensor> inputs,
                                      const ReferenceOptions &options) {
  OwningOpRef<ModuleOp> clone = module.clone();
  auto entry = clone->lookupSymbol<func::FuncOp>(options.entryPoint);
  if (!entry || entry.getBody().empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the module has no function @" +
                                       options.entryPoint);
  // Each node's last f32 tensor value in the entry block, in the order the
  // nodes first appear.
  llvm::MapVector<StringRef, Value> last;
  Block &body = entry.getBody().front();
  for (Operation &op : body.without_terminator()) {
    auto name = dyn_cast<NameLoc>(op.getLoc());
    // Only the ops that compute a node's values: not tensor.empty, not the
    // initializers and their reshapes (named after the tensor, inside the
    // node's name: NameLoc(tensor, NameLoc(node))).
    if (!name || op.getNumResults() != 1 || isa<tensor::EmptyOp>(op) ||
        op.hasTrait<OpTrait::ConstantLike>() ||
        isa<NameLoc>(name.getChildLoc()))
      continue;
    auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType());
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
      continue;
    last[name.getName().getValue()] = op.getResult(0);
  }
  std::map<std::string, NodeDensity> densities;
  if (last.empty())
    return densities;
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret || entry.getBody().getBlocks().size() != 1)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the calibration run needs @" +
                                       options.entryPoint +
                                       " to be one block ending in a return");
  unsigned first = ret.getNumOperands();
  SmallVector<Value> results(ret.getOperands());
  SmallVector<Type> types(entry.getFunctionType().getResults());
  // Each returned through a copy of its own: a value may also be a graph
  // output, or a view of an input or a constant, which the lowering's
  // out-parameters must not alias.
  OpBuilder b(ret);
  for (auto &[name, value] : last) {
    auto type = cast<RankedTensorType>(value.getType());
    Value empty = tensor::EmptyOp::create(b, ret.getLoc(), type.getShape(),
                                          type.getElementType());
    results.push_back(
        linalg::CopyOp::create(b, ret.getLoc(), value, empty).getResult(0));
    types.push_back(type);
  }
  // Result attributes: the graph's own, then the node's name.
  MLIRContext *ctx = clone->getContext();
  SmallVector<DictionaryAttr> attrs;
  for (unsigned i = 0; i < first; ++i) {
    DictionaryAttr d = entry.getResultAttrDict(i);
    attrs.push_back(d ? d : DictionaryAttr::get(ctx));
  }
  for (auto &[name, value] : last)
    attrs.push_back(DictionaryAttr::get(
        ctx, {NamedAttribute(StringAttr::get(ctx, "onnx.name"),
                             StringAttr::get(ctx, name))}));
  ret->setOperands(results);
  entry.setFunctionType(
      FunctionType::get(ctx, entry.getFunctionType().getInputs(), types));
  entry.setAllResultAttrs(attrs);
  auto exe = ReferenceExecutable::compile(*clone, options);
  if (!exe)
    return exe.takeError();
  auto outputs = (*exe)->run(inputs);
  if (!outputs)
    return outputs.takeError();
  unsigned k = first;
  for (auto &[name, value] : last)
    densities[name.str()] =
        measureDensity((*outputs)[k++], [](float v) { return v != 0.0f; });
  return densities;
}
