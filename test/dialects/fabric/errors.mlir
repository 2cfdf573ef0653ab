// RUN: weft-opt %s --split-input-file --verify-diagnostics

// expected-error @below {{invalid target: routable colors 40 not in [1, 32] (5-bit color field)}}
fabric.program @p attributes {target = #weft.target<4x4, colors = 40>} {}

// -----

// expected-error @below {{invalid target: memory per PE of 131072 bytes}}
fabric.program @p attributes {target = #weft.target<4x4, mem = 131072>} {}

// -----

// expected-error @below {{invalid target: unknown target option 'speed' (known: mem, colors, rq, cq)}}
fabric.program @p attributes {target = #weft.target<4x4, speed = 3>} {}

// -----

// expected-error @below {{rectangle 0x2 is empty}}
fabric.program @p attributes {target = #weft.target<4x4>, r = #weft.rect<0, 0, 0, 2>} {}

// -----

// expected-error @below {{color 32 does not fit the 5-bit color field (0..31)}}
fabric.program @p attributes {target = #weft.target<4x4>, c = #fabric.color<32>} {}

// -----

// expected-error @below {{a replicated layout has exactly one part, got 3}}
fabric.program @p attributes {target = #weft.target<4x4>, l = #fabric.layout<replicated, 3>} {}

// -----

// expected-error @+1 {{stream elements must be f32 or f16, got 'i8'}}
fabric.program @p attributes {target = #weft.target<4x4>, t = !fabric.wavelets<i8, 4>} {}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{'fabric.kernel' op kernel rectangle [2, 6) x [0, 1) leaves the 4x4 fabric}}
  fabric.kernel @k : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Copy"> at #weft.rect<2, 0, 4, 1> {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Copy"> at #weft.rect<0, 0, 2, 2> {
  ^bb0(%x: tensor<4xf32>):
    fabric.yield %x : tensor<4xf32>
  }
  // expected-error @below {{rectangle [1, 3) x [1, 2) of @b overlaps rectangle [0, 2) x [0, 2) of @a}}
  fabric.kernel @b : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Copy"> at #weft.rect<1, 1, 2, 1> {
  ^bb0(%x: tensor<4xf32>):
    fabric.yield %x : tensor<4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{smear factor 5 exceeds the 4 PEs of its rectangle}}
  fabric.kernel @k : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Copy"> at #weft.rect<0, 0, 2, 2> attributes {smear = 5 : i64} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{body argument 0 has type 'tensor<8xf32>' but input 0 is 'tensor<4xf32>'}}
  fabric.kernel @k : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Copy"> {
  ^bb0(%a: tensor<8xf32>):
    %s = tensor.extract_slice %a[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
    fabric.yield %s : tensor<4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.kernel @k : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Copy"> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @below {{yields 0 values whose types do not match the kernel results}}
    fabric.yield
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{rows [2, 6) leave the 4-row fabric}}
  fabric.io @x input west rows 2 to 6 : tensor<8xf32>
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{row range [3, 3) is empty or negative}}
  fabric.io @x input west rows 3 to 3 : tensor<8xf32>
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<8xf32>
  // expected-error @below {{destination @nowhere does not exist}}
  fabric.stream @s @x[0] -> @nowhere[0] : !fabric.wavelets<f32, 8>
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<8xf32>
  fabric.io @y output east rows 0 to 1 : tensor<8xf32>
  // expected-error @below {{host input carries 'tensor<8xf32>' but the stream is '!fabric.wavelets<f32, 4>'}}
  fabric.stream @s @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<8xf32>
  // expected-error @below {{source @y is a host output}}
  fabric.stream @s @y[0] -> @x[0] : !fabric.wavelets<f32, 8>
  fabric.io @y output east rows 0 to 1 : tensor<8xf32>
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.kernel @k : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Copy"> {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
  // expected-error @below {{kernel @k has 1 inputs, not port 1}}
  fabric.stream @s @x[0] -> @k[1] : !fabric.wavelets<f32, 4>
}

// -----

fabric.program @p attributes {target = #weft.target<4x4, colors = 8>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<4xf32>
  // expected-error @below {{color 9 is not routable on this target (colors 0..7)}}
  fabric.stream @s @x[0] -> @y[0] : !fabric.wavelets<f32, 4> {color = #fabric.color<9>}
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<4xf32>
  fabric.stream @s @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.route @s color #fabric.color<2> {
    // expected-error @below {{PE (0, 0) has no north link on the 4x4 fabric}}
    fabric.switch (0, 0) from [west] to [north]
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<4xf32>
  fabric.stream @s @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.route @s color #fabric.color<2> {
    // expected-error @below {{PE (5, 0) is outside the 4x4 fabric}}
    fabric.switch (5, 0) from [west] to [east]
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<4xf32>
  fabric.stream @a @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.stream @b @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.route @a color #fabric.color<3> {
    fabric.switch (2, 0) from [ramp] to [east]
    fabric.switch (3, 0) from [west] to [ramp]
  }
  fabric.route @b color #fabric.color<3> {
    // expected-error @below {{color 3 at PE (2, 0) is used by both @a and @b}}
    fabric.switch (2, 0) from [ramp] to [south]
    fabric.switch (2, 1) from [north] to [ramp]
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<4xf32>
  fabric.stream @a @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.route @a {
    // expected-error @below {{needs at least one output port}}
    fabric.switch (2, 0) from [west] to []
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<4xf32>
  fabric.stream @a @x[0] -> @y[0] : !fabric.wavelets<f32, 4> {color = #fabric.color<1>}
  // expected-error @below {{has color 2 but stream @a has color 1}}
  fabric.route @a color #fabric.color<2> {
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  // expected-error @below {{routes @x, which is not a stream}}
  fabric.route @x {
  }
}


// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{layout of 8 parts for 4 elements}}
  fabric.redistribute @r : !fabric.wavelets<f32, 4> from #fabric.layout<row_chunks, 8> to #fabric.layout<col_chunks, 2>
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.route @s {
    // expected-error @below {{unknown router port 'up'}}
    fabric.switch (0, 0) from [up] to [east]
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{tile size 0 is below 1}}
  fabric.kernel @k : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Copy"> attributes {tile = array<i64: 4, 0>} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{host tensor 'tensor<?x4xf32>' has a dynamic shape}}
  fabric.io @x input west rows 0 to 1 : tensor<?x4xf32>
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{redistribution rectangle [3, 5) x [0, 1) leaves the 4x4 fabric}}
  fabric.redistribute @r : !fabric.wavelets<f32, 4> at #weft.rect<3, 0, 2, 1> from #fabric.layout<row_chunks, 1> to #fabric.layout<col_chunks, 2>
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<4xf32>
  fabric.stream @s @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  // expected-error @below {{routes channel 'inner' of @s, which is not a kernel or redistribution}}
  fabric.route @s channel "inner" {
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.kernel @k : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Copy"> at #weft.rect<0, 0, 2, 2> {
  ^bb0(%v: tensor<1x4xf32>):
    fabric.yield %v : tensor<1x4xf32>
  }
  fabric.route @k channel "a" color #fabric.color<2> {
    fabric.switch (0, 1) from [ramp] to [east]
    fabric.switch (1, 1) from [west] to [ramp]
  }
  fabric.route @k channel "b" color #fabric.color<2> {
    fabric.switch (1, 0) from [ramp] to [south]
    // expected-error @below {{color 2 at PE (1, 1) is used by both @k channel a and @k channel b}}
    fabric.switch (1, 1) from [north] to [ramp]
  }
}

// -----

// A redistribution may lie on a kernel's PEs (it uses their routers and
// spare microthreads), but not on another redistribution's.
fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.kernel @k : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Copy"> at #weft.rect<0, 0, 2, 2> {
  ^bb0(%v: tensor<1x4xf32>):
    fabric.yield %v : tensor<1x4xf32>
  }
  fabric.redistribute @r1 : !fabric.wavelets<f32, 4> at #weft.rect<0, 0, 2, 2>
      from #fabric.layout<row_chunks, 2> to #fabric.layout<col_chunks, 2>
  // expected-error @below {{rectangle [1, 3) x [1, 3) of @r2 overlaps rectangle [0, 2) x [0, 2) of @r1}}
  fabric.redistribute @r2 : !fabric.wavelets<f32, 4> at #weft.rect<1, 1, 2, 2>
      from #fabric.layout<row_chunks, 2> to #fabric.layout<col_chunks, 2>
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<4xf32>
  fabric.stream @s @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.route @s {
    // expected-error @below {{sends @s east from PE (1, 0) but PE (2, 0) has no switch of it taking wavelets from the west}}
    fabric.switch (1, 0) from [ramp] to [east]
    fabric.switch (2, 0) from [south] to [ramp]
    fabric.switch (2, 1) from [ramp] to [north]
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<4xf32>
  fabric.stream @s @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.route @s {
    // expected-error @below {{takes @s from the south at PE (1, 1) but PE (1, 2) sends none of it that way}}
    fabric.switch (1, 1) from [south] to [east]
    fabric.switch (2, 1) from [west] to [east]
    fabric.switch (3, 1) from [west] to [east]
  }
}

