//===- FabricEnums.td - fabric enums -----------------------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Apart from FabricAttrs.td so that the enum declarations generated from it
// are fabric's alone, not also those of the `weft` dialect it includes.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_FABRIC_ENUMS_TD
#define WEFT_FABRIC_ENUMS_TD

include "fabric/FabricDialect.td"
include "mlir/IR/EnumAttr.td"

def Fabric_LayoutKind : I32EnumAttr<"LayoutKind",
    "how a vector is spread over a rectangle's PEs", [
    I32EnumAttrCase<"replicated", 0>, I32EnumAttrCase<"row_chunks", 1>,
    I32EnumAttrCase<"col_chunks", 2>]> {
  let cppNamespace = "::weft::fabric";
  let genSpecializedAttr = 0;
}
def Fabric_LayoutKindAttr
    : EnumAttr<Fabric_Dialect, Fabric_LayoutKind, "layout_kind">;

def Fabric_CheckpointPolicy : I32EnumAttr<"CheckpointPolicy",
    "what a layer does with its activations for the backward pass", [
    I32EnumAttrCase<"save", 0>, I32EnumAttrCase<"recompute", 1>]> {
  let cppNamespace = "::weft::fabric";
  let genSpecializedAttr = 0;
}
def Fabric_CheckpointPolicyAttr
    : EnumAttr<Fabric_Dialect, Fabric_CheckpointPolicy, "checkpoint">;

def Fabric_Optimizer : I32EnumAttr<"Optimizer",
    "how training updates the weights (docs/training.md)", [
    I32EnumAttrCase<"sgd", 0>, I32EnumAttrCase<"mbgd", 1>,
    I32EnumAttrCase<"cpgd", 2>]> {
  let cppNamespace = "::weft::fabric";
  let genSpecializedAttr = 0;
}

def Fabric_Precision : I32EnumAttr<"Precision",
    "the arithmetic a kernel is compiled for", [
    I32EnumAttrCase<"fp32", 0>, I32EnumAttrCase<"mixed", 1>]> {
  let cppNamespace = "::weft::fabric";
  let genSpecializedAttr = 0;
}
def Fabric_PrecisionAttr : EnumAttr<Fabric_Dialect, Fabric_Precision,
                                    "precision">;

def Fabric_ExprKind : I32EnumAttr<"ExprKind",
    "a node of a fused elementwise expression", [
    I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"add", 1>,
    I32EnumAttrCase<"sub", 2>, I32EnumAttrCase<"mul", 3>,
    I32EnumAttrCase<"div", 4>, I32EnumAttrCase<"max", 5>,
    I32EnumAttrCase<"min", 6>, I32EnumAttrCase<"lt", 7>,
    I32EnumAttrCase<"le", 8>, I32EnumAttrCase<"select", 9>,
    I32EnumAttrCase<"unary", 10>, I32EnumAttrCase<"tanh", 11>]> {
  let cppNamespace = "::weft::fabric";
  let genSpecializedAttr = 0;
}

def Fabric_JoinKind : I32EnumAttr<"JoinKind",
    "an elementwise op of two streams", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"sub", 1>,
    I32EnumAttrCase<"mul", 2>, I32EnumAttrCase<"div", 3>,
    I32EnumAttrCase<"max", 4>, I32EnumAttrCase<"min", 5>]> {
  let cppNamespace = "::weft::fabric";
  let genSpecializedAttr = 0;
}

def Fabric_PoolKind : I32EnumAttr<"PoolKind",
    "what a pooling window computes", [
    I32EnumAttrCase<"max", 0>, I32EnumAttrCase<"avg", 1>]> {
  let cppNamespace = "::weft::fabric";
  let genSpecializedAttr = 0;
}

#endif // WEFT_FABRIC_ENUMS_TD
