// RUN: weft-opt %s --split-input-file --verify-diagnostics --weft-lower-training-to-wavelet

// expected-error @below {{'fabric.program' op is no training program: run --weft-prepare-training first}}
fabric.program @inference attributes {target = #weft.target<2x1>, weft.batch = 1 : i64} {
}

// -----

// The loss kernel --weft-prepare-training adds must follow the logits.
// expected-error @below {{'fabric.program' op has no loss kernel after its logits: run --weft-prepare-training}}
fabric.program @no_loss attributes {target = #weft.target<2x1>, training = #fabric.training<optimizer = sgd, lr = 5.000000e-01 : f32, batch = 1>, weft.batch = 1 : i64} {
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<0.5> : tensor<4x2xf32>> at <0, 0, 1, 1> attributes {precision = #fabric<precision fp32>, predicted_cycles = 30 : i64, trained} {
  ^bb0(%x: tensor<1x4xf32>):
    %y = tensor.empty() : tensor<1x2xf32>
    fabric.yield %y : tensor<1x2xf32>
  }
  fabric.kernel @softmax : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.softmax<> at <1, 0, 1, 1> {
  ^bb0(%x: tensor<1x2xf32>):
    fabric.yield %x : tensor<1x2xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x2xf32>
  fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 4>
  fabric.stream @fc_to_softmax @fc[0] -> @softmax[0] : !fabric.wavelets<f32, 2>
  fabric.stream @softmax_to_y @softmax[0] -> @y[0] : !fabric.wavelets<f32, 2>
}

// -----

// Training keeps the inputs, gradients and (MBGD) a gradient block beside
// the weights: a layer that fits for inference may not fit for training.
fabric.program @too_big attributes {target = #weft.target<2x1>, training = #fabric.training<optimizer = mbgd, lr = 5.000000e-01 : f32, batch = 2>, weft.batch = 1 : i64} {
  // expected-error @below {{'fabric.kernel' op needs 84160 bytes of memory per PE for training on its 1 x 1 PEs, more than the 49152 of the target: give it more PEs}}
  fabric.kernel @fc : (tensor<1x100xf32>) -> tensor<1x100xf32> scheme #fabric.dense<fan_in = 100, neurons = 100, weights = dense<0.5> : tensor<100x100xf32>> at <0, 0, 1, 1> attributes {precision = #fabric<precision fp32>, predicted_cycles = 30 : i64, trained} {
  ^bb0(%x: tensor<1x100xf32>):
    %y = tensor.empty() : tensor<1x100xf32>
    fabric.yield %y : tensor<1x100xf32>
  }
  fabric.kernel @loss : (tensor<1x100xf32>) -> tensor<1x100xf32> scheme #fabric.softmax<loss = true> at <1, 0, 1, 1> attributes {input_gradient} {
  ^bb0(%x: tensor<1x100xf32>):
    fabric.yield %x : tensor<1x100xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x100xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x100xf32>
  fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 100>
  fabric.stream @fc_to_loss @fc[0] -> @loss[0] : !fabric.wavelets<f32, 100>
  fabric.stream @loss_to_y @loss[0] -> @y[0] : !fabric.wavelets<f32, 100>
}

// -----

