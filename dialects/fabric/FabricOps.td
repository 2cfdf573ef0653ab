//===- FabricOps.td - fabric operations --------------------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_FABRIC_OPS_TD
#define WEFT_FABRIC_OPS_TD

include "fabric/FabricDialect.td"
include "fabric/FabricAttrs.td"
include "fabric/FabricTypes.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Fabric_ProgramOp : Fabric_Op<"program", [
    Symbol, SymbolTable, NoTerminator, SingleBlock, IsolatedFromAbove,
    DeclareOpInterfaceMethods<RegionKindInterface>]> {
  let summary = "A network placed on one fabric";
  let description = [{
    Holds the kernels, host ports, streams, redistributions, routes and
    checkpoint markers of one compiled network, and the target they are
    placed on. The body is a graph: order carries no meaning. `training`,
    when set, makes it a training program (docs/training.md).

    The verifier checks everything that involves several children: kernel
    rectangles inside the grid and disjoint, host-port rows inside the grid,
    switch settings on existing links, routable colors, and at most one route
    per color on each PE.

    Example:
    ```mlir
    fabric.program @mlp {target = #weft.target<8x4>} {
      fabric.io @x input west rows 0 to 4 : tensor<1x64xf32>
      ...
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Weft_TargetAttr:$target,
                       OptionalAttr<Fabric_TrainingAttr>:$training);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::weft::machine::Target getModel() { return getTarget().getModel(); }
  }];
}

def Fabric_IoOp : Fabric_Op<"io", [Symbol, HasParent<"ProgramOp">]> {
  let summary = "A model input or output at host ports on an edge";
  let description = [{
    The host injects (`input`) or collects (`output`) the tensor's elements
    through the ports of rows [first_row, end_row) of the given edge, in
    row-major element order, the first chunk on the first row. With
    `pixels`, the tensor is a feature map (channels x `pixels`) streamed
    pixel-major: row r carries its chunk of the channels, pixel by pixel
    (docs/execution-model.md, "Feature-map streams"); the host permutes.

    Example:
    ```mlir
    fabric.io @x input west rows 0 to 4 : tensor<1x784xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Weft_PortDirAttr:$direction,
                       Weft_EdgeAttr:$edge, I64Attr:$first_row,
                       I64Attr:$end_row, TypeAttrOf<AnyRankedTensor>:$type,
                       OptionalAttr<I64Attr>:$pixels);
  let assemblyFormat = [{
    $sym_name $direction $edge `rows` $first_row `to` $end_row `:` $type
    attr-dict
  }];
  let hasVerifier = 1;
}

def Fabric_KernelOp : Fabric_Op<"kernel", [
    Symbol, HasParent<"ProgramOp">, IsolatedFromAbove, SingleBlock]> {
  let summary = "A layer's computation, placed on a rectangle of PEs";
  let description = [{
    `scheme` says how the kernel computes (a dense layer, an elementwise
    function, a softmax, a fused expression, a join of two streams): it is
    decided once, when `--weft-convert-to-fabric` matches the layer, and
    every later stage reads it. The body holds the layer in upstream dialects
    (linalg, tensor, arith) on tensors, as documentation of what the scheme
    computes: block arguments are the kernel's inputs in order, `fabric.yield`
    returns its outputs. `rect` is set by placement; `smear` is the neuron
    smearing factor (how many PEs share one neuron's fan-in); a convolution's
    `tiles` is the number of bands of output columns it is cut into, each on
    its own copy of the `smear` x rows rectangle, side by side (the rectangle
    is `tiles` x `smear` columns wide); `merge` is the number of the
    producer's row lanes a column of an unbanded convolution takes (its
    input arrives on `merge` x `smear` rows, lanes jk .. jk + k - 1 merging
    into column j at row jk: docs/execution-model.md, "Merged lanes");
    `precision` and
    `predicted_cycles` (steady-state cycles per sample, from the cost model)
    are set by partitioning; for a kernel in bands of output columns,
    `lane_wait_cycles` is the part of `predicted_cycles` beyond its busiest
    band's cycles of work: what the bands wait on their shared lanes
    (docs/execution-model.md, "Bands of output columns"); `tile` holds
    frustum-tiling sizes when the layer is tiled. In a training program (docs/training.md), `trained` marks the
    kernels whose weights are updated (or, for a column kernel, that run a
    backward step), and `input_gradient` those that send the gradient of
    their input back to the kernel before them (every trained kernel but
    the first of the network). `--weft-select-checkpoints` sets
    `checkpoint` on every trained dense kernel: `save` keeps its input until
    its chain step, `recompute` lets it be overwritten and has the kernel
    before run its forward again in the backward pass (reverse checkpoints,
    docs/training.md); `recompute_cycles` is then the CE cycles per sample,
    summed over the PEs, that the pass predicts this costs. Under cpgd,
    `--weft-prepare-training` sets `lag` on every trained kernel: how many
    samples its backward pass trails its forward pass (the kernels after it,
    the loss included; docs/training.md, "CPGD").
    `--weft-select-sliced-weights` sets `sliced_weights` on an inference
    dense kernel whose weight columns are stored as sliced vectors: lane
    masks and packed non-zero lanes, so zero weights cost no MAC and only a
    mask read (docs/execution-model.md, "Sparse weights").

    Example:
    ```mlir
    fabric.kernel @fc1 : (tensor<1x784xf32>) -> tensor<1x256xf32>
        scheme #fabric.dense<fan_in = 784, neurons = 256,
            weights = dense_resource<fc1_weights> : tensor<784x256xf32>>
        at #weft.rect<0, 0, 8, 4> attributes {smear = 2 : i64} {
    ^bb0(%x: tensor<1x784xf32>):
      ...
      fabric.yield %y : tensor<1x256xf32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       Fabric_KernelSchemeAttrInterface:$scheme,
                       OptionalAttr<Weft_RectAttr>:$rect,
                       DefaultValuedAttr<I64Attr, "1">:$smear,
                       DefaultValuedAttr<I64Attr, "1">:$tiles,
                       DefaultValuedAttr<I64Attr, "1">:$merge,
                       OptionalAttr<DenseI64ArrayAttr>:$tile,
                       OptionalAttr<Fabric_PrecisionAttr>:$precision,
                       OptionalAttr<I64Attr>:$predicted_cycles,
                       OptionalAttr<I64Attr>:$lane_wait_cycles,
                       TypeAttrOf<FunctionType>:$function_type,
                       UnitAttr:$trained, UnitAttr:$input_gradient,
                       OptionalAttr<Fabric_CheckpointPolicyAttr>:$checkpoint,
                       OptionalAttr<I64Attr>:$recompute_cycles,
                       OptionalAttr<I64Attr>:$lag,
                       UnitAttr:$sliced_weights);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `:` $function_type `scheme` $scheme (`at` $rect^)?
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
}

def Fabric_YieldOp : Fabric_Op<"yield", [
    Pure, Terminator, ReturnLike, HasParent<"KernelOp">]> {
  let summary = "Returns a kernel's outputs";
  let description = [{
    Example:
    ```mlir
    fabric.yield %y : tensor<1x256xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$results);
  let assemblyFormat = "($results^ `:` type($results))? attr-dict";
}

def Fabric_RedistributeOp : Fabric_Op<"redistribute", [
    Symbol, HasParent<"ProgramOp">]> {
  let summary = "Reshuffles a stream from one layout to another on the fabric";
  let description = [{
    A producer's outputs leave in its layout (say one chunk per row of its
    rectangle) and the consumer wants another (say chunks broadcast down its
    columns). This node stands between the two streams and is lowered to
    routes and forwarding tasks on the PEs of `rect` — never to the host.

    Example:
    ```mlir
    fabric.redistribute @r1 : !fabric.wavelets<f32, 256>
        at #weft.rect<8, 0, 1, 4>
        from #fabric.layout<row_chunks, 4> to #fabric.layout<col_chunks, 8>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Fabric_LayoutAttr:$from,
                       Fabric_LayoutAttr:$to,
                       TypeAttrOf<Fabric_WaveletsType>:$payload,
                       OptionalAttr<Weft_RectAttr>:$rect);
  let assemblyFormat = [{
    $sym_name `:` $payload (`at` $rect^)? `from` $from `to` $to attr-dict
  }];
  let hasVerifier = 1;
}

def Fabric_StreamOp : Fabric_Op<"stream", [
    Symbol, HasParent<"ProgramOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A logical channel from one node to one or more others";
  let description = [{
    Connects output `src_port` of a kernel, redistribution or input port to
    input `dst_ports[i]` of each kernel, redistribution or output port
    `dsts[i]`. A stream with several destinations is a fork: the producer
    sends every wavelet once, on one color, and the routers multicast it to
    every destination. The payload type says how many elements of which type
    flow per sample. `color` is set by color allocation. `pixels` marks a
    feature-map stream: a channels x `pixels` tensor whose row chunks carry
    whole channels, pixel-major (docs/execution-model.md, "Feature-map
    streams").

    In a training program (docs/training.md), `gradient` marks a stream of
    the backward pass, flowing west: `src_port` names an *input* of a kernel
    marked `input_gradient` (the stream carries the gradient of the loss with
    respect to that input) and `dst_ports[i]` an *output* of a `trained`
    kernel (the gradient with respect to that output); the payload is the
    type of both.

    `sparse` (set by `--weft-select-sparse-streams`) sends only the non-zero
    values of the payload as sparse16 wavelets (docs/execution-model.md,
    "Sparse activations"). It is allowed only on a forward stream, not a
    feature map, from a dense kernel with `relu` or from a host input (the
    host then sends only the non-zero values) to one destination: a dense
    kernel, or the redistribution routing put in front of one.

    Example:
    ```mlir
    fabric.stream @s1 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 256>
        {color = #fabric.color<3>}
    fabric.stream @x_fork @x[0] -> @fc1[0], @add[1] : !fabric.wavelets<f32, 64>
    fabric.stream @fc2_grad @fc2[0] -> @fc1[0] : !fabric.wavelets<f32, 256>
        {gradient}
    fabric.stream @h1 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 256>
        {sparse = #fabric.sparse<density = 0.5>}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       FlatSymbolRefAttr:$src, I64Attr:$src_port,
                       SymbolRefArrayAttr:$dsts, DenseI64ArrayAttr:$dst_ports,
                       TypeAttrOf<Fabric_WaveletsType>:$payload,
                       OptionalAttr<Fabric_ColorAttr>:$color,
                       OptionalAttr<I64Attr>:$pixels, UnitAttr:$gradient,
                       OptionalAttr<Fabric_SparseAttr>:$sparse);
  let assemblyFormat = [{
    $sym_name $src `[` $src_port `]` `->` custom<Dests>($dsts, $dst_ports)
    `:` $payload attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The destinations' symbol names, in order.
    ::llvm::SmallVector<::llvm::StringRef> getDstNames();
    /// Whether `node` is a destination of the stream.
    bool feeds(::llvm::StringRef node);
    /// The checks of a `sparse` stream (verifySymbolUses).
    ::llvm::LogicalResult
    verifySparse(::mlir::SymbolTableCollection &symbols);
  }];
}

def Fabric_RouteOp : Fabric_Op<"route", [
    HasParent<"ProgramOp">, NoTerminator, SingleBlock,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The route of one stream: logical, then per-PE switches";
  let description = [{
    A route with an empty body is logical: the stream still has to be routed.
    Routing (`--weft-route-streams`) fills the body with one `fabric.switch`
    per PE the stream passes, the PE that receives it included; color
    allocation (`--weft-allocate-colors`) sets `color`. A routed route is
    closed: every port a switch sends out of leads into a switch of the same
    route that takes wavelets from that side, and every port a switch takes
    wavelets from is fed by one, except on the west and east edges (host
    ports).

    With `channel`, `stream` names a kernel or a redistribution instead, and
    the route is one of its internal channels (say the partial sums of a
    dense layer), which needs a color like any stream.

    Example:
    ```mlir
    fabric.route @s1 color #fabric.color<3> {
      fabric.switch (0, 0) from [ramp] to [east]
      fabric.switch (1, 0) from [west] to [ramp]
    }
    fabric.route @fc1 channel "psum_even" color #fabric.color<4> {
      fabric.switch (0, 0) from [ramp] to [east]
      fabric.switch (1, 0) from [west] to [ramp]
    }
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$stream,
                       OptionalAttr<StrAttr>:$channel,
                       OptionalAttr<Fabric_ColorAttr>:$color);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $stream (`channel` $channel^)? (`color` $color^)? attr-dict-with-keyword
    $body
  }];
  let extraClassDeclaration = [{
    /// The name diagnostics use: `@s1`, or `@fc1 channel psum_even`.
    std::string getRouteName();
  }];
  let hasRegionVerifier = 1;
}

def Fabric_SwitchOp : Fabric_Op<"switch", [HasParent<"RouteOp">]> {
  let summary = "The router setting of one PE for the enclosing route";
  let description = [{
    Wavelets of the route's color that enter PE (x, y) through one of the
    `from` ports leave through every `to` port (multicast). With
    `positions`, the router cycles through 2 to 4 settings, taking `x N`
    wavelets in each before the next (docs/architecture.md, "Positions"):
    `from` and `to` are then the unions of the positions' ports. That merges
    streams in a fixed order, or takes a segment out of a passing stream.

    Example:
    ```mlir
    fabric.switch (3, 1) from [west] to [east, ramp]
    fabric.switch (7, 0) from [west, ramp] to [east]
        positions [from [west] to [east] x 32, from [ramp] to [east] x 16]
    ```
  }];
  let arguments = (ins I64Attr:$x, I64Attr:$y, I32Attr:$inputs,
                       I32Attr:$outputs,
                       OptionalAttr<DenseI64ArrayAttr>:$positions);
  let assemblyFormat = [{
    ` ` `(` $x `,` $y `)` `from` custom<DirSet>($inputs) `to`
    custom<DirSet>($outputs)
    (`positions` custom<RoutePositions>($positions)^)? attr-dict
  }];
  let hasVerifier = 1;
}

#endif // WEFT_FABRIC_OPS_TD