// -----

fabric.program @scheme_streams attributes {target = #weft.target<4x4>} {
  // expected-error @below {{takes 1 inputs but its scheme (join add) consumes 2}}
  fabric.kernel @k : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.join<op = add> {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @dense_transposed_without_source attributes {target = #weft.target<4x4>} {
  // expected-error @below {{weights_transposed describes weights_source, which is missing}}
  fabric.kernel @k : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<1.0> : tensor<4x2xf32>, weights_transposed = true> {
  ^bb0(%a: tensor<1x4xf32>):
    %e = tensor.empty() : tensor<1x2xf32>
    fabric.yield %e : tensor<1x2xf32>
  }
}

// -----

fabric.program @dense_bias_source_without_bias attributes {target = #weft.target<4x4>} {
  // expected-error @below {{bias_source names the initializer of a bias the layer does not have}}
  fabric.kernel @k : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<1.0> : tensor<4x2xf32>, weights_source = "w", bias_source = "b"> {
  ^bb0(%a: tensor<1x4xf32>):
    %e = tensor.empty() : tensor<1x2xf32>
    fabric.yield %e : tensor<1x2xf32>
  }
}

// -----

fabric.program @dense_synthetic_source attributes {target = #weft.target<4x4>} {
  // expected-error @below {{a matrix weft made has no source initializer}}
  fabric.kernel @k : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, synthetic = true, weights = dense<1.0> : tensor<4x2xf32>, weights_source = "w"> {
  ^bb0(%a: tensor<1x4xf32>):
    %e = tensor.empty() : tensor<1x2xf32>
    fabric.yield %e : tensor<1x2xf32>
  }
}

// -----

fabric.program @dense_weights attributes {target = #weft.target<4x4>} {
  // expected-error @below {{weights must be tensor<4x2xf32>, not 'tensor<2x4xf32>'}}
  fabric.kernel @k : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<1.0> : tensor<2x4xf32>> {
  ^bb0(%a: tensor<1x4xf32>):
    %e = tensor.empty() : tensor<1x2xf32>
    fabric.yield %e : tensor<1x2xf32>
  }
}

// -----

fabric.program @expr_order attributes {target = #weft.target<4x4>} {
  // expected-error @below {{expression node 1 (mul) reads a node that is not before it}}
  fabric.kernel @k : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.expression<nodes = [#fabric.node<kind = mul, a = 0, b = 1>]> {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @dst_twice attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  // expected-error @below {{names destination @y[0] twice}}
  fabric.stream @s @x[0] -> @y[0], @y[0] : !fabric.wavelets<f32, 4>
}

// -----

fabric.program @join_fifo attributes {target = #weft.target<4x4>} {
  // expected-error @below {{a join that buffers an input has a FIFO of at least one sample or pixel, and only then; got buffered = 1, fifo = 0}}
  fabric.kernel @k : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> scheme #fabric.join<op = add, buffered = 1> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @pool_include_pad attributes {target = #weft.target<4x4>} {
  // expected-error @below {{count_include_pad is for average pools}}
  fabric.kernel @k : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> scheme #fabric.pool<kind = max, channels = 1, in_height = 4, in_width = 4, kernel = [2, 2], strides = [2, 2], dilations = [1, 1], pads = [0, 0, 0, 0], count_include_pad = true> {
  ^bb0(%a: tensor<1x1x4x4xf32>):
    %e = tensor.empty() : tensor<1x1x2x2xf32>
    fabric.yield %e : tensor<1x1x2x2xf32>
  }
}

// -----

fabric.program @pool_window attributes {target = #weft.target<4x4>} {
  // expected-error @below {{not a pooling: the window is larger than the padded input}}
  fabric.kernel @k : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> scheme #fabric.pool<kind = avg, channels = 1, in_height = 4, in_width = 4, kernel = [5, 5], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0]> {
  ^bb0(%a: tensor<1x1x4x4xf32>):
    %e = tensor.empty() : tensor<1x1x2x2xf32>
    fabric.yield %e : tensor<1x1x2x2xf32>
  }
}

// -----

fabric.program @join_fifo_both attributes {target = #weft.target<4x4>} {
  // expected-error @below {{a join's FIFO holds whole samples or pixels of a feature map, not both; got fifo = 1, fifo_pixels = 4}}
  fabric.kernel @k : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> scheme #fabric.join<op = add, buffered = 1, fifo = 1, fifo_pixels = 4> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @join_relu_sub attributes {target = #weft.target<4x4>} {
  // expected-error @below {{a join fuses a ReLU only after add, mul, max or min, not sub}}
  fabric.kernel @k : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> scheme #fabric.join<op = sub, relu = true> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @join_broadcast_add attributes {target = #weft.target<4x4>} {
  // expected-error @below {{a join with a per-channel input is a mul without ReLU, not add}}
  fabric.kernel @k : (tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x2x2xf32> scheme #fabric.join<op = add, broadcast = 1> {
  ^bb0(%a: tensor<1x2x2x2xf32>, %b: tensor<1x2x1x1xf32>):
    fabric.yield %a : tensor<1x2x2x2xf32>
  }
}

// -----

fabric.program @join_broadcast_a attributes {target = #weft.target<4x4>} {
  // expected-error @below {{a join's per-channel input is b (broadcast = 1; a mul commutes, so the conversion puts it second), or none (-1), not 0}}
  fabric.kernel @k : (tensor<1x2x1x1xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> scheme #fabric.join<op = mul, broadcast = 0> {
  ^bb0(%a: tensor<1x2x1x1xf32>, %b: tensor<1x2x2x2xf32>):
    fabric.yield %b : tensor<1x2x2x2xf32>
  }
}

// -----

fabric.program @join_broadcast_buffers_b attributes {target = #weft.target<4x4>} {
  // expected-error @below {{a join with a per-channel input buffers the feature map (input 0) in whole samples: the scale needs a whole sample of it first; got buffered = 1, fifo_pixels = 0}}
  fabric.kernel @k : (tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x2x2xf32> scheme #fabric.join<op = mul, buffered = 1, fifo = 1, broadcast = 1> {
  ^bb0(%a: tensor<1x2x2x2xf32>, %b: tensor<1x2x1x1xf32>):
    fabric.yield %a : tensor<1x2x2x2xf32>
  }
}

// -----

fabric.program @conv_groups attributes {target = #weft.target<4x4>} {
  // expected-error @below {{not a convolution: the groups (3) must divide the input and output channels}}
  fabric.kernel @k : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> scheme #fabric.conv<in_channels = 4, out_channels = 4, in_height = 4, in_width = 4, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], groups = 3, weights = dense<1.0> : tensor<4x1x1x1xf32>> {
  ^bb0(%a: tensor<1x4x4x4xf32>):
    fabric.yield %a : tensor<1x4x4x4xf32>
  }
}

