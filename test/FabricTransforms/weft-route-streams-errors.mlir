// RUN: weft-opt %s --split-input-file --verify-diagnostics --weft-route-streams

// expected-error @below {{is already routed (it has fabric.switch or fabric.redistribute ops)}}
fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @s @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.route @s {
    fabric.switch (0, 0) from [west] to [east]
    fabric.switch (1, 0) from [west] to [east]
    fabric.switch (2, 0) from [west] to [east]
    fabric.switch (3, 0) from [west] to [east]
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 2 : tensor<1x6xf32>
  fabric.io @y output east rows 0 to 2 : tensor<1x4xf32>
  // expected-error @below {{is not placed: run --weft-partition-dense first}}
  fabric.kernel @fc : (tensor<1x6xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 6, neurons = 4, weights = dense<0.5> : tensor<6x4xf32>> {
  ^bb0(%x: tensor<1x6xf32>):
    %w = arith.constant dense<0.5> : tensor<6x4xf32>
    %e = tensor.empty() : tensor<1x4xf32>
    %z = arith.constant 0.0 : f32
    %acc = linalg.fill ins(%z : f32) outs(%e : tensor<1x4xf32>) -> tensor<1x4xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<1x6xf32>, tensor<6x4xf32>) outs(%acc : tensor<1x4xf32>) -> tensor<1x4xf32>
    fabric.yield %mm : tensor<1x4xf32>
  }
  fabric.stream @s0 @x[0] -> @fc[0] : !fabric.wavelets<f32, 6>
  fabric.stream @s1 @fc[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

// The first layer sends 2 row chunks, the second wants 3 column chunks: a
// general redistribution is missing (the partitioner lines the
// layouts up).
fabric.program @p attributes {target = #weft.target<6x3>} {
  fabric.io @x input west rows 0 to 2 : tensor<1x6xf32>
  fabric.io @y output east rows 0 to 2 : tensor<1x4xf32>
  fabric.kernel @fc1 : (tensor<1x6xf32>) -> tensor<1x6xf32> scheme #fabric.dense<fan_in = 6, neurons = 6, weights = dense<0.5> : tensor<6x6xf32>> at #weft.rect<0, 0, 2, 2>
      attributes {smear = 2 : i64} {
  ^bb0(%x: tensor<1x6xf32>):
    %w = arith.constant dense<0.5> : tensor<6x6xf32>
    %e = tensor.empty() : tensor<1x6xf32>
    %z = arith.constant 0.0 : f32
    %acc = linalg.fill ins(%z : f32) outs(%e : tensor<1x6xf32>) -> tensor<1x6xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<1x6xf32>, tensor<6x6xf32>) outs(%acc : tensor<1x6xf32>) -> tensor<1x6xf32>
    fabric.yield %mm : tensor<1x6xf32>
  }
  // expected-error @below {{receives 6 elements in 3 row chunks, but @fc1 has them in 2 rows; weft has no redistribution between different row chunkings}}
  fabric.kernel @fc2 : (tensor<1x6xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 6, neurons = 4, weights = dense<0.5> : tensor<6x4xf32>> at #weft.rect<2, 0, 3, 2>
      attributes {smear = 3 : i64} {
  ^bb0(%x: tensor<1x6xf32>):
    %w = arith.constant dense<0.5> : tensor<6x4xf32>
    %e = tensor.empty() : tensor<1x4xf32>
    %z = arith.constant 0.0 : f32
    %acc = linalg.fill ins(%z : f32) outs(%e : tensor<1x4xf32>) -> tensor<1x4xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<1x6xf32>, tensor<6x4xf32>) outs(%acc : tensor<1x4xf32>) -> tensor<1x4xf32>
    fabric.yield %mm : tensor<1x4xf32>
  }
  fabric.stream @s0 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 6>
  fabric.stream @s1 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 6>
  fabric.stream @s2 @fc2[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

fabric.program @mlp attributes {target = #weft.target<6x2>, training = #fabric.training<optimizer = sgd, lr = 5.000000e-01 : f32, batch = 1>} {
  fabric.kernel @fc1 : (tensor<1x4xf32>) -> tensor<1x3xf32> scheme #fabric.dense<fan_in = 4, neurons = 3, weights = dense<0.25> : tensor<4x3xf32>> at <0, 0, 2, 2> attributes {smear = 2 : i64, trained} {
  ^bb0(%x: tensor<1x4xf32>):
    %y = tensor.empty() : tensor<1x3xf32>
    fabric.yield %y : tensor<1x3xf32>
  }
  fabric.kernel @relu : (tensor<1x3xf32>) -> tensor<1x3xf32> scheme #fabric.elementwise<op = "Relu"> at <2, 0, 1, 2> attributes {input_gradient, trained} {
  ^bb0(%x: tensor<1x3xf32>):
    fabric.yield %x : tensor<1x3xf32>
  }
  fabric.kernel @fc2 : (tensor<1x3xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 3, neurons = 2, weights = dense<0.5> : tensor<3x2xf32>> at <3, 0, 2, 1> attributes {input_gradient, smear = 2 : i64, trained} {
  ^bb0(%x: tensor<1x3xf32>):
    %y = tensor.empty() : tensor<1x2xf32>
    fabric.yield %y : tensor<1x2xf32>
  }
  fabric.io @x input west rows 0 to 2 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x2xf32>
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 4>
  fabric.stream @fc1_to_relu @fc1[0] -> @relu[0] : !fabric.wavelets<f32, 3>
  fabric.stream @relu_to_fc2 @relu[0] -> @fc2[0] : !fabric.wavelets<f32, 3>
  fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 2>
  // expected-error @below {{is a gradient stream, which goes from one kernel to one kernel}}
  fabric.stream @fc2_grad @fc2[0] -> @relu[0], @fc1[0] : !fabric.wavelets<f32, 3> {gradient}
}
