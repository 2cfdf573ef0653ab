//===- Passes.td - fabric transforms -----------------------*- tablegen -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The passes on the fabric dialect: placement (partitioning), routing and
// color allocation.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_FABRICTRANSFORMS_PASSES
#define WEFT_FABRICTRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def PrepareTraining : Pass<"weft-prepare-training", "mlir::ModuleOp"> {
  let summary = "Make a program a training program: record the decision once";
  let description = [{
    On an unplaced `fabric.program` (after `--weft-convert-to-fabric`,
    before `--weft-partition-dense`; docs/training.md): checks that the
    program is a chain from its one host input to its one host output of
    dense kernels (weights of the model's, not weft's) and Relu/Tanh column
    kernels, ending at the logits (not at a Softmax), with at least one
    dense kernel; then sets `training = #fabric.training<optimizer, lr,
    batch>` on the program, marks every dense kernel and every Relu/Tanh
    kernel after the first dense kernel `trained`, and every trained kernel
    after the first `input_gradient` (it sends the gradient of its input
    back). With `optimizer=cpgd` (and `samples`, the run's sample count,
    which the PEs need to drain the pipeline), every trained kernel also
    gets `lag`: the trained kernels after it plus the loss, so that its
    backward pass of sample i - lag follows its forward of sample i
    (docs/training.md, "CPGD"). Every kernel marked `input_gradient` gets a
    gradient stream west to the kernel before it. Last, the **loss kernel**
    `@loss` (`#fabric.softmax<loss = true>`, marked `input_gradient`) is
    added after the logits: the logits stream goes into it, a new stream
    takes its probabilities to the host output, and `@loss_grad` takes the
    gradient of the softmax cross-entropy back to the last kernel. So the
    partitioner places the loss, and routing and color allocation route
    and color every training stream and channel, as for inference. Later
    stages read these marks and never re-derive them. Anything
    else is an error naming the kernel (the ONNX node) and what it computes.

    Example:
    ```mlir
    fabric.program @mlp {target = #weft.target<16x16>, training =
        #fabric.training<optimizer = sgd, lr = 1.000000e-01 : f32, batch = 1>} {
      fabric.kernel @fc1 ... attributes {trained}
      fabric.kernel @relu_1 ... attributes {input_gradient, trained}
      fabric.kernel @fc2 ... attributes {input_gradient, trained}
      fabric.kernel @loss ... scheme #fabric.softmax<loss = true>
          attributes {input_gradient}
      ...
      fabric.stream @fc2_to_y @fc2[0] -> @loss[0] : !fabric.wavelets<f32, 10>
      fabric.stream @loss_out @loss[0] -> @y[0] : !fabric.wavelets<f32, 10>
      fabric.stream @loss_grad @loss[0] -> @fc2[0] : !fabric.wavelets<f32, 10>
          {gradient}
    ```
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", "\"sgd\"",
           "sgd (a batch of 1), mbgd (one update per mini-batch) or cpgd "
           "(continuous propagation, a batch of 1)">,
    Option<"lr", "lr", "double", "0.01", "The learning rate (rounded to f32)">,
    Option<"batch", "batch", "int64_t", "1",
           "Samples per update (the loss is their mean)">,
    Option<"samples", "samples", "int64_t", "0",
           "cpgd: the samples of the run (the PEs drain the pipeline after "
           "the last)">];
  let dependentDialects = ["weft::fabric::FabricDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
  let statistics = [Statistic<"numTrained", "num-trained",
                              "Kernels marked trained">];
}

def SelectCheckpoints : Pass<"weft-select-checkpoints", "mlir::ModuleOp"> {
  let summary = "Training: choose which layers store their inputs for the "
                "backward pass and which recompute them";
  let description = [{
    On a placed training program (after `--weft-partition-dense`;
    docs/training.md, "Reverse checkpoints"): every trained dense kernel
    either stores its input until its chain step or lets its input gradient
    overwrite it and takes it again in the backward pass, recomputed by the
    dense kernel before it. The algorithm (weft/Kernels/Checkpoints.h) sees
    each kernel's fullest PE with and without the stored input, the cycles
    of the recompute, and the per-PE budget `pe-memory` (0: the target's
    memory); `policy` is `none` (store everything), `every-K` (the kernels
    0, K, 2K, ... of the chain and those that cannot recompute store) or
    `auto` (the least recompute cycles with every PE within the budget, by
    dynamic programming over the chain). The trained column kernels and the
    loss column are checked against the budget too. Sets `checkpoint =
    #fabric.checkpoint<save>` or `<recompute>` on every trained dense
    kernel and `recompute_cycles` (the prediction, CE cycles per sample
    summed over the PEs) on those that recompute; the training lowering
    reads these and never re-derives them. Fails naming the kernel and the
    bytes it needs when the policy does not fit the budget.

    Example: `--weft-select-checkpoints="policy=auto pe-memory=3000"`.
  }];
  let options = [
    Option<"policy", "policy", "std::string", "\"none\"",
           "none, auto or every-K">,
    Option<"peMemory", "pe-memory", "int64_t", "0",
           "The bytes of memory a PE may use (0: the target's memory)">];
  let dependentDialects = ["weft::fabric::FabricDialect"];
  let statistics = [Statistic<"numRecomputed", "num-recomputed",
                              "Kernels that recompute their input">];
}

def PartitionDense : Pass<"weft-partition-dense", "mlir::ModuleOp"> {
  let summary = "Lay a chain of kernels out as a balanced pipeline";
  let description = [{
    For the chain of `fabric.kernel`s of each program (host input -> k0 ->
    ... -> host output, dense layers and column kernels), chooses the
    smear of the first dense kernel and the rows of every kernel so that the
    slowest kernel's predicted cycles per sample are the fewest, then the
    PEs (`partitionChain`, docs/execution-model.md): rectangles west to east
    from column 0, all at row 0, a dense kernel (x, 0, S, R) with smear S
    equal to the rows of the kernel before it, a column kernel (x, 0, 1, R).
    A convolution may be narrower than the rows entering it, merging k of
    them into each column (`merge-lanes`, docs/execution-model.md "Merged
    lanes"): the pass then records `merge = k`.
    Records `rect`, `smear`, `weft.precision` ("fp32" or "mixed") and
    `weft.predicted_cycles` on every kernel and the rows of the host ports.
    `grid=auto` first chooses the fabric (`chooseGrid`: the smallest grid up
    to `max-grid` whose predicted utilization is within 5% of the best) and
    rewrites the program's target; `grid=WxH` replaces it; the default keeps
    the target of `--weft-convert-to-fabric`. A chain that does not fit is
    an error saying what it needs.

    `objective` is what the layout minimises first: `interval` the slowest
    kernel's cycles (the pipeline's period), `latency` the kernels' cycles
    summed, with 4 cycles for each column and row a smeared kernel's
    vectors stream across (`kLatencyPerHop`: a sample's latency through
    them), `auto` (the default) `latency` for a program trained by SGD
    (one sample in flight) and `interval` otherwise (docs/training.md,
    "Partitioning for one sample in flight"). The latency objective is
    recorded as `weft.objective = "latency"` on the program.

    `replicas=N` partitions one copy of the network for a band of
    floor(H / N) of the fabric's H rows; `replicas=auto` tries every count
    N (`chooseReplicas`, lib/Kernels/Replicas.cpp) and takes the one with
    the most predicted samples per cycle, copies / bottleneck, where a copy
    partitioned for floor(H / N) rows is stacked as often as the rows it
    uses fit and as often side by side as its columns fit (at most
    `max-columns`: the colors bound it), at most `max-replicas` copies in
    all (-1: the samples of the program's batch, what `weftc run` asks
    for). Copies side by side are placed here (`weft.replica_columns`;
    their kernels, host ports and streams suffixed `_r<k>` and marked
    `weft.replica = k`), so that routing relays their host streams through
    each other's PEs. With `grid=auto` the grid is chosen
    for one copy: `auto` is
    one copy, and N copies make the fabric N times as tall as one copy's
    rows (up to `max-grid`). More than one copy is recorded on the program
    (`weft.replicas`, `weft.replica_plan`); `--weft-replicate` stacks them
    after the lowering (docs/execution-model.md, "Replicas").

    Example:
    ```mlir
    fabric.kernel @fc : (tensor<1x784xf32>) -> tensor<1x256xf32>
        at #weft.rect<0, 0, 4, 16> attributes {smear = 4 : i64,
        weft.precision = "fp32", weft.predicted_cycles = 1234 : i64} {...}
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"fp32\"",
           "fp32, or mixed (fp16 storage and multiply, fp32 accumulate)">,
    Option<"grid", "grid", "std::string", "\"\"",
           "Empty (keep the program's target), auto (choose the fabric up "
           "to max-grid), or WxH[,mem=..,colors=..]">,
    Option<"maxGrid", "max-grid", "std::string", "\"64x64\"",
           "The largest fabric grid=auto considers (its memory and colors "
           "apply to every grid)">,
    Option<"objective", "objective", "std::string", "\"auto\"",
           "auto, interval (the slowest kernel's cycles) or latency (the "
           "kernels' cycles summed), minimised before the PEs">,
    Option<"mergeLanes", "merge-lanes", "bool", "false",
           "Let an unbanded convolution merge k of its producer's row lanes "
           "into one column (S = rows / k)">,
    Option<"replicas", "replicas", "std::string", "\"1\"",
           "Copies of the network on bands of the fabric's rows: N (each "
           "partitioned for floor(rows / N) rows) or auto (the count with "
           "the most predicted samples per cycle); recorded as "
           "weft.replicas for --weft-replicate">,
    Option<"maxReplicas", "max-replicas", "int64_t", "0",
           "The most copies replicas=auto chooses: 0 no limit, -1 the "
           "program's batch (weft.batch: a run of that many samples)">,
    Option<"maxColumns", "max-columns", "int64_t", "0",
           "The most copies replicas=auto puts side by side in a band of "
           "rows (0: as many as the width allows; the colors may allow "
           "fewer)">,
    Option<"sparseActivations", "sparse-activations", "std::string",
           "\"off\"",
           "off, auto or on, as --weft-select-sparse-streams will decide: "
           "a mixed-precision dense layer whose input may arrive sparse is "
           "costed at its expected density (auto: the faster of dense and "
           "sparse)">,
    Option<"density", "density", "double", "0.5",
           "The expected fraction of non-zero ReLU results (0..1)">,
    Option<"inputDensity", "input-density", "double", "0.5",
           "The expected fraction of non-zero values of the host inputs "
           "(0..1)">,
    ListOption<"densities", "densities", "std::string",
               "Measured densities, NODE=D or NODE=D:P0:...:Pn-1, as "
               "--weft-select-sparse-streams takes them">,
    ListOption<"inputDensities", "input-densities", "std::string",
               "Measured densities of host inputs, NAME=D or "
               "NAME=D:P0:...:Pn-1">];
  let statistics = [Statistic<"numPartitioned", "num-partitioned",
                              "Kernels partitioned">,
                    Statistic<"bottleneck", "bottleneck-cycles",
                              "Predicted cycles per sample of the slowest "
                              "kernel">];
}

def ExtractKernels : Pass<"weft-extract-kernels", "mlir::ModuleOp"> {
  let summary = "Keep a slice of consecutive placed kernels, fed by the host";
  let description = [{
    On a partitioned `fabric.program` (after `--weft-partition-dense`,
    before routing): keeps the kernels `first` to `last` of `kernels`
    (`FIRST..LAST`, each a 0-based index in the topological order the
    partitioner laid the kernels out in, or a kernel's symbol name) with
    every decision partitioning wrote into them (rect, smear, tiles, merge,
    precision, predicted cycles, a join's FIFO), and erases the other
    kernels. A stream from a kernel outside the slice into it becomes a
    host input on the west edge (`<stream>_in`, in the rows its producer
    sent it on), a stream out of the slice whose consumers are all outside
    it a host output on the east edge (`<stream>_out`); a host port the
    slice no longer uses is erased. The slice moves to column 0 and the
    target shrinks to its columns and rows (`weft.slice` on the program
    records where it came from). Routing, color allocation and the lowering
    then run on it unchanged, so that the simulator can run one part of a
    network too large to simulate whole, each kernel at the pace it has in
    the whole network when the host feeds it at full link speed
    (docs/weftc.md, "Slices"). An empty `kernels` keeps every kernel; a bad
    range is an error naming what is wrong.

    Example (`kernels=1..2` of x -> @a -> @b -> @c -> y):
    ```mlir
    fabric.io @a_to_b_in input west rows 0 to 2 : tensor<1x8x6x6xf32>
    fabric.io @b_to_c_out output east rows 0 to 2 : tensor<1x8x6x6xf32>
    fabric.stream @a_to_b @a_to_b_in[0] -> @b[0] : !fabric.wavelets<f32, 288>
    ```
  }];
  let dependentDialects = ["weft::fabric::FabricDialect"];
  let options = [
    Option<"kernels", "kernels", "std::string", "\"\"",
           "FIRST..LAST: the kernels to keep (indices in the topological "
           "order or kernel names; empty keeps every kernel)">];
}

def RouteStreams : Pass<"weft-route-streams", "mlir::ModuleOp"> {
  let summary = "Make layout changes explicit and route every stream PE by PE";
  let description = [{
    On a partitioned `fabric.program` (docs/execution-model.md, "Chains of
    layers"): inserts a `fabric.redistribute` from `row_chunks S` to
    `col_chunks S` in front of every dense layer, on the S x S square where
    its input chunks turn into its columns (the stream into the layer
    becomes producer -> redistribution -> layer), and gives every stream and
    every kernel's internal channel (`channel "psum_even"`, ...) a
    `fabric.route` with one `fabric.switch` per PE it passes, multicast and
    the receiving PE included. The switch settings come from the schemes of
    weft/Kernels/Routing.h. In a training program (docs/training.md) a
    `gradient` stream goes out of its source kernel's west side into the
    east side of the kernel right before it, a `trained` dense kernel gets
    its `delta` channel and one with `input_gradient` its
    `grad_reduce_even` / `grad_reduce_odd` channels, and the loss kernel
    (`#fabric.softmax<loss = true>`) a Softmax column's channels and its
    `labels` channel from the east edge's row 0 port. Logical (empty) routes
    are replaced; a program that already has switches or redistributions is
    an error, as is a chain whose layouts do not line up.

    Example:
    ```mlir
    fabric.redistribute @fc_turn : !fabric.wavelets<f32, 64> at <0, 0, 6, 6>
        from <row_chunks, 6> to <col_chunks, 6>
    fabric.stream @x_to_fc @x[0] -> @fc_turn[0] : !fabric.wavelets<f32, 64>
    fabric.stream @fc_turn_to_fc @fc_turn[0] -> @fc[0] : !fabric.wavelets<f32, 64>
    fabric.route @x_to_fc {
      fabric.switch (0, 0) from [west] to [ramp]
      fabric.switch (0, 1) from [west] to [east]
      ...
    }
    ```
  }];
  let dependentDialects = ["weft::fabric::FabricDialect"];
  let statistics = [
    Statistic<"numRedistributions", "num-redistributions",
              "Redistributions inserted">,
    Statistic<"numRoutes", "num-routes", "Routes of streams and channels">,
    Statistic<"numSwitches", "num-switches", "Per-PE router settings">];
}

def AllocateColors : Pass<"weft-allocate-colors", "mlir::ModuleOp"> {
  let summary = "Color every route so that no two meet on a router";
  let description = [{
    Two routes that share a PE need different colors (a router has one
    route per color). DSATUR over the routes' PEs (`allocateColors`,
    lib/Kernels/ColorAllocation.cpp; deterministic) within the target's
    routable colors minus `reserved`; a color already set on a route, or on
    the stream of a route without one, is kept. Sets `color` on every route
    and on the stream it routes. When the colors do not suffice, the error
    names a route, one it meets, the PE where they meet and how many colors
    they would need.
  }];
  let dependentDialects = ["weft::fabric::FabricDialect"];
  let options = [ListOption<"reserved", "reserved", "int64_t",
                            "Colors the allocator must not use">];
  let statistics = [Statistic<"numColors", "num-colors",
                              "Distinct colors used">];
}

