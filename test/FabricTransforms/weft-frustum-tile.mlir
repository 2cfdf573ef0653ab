// --weft-frustum-tile records frustum groups, tiles and the cost model's
// decision (docs/frustum.md); --weft-frustum-fuse reads them. The worked example: two 3 x 3 stride-1 pad-1
// convolutions 16 -> 32 -> 32 on 33 x 33 in fp16 on 48 KiB PEs (the task
// table reserved): the largest tile is 11 x 11 at the top (15 x 15 at the
// input). A smaller memory forces a smaller tile; on 2 x 2 PEs a tile holds
// a quarter of the weights and half of each level's tile.
// RUN: weft-opt %s --split-input-file '--weft-frustum-tile=pace=group element-bytes=2 code-instructions=0' | FileCheck %s
// RUN: weft-opt %s --split-input-file '--weft-frustum-tile=pace=group element-bytes=2 code-instructions=2000' | FileCheck %s --check-prefix=CODE
// RUN: weft-opt %s --split-input-file '--weft-frustum-tile=pace=group element-bytes=2 side=2' | FileCheck %s --check-prefix=SIDE
// RUN: weft-opt %s --split-input-file '--weft-frustum-tile=pace=group element-bytes=2 code-instructions=0 precision=mixed' | FileCheck %s --check-prefix=MIXED
// The default weighs a group at the network's pace (docs/frustum.md, "The
// network's pace"): the partitioner's layout of the network per layer, and
// of the rest of it beside the group's tiles.
// RUN: weft-opt %s --split-input-file '--weft-frustum-tile=element-bytes=2 code-instructions=0' | FileCheck %s --check-prefix=NET

// CHECK-LABEL: fabric.program @worked
// The decision (lib/Kernels/Frustum.cpp, decideFrustum): its 9 tiles on one
// PE each would take 1,897,488 cycles per image recomputing their halos and
// 1,677,840 exchanging them (the faster, so the halo policy), the two
// layers per layer on their fastest rectangles of the 8 x 8 fabric 175,951:
// the group is not chosen.
// CHECK: fabric.kernel @c1 {{.*}} attributes {frustum = {chosen = false, exchange_cycles = 1677840 : i64, group = 0 : i64, halo = "exchange", hops = 53280 : i64, level = 0 : i64, max_tile = array<i64: 11, 11>, overlap_cycles = 1897488 : i64, per_layer_cycles = 175951 : i64, per_layer_hops = 52272 : i64, pes = 9 : i64, reason = "the frustum mapping is predicted slower than per layer (1677840 against 175951 cycles per image)", side = 1 : i64, tile = array<i64: 11, 11>}}
// CHECK: fabric.kernel @c2 {{.*}} attributes {frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}level = 1 : i64, {{.*}}side = 1 : i64, tile = array<i64: 11, 11>}}
// Per layer in mixed precision (fmachs, four multiply-accumulates a cycle)
// the layers take 60,295 cycles per image; the group, still not chosen.
// MIXED-LABEL: fabric.program @worked
// MIXED: fabric.kernel @c1 {{.*}} attributes {frustum = {chosen = false, {{.*}}per_layer_cycles = 60295 : i64,
// At the network's pace: the two layers per layer share the 8 x 8 fabric
// (342,667 cycles per image) and move 635,976 wavelet hops (their input
// along the rows and down 8 rows, the partial sums east). On one PE a tile
// the group is weighed as the band lowering runs it, which computes in
// fp32: no band of one PE holds it.
// NET-LABEL: fabric.program @worked
// NET: fabric.kernel @c1 {{.*}}frustum = {chosen = false, {{.*}}network_cycles = 342667 : i64, {{.*}}per_layer_hops = 635976 : i64, {{.*}}reason = "no band of one PE holds it in 3 bands: the weights, line buffer and program need 51928 bytes of PE memory", side = 1 : i64, tile = array<i64: 11, 11>}
// CODE-LABEL: fabric.program @worked
// CODE: fabric.kernel @c1 {{.*}} tile = array<i64: 8, 8>
// SIDE-LABEL: fabric.program @worked
// SIDE: fabric.kernel @c1 {{.*}} side = 2 : i64, tile = array<i64: 24, 24>
fabric.program @worked attributes {target = #weft.target<8x8, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x16x33x33xf32> {pixels = 1089 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x32x33x33xf32> {pixels = 1089 : i64}
  fabric.kernel @c1 : (tensor<1x16x33x33xf32>) -> tensor<1x32x33x33xf32> scheme #fabric.conv<in_channels = 16, out_channels = 32, in_height = 33, in_width = 33, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<32x16x3x3xf32>> {
  ^bb0(%a: tensor<1x16x33x33xf32>):
    %e = tensor.empty() : tensor<1x32x33x33xf32>
    fabric.yield %e : tensor<1x32x33x33xf32>
  }
  fabric.kernel @c2 : (tensor<1x32x33x33xf32>) -> tensor<1x32x33x33xf32> scheme #fabric.conv<in_channels = 32, out_channels = 32, in_height = 33, in_width = 33, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<32x32x3x3xf32>> {
  ^bb0(%a: tensor<1x32x33x33xf32>):
    fabric.yield %a : tensor<1x32x33x33xf32>
  }
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 17424> {pixels = 1089 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 34848> {pixels = 1089 : i64}
  fabric.stream @c2_to_y @c2[0] -> @y[0] : !fabric.wavelets<f32, 34848> {pixels = 1089 : i64}
}

