// Merged lanes (docs/execution-model.md, "Merged lanes"): the partitioner
// placed @"/2/Conv" on one column taking the two lanes of @"/0/Conv"
// (merge = 2). Routing turns row_chunks 2 into col_chunks 1 on the 1x2
// rectangle: lane 1 goes north at (1, 1), and the turn PE (1, 0) takes, per
// pixel, lane 0's two channels from the west, then lane 1's from the south.
// The lowering accepts the turn and emits the positions.
// RUN: weft-opt %s --weft-route-streams | FileCheck %s
// RUN: weft-opt %s --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet | FileCheck %s --check-prefix=LOWER

// CHECK: fabric.redistribute @"/2/Conv_turn" : !fabric.wavelets<f32, 16> at <1, 0, 1, 2> from <row_chunks, 2> to <col_chunks, 1>
// CHECK-LABEL: fabric.route @"/0/Conv_to_/2/Conv"
// CHECK-NEXT: fabric.switch (0, 0) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (0, 1) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (1, 0) from [south, west] to [ramp] positions [from [west] to [ramp] x 2, from [south] to [ramp] x 2]
// CHECK-NEXT: fabric.switch (1, 1) from [west] to [north]
// CHECK-LABEL: fabric.route @"/2/Conv_turn_to_/2/Conv"
// CHECK-NEXT: fabric.switch (1, 0) from [ramp] to [south, ramp]
// CHECK-NEXT: fabric.switch (1, 1) from [north] to [ramp]

// LOWER: wavelet.route color {{[0-9]+}} from [south, west] to [ramp] positions [from [west] to [ramp] x 2, from [south] to [ramp] x 2]
// LOWER: wavelet.route color {{[0-9]+}} from [west] to [north]

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

fabric.program @main_graph attributes {target = #weft.target<2x4, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x  input  west rows 0 to 1 : tensor<1x1x2x2xf32> {pixels = 4 : i64}
  fabric.io @y  output  east rows 0 to 2 : tensor<1x2x2x2xf32> {pixels = 4 : i64}
  fabric.kernel @"/0/Conv" : (tensor<1x1x2x2xf32>) -> tensor<1x4x2x2xf32> scheme #fabric.conv<in_channels = 1, out_channels = 4, in_height = 2, in_width = 2, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], relu = true, weights = dense<[[[[-0.991472959]]], [[[-0.788861274]]], [[[-0.428315043]]], [[[-0.94609034]]]]> : tensor<4x1x1x1xf32>, bias = dense<[-0.0567712784, -0.879767417, 0.543731689, 0.487398744]> : tensor<4xf32>> at <0, 0, 1, 2> attributes {precision = #fabric<precision fp32>, predicted_cycles = 61 : i64} {
  ^bb0(%arg0: tensor<1x1x2x2xf32>):
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant dense<[[[[-0.991472959]]], [[[-0.788861274]]], [[[-0.428315043]]], [[[-0.94609034]]]]> : tensor<4x1x1x1xf32>
    %0 = tensor.empty() : tensor<1x4x2x2xf32>
    %cst_1 = arith.constant dense<[-0.0567712784, -0.879767417, 0.543731689, 0.487398744]> : tensor<4xf32>
    %broadcasted = linalg.broadcast ins(%cst_1 : tensor<4xf32>) outs(%0 : tensor<1x4x2x2xf32>) dimensions = [0, 2, 3] 
    %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%arg0, %cst_0 : tensor<1x1x2x2xf32>, tensor<4x1x1x1xf32>) outs(%broadcasted : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
    %2 = tensor.empty() : tensor<1x4x2x2xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1 : tensor<1x4x2x2xf32>) outs(%2 : tensor<1x4x2x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_2 = arith.constant 0.000000e+00 : f32
      %4 = arith.maximumf %in, %cst_2 : f32
      linalg.yield %4 : f32
    } -> tensor<1x4x2x2xf32>
    fabric.yield %3 : tensor<1x4x2x2xf32>
  }
  fabric.kernel @"/2/Conv" : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x2xf32> scheme #fabric.conv<in_channels = 4, out_channels = 2, in_height = 2, in_width = 2, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], weights = dense<[[[[0.0944212079]], [[0.387856662]], [[-0.0489686728]], [[0.299490631]]], [[[-0.350159109]], [[-0.0985311865]], [[-0.445823073]], [[-0.0405947566]]]]> : tensor<2x4x1x1xf32>, bias = dense<[-0.324394763, 0.449182868]> : tensor<2xf32>> at <1, 0, 1, 2> attributes {merge = 2 : i64, precision = #fabric<precision fp32>, predicted_cycles = 81 : i64} {
  ^bb0(%arg0: tensor<1x4x2x2xf32>):
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant dense<[[[[0.0944212079]], [[0.387856662]], [[-0.0489686728]], [[0.299490631]]], [[[-0.350159109]], [[-0.0985311865]], [[-0.445823073]], [[-0.0405947566]]]]> : tensor<2x4x1x1xf32>
    %0 = tensor.empty() : tensor<1x2x2x2xf32>
    %cst_1 = arith.constant dense<[-0.324394763, 0.449182868]> : tensor<2xf32>
    %broadcasted = linalg.broadcast ins(%cst_1 : tensor<2xf32>) outs(%0 : tensor<1x2x2x2xf32>) dimensions = [0, 2, 3] 
    %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%arg0, %cst_0 : tensor<1x4x2x2xf32>, tensor<2x4x1x1xf32>) outs(%broadcasted : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    fabric.yield %1 : tensor<1x2x2x2xf32>
  }
  fabric.stream @"x_to_/0/Conv" @x[0] -> @"/0/Conv"[0] : !fabric.wavelets<f32, 4> {pixels = 4 : i64}
  fabric.stream @"/0/Conv_to_/2/Conv" @"/0/Conv"[0] -> @"/2/Conv"[0] : !fabric.wavelets<f32, 16> {pixels = 4 : i64}
  fabric.stream @"/2/Conv_to_y" @"/2/Conv"[0] -> @y[0] : !fabric.wavelets<f32, 8> {pixels = 4 : i64}
}
