// RUN: weft-opt %s --verify-roundtrip | FileCheck %s
// RUN: weft-opt %s --mlir-print-op-generic | weft-opt | FileCheck %s

// A two-layer MLP placed on an 8x4 fabric: host input, two kernels, a
// redistribution between them, routed and colored streams, and training
// checkpoint markers.

// CHECK-LABEL: fabric.program @mlp
// CHECK-SAME: target = #weft.target<8x4, mem = 49152, colors = 24, rq = 2, cq = 8>
fabric.program @mlp attributes {target = #weft.target<8x4>} {
  // CHECK: fabric.io @x input west rows 0 to 4 : tensor<1x64xf32>
  fabric.io @x input west rows 0 to 4 : tensor<1x64xf32>
  // CHECK: fabric.io @y output east rows 0 to 1 : tensor<1x10xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x10xf32>

  // CHECK: fabric.kernel @fc1 : (tensor<1x64xf32>) -> tensor<1x32xf32> scheme #fabric.dense<fan_in = 64, neurons = 32, weights = dense<1.000000e+00> : tensor<64x32xf32>, weights_source = "w1", weights_transposed = true> at <0, 0, 4, 4> attributes {smear = 2 : i64, tile = array<i64: 16>}
  fabric.kernel @fc1 : (tensor<1x64xf32>) -> tensor<1x32xf32> scheme #fabric.dense<fan_in = 64, neurons = 32, weights = dense<1.0> : tensor<64x32xf32>, weights_source = "w1", weights_transposed = true> at #weft.rect<0, 0, 4, 4>
      attributes {smear = 2 : i64, tile = array<i64: 16>} {
  ^bb0(%in: tensor<1x64xf32>):
    // CHECK: linalg.matmul
    %w = arith.constant dense<1.0> : tensor<64x32xf32>
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<1x32xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x32xf32>) -> tensor<1x32xf32>
    %mm = linalg.matmul ins(%in, %w : tensor<1x64xf32>, tensor<64x32xf32>)
                        outs(%init : tensor<1x32xf32>) -> tensor<1x32xf32>
    // CHECK: fabric.yield %{{.*}} : tensor<1x32xf32>
    fabric.yield %mm : tensor<1x32xf32>
  }
  // An unplaced kernel has no rectangle and the default smear factor.
  // CHECK: fabric.kernel @fc2 : (tensor<1x32xf32>) -> tensor<1x10xf32>
  fabric.kernel @fc2 : (tensor<1x32xf32>) -> tensor<1x10xf32> scheme #fabric.elementwise<op = "Copy"> {
  ^bb0(%in: tensor<1x32xf32>):
    %r = tensor.extract_slice %in[0, 0] [1, 10] [1, 1] : tensor<1x32xf32> to tensor<1x10xf32>
    fabric.yield %r : tensor<1x10xf32>
  }

  // CHECK: fabric.redistribute @r1 : !fabric.wavelets<f32, 32> at <4, 0, 1, 4> from <row_chunks, 4> to <col_chunks, 2>
  fabric.redistribute @r1 : !fabric.wavelets<f32, 32> at #weft.rect<4, 0, 1, 4>
      from #fabric.layout<row_chunks, 4> to #fabric.layout<col_chunks, 2>

  // CHECK: fabric.stream @s0 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 64> {color = #fabric.color<1>}
  fabric.stream @s0 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 64> {color = #fabric.color<1>}
  fabric.stream @s1 @fc1[0] -> @r1[0] : !fabric.wavelets<f32, 32>
  fabric.stream @s2 @r1[0] -> @fc2[0] : !fabric.wavelets<f32, 32>
  fabric.stream @s3 @fc2[0] -> @y[0] : !fabric.wavelets<f32, 10>

  // CHECK: fabric.route @s0 color <1> {
  // CHECK-NEXT: fabric.switch (0, 0) from [west] to [east, ramp]
  // CHECK-NEXT: fabric.switch (1, 0) from [west] to [ramp]
  fabric.route @s0 color #fabric.color<1> {
    fabric.switch (0, 0) from [west] to [east, ramp]
    fabric.switch (1, 0) from [west] to [ramp]
  }
  // A switch that cycles through positions: a segment of every 10
  // wavelets to the ramp, the rest east.
  // CHECK: fabric.route @s2 color <2> {
  // CHECK-NEXT: fabric.switch (0, 1) from [west] to [east]
  // CHECK-NEXT: fabric.switch (1, 1) from [west] to [east, ramp] positions [from [west] to [ramp] x 4, from [west] to [east] x 6]
  // CHECK-NEXT: fabric.switch (2, 1) from [west] to [ramp]
  fabric.route @s2 color #fabric.color<2> {
    fabric.switch (0, 1) from [west] to [east]
    fabric.switch (1, 1) from [west] to [east, ramp] positions [from [west] to [ramp] x 4, from [west] to [east] x 6]
    fabric.switch (2, 1) from [west] to [ramp]
  }
  // A logical route: not routed yet.
  // CHECK: fabric.route @s1 {
  fabric.route @s1 {
  }
  // An internal channel of a kernel (color 1 is free at PEs (2, 0) and
  // (3, 0)).
  // CHECK: fabric.route @fc1 channel "psum_even" color <1> {
  // CHECK-NEXT: fabric.switch (2, 0) from [ramp] to [east]
  // CHECK-NEXT: fabric.switch (3, 0) from [west] to [ramp]
  fabric.route @fc1 channel "psum_even" color #fabric.color<1> {
    fabric.switch (2, 0) from [ramp] to [east]
    fabric.switch (3, 0) from [west] to [ramp]
  }
}

