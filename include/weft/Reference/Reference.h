//===- Reference.h - Host reference execution of imported models -*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The host reference is the oracle every fabric result is compared with. It
// lowers an imported module (func + tensor + arith + math + linalg on static
// tensors) with upstream MLIR only — one-shot bufferization, linalg to loops,
// conversion to the LLVM dialect — and runs it with MLIR's ExecutionEngine.
// Nothing here knows about the fabric, so a bug in weft's own passes cannot
// hide in the reference.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_REFERENCE_REFERENCE_H
#define WEFT_REFERENCE_REFERENCE_H

#include "weft/TensorIO/TensorIO.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace weft::reference {

/// How the reference lowers and JIT-compiles a module.
struct ReferenceOptions {
  /// The function that computes the graph.
  std::string entryPoint = "main_graph";
  /// LLVM optimisation level (0-3) for the JIT-compiled code. Level 1 keeps
  /// compile time low (the conformance run compiles a thousand small models)
  /// while removing the worst of the loop overhead. Results do not depend on
  /// it: no level reassociates or contracts floating-point operations.
  unsigned optLevel = 1;
};

/// One graph input or output as the entry function declares it.
struct TensorSignature {
  /// The `onnx.name` argument/result attribute, or "" when there is none.
  std::string name;
  tensorio::DType dtype;
  std::vector<int64_t> shape;
};

/// The graph inputs and outputs, in order.
struct GraphSignature {
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
};

/// Reads the signature of `module`'s entry function. Fails, naming the
/// argument or result, when one is not a statically shaped tensor of a
/// dtype the host exchanges (f32, f16, f64, i8/u8, i16, i32, i64, bool):
/// such a model is outside what the reference supports.
llvm::Expected<GraphSignature>
readGraphSignature(mlir::ModuleOp module,
                   llvm::StringRef entryPoint = "main_graph");

/// A value for one graph input. An empty name means "the next input in graph
/// order"; a non-empty name must be one of the graph's input names.
struct NamedTensor {
  std::string name;
  tensorio::HostTensor tensor;
};

/// Registers every dialect, interface model and LLVM IR translation the
/// reference lowering needs. Call on the registry the MLIRContext is built
/// from (or append it to a live context) before `ReferenceExecutable::compile`.
void registerReferenceDialects(mlir::DialectRegistry &registry);

/// Adds the lowering from the imported tensor form to the LLVM dialect. The
/// entry function `entryPoint` ends up taking its inputs followed by one
/// caller-allocated output buffer per result, with a C interface wrapper.
void buildReferenceLoweringPipeline(mlir::OpPassManager &pm,
                                    const ReferenceOptions &options = {});

/// A module lowered to LLVM and JIT-compiled, ready to run any number of
/// times. Runs are deterministic: the same inputs give the same bits.
class ReferenceExecutable {
public:
  ~ReferenceExecutable();
  ReferenceExecutable(const ReferenceExecutable &) = delete;
  ReferenceExecutable &operator=(const ReferenceExecutable &) = delete;

  /// Lowers a clone of `module` (the caller's module is not modified) and
  /// JIT-compiles it. On failure the error carries the diagnostics; a
  /// signature readGraphSignature rejects fails with its message.
  static llvm::Expected<std::unique_ptr<ReferenceExecutable>>
  compile(mlir::ModuleOp module, const ReferenceOptions &options = {});

  /// The graph inputs and outputs in order.
  llvm::ArrayRef<TensorSignature> inputs() const { return signature.inputs; }
  llvm::ArrayRef<TensorSignature> outputs() const { return signature.outputs; }

  /// Runs the graph. Inputs are matched by name where named, else by
  /// position; each must have the declared dtype and shape exactly.
  llvm::Expected<std::vector<tensorio::HostTensor>>
  run(llvm::ArrayRef<NamedTensor> inputs) const;

  /// The lowered module in the LLVM dialect, for `--print-lowered-ir`.
  mlir::ModuleOp getLoweredModule() const { return lowered.get(); }

private:
  ReferenceExecutable() = default;

  mlir::OwningOpRef<mlir::ModuleOp> lowered;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::string entryPoint;
  GraphSignature signature;
};

/// Compiles and runs `module` once.
llvm::Expected<std::vector<tensorio::HostTensor>>
runReference(mlir::ModuleOp module, llvm::ArrayRef<NamedTensor> inputs,
             const ReferenceOptions &options = {});

/// What a calibration run measures of one node's result.
struct NodeDensity {
  /// The fraction of its elements that are not zero.
  double density = 0.0;
  /// Per element of one sample (the result's first dimension is the
  /// samples'): the fraction of the samples in which it is not zero. Only
  /// for results with zeros, rank 2 or more and at most
  /// kMaxProfiledElements elements a sample; empty otherwise.
  std::vector<double> perElement;
};

/// The largest sample (elements) whose per-element densities a calibration
/// run records: a dense layer's input vector, not a convolution's maps.
constexpr size_t kMaxProfiledElements = 1 << 16;

/// The same of a host tensor: non-zero where `nonZero` says so.
NodeDensity measureDensity(const tensorio::HostTensor &t,
                           bool (*nonZero)(float));

/// A calibration run: the fraction of non-zero elements of every ONNX
/// node's result (the last f32 tensor value of the ops the importer named
/// after the node) when `module` runs on `inputs`, by node name, overall
/// and per element.
llvm::Expected<std::map<std::string, NodeDensity>>
measureNodeDensities(mlir::ModuleOp module, llvm::ArrayRef<NamedTensor> inputs,
                     const ReferenceOptions &options = {});

} // namespace weft::reference

#endif // WEFT_REFERENCE_REFERENCE_H
