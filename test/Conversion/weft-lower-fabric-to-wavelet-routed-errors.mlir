// The lowering reads routes and colors from --weft-route-streams and
// --weft-allocate-colors, and refuses a program they have not prepared or
// whose routes its kernels cannot use.
// RUN: weft-opt %s --split-input-file --verify-diagnostics --weft-lower-fabric-to-wavelet

#id = affine_map<(d0, d1) -> (d0, d1)>

fabric.program @p attributes {target = #weft.target<2x1>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.kernel @relu : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Relu"> at #weft.rect<0, 0, 1, 1> {
  ^bb0(%v: tensor<1x4xf32>):
    %e = tensor.empty() : tensor<1x4xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v : tensor<1x4xf32>) outs(%e : tensor<1x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %z = arith.constant 0.0 : f32
      %m = arith.maximumf %in, %z : f32
      linalg.yield %m : f32
    } -> tensor<1x4xf32>
    fabric.yield %r : tensor<1x4xf32>
  }
  fabric.stream @s0 @x[0] -> @relu[0] : !fabric.wavelets<f32, 4>
  fabric.stream @s1 @relu[0] -> @y[0] : !fabric.wavelets<f32, 4>
  // expected-error @below {{has no color: run --weft-allocate-colors first}}
  fabric.route @s0 {
    fabric.switch (0, 0) from [west] to [ramp]
  }
  fabric.route @s1 color #fabric.color<1> {
    fabric.switch (0, 0) from [ramp] to [east]
    fabric.switch (1, 0) from [west] to [east]
  }
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

fabric.program @p attributes {target = #weft.target<2x1>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.kernel @relu : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Relu"> at #weft.rect<0, 0, 1, 1> {
  ^bb0(%v: tensor<1x4xf32>):
    %e = tensor.empty() : tensor<1x4xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v : tensor<1x4xf32>) outs(%e : tensor<1x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %z = arith.constant 0.0 : f32
      %m = arith.maximumf %in, %z : f32
      linalg.yield %m : f32
    } -> tensor<1x4xf32>
    fabric.yield %r : tensor<1x4xf32>
  }
  fabric.stream @s0 @x[0] -> @relu[0] : !fabric.wavelets<f32, 4>
  // expected-error @below {{has no route: run --weft-route-streams and --weft-allocate-colors first}}
  fabric.stream @s1 @relu[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.route @s0 color #fabric.color<0> {
    fabric.switch (0, 0) from [west] to [ramp]
  }
}

// -----

// A dense layer needs the diagonal turn in front.
fabric.program @p attributes {target = #weft.target<3x2>} {
  fabric.io @x input west rows 0 to 2 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x2xf32>
  // expected-error @below {{has no redistribution in front: run --weft-route-streams first}}
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<0.5> : tensor<4x2xf32>> at #weft.rect<0, 0, 2, 1>
      attributes {smear = 2 : i64} {
  ^bb0(%v: tensor<1x4xf32>):
    %w = arith.constant dense<0.5> : tensor<4x2xf32>
    %e = tensor.empty() : tensor<1x2xf32>
    %z = arith.constant 0.0 : f32
    %acc = linalg.fill ins(%z : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
    %mm = linalg.matmul ins(%v, %w : tensor<1x4xf32>, tensor<4x2xf32>) outs(%acc : tensor<1x2xf32>) -> tensor<1x2xf32>
    fabric.yield %mm : tensor<1x2xf32>
  }
  fabric.stream @s0 @x[0] -> @fc[0] : !fabric.wavelets<f32, 4>
  fabric.stream @s1 @fc[0] -> @y[0] : !fabric.wavelets<f32, 2>
  fabric.route @s0 color #fabric.color<0> {
    fabric.switch (0, 0) from [west] to [ramp]
  }
  fabric.route @s1 color #fabric.color<1> {
    fabric.switch (1, 0) from [ramp] to [east]
    fabric.switch (2, 0) from [west] to [east]
  }
}

// -----