// -----

// c1's map is also a host output: it must leave the fabric whole, so c1 and
// c2 form no chain and nothing is recorded.
// CHECK-LABEL: fabric.program @fork
// CHECK-NOT: frustum
fabric.program @fork attributes {target = #weft.target<8x8, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4x8x8xf32> {pixels = 64 : i64}
  fabric.io @h output east rows 0 to 1 : tensor<1x4x8x8xf32> {pixels = 64 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x4x8x8xf32> {pixels = 64 : i64}
  fabric.kernel @c1 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> scheme #fabric.conv<in_channels = 4, out_channels = 4, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<4x4x3x3xf32>> {
  ^bb0(%a: tensor<1x4x8x8xf32>):
    fabric.yield %a : tensor<1x4x8x8xf32>
  }
  fabric.kernel @c2 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> scheme #fabric.conv<in_channels = 4, out_channels = 4, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<4x4x3x3xf32>> {
  ^bb0(%a: tensor<1x4x8x8xf32>):
    fabric.yield %a : tensor<1x4x8x8xf32>
  }
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 256> {pixels = 64 : i64}
  fabric.stream @c1_fork @c1[0] -> @c2[0], @h[0] : !fabric.wavelets<f32, 256> {pixels = 64 : i64}
  fabric.stream @c2_to_y @c2[0] -> @y[0] : !fabric.wavelets<f32, 256> {pixels = 64 : i64}
}

// -----