// -----

fabric.program @conv_group_weights attributes {target = #weft.target<4x4>} {
  // expected-error @below {{weights must be tensor<8x1x3x3xf32> (in_channels / groups inputs), not 'tensor<8x4x3x3xf32>'}}
  fabric.kernel @k : (tensor<1x4x4x4xf32>) -> tensor<1x8x2x2xf32> scheme #fabric.conv<in_channels = 4, out_channels = 8, in_height = 4, in_width = 4, kernel = [3, 3], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], groups = 4, weights = dense<1.0> : tensor<8x4x3x3xf32>> {
  ^bb0(%a: tensor<1x4x4x4xf32>):
    %e = tensor.empty() : tensor<1x8x2x2xf32>
    fabric.yield %e : tensor<1x8x2x2xf32>
  }
}

// -----

fabric.program @conv_relu_max attributes {target = #weft.target<4x4>} {
  // expected-error @below {{not a convolution: a clipped ReLU needs a positive upper bound}}
  fabric.kernel @k : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> scheme #fabric.conv<in_channels = 1, out_channels = 1, in_height = 4, in_width = 4, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], relu_max = 6.0 : f32, weights = dense<1.0> : tensor<1x1x1x1xf32>> {
  ^bb0(%a: tensor<1x1x4x4xf32>):
    fabric.yield %a : tensor<1x1x4x4xf32>
  }
}

