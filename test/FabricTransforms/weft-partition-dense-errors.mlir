// A layer the fabric cannot hold gets an error saying what it needs; so do a
// bad precision, bad sparse-input options and a kernel that is not a dense
// layer.
// RUN: weft-opt %s --split-input-file --verify-diagnostics --weft-partition-dense
// RUN: not weft-opt %s --split-input-file --weft-partition-dense=precision=fp8 2>&1 | FileCheck %s --check-prefix=PREC

// RUN: not weft-opt %s --split-input-file --weft-partition-dense=sparse-activations=maybe 2>&1 | FileCheck %s --check-prefix=SPMODE
// RUN: not weft-opt %s --split-input-file '--weft-partition-dense=densities=fc1=2' 2>&1 | FileCheck %s --check-prefix=SPDENS
// RUN: not weft-opt %s --split-input-file '--weft-partition-dense=density=1.5' 2>&1 | FileCheck %s --check-prefix=SPRANGE
// RUN: not weft-opt %s --split-input-file --weft-partition-dense=objective=fast 2>&1 | FileCheck %s --check-prefix=OBJ
// RUN: not weft-opt %s --split-input-file --weft-partition-dense=precision=mixed 2>&1 | FileCheck %s --check-prefix=TRAINMIXED

// PREC: error: precision must be fp32 or mixed, not 'fp8'
// SPMODE: error: sparse-activations must be off, auto or on, not 'maybe'
// SPDENS: error: densities entry 'fc1=2' is not NAME=D or NAME=D:P0:...:Pn-1 with every D and P between 0 and 1
// SPRANGE: error: density must be between 0 and 1, not 1.500000e+00
// OBJ: error: objective must be auto, interval or latency, not 'fast'
// A trained layer in mixed precision is refused for what it is, not for its
// memory.
// TRAINMIXED: error: 'fabric.program' op does not fit: kernel 0 (dense 100 -> 100) cannot be trained: weft trains in fp32 only

fabric.program @too_big attributes {target = #weft.target<4x4>, weft.batch = 1 : i64} {
  // expected-error @below {{'fabric.kernel' op does not fit: a dense layer of 784 inputs and 256 neurons needs 802816 bytes of weights: at least}}
  fabric.kernel @fc : (tensor<1x784xf32>) -> tensor<1x256xf32> scheme #fabric.dense<fan_in = 784, neurons = 256, weights = dense<0.25> : tensor<784x256xf32>> {
  ^bb0(%x: tensor<1x784xf32>):
    %w = arith.constant dense<0.25> : tensor<784x256xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x256xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x256xf32>) -> tensor<1x256xf32>
    %y = linalg.matmul ins(%x, %w : tensor<1x784xf32>, tensor<784x256xf32>) outs(%acc : tensor<1x256xf32>) -> tensor<1x256xf32>
    fabric.yield %y : tensor<1x256xf32>
  }
}

// -----

#map = affine_map<(d0, d1) -> (d0, d1)>
fabric.program @not_dense attributes {target = #weft.target<4x4>, weft.batch = 1 : i64} {
  // expected-error @below {{'fabric.kernel' op has elementwise op 'Atan', which is no elementwise column op}}
  fabric.kernel @atan : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Atan"> {
  ^bb0(%x: tensor<1x4xf32>):
    %e = tensor.empty() : tensor<1x4xf32>
    %y = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<1x4xf32>) outs(%e : tensor<1x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %n = math.atan %in : f32
      linalg.yield %n : f32
    } -> tensor<1x4xf32>
    fabric.yield %y : tensor<1x4xf32>
  }
}

// -----

