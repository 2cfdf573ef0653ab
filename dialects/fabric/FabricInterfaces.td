//===- FabricInterfaces.td - fabric interfaces -------------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_FABRIC_INTERFACES_TD
#define WEFT_FABRIC_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Fabric_KernelSchemeAttrInterface
    : AttrInterface<"KernelSchemeAttrInterface"> {
  let cppNamespace = "::weft::fabric";
  let description = [{
    How a `fabric.kernel` computes, decided once by `--weft-convert-to-fabric`
    when it matches the layer: a dense layer, an elementwise function, a
    softmax, a fused expression, a join of two streams. Partitioning,
    routing, color allocation, the lowering and `weftc` read the scheme; none
    of them matches the kernel's linalg body again.
  }];
  let methods = [
    InterfaceMethod<"The streams the kernel consumes", "int64_t",
                    "getNumStreams", (ins)>,
    InterfaceMethod<[{Multiply-accumulates per sample the model asks for
                     (a Gemm or MatMul of the ONNX graph)}], "int64_t",
                    "getModelMacs", (ins)>,
    InterfaceMethod<[{Multiply-accumulates per sample the kernel executes
                     (the model's, or a 0/1 matrix weft made)}], "int64_t",
                    "getExecutedMacs", (ins)>,
    InterfaceMethod<"One line for reports: `dense 784 -> 256`, `Relu`",
                    "std::string", "getSummary", (ins)>,
  ];
}

#endif // WEFT_FABRIC_INTERFACES_TD