// Only a dense kernel can recompute the input of the dense kernel after it.
fabric.program @after_relu attributes {target = #weft.target<6x2>, training = #fabric.training<optimizer = sgd, lr = 5.000000e-01 : f32, batch = 1>, weft.batch = 1 : i64} {
  fabric.kernel @fc1 : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 4, neurons = 4, weights = dense<0.25> : tensor<4x4xf32>> at <0, 0, 2, 2> attributes {precision = #fabric<precision fp32>, predicted_cycles = 40 : i64, smear = 2 : i64, trained} {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
  fabric.kernel @relu : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Relu"> at <2, 0, 1, 2> attributes {input_gradient, trained} {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
  // expected-error @below {{'fabric.kernel' op recomputes its input, but the kernel before it is no trained dense kernel to recompute it}}
  fabric.kernel @fc2 : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<0.5> : tensor<4x2xf32>> at <3, 0, 2, 1> attributes {checkpoint = #fabric<checkpoint recompute>, input_gradient, precision = #fabric<precision fp32>, predicted_cycles = 30 : i64, smear = 2 : i64, trained} {
  ^bb0(%x: tensor<1x4xf32>):
    %y = tensor.empty() : tensor<1x2xf32>
    fabric.yield %y : tensor<1x2xf32>
  }
  fabric.kernel @loss : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.softmax<loss = true> at <5, 0, 1, 1> attributes {input_gradient} {
  ^bb0(%x: tensor<1x2xf32>):
    fabric.yield %x : tensor<1x2xf32>
  }
  fabric.io @x input west rows 0 to 2 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x2xf32>
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 4>
  fabric.stream @fc1_to_relu @fc1[0] -> @relu[0] : !fabric.wavelets<f32, 4>
  fabric.stream @relu_to_fc2 @relu[0] -> @fc2[0] : !fabric.wavelets<f32, 4>
  fabric.stream @fc2_to_loss @fc2[0] -> @loss[0] : !fabric.wavelets<f32, 2>
  fabric.stream @loss_to_y @loss[0] -> @y[0] : !fabric.wavelets<f32, 2>
}

// -----

// The routes and colors come from --weft-route-streams and
// --weft-allocate-colors.
fabric.program @unrouted attributes {target = #weft.target<2x1>, training = #fabric.training<optimizer = sgd, lr = 5.000000e-01 : f32, batch = 1>, weft.batch = 1 : i64} {
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<0.5> : tensor<4x2xf32>> at <0, 0, 1, 1> attributes {precision = #fabric<precision fp32>, predicted_cycles = 30 : i64, trained} {
  ^bb0(%x: tensor<1x4xf32>):
    %y = tensor.empty() : tensor<1x2xf32>
    fabric.yield %y : tensor<1x2xf32>
  }
  fabric.kernel @loss : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.softmax<loss = true> at <1, 0, 1, 1> attributes {input_gradient} {
  ^bb0(%x: tensor<1x2xf32>):
    fabric.yield %x : tensor<1x2xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x2xf32>
  // expected-error @below {{'fabric.stream' op has no route: run --weft-route-streams and --weft-allocate-colors first}}
  fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 4>
  fabric.stream @fc_to_loss @fc[0] -> @loss[0] : !fabric.wavelets<f32, 2>
  fabric.stream @loss_to_y @loss[0] -> @y[0] : !fabric.wavelets<f32, 2>
  fabric.stream @loss_grad @loss[0] -> @fc[0] : !fabric.wavelets<f32, 2> {gradient}
}

// -----

// A kernel marked to send its input's gradient needs the gradient stream
// --weft-prepare-training adds.
fabric.program @no_gradient attributes {target = #weft.target<2x1>, training = #fabric.training<optimizer = sgd, lr = 5.000000e-01 : f32, batch = 1>, weft.batch = 1 : i64} {
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<0.5> : tensor<4x2xf32>> at <0, 0, 1, 1> attributes {precision = #fabric<precision fp32>, predicted_cycles = 30 : i64, trained} {
  ^bb0(%x: tensor<1x4xf32>):
    %y = tensor.empty() : tensor<1x2xf32>
    fabric.yield %y : tensor<1x2xf32>
  }
  // expected-error @below {{'fabric.kernel' op sends the gradient of its input, but no gradient stream leaves it: run --weft-prepare-training}}
  fabric.kernel @loss : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.softmax<loss = true> at <1, 0, 1, 1> attributes {input_gradient} {
  ^bb0(%x: tensor<1x2xf32>):
    fabric.yield %x : tensor<1x2xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x2xf32>
  fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 4>
  fabric.stream @fc_to_loss @fc[0] -> @loss[0] : !fabric.wavelets<f32, 2>
  fabric.stream @loss_to_y @loss[0] -> @y[0] : !fabric.wavelets<f32, 2>
}
