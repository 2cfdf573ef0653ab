//===- FabricAttrs.td - fabric attributes and enums --------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_FABRIC_ATTRS_TD
#define WEFT_FABRIC_ATTRS_TD

include "common/WeftAttrs.td"
include "fabric/FabricDialect.td"
include "fabric/FabricEnums.td"
include "fabric/FabricInterfaces.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class Fabric_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Fabric_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

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

def Fabric_SparseAttr : Fabric_Attr<"Sparse", "sparse"> {
  let summary = "A stream sent as only its non-zero values";
  let description = [{
    Marks a `fabric.stream` that carries only the non-zero values of its
    payload, each as a sparse16 wavelet (fp16 value, 16-bit index), then one
    closeout per row chunk (docs/execution-model.md, "Sparse activations").
    `density` is the expected fraction of non-zero values the decision
    (`--weft-select-sparse-streams`) assumed, between 0 and 1.

    Example:
    ```mlir
    #fabric.sparse<density = 0.5>
    ```
  }];
  let parameters = (ins APFloatParameter<"f64">:$density);
  let assemblyFormat = "`<` `density` `=` custom<Density>($density) `>`";
  let builders = [AttrBuilder<(ins "double":$density), [{
    return $_get($_ctxt, ::llvm::APFloat(density));
  }]>];
  let extraClassDeclaration = [{
    double getDensityValue() const { return getDensity().convertToDouble(); }
  }];
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

def Fabric_TrainingAttr : Fabric_Attr<"Training", "training"> {
  let summary = "The program trains its kernels: optimizer, rate, mini-batch";
  let description = [{
    Set on `fabric.program` by `--weft-prepare-training`: the program runs
    the forward, delta and chain passes of docs/training.md and updates
    the weights of its `trained` kernels in the PEs' memories by
    `w <- w - lr * g`, with g the gradient of the softmax cross-entropy
    averaged over `batch` samples. `sgd` has a batch of 1 and updates after
    every sample; `mbgd` updates once per `batch` samples; `cpgd`
    (continuous propagation, a batch of 1) updates every layer as soon as
    its gradient is ready while later samples are already flowing: each
    trained kernel's backward pass trails its forward pass by its `lag`
    samples, and the PEs drain the pipeline after the program's `samples`
    samples (cpgd only; docs/training.md, "CPGD"). `lr` is rounded to f32,
    the precision the PEs multiply by it in.

    Example:
    ```mlir
    #fabric.training<optimizer = mbgd, lr = 5.000000e-02 : f32, batch = 4>
    #fabric.training<optimizer = cpgd, lr = 5.000000e-02 : f32, batch = 1,
                     samples = 16>
    ```
  }];
  let parameters = (ins "Optimizer":$optimizer, "::mlir::FloatAttr":$lr,
                        "int64_t":$batch,
                        DefaultValuedParameter<"int64_t", "0">:$samples);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Kernel schemes
//===----------------------------------------------------------------------===//

class Fabric_SchemeAttr<string name, string attrMnemonic>
    : Fabric_Attr<name, attrMnemonic, [DeclareAttrInterfaceMethods<
          Fabric_KernelSchemeAttrInterface>]> {
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Fabric_DenseSchemeAttr : Fabric_SchemeAttr<"DenseScheme", "dense"> {
  let summary = "A dense layer: y = relu?(x W + b)";
  let description = [{
    `weights` is W as K x M (row-major, the fan-in first), `bias` the M
    values of b if the layer has one. `synthetic`: the matrix is weft's, not
    the model's (a transpose, pad or reduction of the sample written as a 0/1
    matrix by `--weft-linear-to-matmul`): its MACs are executed but are no
    MACs of the model. `weights_source` and `bias_source` name the ONNX
    initializers W and b are, when they are (the importer's NameLocs), and
    `weights_transposed` says the initializer is W's transpose (M x K,
    Gemm's transB): what `weftc train` writes the trained values back into
    (docs/training.md).

    Example:
    ```mlir
    #fabric.dense<fan_in = 784, neurons = 256, relu = true,
                  weights = dense_resource<fc1_weights> : tensor<784x256xf32>>
    ```
  }];
  let parameters = (ins "int64_t":$fan_in, "int64_t":$neurons,
                        DefaultValuedParameter<"bool", "false">:$relu,
                        DefaultValuedParameter<"bool", "false">:$synthetic,
                        "::mlir::ElementsAttr":$weights,
                        OptionalParameter<"::mlir::ElementsAttr">:$bias,
                        OptionalParameter<"::mlir::StringAttr">:$weights_source,
                        DefaultValuedParameter<"bool", "false">:$weights_transposed,
                        OptionalParameter<"::mlir::StringAttr">:$bias_source);
}

def Fabric_ConvSchemeAttr : Fabric_SchemeAttr<"ConvScheme", "conv"> {
  let summary = "A 2-D convolution: y = act(conv(x, W) + b)";
  let description = [{
    One sample of `in_channels` x `in_height` x `in_width` convolved with
    `weights` (out_channels x in_channels / groups x kh x kw, ONNX's OIHW)
    under `kernel` = [kh, kw], `strides`, `dilations` (each [h, w]) and
    `pads` ([top, left, bottom, right]); `bias` the out_channels values of b
    if the layer has one; `relu` applies max(y, 0), and with `relu_max`
    (ReLU6: a Clip from 0) min(max(y, 0), relu_max). With `groups` > 1
    (ONNX's `group`), output channel
    o reads only the in_channels / groups input channels of its group
    o / (out_channels / groups); a depthwise convolution has one group per
    input channel. A 1-D convolution is one of height 1. Laid out like a
    dense layer, channels smeared over columns, feature-map rows streamed
    (docs/execution-model.md, "Convolution"); a grouped one like a pooling,
    whole groups per row ("Depthwise convolution").

    `epilogue` (never with `relu`) is an activation fused into the
    convolution: the nodes of an expression (as `#fabric.expression`'s),
    applied by the PE that sends each output row to it before the send
    (docs/execution-model.md, "Fused activations"). The converter fuses the
    activation that is the only reader of a convolution's result.

    `weights_source` and `bias_source` name the ONNX initializers W and b
    are, when they are (as `#fabric.dense`'s): what `weftc train` writes the
    trained values back into (docs/training.md).

    Example:
    ```mlir
    #fabric.conv<in_channels = 3, out_channels = 8, in_height = 16,
                 in_width = 16, kernel = [3, 3], strides = [1, 1],
                 dilations = [1, 1], pads = [1, 1, 1, 1], relu = true,
                 weights = dense_resource<c1> : tensor<8x3x3x3xf32>>
    #fabric.conv<in_channels = 8, out_channels = 16, in_height = 16,
                 in_width = 16, kernel = [3, 3], strides = [2, 2],
                 dilations = [1, 1], pads = [1, 1, 1, 1], groups = 8,
                 relu = true, relu_max = 6.0 : f32,
                 weights = dense_resource<dw> : tensor<16x1x3x3xf32>>
    #fabric.conv<in_channels = 8, out_channels = 8, in_height = 16,
                 in_width = 16, kernel = [1, 1], strides = [1, 1],
                 dilations = [1, 1], pads = [0, 0, 0, 0],
                 weights = dense_resource<pw> : tensor<8x8x1x1xf32>,
                 epilogue = [#fabric.node<kind = unary, a = 0, fn = "Neg">,
                             #fabric.node<kind = unary, a = 1, fn = "Exp">,
                             #fabric.node<kind = constant, value = 1.0 : f32>,
                             #fabric.node<kind = add, a = 2, b = 3>,
                             #fabric.node<kind = unary, a = 4,
                                          fn = "Reciprocal">,
                             #fabric.node<kind = mul, a = 0, b = 5>]>
    ```
  }];
  let parameters = (ins "int64_t":$in_channels, "int64_t":$out_channels,
                        "int64_t":$in_height, "int64_t":$in_width,
                        "::mlir::DenseI64ArrayAttr":$kernel,
                        "::mlir::DenseI64ArrayAttr":$strides,
                        "::mlir::DenseI64ArrayAttr":$dilations,
                        "::mlir::DenseI64ArrayAttr":$pads,
                        DefaultValuedParameter<"int64_t", "1">:$groups,
                        DefaultValuedParameter<"bool", "false">:$relu,
                        OptionalParameter<"::mlir::FloatAttr">:$relu_max,
                        "::mlir::ElementsAttr":$weights,
                        OptionalParameter<"::mlir::ElementsAttr">:$bias,
                        OptionalParameter<"::mlir::ArrayAttr">:$epilogue,
                        OptionalParameter<"::mlir::StringAttr">:$weights_source,
                        OptionalParameter<"::mlir::StringAttr">:$bias_source);
  let extraClassDeclaration = [{
    /// The geometry as the kernel library sees it (the epilogue's program
    /// included).
    ::weft::conversion::ConvShape getShape() const;
  }];
}

def Fabric_PoolSchemeAttr : Fabric_SchemeAttr<"PoolScheme", "pool"> {
  let summary = "A 2-D max or average pooling";
  let description = [{
    One sample of `channels` x `in_height` x `in_width` pooled (`kind` max
    or avg) under `kernel` = [kh, kw], `strides`, `dilations` (each [h, w]),
    ONNX's `pads` ([top, left, bottom, right]) and `ceil_mode`; an average
    divides by the window positions inside the input, or with
    `count_include_pad` inside the explicitly padded input (never the
    positions only ceil_mode reaches). A 1-D pool is one of height 1, a
    global pool one whose kernel is the whole map. Laid out like a column
    kernel, whole channels per row (docs/execution-model.md, "Pooling").

    Example:
    ```mlir
    #fabric.pool<kind = max, channels = 8, in_height = 16, in_width = 16,
                 kernel = [2, 2], strides = [2, 2], dilations = [1, 1],
                 pads = [0, 0, 0, 0]>
    ```
  }];
  let parameters = (ins "PoolKind":$kind, "int64_t":$channels,
                        "int64_t":$in_height, "int64_t":$in_width,
                        "::mlir::DenseI64ArrayAttr":$kernel,
                        "::mlir::DenseI64ArrayAttr":$strides,
                        "::mlir::DenseI64ArrayAttr":$dilations,
                        "::mlir::DenseI64ArrayAttr":$pads,
                        DefaultValuedParameter<"bool", "false">:$ceil_mode,
                        DefaultValuedParameter<"bool", "false">:$count_include_pad);
  let extraClassDeclaration = [{
    /// The geometry as the kernel library sees it.
    ::weft::conversion::PoolShape getShape() const;
  }];
}

def Fabric_ElementwiseSchemeAttr
    : Fabric_SchemeAttr<"ElementwiseScheme", "elementwise"> {
  let summary = "A function applied to every element of the sample";
  let description = [{
    `op` names a column kernel of docs/execution-model.md ("Column kernels"):
    `Relu`, `LeakyRelu`, `Clip`, `AddScalar`, `AddTensor`... `params` are its
    scalar constants (LeakyRelu's alpha, Clip's bounds); `constant` is the
    constant tensor of the ops that combine the sample with one (AddTensor,
    PRelu...), broadcast to the sample's shape.

    Example:
    ```mlir
    #fabric.elementwise<op = "LeakyRelu", params = [0.01]>
    ```
  }];
  let parameters = (ins StringRefParameter<"the column op">:$op,
                        OptionalParameter<"::mlir::DenseF32ArrayAttr">:$params,
                        OptionalParameter<"::mlir::ElementsAttr">:$constant);
}

def Fabric_SoftmaxSchemeAttr : Fabric_SchemeAttr<"SoftmaxScheme", "softmax"> {
  let summary = "Softmax or LogSoftmax over the sample or one of its axes";
  let description = [{
    Without `group`, over the whole sample; with it, over groups of `group`
    elements `stride` apart (an axis of the sample: `stride` is the product
    of the dimensions after it).

    `loss` marks the **loss kernel of a training program**, which
    `--weft-prepare-training` adds after the logits (docs/training.md, "The
    loss kernel"): its forward pass is the softmax of the whole sample (the
    probabilities go to the host output); its backward pass takes the
    sample's label (an int16 from the east edge, on the kernel's `labels`
    channel) and sends the gradient of the softmax cross-entropy, softmax
    minus one-hot (divided by the batch under mbgd), back to the kernel
    before it. A loss is a plain softmax (no `log`, no `group`).

    Examples:
    ```mlir
    #fabric.softmax<log = true, group = 10, stride = 1>
    #fabric.softmax<loss = true>
    ```
  }];
  let parameters = (ins DefaultValuedParameter<"bool", "false">:$log,
                        DefaultValuedParameter<"int64_t", "0">:$group,
                        DefaultValuedParameter<"int64_t", "1">:$stride,
                        DefaultValuedParameter<"bool", "false">:$loss);
}

def Fabric_ExprNodeAttr : Fabric_Attr<"ExprNode", "node"> {
  let summary = "One node of a fused elementwise expression";
  let description = [{
    Node 0 of an expression is the input x; node i >= 1 is this attribute:
    `kind` applied to earlier nodes `a` and `b` (`select`: a ? b : c;
    `unary`: the column op `fn` of a, with its constant `value`;
    `constant`: `value`).

    Example:
    ```mlir
    #fabric.node<kind = mul, a = 0, b = 2>
    ```
  }];
  let parameters = (ins "ExprKind":$kind,
                        DefaultValuedParameter<"int64_t", "0">:$a,
                        DefaultValuedParameter<"int64_t", "0">:$b,
                        DefaultValuedParameter<"int64_t", "0">:$c,
                        OptionalParameter<"::mlir::FloatAttr">:$value,
                        StringRefParameter<"a unary column op", "\"\"">:$fn);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Fabric_ExpressionSchemeAttr
    : Fabric_SchemeAttr<"ExpressionScheme", "expression"> {
  let summary = "A fused elementwise body of x and scalar constants";
  let description = [{
    The SSA nodes of a body no single column kernel matches (SiLU, GELU,
    Mish...), in order; the last node is the result. Compiled into one
    sequence of vector steps (docs/execution-model.md, "Expressions").

    Example:
    ```mlir
    #fabric.expression<nodes = [#fabric.node<kind = unary, a = 0, fn = "Sigmoid">,
                                #fabric.node<kind = mul, a = 0, b = 1>]>
    ```
  }];
  let parameters = (ins "::mlir::ArrayAttr":$nodes);
  let extraClassDeclaration = [{
    /// The nodes (verified to be #fabric.node attributes).
    auto getNodeAttrs() const {
      return getNodes().getAsRange<ExprNodeAttr>();
    }
  }];
}

def Fabric_JoinSchemeAttr : Fabric_SchemeAttr<"JoinScheme", "join"> {
  let summary = "An elementwise op of two streams of the same length";
  let description = [{
    y = a op b element by element, a the kernel's first input stream, b its
    second (a residual add, a gated product). With `relu` (add, mul, max
    and min), y = max(a op b, 0): the ReLU that followed the join in the
    model (a ResNet block's Add then Relu), fused as one more vector
    instruction of the join instead of a column kernel of its own.
    Partitioning decides which input the kernel buffers (`buffered`: 0 for
    a, 1 for b; the one that arrives first, the short branch of a fork) and
    how much its FIFO holds: `fifo` whole samples (at least 1), or, joining
    feature maps, `fifo_pixels` pixels of the PE's channels (the rows the
    short branch runs ahead, from the line buffers between the fork and the
    join) (docs/execution-model.md, "Join kernels"); before that they are
    -1 and 0.

    With `broadcast = 1` input b is per channel (a squeeze-and-excitation
    block's y = x * s): a is a feature map [1, C, H, W], b is [1, C, 1, 1],
    and every pixel of channel c is multiplied by b's value c. Only a mul
    without ReLU takes one, and it buffers a (the scale needs the whole
    sample of a first, through a global pooling), in whole samples.

    Example:
    ```mlir
    #fabric.join<op = add>
    #fabric.join<op = add, relu = true>
    #fabric.join<op = add, buffered = 1, fifo = 3>
    #fabric.join<op = add, relu = true, buffered = 1, fifo_pixels = 64>
    #fabric.join<op = mul, buffered = 0, fifo = 2, broadcast = 1>
    ```
  }];
  let parameters = (ins "JoinKind":$op,
                        DefaultValuedParameter<"bool", "false">:$relu,
                        DefaultValuedParameter<"int64_t", "-1">:$buffered,
                        DefaultValuedParameter<"int64_t", "0">:$fifo,
                        DefaultValuedParameter<"int64_t", "0">:$fifo_pixels,
                        DefaultValuedParameter<"int64_t", "-1">:$broadcast);
}

#endif // WEFT_FABRIC_ATTRS_TD