def FrustumTile : Pass<"weft-frustum-tile", "mlir::ModuleOp"> {
  let summary = "Record frustum groups and their tiles";
  let description = [{
    On an unplaced `fabric.program` (docs/frustum.md): finds the chains of
    convolution and pooling kernels (each reading the previous one's stream
    alone, its only reader), forms frustum groups over each chain
    (`formGroups`, lib/Kernels/Frustum.cpp: the longest runs of at least two
    layers whose every tile fits the per-PE budget of the program's target
    on `side` x `side` PEs) and records on each member kernel
    `frustum = {group, level, tile = [th, tw], max_tile = [th, tw], side}` and
    the decision's figures: `max_tile` is the largest tile that fits the
    budget, `tile` the tile up to it that the cost model chooses, or the
    largest when none is chosen. With `pace=network` (the default) a group
    is chosen when the network, with its tiles beside the rest of the
    network on the columns they leave, is predicted no slower than the
    network per layer (`decideNetworkFrustums`, lib/Kernels/
    FrustumNetwork.cpp; the record adds `network_cycles` and, when chosen,
    `fused_network_cycles`); the tile is the one that makes the network
    fastest, then has the fewest hops. With `pace=group` a group must be no
    slower than its own layers per layer, and the fastest tile wins
    (`decideFastestFrustum`). A chain of two or more
    layers in which no group fits gets a remark with the bytes a 1 x 1 tile
    of its first two layers needs.

    This records the tiling only: `--weft-frustum-fuse` then decides, group
    by group, whether it runs fused or per layer. The pipeline runs both
    before partitioning unless `frustum=off`.

    Example:
    ```mlir
    fabric.kernel @conv1 ... attributes {frustum = {group = 0 : i64,
        level = 0 : i64, side = 1 : i64, tile = array<i64: 11, 11>}}
    ```
  }];
  let dependentDialects = ["weft::fabric::FabricDialect"];
  let options = [
    Option<"side", "side", "int64_t", "1", "A tile runs on side x side PEs">,
    Option<"codeInstructions", "code-instructions", "int64_t", "512",
           "Instructions of a block's program, reserved in PE memory">,
    Option<"elementBytes", "element-bytes", "int64_t", "4",
           "Bytes of a stored weight or activation (4: fp32, 2: fp16)">,
    Option<"maxTile", "max-tile", "int64_t", "0",
           "The largest tile side recorded (0: the largest that fits)">,
    Option<"precision", "precision", "std::string", "\"fp32\"",
           "The precision the layers run in per layer (fp32 or mixed), "
           "what a group is weighed against">,
    Option<"pace", "pace", "std::string", "\"network\"",
           "What a group must not be slower than: the network per layer "
           "(network: the partitioner's interval, with the rest of the "
           "network beside the group's tiles) or its own layers (group)">,
    Option<"mergeLanes", "merge-lanes", "bool", "false",
           "Partition the network as --weft-partition-dense{merge-lanes} "
           "does, for the network's pace">];
  let statistics = [Statistic<"numGroups", "num-groups",
                              "Frustum groups recorded">];
}

