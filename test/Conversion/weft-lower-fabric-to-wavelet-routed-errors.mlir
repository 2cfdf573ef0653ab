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