// Each layer fits the 4x16 fabric alone, but not side by side: the error
// says how many columns the chain needs and how much memory its weights do.
// expected-error @below {{'fabric.program' op does not fit: the network of 2 kernels needs at least 9 columns of at most 16 rows (each kernel's narrowest rectangle that fits the per-PE memory, side by side) and 1064960 bytes of weights (at least 23 PEs of 49152 bytes), but the 4x16 fabric has 4 columns}}
fabric.program @chain_too_wide attributes {target = #weft.target<4x16>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x784xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x256xf32>
  fabric.kernel @fc1 : (tensor<1x784xf32>) -> tensor<1x256xf32> scheme #fabric.dense<fan_in = 784, neurons = 256, weights = dense<0.25> : tensor<784x256xf32>> {
  ^bb0(%x: tensor<1x784xf32>):
    %w = arith.constant dense<0.25> : tensor<784x256xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x256xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x256xf32>) -> tensor<1x256xf32>
    %y = linalg.matmul ins(%x, %w : tensor<1x784xf32>, tensor<784x256xf32>) outs(%acc : tensor<1x256xf32>) -> tensor<1x256xf32>
    fabric.yield %y : tensor<1x256xf32>
  }
  fabric.kernel @fc2 : (tensor<1x256xf32>) -> tensor<1x256xf32> scheme #fabric.dense<fan_in = 256, neurons = 256, weights = dense<0.25> : tensor<256x256xf32>> {
  ^bb0(%x: tensor<1x256xf32>):
    %w = arith.constant dense<0.25> : tensor<256x256xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x256xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x256xf32>) -> tensor<1x256xf32>
    %y = linalg.matmul ins(%x, %w : tensor<1x256xf32>, tensor<256x256xf32>) outs(%acc : tensor<1x256xf32>) -> tensor<1x256xf32>
    fabric.yield %y : tensor<1x256xf32>
  }
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 784>
  fabric.stream @fc1_to_fc2 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 256>
  fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 256>
}

// -----

// Two streams leave one kernel (a fork is one stream with two
// destinations).
fabric.program @fork attributes {target = #weft.target<4x4>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x2xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x2xf32>
  fabric.kernel @k : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.elementwise<op = "Copy"> {
  ^bb0(%x: tensor<1x2xf32>):
    fabric.yield %x : tensor<1x2xf32>
  }
  fabric.stream @x_to_k @x[0] -> @k[0] : !fabric.wavelets<f32, 2>
  fabric.stream @k_to_y @k[0] -> @y[0] : !fabric.wavelets<f32, 2>
  // expected-error @below {{'fabric.stream' op is a second stream out of @k; a kernel's output is one stream (a fork is one stream with several destinations)}}
  fabric.stream @k_to_y2 @k[0] -> @y[0] : !fabric.wavelets<f32, 2>
}

// -----

// A scheme that does not fit the kernel's type, and one with the wrong
// number of constants.
fabric.program @scheme_size attributes {target = #weft.target<4x4>, weft.batch = 1 : i64} {
  // expected-error @below {{'fabric.kernel' op is a dense layer 4 -> 2 but takes 4 and gives 3 elements per sample}}
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x3xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<1.0> : tensor<4x2xf32>> {
  ^bb0(%x: tensor<1x4xf32>):
    %e = tensor.empty() : tensor<1x3xf32>
    fabric.yield %e : tensor<1x3xf32>
  }
}

// -----

fabric.program @scheme_params attributes {target = #weft.target<4x4>, weft.batch = 1 : i64} {
  // expected-error @below {{'fabric.kernel' op is LeakyRelu, which takes 1 constants, not 2}}
  fabric.kernel @lr : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "LeakyRelu", params = [0.1, 0.2]> {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
}

// -----

// A layer that fits one PE for inference (40 KB of weights) but not for
// training with mini-batches (its inputs, gradients and the gradient block
// beside the weights: docs/training.md).
// expected-error @below {{'fabric.program' op does not fit: kernel 0 (dense 100 -> 100): training it needs 84560 bytes per PE even on the largest rectangle the fabric gives it, 1 x 1 PEs (its inputs, gradients and the mini-batch's weight gradient beside the weights), more than the 49152 of a PE}}
fabric.program @too_big_to_train attributes {target = #weft.target<1x1>, training = #fabric.training<optimizer = mbgd, lr = 5.000000e-01 : f32, batch = 2>, weft.batch = 1 : i64} {
  fabric.kernel @fc : (tensor<1x100xf32>) -> tensor<1x100xf32> scheme #fabric.dense<fan_in = 100, neurons = 100, weights = dense<0.5> : tensor<100x100xf32>, weights_source = "w"> attributes {trained} {
  ^bb0(%x: tensor<1x100xf32>):
    %y = tensor.empty() : tensor<1x100xf32>
    fabric.yield %y : tensor<1x100xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x100xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x100xf32>
  fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 100>
  fabric.stream @fc_to_y @fc[0] -> @y[0] : !fabric.wavelets<f32, 100>
}
