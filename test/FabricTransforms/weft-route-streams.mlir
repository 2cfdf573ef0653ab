// --weft-route-streams: a redistribution in front of every dense layer
// (its producer sends row chunks, its columns want column chunks) and one
// fabric.route per stream and internal channel, switch by switch.
// RUN: weft-opt %s --weft-route-streams | FileCheck %s
// RUN: weft-opt %s --weft-route-streams --weft-allocate-colors | FileCheck %s --check-prefix=COLORS
// The routed program runs: softmax outputs sum to 1 and every weight is
// 0.5, so every output is 0.5.
// RUN: rm -rf %t && mkdir -p %t
// RUN: weft-opt %s --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet | weft-translate --wavelet-to-wfb -o %t/net.wfb
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.random.default_rng(5).standard_normal((3, 10)).astype(np.float32))"
// RUN: weft-sim %t/net.wfb --samples 3 --input x=%t/x.npy --output-dir %t/out | FileCheck %s --check-prefix=SIM
// RUN: %python -c "import numpy as np; y = np.load('%t/out/y.npy'); assert y.size == 12 and np.allclose(y, 0.5, rtol=1e-5), y; print('MATCH')" | FileCheck %s --check-prefix=MATCH
// SIM: weft-sim: done in
// MATCH: MATCH

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>

// A softmax over 3 rows (a column all-reduce) feeding a dense layer with
// 3 input chunks and 2 neuron chunks, then the host output two columns east.
fabric.program @net attributes {target = #weft.target<6x3>} {
  fabric.io @x input west rows 0 to 3 : tensor<1x10xf32>
  fabric.io @y output east rows 0 to 2 : tensor<1x4xf32>
  fabric.kernel @sm : (tensor<1x10xf32>) -> tensor<1x10xf32> scheme #fabric.softmax<> at #weft.rect<0, 0, 1, 3> {
  ^bb0(%arg0: tensor<1x10xf32>):
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<1xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1xf32>) -> tensor<1xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<1x10xf32>) outs(%1 : tensor<1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %9 = arith.maximumf %out, %in : f32
      linalg.yield %9 : f32
    } -> tensor<1xf32>
    %expanded = tensor.expand_shape %2 [[0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
    %3 = tensor.empty() : tensor<1x10xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %expanded : tensor<1x10xf32>, tensor<1x1xf32>) outs(%3 : tensor<1x10xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %9 = arith.subf %in, %in_2 : f32
      linalg.yield %9 : f32
    } -> tensor<1x10xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<1x10xf32>) outs(%3 : tensor<1x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %9 = math.exp %in : f32
      linalg.yield %9 : f32
    } -> tensor<1x10xf32>
    %6 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<1xf32>) -> tensor<1xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%5 : tensor<1x10xf32>) outs(%6 : tensor<1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %9 = arith.addf %out, %in : f32
      linalg.yield %9 : f32
    } -> tensor<1xf32>
    %expanded_1 = tensor.expand_shape %7 [[0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%5, %expanded_1 : tensor<1x10xf32>, tensor<1x1xf32>) outs(%3 : tensor<1x10xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %9 = arith.divf %in, %in_2 : f32
      linalg.yield %9 : f32
    } -> tensor<1x10xf32>
    fabric.yield %8 : tensor<1x10xf32>
  }
  fabric.kernel @fc : (tensor<1x10xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 10, neurons = 4, weights = dense<0.5> : tensor<10x4xf32>> at #weft.rect<1, 0, 3, 2>
      attributes {smear = 3 : i64} {
  ^bb0(%x: tensor<1x10xf32>):
    %w = arith.constant dense<0.5> : tensor<10x4xf32>
    %e = tensor.empty() : tensor<1x4xf32>
    %z = arith.constant 0.0 : f32
    %acc = linalg.fill ins(%z : f32) outs(%e : tensor<1x4xf32>) -> tensor<1x4xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<1x10xf32>, tensor<10x4xf32>) outs(%acc : tensor<1x4xf32>) -> tensor<1x4xf32>
    fabric.yield %mm : tensor<1x4xf32>
  }
  fabric.stream @s0 @x[0] -> @sm[0] : !fabric.wavelets<f32, 10>
  fabric.stream @s1 @sm[0] -> @fc[0] : !fabric.wavelets<f32, 10>
  fabric.stream @s2 @fc[0] -> @y[0] : !fabric.wavelets<f32, 4>
  // A logical route: routing replaces it (the verifier would refuse a
  // second route of @s0).
  fabric.route @s0 {
  }
}