def FrustumFuse : Pass<"weft-frustum-fuse", "mlir::ModuleOp"> {
  let summary = "Fuse the recorded frustum groups of convolutions and max "
                "pools into one kernel each";
  let description = [{
    On an unplaced `fabric.program` after `--weft-frustum-tile`
    (docs/frustum.md, "The lowering"): every recorded group whose members
    are plain convolutions (a ReLU at most) or max pools of a window
    (their pads as -inf columns), run on one PE a tile
    (`side = 1`), becomes one `fabric.kernel` in place of its members: the
    first member's, reading the group's input and giving its output, its
    body the members' bodies in order, with
    `frustum_chain = [#fabric.conv<...>, ...]` (every member's scheme) and
    the first member's `frustum` record. The streams between the members
    disappear. An identity residual block (its add the only member beside
    the levels) fuses the same way, the add's `#fabric.join` last in the
    chain: the top level adds the block's input, which never leaves the
    band (docs/frustum.md, "Residual blocks in bands"); a block with a
    projection runs per layer. The partitioner places it as one band of one PE for each
    tile column the recorded tile width gives, and the lowering runs the
    whole group on each band's PE (lib/Conversion/FabricToWavelet/
    EmitFrustum.cpp). A group that cannot run fused keeps its members and
    gets a remark saying why.

    With `always=false` (the default) a group is fused only where the
    record says `chosen` and its band program's predicted cycles per sample
    (`predictFrustumCycles`) are no more than the pace it was weighed
    against (`network_cycles`, the network per layer; `per_layer_cycles`
    under `pace=group`), so it never picks a mapping the cost model
    predicts slower; `always=true` fuses every group
    that can run fused (to measure it).
  }];
  let dependentDialects = ["weft::fabric::FabricDialect"];
  let options = [
    Option<"always", "always", "bool", "false",
           "Fuse every group that can run fused, even where the cost model "
           "predicts it slower than per layer">];
  let statistics = [Statistic<"numFused", "num-fused",
                              "Frustum groups fused">];
}