// A residual block (docs/frustum.md, "Residual blocks"): c1 and c2 read x
// and each other alone, and the add sums c2's output with x. The block is
// one group; its add is recorded as a member with its role. The chain goes
// on through the add: c3 and c4 (after the block) form the next group.
// CHECK-LABEL: fabric.program @residual
// CHECK: fabric.kernel @c1 {{.*}}frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}level = 0 : i64, {{.*}}side = 1 : i64, tile = array<i64: 6, 6>}
// CHECK: fabric.kernel @c2 {{.*}}frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}level = 1 : i64, {{.*}}side = 1 : i64, tile = array<i64: 6, 6>}
// CHECK: fabric.kernel @add {{.*}}frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}role = "add", side = 1 : i64, tile = array<i64: 6, 6>}
// CHECK: fabric.kernel @c3 {{.*}}frustum = {chosen = false, {{.*}}group = 1 : i64, {{.*}}level = 0 : i64
// CHECK: fabric.kernel @c4 {{.*}}frustum = {chosen = false, {{.*}}group = 1 : i64, {{.*}}level = 1 : i64
// At the network's pace, on one PE a tile, the identity block is weighed
// as the band lowering runs it (its top level adding the skip), and so is
// the chain after it: both are slower in bands than the network per layer
// (10,219 cycles per image), so neither is chosen.
// NET-LABEL: fabric.program @residual
// NET: fabric.kernel @c1 {{.*}}frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}network_cycles = 10219 : i64, {{.*}}reason = "its bands are predicted slower than the network per layer (13549 against 10219 cycles per image at the fastest)"
// NET: fabric.kernel @add {{.*}}frustum = {chosen = false, {{.*}}role = "add"
// NET: fabric.kernel @c3 {{.*}}frustum = {chosen = false, {{.*}}group = 1 : i64, {{.*}}reason = "its bands are predicted slower than the network per layer (13477 against 10219 cycles per image at the fastest)"
fabric.program @residual attributes {target = #weft.target<8x8, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  fabric.kernel @c1 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<1.0> : tensor<8x8x3x3xf32>> {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.kernel @c2 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<8x8x3x3xf32>> {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.kernel @add : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.join<op = add, relu = true> {
  ^bb0(%a: tensor<1x8x6x6xf32>, %b: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.kernel @c3 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<1.0> : tensor<8x8x3x3xf32>> {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.kernel @c4 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<8x8x3x3xf32>> {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.stream @x_fork @x[0] -> @c1[0], @add[1] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c2_to_add @c2[0] -> @add[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @add_to_c3 @add[0] -> @c3[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c3_to_c4 @c3[0] -> @c4[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c4_to_y @c4[0] -> @y[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
}

// -----

// ResNet-50's downsampling block: a 1 x 1, a strided 3 x 3 and a 1 x 1
// convolution, and a strided 1 x 1 projection of the block's input that
// only the add reads. The projection is a member with its role.
// CHECK-LABEL: fabric.program @bottleneck
// CHECK: fabric.kernel @reduce {{.*}}frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}level = 0 : i64
// CHECK: fabric.kernel @conv {{.*}}frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}level = 1 : i64
// CHECK: fabric.kernel @expand {{.*}}frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}level = 2 : i64
// CHECK: fabric.kernel @shortcut {{.*}}frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}role = "projection"
// CHECK: fabric.kernel @add {{.*}}frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}role = "add"
fabric.program @bottleneck attributes {target = #weft.target<8x8, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x8x8x8xf32> {pixels = 64 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x16x4x4xf32> {pixels = 16 : i64}
  fabric.kernel @reduce : (tensor<1x8x8x8xf32>) -> tensor<1x4x8x8xf32> scheme #fabric.conv<in_channels = 8, out_channels = 4, in_height = 8, in_width = 8, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], relu = true, weights = dense<1.0> : tensor<4x8x1x1xf32>> {
  ^bb0(%a: tensor<1x8x8x8xf32>):
    %e = tensor.empty() : tensor<1x4x8x8xf32>
    fabric.yield %e : tensor<1x4x8x8xf32>
  }
  fabric.kernel @conv : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> scheme #fabric.conv<in_channels = 4, out_channels = 4, in_height = 8, in_width = 8, kernel = [3, 3], strides = [2, 2], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<1.0> : tensor<4x4x3x3xf32>> {
  ^bb0(%a: tensor<1x4x8x8xf32>):
    %e = tensor.empty() : tensor<1x4x4x4xf32>
    fabric.yield %e : tensor<1x4x4x4xf32>
  }
  fabric.kernel @expand : (tensor<1x4x4x4xf32>) -> tensor<1x16x4x4xf32> scheme #fabric.conv<in_channels = 4, out_channels = 16, in_height = 4, in_width = 4, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], weights = dense<1.0> : tensor<16x4x1x1xf32>> {
  ^bb0(%a: tensor<1x4x4x4xf32>):
    %e = tensor.empty() : tensor<1x16x4x4xf32>
    fabric.yield %e : tensor<1x16x4x4xf32>
  }
  fabric.kernel @shortcut : (tensor<1x8x8x8xf32>) -> tensor<1x16x4x4xf32> scheme #fabric.conv<in_channels = 8, out_channels = 16, in_height = 8, in_width = 8, kernel = [1, 1], strides = [2, 2], dilations = [1, 1], pads = [0, 0, 0, 0], weights = dense<1.0> : tensor<16x8x1x1xf32>> {
  ^bb0(%a: tensor<1x8x8x8xf32>):
    %e = tensor.empty() : tensor<1x16x4x4xf32>
    fabric.yield %e : tensor<1x16x4x4xf32>
  }
  fabric.kernel @add : (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> scheme #fabric.join<op = add, relu = true> {
  ^bb0(%a: tensor<1x16x4x4xf32>, %b: tensor<1x16x4x4xf32>):
    fabric.yield %a : tensor<1x16x4x4xf32>
  }
  fabric.stream @x_fork @x[0] -> @reduce[0], @shortcut[0] : !fabric.wavelets<f32, 512> {pixels = 64 : i64}
  fabric.stream @reduce_to_conv @reduce[0] -> @conv[0] : !fabric.wavelets<f32, 256> {pixels = 64 : i64}
  fabric.stream @conv_to_expand @conv[0] -> @expand[0] : !fabric.wavelets<f32, 64> {pixels = 16 : i64}
  fabric.stream @expand_to_add @expand[0] -> @add[0] : !fabric.wavelets<f32, 256> {pixels = 16 : i64}
  fabric.stream @shortcut_to_add @shortcut[0] -> @add[1] : !fabric.wavelets<f32, 256> {pixels = 16 : i64}
  fabric.stream @add_to_y @add[0] -> @y[0] : !fabric.wavelets<f32, 256> {pixels = 16 : i64}
}

// -----

// An add whose other input is no input (or projection) of the run before
// it closes no block: c1 and c2 form a plain group, the add is no member.
// CHECK-LABEL: fabric.program @no_block
// CHECK: fabric.kernel @c1 {{.*}}frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}level = 0 : i64
// CHECK: fabric.kernel @c2 {{.*}}frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}level = 1 : i64
// CHECK: fabric.kernel @add
// CHECK-NOT: frustum
// CHECK: fabric.stream
fabric.program @no_block attributes {target = #weft.target<8x8, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  fabric.io @z input west rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x8x6x6xf32> {pixels = 36 : i64}
  fabric.kernel @c1 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<1.0> : tensor<8x8x3x3xf32>> {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.kernel @c2 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.conv<in_channels = 8, out_channels = 8, in_height = 6, in_width = 6, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<8x8x3x3xf32>> {
  ^bb0(%a: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.kernel @add : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> scheme #fabric.join<op = add, relu = true> {
  ^bb0(%a: tensor<1x8x6x6xf32>, %b: tensor<1x8x6x6xf32>):
    fabric.yield %a : tensor<1x8x6x6xf32>
  }
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @c2_to_add @c2[0] -> @add[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @z_to_add @z[0] -> @add[1] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
  fabric.stream @add_to_y @add[0] -> @y[0] : !fabric.wavelets<f32, 288> {pixels = 36 : i64}
}

// -----

// A dilated and a strided layer in one group (fp16, no code reserved, as
// this file's first RUN line): an interior 13 x 13 tile at the top reads
// (13 - 1) * 2 + 3 = 27 rows of the dilated layer's output and
// (27 - 1) + 2 * 2 + 1 = 31 rows of the input; the pair (input, mid) needs
// 31^2 * 8 * 2 + 27^2 * 16 * 2 = 38,704 bytes beside 6,976 of weights and
// biases: 45,680, within 48 KiB less the task table. 14 x 14 would need
// 33^2 * 16 + 29^2 * 32 + 6,976 = 51,312.
// CHECK-LABEL: fabric.program @dilated
// CHECK: fabric.kernel @d {{.*}}frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}level = 0 : i64, {{.*}}side = 1 : i64, tile = array<i64: 13, 13>}
// CHECK: fabric.kernel @s {{.*}}frustum = {chosen = false, {{.*}}group = 0 : i64, {{.*}}level = 1 : i64, {{.*}}side = 1 : i64, tile = array<i64: 13, 13>}
fabric.program @dilated attributes {target = #weft.target<8x8, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x8x64x64xf32> {pixels = 4096 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x16x30x30xf32> {pixels = 900 : i64}
  fabric.kernel @d : (tensor<1x8x64x64xf32>) -> tensor<1x16x60x60xf32> scheme #fabric.conv<in_channels = 8, out_channels = 16, in_height = 64, in_width = 64, kernel = [3, 3], strides = [1, 1], dilations = [2, 2], pads = [0, 0, 0, 0], relu = true, weights = dense<1.0> : tensor<16x8x3x3xf32>> {
  ^bb0(%a: tensor<1x8x64x64xf32>):
    %e = tensor.empty() : tensor<1x16x60x60xf32>
    fabric.yield %e : tensor<1x16x60x60xf32>
  }
  fabric.kernel @s : (tensor<1x16x60x60xf32>) -> tensor<1x16x30x30xf32> scheme #fabric.conv<in_channels = 16, out_channels = 16, in_height = 60, in_width = 60, kernel = [3, 3], strides = [2, 2], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<16x16x3x3xf32>> {
  ^bb0(%a: tensor<1x16x60x60xf32>):
    %e = tensor.empty() : tensor<1x16x30x30xf32>
    fabric.yield %e : tensor<1x16x30x30xf32>
  }
  fabric.stream @x_to_d @x[0] -> @d[0] : !fabric.wavelets<f32, 32768> {pixels = 4096 : i64}
  fabric.stream @d_to_s @d[0] -> @s[0] : !fabric.wavelets<f32, 57600> {pixels = 90000 : i64}
  fabric.stream @s_to_y @s[0] -> @y[0] : !fabric.wavelets<f32, 14400> {pixels = 900 : i64}
}

// -----

// A training program is not tiled: its kernels train per layer, and the
// trained lowering has no fused group (docs/training.md).
// CHECK-LABEL: fabric.program @trained
// CHECK-NOT: frustum =
fabric.program @trained attributes {target = #weft.target<8x8, mem = 49152, colors = 24, rq = 2, cq = 8>, training = #fabric.training<optimizer = sgd, lr = 0.05 : f32, batch = 1>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4x8x8xf32> {pixels = 64 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x4x8x8xf32> {pixels = 64 : i64}
  fabric.kernel @c1 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> scheme #fabric.conv<in_channels = 4, out_channels = 4, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], relu = true, weights = dense<1.0> : tensor<4x4x3x3xf32>> {
  ^bb0(%a: tensor<1x4x8x8xf32>):
    fabric.yield %a : tensor<1x4x8x8xf32>
  }
  fabric.kernel @c2 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> scheme #fabric.conv<in_channels = 4, out_channels = 4, in_height = 8, in_width = 8, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [1, 1, 1, 1], weights = dense<1.0> : tensor<4x4x3x3xf32>> {
  ^bb0(%a: tensor<1x4x8x8xf32>):
    fabric.yield %a : tensor<1x4x8x8xf32>
  }
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 256> {pixels = 64 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 256> {pixels = 64 : i64}
  fabric.stream @c2_to_y @c2[0] -> @y[0] : !fabric.wavelets<f32, 256> {pixels = 64 : i64}
}
