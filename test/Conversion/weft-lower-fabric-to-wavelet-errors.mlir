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

// -----

// The join buffers fc2's result, which arrives a whole fc2 after fc1's:
// the fork of fc1's result to fc2 and the join would deadlock.
#map = affine_map<(d0, d1) -> (d0, d1)>
fabric.program @main_graph attributes {target = #weft.target<6x4, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x  input  west rows 0 to 2 : tensor<1x2xf32>
  fabric.io @y  output  east rows 0 to 2 : tensor<1x2xf32>
  fabric.io @h  output  east rows 0 to 2 : tensor<1x2xf32>
  fabric.kernel @fc1 : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 2, neurons = 2, weights = dense<1.000000e+00> : tensor<2x2xf32>> at <0, 0, 2, 2> attributes {precision = #fabric<precision fp32>, predicted_cycles = 18 : i64, smear = 2 : i64} {
  ^bb0(%arg0: tensor<1x2xf32>):
    %cst = arith.constant dense<1.000000e+00> : tensor<2x2xf32>
    %0 = tensor.empty() : tensor<1x2xf32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %2 = linalg.matmul ins(%arg0, %cst : tensor<1x2xf32>, tensor<2x2xf32>) outs(%1 : tensor<1x2xf32>) -> tensor<1x2xf32>
    fabric.yield %2 : tensor<1x2xf32>
  }
  fabric.kernel @fc2 : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 2, neurons = 2, weights = dense<1.000000e+00> : tensor<2x2xf32>> at <2, 0, 2, 2> attributes {precision = #fabric<precision fp32>, predicted_cycles = 18 : i64, smear = 2 : i64} {
  ^bb0(%arg0: tensor<1x2xf32>):
    %cst = arith.constant dense<1.000000e+00> : tensor<2x2xf32>
    %0 = tensor.empty() : tensor<1x2xf32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %2 = linalg.matmul ins(%arg0, %cst : tensor<1x2xf32>, tensor<2x2xf32>) outs(%1 : tensor<1x2xf32>) -> tensor<1x2xf32>
    fabric.yield %2 : tensor<1x2xf32>
  }
  // expected-error @below {{buffers input 0, whose branch arrives later (predicted latency 36 cycles against 18): the fork feeding both branches would deadlock; buffer input 1}}
  fabric.kernel @res : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.join<op = add, buffered = 0, fifo = 2> at <4, 0, 1, 2> attributes {precision = #fabric<precision fp32>, predicted_cycles = 4 : i64} {
  ^bb0(%arg0: tensor<1x2xf32>, %arg1: tensor<1x2xf32>):
    %0 = tensor.empty() : tensor<1x2xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<1x2xf32>, tensor<1x2xf32>) outs(%0 : tensor<1x2xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.addf %in, %in_0 : f32
      linalg.yield %2 : f32
    } -> tensor<1x2xf32>
    fabric.yield %1 : tensor<1x2xf32>
  }
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 2>
  fabric.stream @fc1_fork @fc1[0] -> @fc2[0], @res[1], @h[0] : !fabric.wavelets<f32, 2>
  fabric.stream @fc2_to_res @fc2[0] -> @res[0] : !fabric.wavelets<f32, 2>
  fabric.stream @res_to_y @res[0] -> @y[0] : !fabric.wavelets<f32, 2>
}

// -----

// expected-error @below {{is a training program: lower it with --weft-lower-training-to-wavelet}}
fabric.program @train attributes {target = #weft.target<4x1>, training = #fabric.training<optimizer = sgd, lr = 5.000000e-01 : f32, batch = 1>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.kernel @relu : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Relu"> at <0, 0, 1, 1> {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
  fabric.stream @x_to_relu @x[0] -> @relu[0] : !fabric.wavelets<f32, 4>
  fabric.stream @relu_to_y @relu[0] -> @y[0] : !fabric.wavelets<f32, 4>
}