// -----

fabric.program @conv_relu_max_type attributes {target = #weft.target<4x4>} {
  // expected-error @below {{relu_max must be an f32, not 6.000000e+00 : f64}}
  fabric.kernel @k : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> scheme #fabric.conv<in_channels = 1, out_channels = 1, in_height = 4, in_width = 4, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], relu = true, relu_max = 6.0 : f64, weights = dense<1.0> : tensor<1x1x1x1xf32>> {
  ^bb0(%a: tensor<1x1x4x4xf32>):
    fabric.yield %a : tensor<1x1x4x4xf32>
  }
}

// -----

fabric.program @conv_epilogue_relu attributes {target = #weft.target<4x4>} {
  // expected-error @below {{not a convolution: a fused activation cannot follow a ReLU}}
  fabric.kernel @k : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> scheme #fabric.conv<in_channels = 1, out_channels = 1, in_height = 4, in_width = 4, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], relu = true, weights = dense<1.0> : tensor<1x1x1x1xf32>, epilogue = [#fabric.node<kind = tanh>]> {
  ^bb0(%a: tensor<1x1x4x4xf32>):
    fabric.yield %a : tensor<1x1x4x4xf32>
  }
}

// -----

fabric.program @conv_epilogue_fn attributes {target = #weft.target<4x4>} {
  // expected-error @below {{bad epilogue: expression node calls 'Silu', which is no column op}}
  fabric.kernel @k : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> scheme #fabric.conv<in_channels = 1, out_channels = 1, in_height = 4, in_width = 4, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], weights = dense<1.0> : tensor<1x1x1x1xf32>, epilogue = [#fabric.node<kind = unary, fn = "Silu">]> {
  ^bb0(%a: tensor<1x1x4x4xf32>):
    fabric.yield %a : tensor<1x1x4x4xf32>
  }
}

