// RUN: weft-opt %s --split-input-file --weft-prepare-training | FileCheck %s
// RUN: weft-opt %s --split-input-file '--weft-prepare-training=optimizer=mbgd lr=0.05 batch=4' | FileCheck %s --check-prefix=MBGD
// RUN: weft-opt %s --split-input-file '--weft-prepare-training=optimizer=cpgd lr=0.05 samples=8' | FileCheck %s --check-prefix=CPGD
// RUN: weft-opt %s --split-input-file '--weft-prepare-training=optimizer=mbgd lr=0.05 batch=4 samples=8' | FileCheck %s --check-prefix=PIPE

// A chain dense (ReLU fused) -> Tanh -> dense: the program gets the training
// attribute (lr rounded to f32), every kernel is trained, and every one but
// the first sends the gradient of its input back, on a gradient stream
// west to the kernel before it. The loss kernel follows the logits: they
// stream into it, its probabilities take their place at the host output,
// and it sends the gradient of the softmax cross-entropy back to fc2.

// CHECK-LABEL: fabric.program @mlp
// CHECK-SAME: training = #fabric.training<optimizer = sgd, lr = 0.00999999977 : f32, batch = 1>
// CHECK: fabric.kernel @fc1 {{.*}} attributes {trained}
// CHECK: fabric.kernel @tanh {{.*}} attributes {input_gradient, trained}
// CHECK: fabric.kernel @fc2 {{.*}} attributes {input_gradient, trained}
// CHECK: fabric.kernel @loss : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.softmax<loss = true> attributes {input_gradient} {
// CHECK: linalg.softmax dimension(1)
// CHECK: fabric.stream @fc1_to_tanh
// CHECK-NEXT: fabric.stream @tanh_grad @tanh[0] -> @fc1[0] : !fabric.wavelets<f32, 6> {gradient}
// CHECK-NEXT: fabric.stream @tanh_to_fc2
// CHECK-NEXT: fabric.stream @fc2_grad @fc2[0] -> @tanh[0] : !fabric.wavelets<f32, 6> {gradient}
// CHECK-NEXT: fabric.stream @fc2_to_y @fc2[0] -> @loss[0] : !fabric.wavelets<f32, 4>
// CHECK-NEXT: fabric.stream @loss_out @loss[0] -> @y[0] : !fabric.wavelets<f32, 4>
// CHECK-NEXT: fabric.stream @loss_grad @loss[0] -> @fc2[0] : !fabric.wavelets<f32, 4> {gradient}
// MBGD-LABEL: fabric.program @mlp
// MBGD-SAME: training = #fabric.training<optimizer = mbgd, lr = 5.000000e-02 : f32, batch = 4>
// MBGD-NOT: lag
// Given its samples, mbgd pipelines each mini-batch with the same lags.
// PIPE-LABEL: fabric.program @mlp
// PIPE-SAME: training = #fabric.training<optimizer = mbgd, lr = 5.000000e-02 : f32, batch = 4, samples = 8>
// PIPE: fabric.kernel @fc1 {{.*}} attributes {lag = 3 : i64, trained}
// PIPE: fabric.kernel @tanh {{.*}} attributes {input_gradient, lag = 2 : i64, trained}
// PIPE: fabric.kernel @fc2 {{.*}} attributes {input_gradient, lag = 1 : i64, trained}
// Under cpgd each trained kernel's backward pass trails its forward by the
// trained kernels after it and the loss; the program knows the samples.
// CPGD-LABEL: fabric.program @mlp
// CPGD-SAME: training = #fabric.training<optimizer = cpgd, lr = 5.000000e-02 : f32, batch = 1, samples = 8>
// CPGD: fabric.kernel @fc1 {{.*}} attributes {lag = 3 : i64, trained}
// CPGD: fabric.kernel @tanh {{.*}} attributes {input_gradient, lag = 2 : i64, trained}
// CPGD: fabric.kernel @fc2 {{.*}} attributes {input_gradient, lag = 1 : i64, trained}
fabric.program @mlp attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  fabric.kernel @fc1 : (tensor<1x8xf32>) -> tensor<1x6xf32> scheme #fabric.dense<fan_in = 8, neurons = 6, relu = true, weights = dense<0.25> : tensor<8x6xf32>, bias = dense<1.0> : tensor<6xf32>, weights_source = "fc1_w", bias_source = "fc1_b"> {
  ^bb0(%x: tensor<1x8xf32>):
    %y = tensor.empty() : tensor<1x6xf32>
    fabric.yield %y : tensor<1x6xf32>
  }
  fabric.kernel @tanh : (tensor<1x6xf32>) -> tensor<1x6xf32> scheme #fabric.elementwise<op = "Tanh"> {
  ^bb0(%x: tensor<1x6xf32>):
    fabric.yield %x : tensor<1x6xf32>
  }
  fabric.kernel @fc2 : (tensor<1x6xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 6, neurons = 4, weights = dense<0.5> : tensor<6x4xf32>, weights_source = "fc2_w"> {
  ^bb0(%x: tensor<1x6xf32>):
    %y = tensor.empty() : tensor<1x4xf32>
    fabric.yield %y : tensor<1x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x8xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 8>
  fabric.stream @fc1_to_tanh @fc1[0] -> @tanh[0] : !fabric.wavelets<f32, 6>
  fabric.stream @tanh_to_fc2 @tanh[0] -> @fc2[0] : !fabric.wavelets<f32, 6>
  fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

// A Relu before the first dense layer has no trained kernel before it: it
// runs the forward pass only and is not marked; the dense layer after it is
// the first trained kernel, so it sends no gradient back.

// CHECK-LABEL: fabric.program @relu_first
// CHECK: fabric.kernel @relu : {{.*}} scheme #fabric.elementwise<op = "Relu"> {
// CHECK: fabric.kernel @fc {{.*}} attributes {trained}
// CHECK-NOT: {gradient}
// CHECK: fabric.stream @loss_grad @loss[0] -> @fc[0] {{.*}} {gradient}
// CPGD-LABEL: fabric.program @relu_first
// CPGD: fabric.kernel @relu : {{.*}} scheme #fabric.elementwise<op = "Relu"> {
// CPGD: fabric.kernel @fc {{.*}} attributes {lag = 1 : i64, trained}
fabric.program @relu_first attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  fabric.kernel @relu : (tensor<1x8xf32>) -> tensor<1x8xf32> scheme #fabric.elementwise<op = "Relu"> {
  ^bb0(%x: tensor<1x8xf32>):
    fabric.yield %x : tensor<1x8xf32>
  }
  fabric.kernel @fc : (tensor<1x8xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 8, neurons = 4, weights = dense<0.25> : tensor<8x4xf32>, weights_source = "fc_w"> {
  ^bb0(%x: tensor<1x8xf32>):
    %y = tensor.empty() : tensor<1x4xf32>
    fabric.yield %y : tensor<1x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x8xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @x_to_relu @x[0] -> @relu[0] : !fabric.wavelets<f32, 8>
  fabric.stream @relu_to_fc @relu[0] -> @fc[0] : !fabric.wavelets<f32, 8>
  fabric.stream @fc_to_y @fc[0] -> @y[0] : !fabric.wavelets<f32, 4>
}