// -----

// A fork (one stream, two destinations) and a join of two streams.
// CHECK-LABEL: fabric.program @dag
// CHECK: fabric.kernel @res : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.join<op = add, buffered = 1, fifo = 2>
// CHECK: fabric.stream @x_fork @x[0] -> @neg[0], @res[1] : !fabric.wavelets<f32, 4>
fabric.program @dag attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.kernel @neg : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Neg"> {
  ^bb0(%a: tensor<1x4xf32>):
    fabric.yield %a : tensor<1x4xf32>
  }
  fabric.kernel @res : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.join<op = add, buffered = 1, fifo = 2> {
  ^bb0(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>):
    fabric.yield %a : tensor<1x4xf32>
  }
  fabric.stream @x_fork @x[0] -> @neg[0], @res[1] : !fabric.wavelets<f32, 4>
  fabric.stream @neg_to_res @neg[0] -> @res[0] : !fabric.wavelets<f32, 4>
  fabric.stream @res_to_y @res[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

// A join of feature maps buffering pixels, with the ReLU after it fused.
// CHECK-LABEL: fabric.program @map_join
// CHECK: scheme #fabric.join<op = add, relu = true, buffered = 1, fifo_pixels = 24>
fabric.program @map_join attributes {target = #weft.target<4x4>} {
  fabric.kernel @res : (tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> scheme #fabric.join<op = add, relu = true, buffered = 1, fifo_pixels = 24> {
  ^bb0(%a: tensor<1x2x6x6xf32>, %b: tensor<1x2x6x6xf32>):
    fabric.yield %a : tensor<1x2x6x6xf32>
  }
}

// -----

// A depthwise convolution with a channel multiplier of 2: groups print
// when not 1, the weights are OIHW with I = in_channels / groups.
// CHECK-LABEL: fabric.program @depthwise
// CHECK: scheme #fabric.conv<in_channels = 4, out_channels = 8, in_height = 4, in_width = 4, kernel = [3, 3], strides = [2, 2], dilations = [1, 1], pads = [1, 1, 1, 1], groups = 4, weights = dense<1.000000e+00> : tensor<8x1x3x3xf32>>
fabric.program @depthwise attributes {target = #weft.target<4x4>} {
  fabric.kernel @dw : (tensor<1x4x4x4xf32>) -> tensor<1x8x2x2xf32> scheme #fabric.conv<in_channels = 4, out_channels = 8, in_height = 4, in_width = 4, kernel = [3, 3], strides = [2, 2], dilations = [1, 1], pads = [1, 1, 1, 1], groups = 4, weights = dense<1.0> : tensor<8x1x3x3xf32>> {
  ^bb0(%a: tensor<1x4x4x4xf32>):
    %e = tensor.empty() : tensor<1x8x2x2xf32>
    fabric.yield %e : tensor<1x8x2x2xf32>
  }
}

