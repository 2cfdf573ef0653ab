//===- FabricAttrs.td - fabric attributes and enums --------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_FABRIC_ATTRS_TD
#define WEFT_FABRIC_ATTRS_TD

include "fabric/FabricDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class Fabric_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Fabric_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Fabric_Dir : I32EnumAttr<"Dir", "a router port", [
    I32EnumAttrCase<"north", 0>, I32EnumAttrCase<"east", 1>,
    I32EnumAttrCase<"south", 2>, I32EnumAttrCase<"west", 3>,
    I32EnumAttrCase<"ramp", 4>]> {
  let cppNamespace = "::weft::fabric";
  let genSpecializedAttr = 0;
}
def Fabric_DirAttr : EnumAttr<Fabric_Dialect, Fabric_Dir, "dir">;

def Fabric_Edge : I32EnumAttr<"Edge", "a fabric edge with host ports", [
    I32EnumAttrCase<"west", 3>, I32EnumAttrCase<"east", 1>]> {
  let cppNamespace = "::weft::fabric";
  let genSpecializedAttr = 0;
}
def Fabric_EdgeAttr : EnumAttr<Fabric_Dialect, Fabric_Edge, "edge">;

def Fabric_PortDir : I32EnumAttr<"PortDir", "host port direction", [
    I32EnumAttrCase<"input", 0>, I32EnumAttrCase<"output", 1>]> {
  let cppNamespace = "::weft::fabric";
  let genSpecializedAttr = 0;
}
def Fabric_PortDirAttr : EnumAttr<Fabric_Dialect, Fabric_PortDir, "port">;

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

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Fabric_TargetAttr : Fabric_Attr<"Target", "target"> {
  let summary = "The fabric a program is compiled for";
  let description = [{
    The parameters of `weft::target::TargetConfig`: the grid, memory per PE in
    bytes, routable colors and the router and CE queue depths. Omitted keys
    take the defaults of docs/architecture.md.

    Example:
    ```mlir
    #fabric.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>
    ```
  }];
  let parameters = (ins "unsigned":$width, "unsigned":$height,
                        "unsigned":$memoryBytes, "unsigned":$routableColors,
                        "unsigned":$routerQueueDepth, "unsigned":$ceQueueDepth);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The machine model this attribute describes (verified to exist).
    ::weft::target::Target getModel() const;
    /// Builds the attribute from a machine configuration.
    static TargetAttr get(::mlir::MLIRContext *ctx,
                          const ::weft::target::TargetConfig &config);
  }];
}

def Fabric_RectAttr : Fabric_Attr<"Rect", "rect"> {
  let summary = "A rectangle of PEs: origin (x, y), width and height";
  let description = [{
    x counts columns west to east, y counts rows north to south.

    Example:
    ```mlir
    #fabric.rect<0, 0, 8, 4>
    ```
  }];
  let parameters = (ins "int64_t":$x, "int64_t":$y, "int64_t":$width,
                        "int64_t":$height);
  let assemblyFormat = "`<` $x `,` $y `,` $width `,` $height `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool contains(int64_t px, int64_t py) const {
      return px >= getX() && py >= getY() && px < getX() + getWidth() &&
             py < getY() + getHeight();
    }
    bool overlaps(RectAttr o) const {
      return getX() < o.getX() + o.getWidth() &&
             o.getX() < getX() + getWidth() &&
             getY() < o.getY() + o.getHeight() &&
             o.getY() < getY() + getHeight();
    }
    /// Whether the rectangle lies inside the grid of `t`.
    bool fits(const ::weft::target::Target &t) const {
      return t.contains(getX(), getY()) &&
             t.contains(getX() + getWidth() - 1, getY() + getHeight() - 1);
    }
    int64_t numPEs() const { return getWidth() * getHeight(); }
  }];
}

def Fabric_ColorAttr : Fabric_Attr<"Color", "color"> {
  let summary = "A fabric color (virtual channel), 0..31";
  let description = [{
    The 5-bit color of a wavelet. Whether it is routable on a particular
    target (below `colors`) is checked by the ops that use it.

    Example:
    ```mlir
    #fabric.color<3>
    ```
  }];
  let parameters = (ins "unsigned":$value);
  let assemblyFormat = "`<` $value `>`";
  let genVerifyDecl = 1;
}

def Fabric_LayoutAttr : Fabric_Attr<"Layout", "layout"> {
  let summary = "How a vector is spread over the PEs of a rectangle";
  let description = [{
    `replicated`: every part holds the whole vector; `row_chunks`: the vector
    is cut into `parts` contiguous chunks (the last may be shorter), chunk i
    going to row i; `col_chunks`: the same per column.

    Example:
    ```mlir
    #fabric.layout<row_chunks, 4>
    ```
  }];
  let parameters = (ins "LayoutKind":$kind, "int64_t":$parts);
  let assemblyFormat = "`<` $kind `,` $parts `>`";
  let genVerifyDecl = 1;
}

#endif // WEFT_FABRIC_ATTRS_TD