// CHECK-LABEL: fabric.program @net
// CHECK: fabric.redistribute @fc_turn : !fabric.wavelets<f32, 10> at <1, 0, 3, 3> from <row_chunks, 3> to <col_chunks, 3>
// CHECK-NEXT: fabric.kernel @fc
// CHECK: fabric.stream @s0 @x[0] -> @sm[0]
// CHECK-NEXT: fabric.stream @s1 @sm[0] -> @fc_turn[0]
// CHECK-NEXT: fabric.stream @fc_turn_to_fc @fc_turn[0] -> @fc[0] : !fabric.wavelets<f32, 10>
// CHECK-NEXT: fabric.stream @s2 @fc[0] -> @y[0]
// The host input enters the softmax column from the west.
// CHECK: fabric.route @s0 {
// CHECK-NEXT: fabric.switch (0, 0) from [west] to [ramp]
// CHECK-NEXT: fabric.switch (0, 1) from [west] to [ramp]
// CHECK-NEXT: fabric.switch (0, 2) from [west] to [ramp]
// CHECK-NEXT: }
// The softmax's row chunks leave east; row r is relayed to the diagonal
// PE (1 + r, r) of the dense layer, which takes it off the fabric.
// CHECK: fabric.route @s1 {
// CHECK-NEXT: fabric.switch (0, 0) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (0, 1) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (0, 2) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (1, 0) from [west] to [ramp]
// CHECK-NEXT: fabric.switch (1, 1) from [west] to [east]
// CHECK-NEXT: fabric.switch (1, 2) from [west] to [east]
// CHECK-NEXT: fabric.switch (2, 1) from [west] to [ramp]
// CHECK-NEXT: fabric.switch (2, 2) from [west] to [east]
// CHECK-NEXT: fabric.switch (3, 2) from [west] to [ramp]
// CHECK-NEXT: }
// The turn multicasts chunk c down column c to the layer's two rows; the
// diagonal below the rectangle (3, 2) only passes its chunk north.
// CHECK: fabric.route @fc_turn_to_fc {
// CHECK-NEXT: fabric.switch (1, 0) from [ramp] to [south, ramp]
// CHECK-NEXT: fabric.switch (1, 1) from [north] to [ramp]
// CHECK-NEXT: fabric.switch (2, 0) from [south] to [ramp]
// CHECK-NEXT: fabric.switch (2, 1) from [ramp] to [north, ramp]
// CHECK-NEXT: fabric.switch (3, 0) from [south] to [ramp]
// CHECK-NEXT: fabric.switch (3, 1) from [south] to [north, ramp]
// CHECK-NEXT: fabric.switch (3, 2) from [ramp] to [north]
// CHECK-NEXT: }
// The last column sends the results east; columns 4 and 5 relay them to
// the host port.
// CHECK: fabric.route @s2 {
// CHECK-NEXT: fabric.switch (3, 0) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (3, 1) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (4, 0) from [west] to [east]
// CHECK-NEXT: fabric.switch (4, 1) from [west] to [east]
// CHECK-NEXT: fabric.switch (5, 0) from [west] to [east]
// CHECK-NEXT: fabric.switch (5, 1) from [west] to [east]
// CHECK-NEXT: }
// The softmax's all-reduce: partial results north on the sender's row
// parity, row 0's totals multicast south.
// CHECK: fabric.route @sm channel "reduce_even" {
// CHECK-NEXT: fabric.switch (0, 1) from [south] to [ramp]
// CHECK-NEXT: fabric.switch (0, 2) from [ramp] to [north]
// CHECK-NEXT: }
// CHECK: fabric.route @sm channel "reduce_odd" {
// CHECK-NEXT: fabric.switch (0, 0) from [south] to [ramp]
// CHECK-NEXT: fabric.switch (0, 1) from [ramp] to [north]
// CHECK-NEXT: }
// CHECK: fabric.route @sm channel "broadcast" {
// CHECK-NEXT: fabric.switch (0, 0) from [ramp] to [south]
// CHECK-NEXT: fabric.switch (0, 1) from [north] to [south, ramp]
// CHECK-NEXT: fabric.switch (0, 2) from [north] to [ramp]
// CHECK-NEXT: }
// The partial sums: the hop leaving column 0 is odd, the one leaving
// column 1 even.
// CHECK: fabric.route @fc channel "psum_even" {
// CHECK-NEXT: fabric.switch (2, 0) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (2, 1) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (3, 0) from [west] to [ramp]
// CHECK-NEXT: fabric.switch (3, 1) from [west] to [ramp]
// CHECK-NEXT: }
// CHECK: fabric.route @fc channel "psum_odd" {
// CHECK-NEXT: fabric.switch (1, 0) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (1, 1) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (2, 0) from [west] to [ramp]
// CHECK-NEXT: fabric.switch (2, 1) from [west] to [ramp]
// CHECK-NEXT: }

// Colors: routes that share a PE differ; the streams take their route's.
// COLORS: fabric.stream @s0 @x[0] -> @sm[0] : !fabric.wavelets<f32, 10> {color = #fabric.color<[[S0:[0-9]+]]>}
// COLORS: fabric.stream @s1 @sm[0] -> @fc_turn[0] : !fabric.wavelets<f32, 10> {color = #fabric.color<[[S1:[0-9]+]]>}
// COLORS: fabric.route @s0 color <[[S0]]> {
// COLORS: fabric.route @s1 color <[[S1]]> {
// COLORS: fabric.route @sm channel "reduce_even" color <{{[0-9]+}}> {

