// What weft cannot train is refused naming the kernel (the ONNX node) and
// what it computes; bad options name the option.
// RUN: weft-opt %s --split-input-file --verify-diagnostics --weft-prepare-training
// RUN: not weft-opt %s --split-input-file '--weft-prepare-training=optimizer=adam' 2>&1 | FileCheck %s --check-prefix=ADAM
// RUN: not weft-opt %s --split-input-file '--weft-prepare-training=optimizer=cpgd' 2>&1 | FileCheck %s --check-prefix=CPGD
// RUN: not weft-opt %s --split-input-file '--weft-prepare-training=optimizer=cpgd batch=2 samples=4' 2>&1 | FileCheck %s --check-prefix=CPGDB
// RUN: not weft-opt %s --split-input-file '--weft-prepare-training=optimizer=sgd samples=4' 2>&1 | FileCheck %s --check-prefix=SAMPLES
// RUN: not weft-opt %s --split-input-file '--weft-prepare-training=optimizer=cpgd samples=32767' 2>&1 | FileCheck %s --check-prefix=ROUNDS
// RUN: not weft-opt %s --split-input-file '--weft-prepare-training=batch=2' 2>&1 | FileCheck %s --check-prefix=SGDB
// RUN: not weft-opt %s --split-input-file '--weft-prepare-training=optimizer=mbgd batch=0' 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not weft-opt %s --split-input-file '--weft-prepare-training=lr=0' 2>&1 | FileCheck %s --check-prefix=LR

// ADAM: error: 'fabric.program' op cannot train with optimizer 'adam': weft trains with sgd, mbgd or cpgd
// CPGD: error: 'fabric.program' op cpgd drains its pipeline after the last sample: give the number of samples (at least 1), got 0
// CPGDB: error: 'fabric.program' op cpgd updates every layer after every sample (a batch of 1), got a batch of 2
// SAMPLES: error: 'fabric.program' op sgd takes no number of samples: it runs one sample at a time
// ROUNDS: error: node 'fc_rounds' (dense 8 -> 4) trails its forward by 1 samples under cpgd; with 32767 samples a pipeline its PEs count past 32767 rounds: train on fewer samples a run
// SGDB: error: 'fabric.program' op sgd updates after every sample (a batch of 1), got a batch of 2; mbgd averages over mini-batches
// BATCH: error: 'fabric.program' op the mini-batch must have at least one sample, got 0
// LR: error: 'fabric.program' op the learning rate must be positive and finite, got 0