def SelectSparseStreams : Pass<"weft-select-sparse-streams",
                                "mlir::ModuleOp"> {
  let summary = "Choose the streams that carry only non-zero activations";
  let description = [{
    On a partitioned inference `fabric.program` (placed: the dense layers'
    mappings are known), decides for every stream from a dense layer with a
    ReLU into one dense layer computing in mixed precision whether it is
    sent sparse: only its non-zero values, as sparse16 wavelets
    (docs/execution-model.md, "Sparse activations"). `off` marks none, `on`
    every eligible stream, `auto` those the cost model
    (`decideSparseStream`, lib/Kernels/SparseActivations.cpp) predicts pay
    at the expected `density` of non-zero values: the consumer gets faster
    and the slower of the two layers does not get slower. Streams are
    decided producers first (a layer's sparse input changes its cost as a
    producer). A host input into such a layer is eligible too: the host
    then sends only its non-zero values, converted to fp16 as the layer
    would (`decideSparseInput`: `auto` when the consumer gets faster at
    `input-density`). A calibration run measures the densities
    (`densities`, by ONNX node: weftc run measures them on its inputs with
    the host reference; `input-densities`, by host input); a stream whose
    producer's last node (or whose host input) has one expects it instead
    of `density`. Measured per element, each of the consumer's column
    chunks is costed at its own density (the busiest sets the pace). A chosen stream gets
    `sparse = #fabric.sparse<density = D>`; the lowering reads the mark and
    never re-decides. Marks already present
    are replaced. With `explain`, a remark on every stream into a dense
    layer says why it stays dense or what the model predicts. The sparse
    format does not change a stream's route or color, so the pass runs
    before or after routing alike (the pipeline runs it last before the
    lowering).

    Example: `--weft-select-sparse-streams="sparse-activations=auto
    density=0.3"`:
    ```mlir
    fabric.stream @fc1_to_fc2 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 256>
        {sparse = #fabric.sparse<density = 0.3>}
    ```
  }];
  let options = [
    Option<"sparseActivations", "sparse-activations", "std::string",
           "\"off\"",
           "off, auto (where the cost model says it pays) or on">,
    Option<"density", "density", "double", "0.5",
           "The expected fraction of non-zero ReLU results (0..1)">,
    Option<"inputDensity", "input-density", "double", "0.5",
           "The expected fraction of non-zero values of the host inputs "
           "(0..1)">,
    ListOption<"densities", "densities", "std::string",
               "Measured densities, NODE=D or NODE=D:P0:...:Pn-1 (Pi: "
               "element i's): a stream from a kernel whose last ONNX node "
               "(the last name of its location) is NODE expects them "
               "instead of `density`">,
    ListOption<"inputDensities", "input-densities", "std::string",
               "Measured densities of host inputs, NAME=D or "
               "NAME=D:P0:...:Pn-1: the input `fabric.io @NAME` expects "
               "them instead of `input-density`">,
    Option<"explain", "explain", "bool", "false",
           "Emit a remark with the decision for every stream into a dense "
           "layer">];
  let dependentDialects = ["weft::fabric::FabricDialect"];
  let statistics = [Statistic<"numSparse", "num-sparse",
                              "Streams marked sparse">];
}

