//===- WaveletOps.td - wavelet operations ------------------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_WAVELET_OPS_TD
#define WEFT_WAVELET_OPS_TD

include "wavelet/WaveletDialect.td"
include "common/WeftAttrs.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "wavelet/WaveletAttrs.td"
include "wavelet/WaveletEnums.td"

//===----------------------------------------------------------------------===//
// Containers
//===----------------------------------------------------------------------===//

def Wavelet_ProgramOp : Wavelet_Op<"program", [
    Symbol, SymbolTable, NoTerminator, SingleBlock, IsolatedFromAbove,
    DeclareOpInterfaceMethods<RegionKindInterface>]> {
  let summary = "Everything loaded onto one fabric";
  let description = [{
    Holds the PE programs and the host I/O map. The verifier checks that PE
    groups lie inside the grid and do not overlap.

    Example:
    ```mlir
    wavelet.program @vadd {target = #weft.target<1x1>} {
      wavelet.pe @pe_0_0 at (0, 0) { ... }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Weft_TargetAttr:$target);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def Wavelet_PeGroupOp : Wavelet_Op<"pe_group", [
    Symbol, SymbolTable, NoTerminator, SingleBlock,
    HasParent<"ProgramOp">]> {
  let summary = "One program shared by a rectangle of PEs";
  let description = [{
    Every PE of `rect` runs the same code with the same router settings;
    `wavelet.param` gives registers per-PE initial values and `per_pe`
    segments give per-PE memory contents.

    Example:
    ```mlir
    wavelet.pe_group @row at #weft.rect<0, 0, 4, 1> {
      wavelet.param gpr 5 = affine_map<(x, y) -> (x * 64)>
      wavelet.route color 3 from [west] to [east, ramp]
      ...
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Weft_RectAttr:$rect);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `at` $rect attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def Wavelet_PeOp : Wavelet_Op<"pe", [
    Symbol, SymbolTable, NoTerminator, SingleBlock,
    HasParent<"ProgramOp">]> {
  let summary = "The program of a single PE";
  let description = [{
    A PE whose role no other PE shares. Same body as `wavelet.pe_group`.

    Example:
    ```mlir
    wavelet.pe @pe_3_1 at (3, 1) { ... }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$x, I64Attr:$y);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `at` ` ` `(` $x `,` $y `)` attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::weft::common::RectAttr getRect() {
      return ::weft::common::RectAttr::get(getContext(), getX(), getY(), 1, 1);
    }
  }];
}

def Wavelet_IoOp : Wavelet_Op<"io", [Symbol, HasParent<"ProgramOp">]> {
  let summary = "Which host ports and color carry a model input or output";
  let description = [{
    Elements of the tensor, in row-major order, are cut into
    ceil(n / (end_row - first_row)) long chunks, chunk i travelling through
    the port of row first_row + i on the given edge as wavelets of `color`
    in payload `format` (dense32, dense16x2 or sparse16).

    With `fmap` the tensor is a feature map [1, C, spatial...] with P pixels
    (the product of the dims after dim 1) streamed pixel-major: on
    R = end_row - first_row rows (R must divide C, Lc = C / R), row
    first_row + r carries channels [r*Lc, (r+1)*Lc) pixel by pixel, element
    (c, p) at position p*Lc + (c - r*Lc) of its chunk. The host permutes
    (docs/architecture.md §5.2).

    Example:
    ```mlir
    wavelet.io @x input west rows 0 to 4 color 1 "dense32" : tensor<1x784xf32>
    wavelet.io @f input west rows 0 to 2 color 2 "dense32" fmap : tensor<1x8x5x5xf32>
    wavelet.io @s input west rows 0 to 4 color 3 "sparse16" nz closeout 1 : tensor<1x784xf16>
    ```

    With `nz closeout N` (a sparse16 input only) the host sends only the
    non-zero elements of each chunk, each with its position in the chunk,
    then a control wavelet with index N that ends the chunk
    (docs/architecture.md §5.2).
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       Weft_PortDirAttr:$direction, Weft_EdgeAttr:$edge,
                       I64Attr:$first_row, I64Attr:$end_row,
                       I64Attr:$color, StrAttr:$format,
                       TypeAttrOf<AnyRankedTensor>:$type,
                       UnitAttr:$fmap,
                       OptionalAttr<I64Attr>:$closeout);
  let assemblyFormat = [{
    $sym_name $direction $edge `rows` $first_row `to` $end_row `color` $color
    $format (`fmap` $fmap^)? (`nz` `closeout` $closeout^)? `:` $type
    attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// PE contents
//===----------------------------------------------------------------------===//

def Wavelet_RouteOp : Wavelet_Op<"route"> {
  let summary = "The router setting for one color";
  let description = [{
    Wavelets of `color` entering through any `from` port leave through every
    `to` port. `ramp` as an input is the on-ramp from this PE's CE, as an
    output the off-ramp into the CE's queue for the color.

    With `positions` the route cycles through 2 to 4 positions
    (docs/architecture.md §4.4): the first `x n` wavelets of the color come
    from the first position's `from` ports and leave through its `to` ports,
    the next ones follow the second position, and after the last the route
    starts again with the first. Each position needs at least one port on
    each side and a count of 1 to 2^24. The route's own `from` and `to` sets
    are the unions of the positions' sets. The attribute holds flat triples
    (inputs mask, outputs mask, count), one per position.

    Example:
    ```mlir
    wavelet.route color 3 from [west] to [east, ramp]
    // A fixed-order merge: 12 wavelets from the west, then 4 from the CE.
    wavelet.route color 4 from [west, ramp] to [east]
        positions [from [west] to [east] x 12, from [ramp] to [east] x 4]
    ```
  }];
  let arguments = (ins I64Attr:$color, I32Attr:$inputs, I32Attr:$outputs,
                       OptionalAttr<DenseI64ArrayAttr>:$positions);
  let assemblyFormat = [{
    `color` $color `from` custom<DirSet>($inputs) `to`
    custom<DirSet>($outputs)
    (`positions` custom<RoutePositions>($positions)^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Wavelet_ParamOp : Wavelet_Op<"param"> {
  let summary = "A per-PE initial register value";
  let description = [{
    GPR `gpr` of the PE at position (x, y) inside its group starts with
    `map(x, y)` (low 16 bits).

    Example:
    ```mlir
    wavelet.param gpr 5 = affine_map<(x, y) -> (x * 64 + y)>
    ```
  }];
  let arguments = (ins I64Attr:$gpr, AffineMapAttr:$map);
  let assemblyFormat = "`gpr` $gpr `=` $map attr-dict";
}

def Wavelet_SegmentOp : Wavelet_Op<"segment", [Symbol]> {
  let summary = "Initial memory contents at a word address";
  let description = [{
    Without `per_pe` every PE of the group gets `value`; with it the two
    leading dimensions are the group's rows and columns and each PE gets its
    slice. Weights are `dense_resource` blobs, never printed inline.

    Example:
    ```mlir
    wavelet.segment @w at 2048 per_pe = dense_resource<w0> : tensor<1x4x64xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$address,
                       UnitAttr:$per_pe, ElementsAttr:$value);
  let assemblyFormat = [{
    $sym_name `at` $address (`per_pe` $per_pe^)? `=` $value attr-dict
  }];
  let extraClassDeclaration = [{
    /// 16-bit words one PE's copy occupies.
    int64_t getWordsPerPE();
  }];
}

def Wavelet_DsdOp : Wavelet_Op<"dsd", [Symbol]> {
  let summary = "A data structure descriptor stored at a word address";
  let description = [{
    A 64-bit DSD record for DSR loads; it must lie in the part of memory DSR
    loads reach (the first 16 KiB) at a multiple of four words. The fields
    are those of docs/architecture.md for the kind.

    Example:
    ```mlir
    wavelet.dsd @acc at 16 mem1d {length = 64, base = 4096}
    wavelet.dsd @xin at 20 fabin {length = 64, color = 3, term}
    wavelet.dsd @xout at 24 fabout {length = 64, color = 4, format = "sparse16", nz}
    wavelet.dsd @w at 28 mem1d {length = 64, base = 8192, ix, sl}
    ```
    `sl` (mem1d only) makes a sliced vector: lane masks and packed non-zero
    lanes (docs/architecture.md §8.3, "Sliced vectors").
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$address,
                       Wavelet_DsdKind:$kind,
                       OptionalAttr<I64Attr>:$length,
                       OptionalAttr<I64Attr>:$base,
                       OptionalAttr<I64Attr>:$stride,
                       OptionalAttr<I64Attr>:$color,
                       OptionalAttr<StrAttr>:$format,
                       OptionalAttr<I64Attr>:$ac,
                       UnitAttr:$term, UnitAttr:$ctrl,
                       OptionalAttr<I64Attr>:$index,
                       UnitAttr:$wli, UnitAttr:$ix,
                       OptionalAttr<I64Attr>:$utid,
                       OptionalAttr<I64Attr>:$xdsr,
                       OptionalAttr<I64Attr>:$push_ac,
                       OptionalAttr<I64Attr>:$pop_ac,
                       UnitAttr:$nz, UnitAttr:$sl);
  let assemblyFormat = "$sym_name `at` $address $kind attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The machine-model DSD, or a diagnostic naming the bad field.
    ::mlir::FailureOr<::weft::machine::Dsd> toDsd();
  }];
}

def Wavelet_XdsdOp : Wavelet_Op<"xdsd", [Symbol]> {
  let summary = "An extended descriptor (4D dimensions and stride selects)";
  let description = [{
    Example:
    ```mlir
    wavelet.xdsd @win at 24 {len = array<i64: 3, 3, 1, 1>,
                              stride_sel = array<i64: 6, 0, 7, 7>}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$address,
                       DenseI64ArrayAttr:$len, DenseI64ArrayAttr:$stride_sel);
  let assemblyFormat = "$sym_name `at` $address attr-dict";
  let hasVerifier = 1;
}

def Wavelet_TaskOp : Wavelet_Op<"task", [
    Symbol, NoTerminator, SingleBlock]> {
  let summary = "Code started by a wavelet, an activation or a control index";
  let description = [{
    `data` tasks start when a wavelet of fabric color `id` is picked (its
    payload lands in gpr 0 and gpr 1); `local` tasks (ids 32..63) when
    activated; `control` tasks when a control wavelet with index[5:0] = `id`
    is picked. `active` sets a local task's active bit at load time, so it
    runs once the program starts (data tasks are always active);
    `blocked` sets the id's block bit at load time. The body
    runs until an instruction with the terminate bit.

    Example:
    ```mlir
    wavelet.task @recv data 3 {
      wavelet.dsr load s0dsr 1, @w
      wavelet.inst fmac dsr 1, gpr 0 term
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Wavelet_TaskKind:$kind,
                       I64Attr:$id, UnitAttr:$active, UnitAttr:$blocked);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name $kind $id (`active` $active^)? (`blocked` $blocked^)?
    attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Instructions
//===----------------------------------------------------------------------===//

def Wavelet_InstOp : Wavelet_Op<"inst", [HasParent<"TaskOp">]> {
  let summary = "One machine instruction (any opcode but DSR moves and jumps)";
  let description = [{
    `opcode` is a row of the machine model's opcode table (the enum
    `#wavelet<opcode ...>`, its cases those of `include/weft/Machine/ISA.h`);
    `args` are its operands, typed `#wavelet.operand<kind, value>`
    attributes, written without the attribute syntax:

    - vector, unary and compare instructions take two, each `dsr N`
      (destination DDSR N and first source S0DSR N), `ddsr N`, `s0dsr N`,
      `s1dsr N`, `gpr N` or `imm` with one of zero, one, minus_one, two,
      half, prng;
    - `movi` and `movh` take `gpr N` and a literal (`lit`, printed as a bare
      integer);
    - control instructions take a literal color or task id, `gpr N` (the
      color in a GPR) or `all`; `nop` takes none.

    Which kinds an opcode's fields accept and whether every value fits its
    encoding is checked against the machine model. `term` sets the
    terminate bit.

    Example:
    ```mlir
    wavelet.inst fmac dsr 4, s1dsr 2 term
    wavelet.inst activate 33
    wavelet.inst movi gpr 3, -5
    ```
  }];
  let arguments = (ins Wavelet_OpcodeAttr:$opcode,
                       TypedArrayAttrBase<Wavelet_OperandAttr,
                                          "instruction operands">:$args,
                       UnitAttr:$term);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "Opcode":$opcode,
                   "::llvm::ArrayRef<OperandAttr>":$args,
                   CArg<"bool", "false">:$term)>,
    /// The op of a machine instruction of the vector, unary, compare or
    /// control family, or movi/movh.
    OpBuilder<(ins "const ::weft::machine::Instruction &":$instruction)>,
  ];
  let extraClassDeclaration = [{
    /// The operands (verified to be #wavelet.operand attributes).
    auto getOperandAttrs() { return getArgs().getAsRange<OperandAttr>(); }
    /// The machine instruction, or a diagnostic saying what cannot be encoded.
    ::mlir::FailureOr<::weft::machine::Instruction> toInstruction();
  }];
}

def Wavelet_DsrOp : Wavelet_Op<"dsr", [HasParent<"TaskOp">]> {
  let summary = "Loads or stores a DSR, XDSR or stride register";
  let description = [{
    Example:
    ```mlir
    wavelet.dsr load s0dsr 4, @xin
    ```
  }];
  let arguments = (ins UnitAttr:$store, Wavelet_RegFile:$file, I64Attr:$reg,
                       FlatSymbolRefAttr:$record);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Wavelet_JumpOp : Wavelet_Op<"jump", [HasParent<"TaskOp">]> {
  let summary = "Jumps to a label of the same task, maybe on the flag";
  let description = [{
    Example:
    ```mlir
    wavelet.jump "loop" if_true
    ```
  }];
  let arguments = (ins StrAttr:$label,
                       DefaultValuedAttr<Wavelet_JumpCond,
                                         "JumpCond::always">:$cond);
  let assemblyFormat = "$label ($cond^)? attr-dict";
}

def Wavelet_LabelOp : Wavelet_Op<"label", [HasParent<"TaskOp">]> {
  let summary = "A jump target";
  let description = [{
    Example:
    ```mlir
    wavelet.label "loop"
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let assemblyFormat = "$name attr-dict";
}

#endif // WEFT_WAVELET_OPS_TD