// -----

// A convolution with a fused activation (HardSigmoid): the epilogue's
// nodes print after the weights, in #fabric.expression's encoding.
// CHECK-LABEL: fabric.program @epilogue
// CHECK: scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 1, in_width = 1, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], weights = dense<1.000000e+00> : tensor<2x2x1x1xf32>, epilogue = [#fabric.node<kind = constant, value = 2.000000e-01 : f32>, #fabric.node<kind = mul, b = 1>, #fabric.node<kind = constant, value = 5.000000e-01 : f32>, #fabric.node<kind = add, a = 2, b = 3>, #fabric.node<kind = constant, value = 1.000000e+00 : f32>, #fabric.node<kind = min, a = 4, b = 5>, #fabric.node<kind = constant, value = 0.000000e+00 : f32>, #fabric.node<kind = max, a = 6, b = 7>]>
fabric.program @epilogue attributes {target = #weft.target<4x4>} {
  fabric.kernel @se : (tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32> scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 1, in_width = 1, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], weights = dense<1.0> : tensor<2x2x1x1xf32>, epilogue = [#fabric.node<kind = constant, value = 0.2 : f32>, #fabric.node<kind = mul, a = 0, b = 1>, #fabric.node<kind = constant, value = 0.5 : f32>, #fabric.node<kind = add, a = 2, b = 3>, #fabric.node<kind = constant, value = 1.0 : f32>, #fabric.node<kind = min, a = 4, b = 5>, #fabric.node<kind = constant, value = 0.0 : f32>, #fabric.node<kind = max, a = 6, b = 7>]> {
  ^bb0(%a: tensor<1x2x1x1xf32>):
    fabric.yield %a : tensor<1x2x1x1xf32>
  }
}


// A training program's gradient stream: from the gradient of @tanh's input
// to the gradient of @relu's output, flowing west.

// CHECK-LABEL: fabric.program @grad
fabric.program @grad attributes {target = #weft.target<4x4>} {
  fabric.kernel @relu : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {trained} {
  ^bb0(%a: tensor<1x4xf32>):
    fabric.yield %a : tensor<1x4xf32>
  }
  fabric.kernel @tanh : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Tanh"> attributes {input_gradient, trained} {
  ^bb0(%a: tensor<1x4xf32>):
    fabric.yield %a : tensor<1x4xf32>
  }
  // CHECK: fabric.stream @tanh_grad @tanh[0] -> @relu[0] : !fabric.wavelets<f32, 4> {gradient}
  fabric.stream @tanh_grad @tanh[0] -> @relu[0] : !fabric.wavelets<f32, 4> {gradient}
}

// A CPGD program: the sample count on the training attribute, each trained
// kernel's lag.

// CHECK-LABEL: fabric.program @cpgd
// CHECK-SAME: training = #fabric.training<optimizer = cpgd, lr = 5.000000e-02 : f32, batch = 1, samples = 16>
// CHECK: fabric.kernel @relu {{.*}} attributes {lag = 2 : i64, trained}
fabric.program @cpgd attributes {target = #weft.target<4x4>, training = #fabric.training<optimizer = cpgd, lr = 0.05 : f32, batch = 1, samples = 16>} {
  fabric.kernel @relu : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Relu"> attributes {lag = 2 : i64, trained} {
  ^bb0(%a: tensor<1x4xf32>):
    fabric.yield %a : tensor<1x4xf32>
  }
}