// -----

fabric.program @conv_epilogue_order attributes {target = #weft.target<4x4>} {
  // expected-error @below {{expression node 1 (mul) reads a node that is not before it, or lacks its constant or function}}
  fabric.kernel @k : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> scheme #fabric.conv<in_channels = 1, out_channels = 1, in_height = 4, in_width = 4, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], weights = dense<1.0> : tensor<1x1x1x1xf32>, epilogue = [#fabric.node<kind = mul, a = 0, b = 1>]> {
  ^bb0(%a: tensor<1x1x4x4xf32>):
    fabric.yield %a : tensor<1x1x4x4xf32>
  }
}

// -----

fabric.program @conv_epilogue_unrunnable attributes {target = #weft.target<4x4>} {
  // expected-error @below {{not a convolution: its fused activation cannot run}}
  fabric.kernel @k : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> scheme #fabric.conv<in_channels = 1, out_channels = 1, in_height = 4, in_width = 4, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], weights = dense<1.0> : tensor<1x1x1x1xf32>, epilogue = [#fabric.node<kind = unary, fn = "Softmax">]> {
  ^bb0(%a: tensor<1x1x4x4xf32>):
    fabric.yield %a : tensor<1x1x4x4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<4xf32>
  fabric.stream @a @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.route @a {
    // expected-error @below {{at PE (2, 0): has 1 position; a positioned route has 2 to 4}}
    fabric.switch (2, 0) from [west] to [east] positions [from [west] to [east] x 3]
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<4xf32>
  fabric.stream @a @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.route @a {
    // expected-error @below {{at PE (2, 0): position 2 of 2 takes from [ramp], which the route's inputs [west] do not include}}
    fabric.switch (2, 0) from [west] to [east] positions [from [west] to [east] x 3, from [ramp] to [east] x 1]
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<4xf32>
  fabric.stream @a @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.route @a {
    // expected-error @below {{at PE (2, 0): position 1 of 2 has count 0; counts are 1 to 16777216}}
    fabric.switch (2, 0) from [west, ramp] to [east] positions [from [west] to [east] x 0, from [ramp] to [east] x 1]
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<4xf32>
  fabric.stream @a @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.route @a {
    // expected-error @below {{at PE (2, 0): the positions take from [west] but the route's inputs are [west, ramp]; they must be the positions' union}}
    fabric.switch (2, 0) from [west, ramp] to [east] positions [from [west] to [east] x 2, from [west] to [east] x 1]
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{is cut into 2 bands of output columns, but only a convolution or a max pool of a window can be}}
  fabric.kernel @k : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Copy"> at #weft.rect<0, 0, 2, 1> attributes {tiles = 2 : i64} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

// Only an unbanded convolution merges its producer's lanes.
fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{merges 2 input lanes into a column, but only an unbanded convolution can}}
  fabric.kernel @k : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Copy"> at #weft.rect<0, 0, 1, 1> attributes {merge = 2 : i64} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<8x4>} {
  // expected-error @below {{rectangle is 3 columns wide, but its 2 bands of 2 columns need 4}}
  fabric.kernel @c : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 4, in_width = 4, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], weights = dense<1.0> : tensor<2x2x1x1xf32>> at #weft.rect<0, 0, 3, 2> attributes {smear = 2 : i64, tiles = 2 : i64} {
  ^bb0(%a: tensor<1x2x4x4xf32>):
    fabric.yield %a : tensor<1x2x4x4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {trained} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
  fabric.kernel @b : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {trained} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
  // expected-error @below {{is a gradient stream, but kernel @b does not send the gradient of its input (no input_gradient)}}
  fabric.stream @g @b[0] -> @a[0] : !fabric.wavelets<f32, 4> {gradient}
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
  fabric.kernel @b : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {input_gradient, trained} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
  // expected-error @below {{is a gradient stream, but kernel @a is not trained}}
  fabric.stream @g @b[0] -> @a[0] : !fabric.wavelets<f32, 4> {gradient}
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {trained} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
  fabric.kernel @b : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {input_gradient, trained} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
  // expected-error @below {{kernel @b has 1 inputs to carry the gradient of, not port 1}}
  fabric.stream @g @b[1] -> @a[0] : !fabric.wavelets<f32, 4> {gradient}
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {trained} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
  fabric.kernel @b : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {input_gradient, trained} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
  // expected-error @below {{gradient of input carries 'tensor<4xf32>' but the stream is '!fabric.wavelets<f32, 2>'}}
  fabric.stream @g @b[0] -> @a[0] : !fabric.wavelets<f32, 2> {gradient}
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<4xf32>
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {trained} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
  // expected-error @below {{is a gradient stream, but its source @x is not a kernel}}
  fabric.stream @g @x[0] -> @a[0] : !fabric.wavelets<f32, 4> {gradient}
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{has a checkpoint but is not trained}}
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {checkpoint = #fabric<checkpoint save>} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{recomputes its input, but only a kernel that sends its input gradient can (the first kernel's input comes from the host once)}}
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {checkpoint = #fabric<checkpoint recompute>, trained} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{has recompute_cycles but does not recompute}}
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {checkpoint = #fabric<checkpoint save>, recompute_cycles = 10 : i64, trained} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

// CPGD: the training attribute's sample count and the kernels' lag.

// expected-error @below {{cpgd drains its pipeline after the last sample: give the number of samples (at least 1), got 0}}
fabric.program @p attributes {target = #weft.target<4x4>, training = #fabric.training<optimizer = cpgd, lr = 1.0 : f32, batch = 1>} {
}

// -----

// expected-error @below {{cpgd updates every layer after every sample (a batch of 1), got a batch of 2}}
fabric.program @p attributes {target = #weft.target<4x4>, training = #fabric.training<optimizer = cpgd, lr = 1.0 : f32, batch = 2, samples = 4>} {
}

// -----

// expected-error @below {{sgd takes no number of samples: it runs one sample at a time}}
fabric.program @p attributes {target = #weft.target<4x4>, training = #fabric.training<optimizer = sgd, lr = 1.0 : f32, batch = 1, samples = 4>} {
}

// -----

// expected-error @below {{mbgd pipelines whole mini-batches: its 5 samples are no multiple of the batch of 2}}
fabric.program @p attributes {target = #weft.target<4x4>, training = #fabric.training<optimizer = mbgd, lr = 1.0 : f32, batch = 2, samples = 5>} {
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>, training = #fabric.training<optimizer = cpgd, lr = 1.0 : f32, batch = 1, samples = 4>} {
  // expected-error @below {{has a lag but is not trained}}
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {lag = 1 : i64} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>, training = #fabric.training<optimizer = cpgd, lr = 1.0 : f32, batch = 1, samples = 4>} {
  // expected-error @below {{lag 0 is below 1 (the loss after it counts)}}
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {lag = 0 : i64, trained} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>, training = #fabric.training<optimizer = sgd, lr = 1.0 : f32, batch = 1>} {
  // expected-error @below {{has a lag, but only the kernels of a cpgd or mbgd program that knows its samples trail their forward passes}}
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {lag = 1 : i64, trained} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>, training = #fabric.training<optimizer = cpgd, lr = 1.0 : f32, batch = 1, samples = 4>} {
  // expected-error @below {{recomputes its input while it trails its forward, keeping the inputs of the samples in flight in a ring}}
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {checkpoint = #fabric<checkpoint recompute>, input_gradient, lag = 2 : i64, trained} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>, training = #fabric.training<optimizer = cpgd, lr = 1.0 : f32, batch = 1, samples = 32760>} {
  // expected-error @below {{trails by 8 samples; with 32760 samples a pipeline its PEs count past 32767}}
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {lag = 8 : i64, trained} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

// Sliced weights: only a dense layer's, and only when they do not change.

fabric.program @p attributes {target = #weft.target<4x4>} {
  // expected-error @below {{has sliced_weights, but only a dense layer (a fully connected one) stores its weight columns sliced}}
  fabric.kernel @a : (tensor<4xf32>) -> tensor<4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {sliced_weights} {
  ^bb0(%a: tensor<4xf32>):
    fabric.yield %a : tensor<4xf32>
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>, training = #fabric.training<optimizer = sgd, lr = 1.0 : f32, batch = 1>} {
  // expected-error @below {{has sliced_weights but is trained: its weights change, so their zeros are not known when they are packed}}
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 4, neurons = 4, weights = dense<0.25> : tensor<4x4xf32>> attributes {sliced_weights, trained} {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
}
