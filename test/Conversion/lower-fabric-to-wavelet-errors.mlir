// RUN: weft-opt %s --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet --split-input-file --verify-diagnostics

fabric.program @unplaced attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x2xf32>
  // expected-error @below {{is not placed: run --weft-partition-dense first}}
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<1.0> : tensor<4x2xf32>> {
  ^bb0(%x: tensor<1x4xf32>):
    %w = arith.constant dense<1.0> : tensor<4x2xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x2xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<1x4xf32>, tensor<4x2xf32>) outs(%f : tensor<1x2xf32>) -> tensor<1x2xf32>
    fabric.yield %mm : tensor<1x2xf32>
  }
  fabric.stream @s0 @x[0] -> @fc[0] : !fabric.wavelets<f32, 4>
  fabric.stream @s1 @fc[0] -> @y[0] : !fabric.wavelets<f32, 2>
}

// -----

fabric.program @not_dense attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  // expected-error @below {{has elementwise op 'Atan', which is no elementwise column op}}
  fabric.kernel @neg : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Atan"> at #weft.rect<0, 0, 1, 1> {
  ^bb0(%x: tensor<1x4xf32>):
    %e = tensor.empty() : tensor<1x4xf32>
    %n = linalg.negf ins(%x : tensor<1x4xf32>) outs(%e : tensor<1x4xf32>) -> tensor<1x4xf32>
    fabric.yield %n : tensor<1x4xf32>
  }
  fabric.stream @s0 @x[0] -> @neg[0] : !fabric.wavelets<f32, 4>
  fabric.stream @s1 @neg[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

fabric.program @wide attributes {target = #weft.target<4x1>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x2xf32>
  // Two input chunks: chunk 1 would enter on row 1, which the fabric lacks.
  // expected-error @below {{rectangle does not fit the 4x1 fabric}}
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<1.0> : tensor<4x2xf32>> at #weft.rect<0, 0, 2, 1> attributes {smear = 2 : i64} {
  ^bb0(%x: tensor<1x4xf32>):
    %w = arith.constant dense<1.0> : tensor<4x2xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x2xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<1x4xf32>, tensor<4x2xf32>) outs(%f : tensor<1x2xf32>) -> tensor<1x2xf32>
    fabric.yield %mm : tensor<1x2xf32>
  }
  fabric.stream @s0 @x[0] -> @fc[0] : !fabric.wavelets<f32, 4>
  fabric.stream @s1 @fc[0] -> @y[0] : !fabric.wavelets<f32, 2>
}

// -----

fabric.program @smear_mismatch attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 2 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 2 : tensor<1x2xf32>
  // expected-error @below {{rectangle is 2 columns wide but the smear factor is 1; a dense layer uses one column per input chunk}}
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<1.0> : tensor<4x2xf32>> at #weft.rect<0, 0, 2, 2> {
  ^bb0(%x: tensor<1x4xf32>):
    %w = arith.constant dense<1.0> : tensor<4x2xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x2xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<1x4xf32>, tensor<4x2xf32>) outs(%f : tensor<1x2xf32>) -> tensor<1x2xf32>
    fabric.yield %mm : tensor<1x2xf32>
  }
  fabric.stream @s0 @x[0] -> @fc[0] : !fabric.wavelets<f32, 4>
  fabric.stream @s1 @fc[0] -> @y[0] : !fabric.wavelets<f32, 2>
}

// -----

fabric.program @empty_chunk attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 2 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 3 : tensor<1x4xf32>
  // expected-error @below {{3 rows leave a neuron chunk of 4 neurons empty}}
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 4, neurons = 4, weights = dense<1.0> : tensor<4x4xf32>> at #weft.rect<0, 0, 1, 3> {
  ^bb0(%x: tensor<1x4xf32>):
    %w = arith.constant dense<1.0> : tensor<4x4xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x4xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4xf32>) -> tensor<1x4xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<1x4xf32>, tensor<4x4xf32>) outs(%f : tensor<1x4xf32>) -> tensor<1x4xf32>
    fabric.yield %mm : tensor<1x4xf32>
  }
  fabric.stream @s0 @x[0] -> @fc[0] : !fabric.wavelets<f32, 4>
  fabric.stream @s1 @fc[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

fabric.program @no_output attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  // expected-error @below {{has no stream out}}
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<1.0> : tensor<4x2xf32>> at #weft.rect<0, 0, 1, 1> {
  ^bb0(%x: tensor<1x4xf32>):
    %w = arith.constant dense<1.0> : tensor<4x2xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x2xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<1x4xf32>, tensor<4x2xf32>) outs(%f : tensor<1x2xf32>) -> tensor<1x2xf32>
    fabric.yield %mm : tensor<1x2xf32>
  }
  fabric.stream @s0 @x[0] -> @fc[0] : !fabric.wavelets<f32, 4>
}

// -----

// Too few colors: the input rows, the column multicast, the partial sums
// and the output all meet in the second column.
// expected-error @below {{needs more colors than the fabric has: no color is left for stream}}
fabric.program @few_colors attributes {target = #weft.target<2x2, colors = 3>} {
  fabric.io @x input west rows 0 to 2 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 2 : tensor<1x2xf32>
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<1.0> : tensor<4x2xf32>> at #weft.rect<0, 0, 2, 2> attributes {smear = 2 : i64} {
  ^bb0(%x: tensor<1x4xf32>):
    %w = arith.constant dense<1.0> : tensor<4x2xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x2xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<1x4xf32>, tensor<4x2xf32>) outs(%f : tensor<1x2xf32>) -> tensor<1x2xf32>
    fabric.yield %mm : tensor<1x2xf32>
  }
  fabric.stream @s0 @x[0] -> @fc[0] : !fabric.wavelets<f32, 4>
  fabric.stream @s1 @fc[0] -> @y[0] : !fabric.wavelets<f32, 2>
}

// -----

fabric.program @mismatch attributes {target = #weft.target<6x4>} {
  fabric.io @x input west rows 0 to 2 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 2 : tensor<1x2xf32>
  fabric.kernel @a : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 4, neurons = 4, weights = dense<1.0> : tensor<4x4xf32>> at #weft.rect<0, 0, 2, 2> attributes {smear = 2 : i64} {
  ^bb0(%x: tensor<1x4xf32>):
    %w = arith.constant dense<1.0> : tensor<4x4xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x4xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4xf32>) -> tensor<1x4xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<1x4xf32>, tensor<4x4xf32>) outs(%f : tensor<1x4xf32>) -> tensor<1x4xf32>
    fabric.yield %mm : tensor<1x4xf32>
  }
  // The first layer sends 2 row chunks; this one takes 4 input chunks.
  // expected-error @below {{receives 4 elements in 4 row chunks, but @a has them in 2 rows}}
  fabric.kernel @b : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<1.0> : tensor<4x2xf32>> at #weft.rect<2, 0, 4, 2> attributes {smear = 4 : i64} {
  ^bb0(%x: tensor<1x4xf32>):
    %w = arith.constant dense<1.0> : tensor<4x2xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x2xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<1x4xf32>, tensor<4x2xf32>) outs(%f : tensor<1x2xf32>) -> tensor<1x2xf32>
    fabric.yield %mm : tensor<1x2xf32>
  }
  fabric.stream @s0 @x[0] -> @a[0] : !fabric.wavelets<f32, 4>
  fabric.stream @s1 @a[0] -> @b[0] : !fabric.wavelets<f32, 4>
  fabric.stream @s2 @b[0] -> @y[0] : !fabric.wavelets<f32, 2>
}