// Only the diagonal turn of S row chunks into S column chunks is
// implemented.
fabric.program @p attributes {target = #weft.target<3x2>} {
  fabric.io @x input west rows 0 to 2 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x2xf32>
  // expected-error @below {{is not the turn of @fc (from #fabric.layout<row_chunks, 2> to #fabric.layout<col_chunks, 2> at the 2x2 rectangle where its columns start, 1 lane(s) a column); weft lowers only the turn of the lanes a kernel takes}}
  fabric.redistribute @t : !fabric.wavelets<f32, 4> at #weft.rect<0, 0, 2, 2>
      from #fabric.layout<replicated, 1> to #fabric.layout<col_chunks, 2>
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<0.5> : tensor<4x2xf32>> at #weft.rect<0, 0, 2, 1>
      attributes {smear = 2 : i64} {
  ^bb0(%v: tensor<1x4xf32>):
    %w = arith.constant dense<0.5> : tensor<4x2xf32>
    %e = tensor.empty() : tensor<1x2xf32>
    %z = arith.constant 0.0 : f32
    %acc = linalg.fill ins(%z : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
    %mm = linalg.matmul ins(%v, %w : tensor<1x4xf32>, tensor<4x2xf32>) outs(%acc : tensor<1x2xf32>) -> tensor<1x2xf32>
    fabric.yield %mm : tensor<1x2xf32>
  }
  fabric.stream @s0 @x[0] -> @t[0] : !fabric.wavelets<f32, 4>
  fabric.stream @s1 @t[0] -> @fc[0] : !fabric.wavelets<f32, 4>
  fabric.stream @s2 @fc[0] -> @y[0] : !fabric.wavelets<f32, 2>
  fabric.route @s0 color #fabric.color<0> {
    fabric.switch (0, 0) from [west] to [ramp]
    fabric.switch (0, 1) from [west] to [east]
    fabric.switch (1, 1) from [west] to [ramp]
  }
  fabric.route @s1 color #fabric.color<1> {
    fabric.switch (0, 0) from [ramp] to [ramp]
    fabric.switch (1, 0) from [south] to [ramp]
    fabric.switch (1, 1) from [ramp] to [north]
  }
  fabric.route @s2 color #fabric.color<2> {
    fabric.switch (1, 0) from [ramp] to [east]
    fabric.switch (2, 0) from [west] to [east]
  }
}

// -----

// A convolution that merges 2 lanes into its column turns them on the 1x2
// rectangle where they meet it, not on a 1x1 square.
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
fabric.program @main_graph attributes {target = #weft.target<2x4, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x  input  west rows 0 to 1 : tensor<1x1x2x2xf32> {pixels = 4 : i64}
  fabric.io @y  output  east rows 0 to 2 : tensor<1x2x2x2xf32> {pixels = 4 : i64}
  fabric.redistribute @"/0/Conv_turn" : !fabric.wavelets<f32, 4> at <0, 0, 1, 1> from <row_chunks, 1> to <col_chunks, 1>
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
  // expected-error @below {{is not the turn of @/2/Conv (from #fabric.layout<row_chunks, 2> to #fabric.layout<col_chunks, 1> at the 1x2 rectangle where its columns start, 2 lane(s) a column); weft lowers only the turn of the lanes a kernel takes}}
  fabric.redistribute @"/2/Conv_turn" : !fabric.wavelets<f32, 16> at <1, 0, 1, 1> from <row_chunks, 2> to <col_chunks, 1>
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
  fabric.stream @"x_to_/0/Conv" @x[0] -> @"/0/Conv_turn"[0] : !fabric.wavelets<f32, 4> {color = #fabric.color<1>, pixels = 4 : i64}
  fabric.stream @"/0/Conv_turn_to_/0/Conv" @"/0/Conv_turn"[0] -> @"/0/Conv"[0] : !fabric.wavelets<f32, 4> {color = #fabric.color<2>, pixels = 4 : i64}
  fabric.stream @"/0/Conv_to_/2/Conv" @"/0/Conv"[0] -> @"/2/Conv_turn"[0] : !fabric.wavelets<f32, 16> {color = #fabric.color<0>, pixels = 4 : i64}
  fabric.stream @"/2/Conv_turn_to_/2/Conv" @"/2/Conv_turn"[0] -> @"/2/Conv"[0] : !fabric.wavelets<f32, 16> {color = #fabric.color<1>, pixels = 4 : i64}
  fabric.stream @"/2/Conv_to_y" @"/2/Conv"[0] -> @y[0] : !fabric.wavelets<f32, 8> {color = #fabric.color<2>, pixels = 4 : i64}
  fabric.route @"x_to_/0/Conv" color <1> {
    fabric.switch (0, 0) from [west] to [ramp]
  }
  fabric.route @"/0/Conv_turn_to_/0/Conv" color <2> {
    fabric.switch (0, 0) from [ramp] to [south, ramp]
    fabric.switch (0, 1) from [north] to [ramp]
  }
  fabric.route @"/0/Conv_to_/2/Conv" color <0> {
    fabric.switch (0, 0) from [ramp] to [east]
    fabric.switch (0, 1) from [ramp] to [east]
    fabric.switch (1, 0) from [south, west] to [ramp] positions [from [west] to [ramp] x 2, from [south] to [ramp] x 2]
    fabric.switch (1, 1) from [west] to [north]
  }
  fabric.route @"/2/Conv_turn_to_/2/Conv" color <1> {
    fabric.switch (1, 0) from [ramp] to [south, ramp]
    fabric.switch (1, 1) from [north] to [ramp]
  }
  fabric.route @"/2/Conv_to_y" color <2> {
    fabric.switch (1, 0) from [ramp] to [east]
    fabric.switch (1, 1) from [ramp] to [east]
  }
}