fabric.program @probabilities attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  fabric.kernel @fc : (tensor<1x8xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 8, neurons = 4, weights = dense<0.25> : tensor<8x4xf32>, weights_source = "fc_w"> {
  ^bb0(%x: tensor<1x8xf32>):
    %y = tensor.empty() : tensor<1x4xf32>
    fabric.yield %y : tensor<1x4xf32>
  }
  // expected-error @below {{node 'probs' (Softmax) computes probabilities: the model's output must be the logits (weft trains with the softmax cross-entropy of the logits, on the fabric)}}
  fabric.kernel @probs : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.softmax<> {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x8xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 8>
  fabric.stream @fc_to_probs @fc[0] -> @probs[0] : !fabric.wavelets<f32, 4>
  fabric.stream @probs_to_y @probs[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

fabric.program @sigmoid attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  fabric.kernel @fc : (tensor<1x8xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 8, neurons = 4, weights = dense<0.25> : tensor<8x4xf32>, weights_source = "fc_w"> {
  ^bb0(%x: tensor<1x8xf32>):
    %y = tensor.empty() : tensor<1x4xf32>
    fabric.yield %y : tensor<1x4xf32>
  }
  // expected-error @below {{node 'sig' (Sigmoid) cannot be trained yet: weft trains dense layers (Gemm, MatMul), convolutions and Relu and Tanh between them}}
  fabric.kernel @sig : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Sigmoid"> {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x8xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 8>
  fabric.stream @fc_to_sig @fc[0] -> @sig[0] : !fabric.wavelets<f32, 4>
  fabric.stream @sig_to_y @sig[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

fabric.program @synthetic attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  // expected-error @below {{node 't' (dense 8 -> 4) is a matrix weft made (a reshuffle of the sample), not the model's: it has no weights to train}}
  fabric.kernel @t : (tensor<1x8xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 8, neurons = 4, synthetic = true, weights = dense<0.0> : tensor<8x4xf32>> {
  ^bb0(%x: tensor<1x8xf32>):
    %y = tensor.empty() : tensor<1x4xf32>
    fabric.yield %y : tensor<1x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x8xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @x_to_t @x[0] -> @t[0] : !fabric.wavelets<f32, 8>
  fabric.stream @t_to_y @t[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

fabric.program @fork attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  // expected-error @below {{node 'fc' (dense 8 -> 4) feeds 1 kernels and 1 host outputs; weft trains a chain (with residual blocks: a fork into a block and its Add) whose last kernel alone feeds the output}}
  fabric.kernel @fc : (tensor<1x8xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 8, neurons = 4, weights = dense<0.25> : tensor<8x4xf32>, weights_source = "fc_w"> {
  ^bb0(%x: tensor<1x8xf32>):
    %y = tensor.empty() : tensor<1x4xf32>
    fabric.yield %y : tensor<1x4xf32>
  }
  fabric.kernel @relu : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Relu"> {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x8xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 8>
  fabric.stream @fc_out @fc[0] -> @relu[0], @y[0] : !fabric.wavelets<f32, 4>
  fabric.stream @relu_out @relu[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

// expected-error @below {{'fabric.program' op has no dense layer: nothing to train}}
fabric.program @no_dense attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  fabric.kernel @relu : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Relu"> {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @x_to_relu @x[0] -> @relu[0] : !fabric.wavelets<f32, 4>
  fabric.stream @relu_to_y @relu[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

// expected-error @below {{'fabric.program' op is already a training program}}
fabric.program @twice attributes {target = #weft.target<16x16>, training = #fabric.training<optimizer = sgd, lr = 1.0 : f32, batch = 1>, weft.batch = 1 : i64} {
}

// -----

// expected-error @below {{sgd updates after every sample (a batch of 1), got a batch of 3}}
fabric.program @bad_attr attributes {target = #weft.target<16x16>, training = #fabric.training<optimizer = sgd, lr = 1.0 : f32, batch = 3>} {
}

// -----

fabric.program @no_source attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  // expected-error @below {{node 'fc' (dense 8 -> 4): its weights are no initializer of the model (computed, shared or the sum of several), so the trained values have nowhere to go}}
  fabric.kernel @fc : (tensor<1x8xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 8, neurons = 4, weights = dense<0.25> : tensor<8x4xf32>> {
  ^bb0(%x: tensor<1x8xf32>):
    %y = tensor.empty() : tensor<1x4xf32>
    fabric.yield %y : tensor<1x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x8xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 8>
  fabric.stream @fc_to_y @fc[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

// A chain weft trains (no diagnostic under the defaults); under cpgd with
// 32767 samples its one dense kernel would count its rounds past 32767.
fabric.program @rounds attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  fabric.kernel @fc_rounds : (tensor<1x8xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 8, neurons = 4, weights = dense<0.25> : tensor<8x4xf32>, weights_source = "fc_w"> {
  ^bb0(%x: tensor<1x8xf32>):
    %y = tensor.empty() : tensor<1x4xf32>
    fabric.yield %y : tensor<1x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x8xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @x_to_fc @x[0] -> @fc_rounds[0] : !fabric.wavelets<f32, 8>
  fabric.stream @fc_to_y @fc_rounds[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

// Grouped (and depthwise) convolutions do not train yet.
fabric.program @grouped attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  fabric.kernel @c1 : (tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> scheme #fabric.conv<in_channels = 1, out_channels = 2, in_height = 4, in_width = 4, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], relu = true, weights = dense<0.5> : tensor<2x1x1x1xf32>, weights_source = "c1_w"> {
  ^bb0(%x: tensor<1x1x4x4xf32>):
    %y = tensor.empty() : tensor<1x2x4x4xf32>
    fabric.yield %y : tensor<1x2x4x4xf32>
  }
  // expected-error @below {{node 'c2' (depthwise conv 2x4x4 -> 2x2x2, 3x3) cannot be trained yet: weft trains convolutions of one group}}
  fabric.kernel @c2 : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 4, in_width = 4, kernel = [3, 3], strides = [2, 2], dilations = [1, 1], pads = [1, 1, 1, 1], groups = 2, weights = dense<0.5> : tensor<2x1x3x3xf32>, weights_source = "c2_w"> {
  ^bb0(%x: tensor<1x2x4x4xf32>):
    %y = tensor.empty() : tensor<1x2x2x2xf32>
    fabric.yield %y : tensor<1x2x2x2xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x1x4x4xf32> {pixels = 16 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x2x2x2xf32> {pixels = 4 : i64}
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 16> {pixels = 16 : i64}
  fabric.stream @c1_to_c2 @c1[0] -> @c2[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
  fabric.stream @c2_to_y @c2[0] -> @y[0] : !fabric.wavelets<f32, 8> {pixels = 4 : i64}
}

// -----

// A convolution's weights must be an initializer of the model to be
// written back.
fabric.program @computed attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  // expected-error @below {{node 'c1' (conv 1x4x4 -> 2x4x4, 1x1): its weights are no initializer of the model (computed, shared or folded with a batch norm), so the trained values have nowhere to go}}
  fabric.kernel @c1 : (tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> scheme #fabric.conv<in_channels = 1, out_channels = 2, in_height = 4, in_width = 4, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], weights = dense<0.5> : tensor<2x1x1x1xf32>> {
  ^bb0(%x: tensor<1x1x4x4xf32>):
    %y = tensor.empty() : tensor<1x2x4x4xf32>
    fabric.yield %y : tensor<1x2x4x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x1x4x4xf32> {pixels = 16 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x2x4x4xf32> {pixels = 16 : i64}
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 16> {pixels = 16 : i64}
  fabric.stream @c1_to_y @c1[0] -> @y[0] : !fabric.wavelets<f32, 32> {pixels = 16 : i64}
}

// -----

// A trained max pool's windows must tile its input.
fabric.program @overlapping attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  fabric.kernel @c1 : (tensor<1x1x5x5xf32>) -> tensor<1x2x5x5xf32> scheme #fabric.conv<in_channels = 1, out_channels = 2, in_height = 5, in_width = 5, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], relu = true, weights = dense<0.5> : tensor<2x1x1x1xf32>, weights_source = "c1_w"> {
  ^bb0(%x: tensor<1x1x5x5xf32>):
    %y = tensor.empty() : tensor<1x2x5x5xf32>
    fabric.yield %y : tensor<1x2x5x5xf32>
  }
  // expected-error @below {{node 'p' (maxpool 2x5x5 -> 2x2x2, 3x3) cannot be trained yet: a trained max pool's windows must tile its 5 x 5 input exactly (window = stride, no pads nor dilations), not 3 x 3 windows of stride 2 x 2}}
  fabric.kernel @p : (tensor<1x2x5x5xf32>) -> tensor<1x2x2x2xf32> scheme #fabric.pool<kind = max, channels = 2, in_height = 5, in_width = 5, kernel = [3, 3], strides = [2, 2], dilations = [1, 1], pads = [0, 0, 0, 0]> {
  ^bb0(%x: tensor<1x2x5x5xf32>):
    %y = tensor.empty() : tensor<1x2x2x2xf32>
    fabric.yield %y : tensor<1x2x2x2xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x1x5x5xf32> {pixels = 25 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x2x2x2xf32> {pixels = 4 : i64}
  fabric.stream @x_to_c1 @x[0] -> @c1[0] : !fabric.wavelets<f32, 25> {pixels = 25 : i64}
  fabric.stream @c1_to_p @c1[0] -> @p[0] : !fabric.wavelets<f32, 50> {pixels = 25 : i64}
  fabric.stream @p_to_y @p[0] -> @y[0] : !fabric.wavelets<f32, 8> {pixels = 4 : i64}
}

// -----

// A residual block's two gradients are added only by a convolution yet.
fabric.program @dense_fork attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  // expected-error @below {{node 'fc1' (dense 8 -> 4) feeds a residual block: only a convolution or a max pool adds the gradients of the block's two paths yet}}
  fabric.kernel @fc1 : (tensor<1x8xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 8, neurons = 4, weights = dense<0.25> : tensor<8x4xf32>, weights_source = "w1"> {
  ^bb0(%x: tensor<1x8xf32>):
    %y = tensor.empty() : tensor<1x4xf32>
    fabric.yield %y : tensor<1x4xf32>
  }
  fabric.kernel @fc2 : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 4, neurons = 4, weights = dense<0.25> : tensor<4x4xf32>, weights_source = "w2"> {
  ^bb0(%x: tensor<1x4xf32>):
    %y = tensor.empty() : tensor<1x4xf32>
    fabric.yield %y : tensor<1x4xf32>
  }
  fabric.kernel @j : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.join<op = add> {
  ^bb0(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>):
    fabric.yield %a : tensor<1x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x8xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 8>
  fabric.stream @fc1_fork @fc1[0] -> @fc2[0], @j[1] : !fabric.wavelets<f32, 4>
  fabric.stream @fc2_to_j @fc2[0] -> @j[0] : !fabric.wavelets<f32, 4>
  fabric.stream @j_to_y @j[0] -> @y[0] : !fabric.wavelets<f32, 4>
}