def SelectSlicedWeights : Pass<"weft-select-sliced-weights",
                                "mlir::ModuleOp"> {
  let summary = "Choose the dense layers that store their weights sliced";
  let description = [{
    On a partitioned inference `fabric.program` (placed: every dense
    layer's mapping is known), decides for every dense kernel whether each
    PE stores its weight columns as sliced vectors: a lane mask per word of
    four weights and the non-zero weights packed, so that a zero weight
    costs no multiply-accumulate, a word of four zeros no cycle, and a read
    enables only the slices it needs (docs/execution-model.md, "Sparse
    weights"; docs/architecture.md §8.3). The weights are constants, so
    the pass packs them as the lowering will and counts exactly
    (`estimateSlicedWeights`, lib/Kernels/SparseWeights.cpp). `off` marks
    none; `on` every dense kernel, and fails naming the bytes when a PE's
    sliced weights would not fit its memory; `auto` (the default) those
    whose weight reads take at least 10 % less energy sliced and still fit,
    so weights without zeros stay dense. Sliced weights never take more
    cycles (a word issues only the groups its non-zero lanes need). A
    chosen kernel gets `sliced_weights`; the lowering reads the mark and
    never re-decides. Marks already present are replaced. With `explain`, a
    remark on every dense kernel gives the zeros, the read energy, the MAC
    groups and the memory, dense and sliced.

    Example: `--weft-select-sliced-weights="sparse-weights=auto"`:
    ```mlir
    fabric.kernel @fc1 : (tensor<1x784xf32>) -> tensor<1x256xf32>
        scheme #fabric.dense<...> at #weft.rect<0, 0, 4, 8>
        attributes {sliced_weights, smear = 4 : i64} { ... }
    ```
  }];
  let options = [
    Option<"sparseWeights", "sparse-weights", "std::string", "\"auto\"",
           "off, auto (where it saves read energy) or on">,
    Option<"explain", "explain", "bool", "false",
           "Emit a remark with the figures for every dense kernel">];
  let dependentDialects = ["weft::fabric::FabricDialect"];
  let statistics = [Statistic<"numSliced", "num-sliced",
                              "Dense kernels whose weights are sliced">];
}

#endif // WEFT_FABRICTRANSFORMS_PASSES
