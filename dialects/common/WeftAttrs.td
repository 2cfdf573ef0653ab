//===- WeftAttrs.td - shared attributes and enums ----------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_COMMON_ATTRS_TD
#define WEFT_COMMON_ATTRS_TD

include "common/WeftDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class Weft_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Weft_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Weft_Dir : I32EnumAttr<"Dir", "a router port", [
    I32EnumAttrCase<"north", 0>, I32EnumAttrCase<"east", 1>,
    I32EnumAttrCase<"south", 2>, I32EnumAttrCase<"west", 3>,
    I32EnumAttrCase<"ramp", 4>]> {
  let cppNamespace = "::weft::common";
  let genSpecializedAttr = 0;
}
def Weft_DirAttr : EnumAttr<Weft_Dialect, Weft_Dir, "dir">;

def Weft_Edge : I32EnumAttr<"Edge", "a fabric edge with host ports", [
    I32EnumAttrCase<"west", 3>, I32EnumAttrCase<"east", 1>]> {
  let cppNamespace = "::weft::common";
  let genSpecializedAttr = 0;
}
def Weft_EdgeAttr : EnumAttr<Weft_Dialect, Weft_Edge, "edge">;

def Weft_PortDir : I32EnumAttr<"PortDir", "host port direction", [
    I32EnumAttrCase<"input", 0>, I32EnumAttrCase<"output", 1>]> {
  let cppNamespace = "::weft::common";
  let genSpecializedAttr = 0;
}
def Weft_PortDirAttr : EnumAttr<Weft_Dialect, Weft_PortDir, "port">;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Weft_TargetAttr : Weft_Attr<"Target", "target"> {
  let summary = "The fabric a program is compiled for";
  let description = [{
    The parameters of `weft::machine::TargetConfig`: the grid, memory per PE in
    bytes, routable colors and the router and CE queue depths. Omitted keys
    take the defaults of docs/architecture.md.

    Example:
    ```mlir
    #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>
    ```
  }];
  let parameters = (ins "unsigned":$width, "unsigned":$height,
                        "unsigned":$memoryBytes, "unsigned":$routableColors,
                        "unsigned":$routerQueueDepth, "unsigned":$ceQueueDepth);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The machine model this attribute describes (verified to exist).
    ::weft::machine::Target getModel() const;
    /// Builds the attribute from a machine configuration.
    static TargetAttr get(::mlir::MLIRContext *ctx,
                          const ::weft::machine::TargetConfig &config);
  }];
}

def Weft_RectAttr : Weft_Attr<"Rect", "rect"> {
  let summary = "A rectangle of PEs: origin (x, y), width and height";
  let description = [{
    x counts columns west to east, y counts rows north to south.

    Example:
    ```mlir
    #weft.rect<0, 0, 8, 4>
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
    bool fits(const ::weft::machine::Target &t) const {
      return t.contains(getX(), getY()) &&
             t.contains(getX() + getWidth() - 1, getY() + getHeight() - 1);
    }
    int64_t numPEs() const { return getWidth() * getHeight(); }
  }];
}

#endif // WEFT_COMMON_ATTRS_TD
