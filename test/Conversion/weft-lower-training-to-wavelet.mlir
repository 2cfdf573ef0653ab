// RUN: weft-opt %s --weft-route-streams --weft-allocate-colors --weft-lower-training-to-wavelet | FileCheck %s

// A placed training program (docs/training.md), routed and colored as for
// inference: fc1 on 2 x 2 PEs, fc2 on 2 x 1, the loss kernel east of them at
// column 4. The samples enter west,
// the labels on the east port of row 0 (int16), the probabilities leave
// east; every PE runs one sample loop (task 32); fc1, the first trained
// layer, sends no gradient back, so only fc2 reduces dL/dx down its
// columns and sends it west.

// CHECK-LABEL: wavelet.program @mlp
// CHECK-SAME: layers = ["fc1", "fc2", "loss"]
// CHECK: wavelet.io @x  input  west rows 0 to 2 color [[X:[0-9]+]] "dense32" : tensor<1x4xf32>
// CHECK: wavelet.io @labels  input  east rows 0 to 1 color {{[0-9]+}} "dense16x2" : tensor<1x1xi16>
// CHECK: wavelet.io @probabilities  output  east rows 0 to 1 color {{[0-9]+}} "dense32" : tensor<1x2xf32>
// CHECK: wavelet.pe @fc1_c0_r0 at (0, 0)
// CHECK: wavelet.task @main local 32 active
// CHECK-NOT: @red_out
// CHECK: wavelet.pe @fc1_c1_r1 at (1, 1)
// CHECK: wavelet.pe @fc2_c0_r0 at (2, 0)
// CHECK: wavelet.dsd @red_out
// CHECK: wavelet.pe @fc2_c1_r1 at (3, 1)
// CHECK: wavelet.dsd @grad_relay_in
// CHECK: wavelet.pe @loss_r0 at (4, 0)
// CHECK: wavelet.dsd @label
fabric.program @mlp attributes {target = #weft.target<5x2>, training = #fabric.training<optimizer = sgd, lr = 5.000000e-01 : f32, batch = 1>, weft.batch = 1 : i64} {
  fabric.kernel @fc1 : (tensor<1x4xf32>) -> tensor<1x3xf32> scheme #fabric.dense<fan_in = 4, neurons = 3, relu = true, weights = dense<0.25> : tensor<4x3xf32>, bias = dense<1.0> : tensor<3xf32>> at <0, 0, 2, 2> attributes {precision = #fabric<precision fp32>, predicted_cycles = 40 : i64, smear = 2 : i64, trained} {
  ^bb0(%x: tensor<1x4xf32>):
    %y = tensor.empty() : tensor<1x3xf32>
    fabric.yield %y : tensor<1x3xf32>
  }
  fabric.kernel @fc2 : (tensor<1x3xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 3, neurons = 2, weights = dense<0.5> : tensor<3x2xf32>> at <2, 0, 2, 1> attributes {input_gradient, precision = #fabric<precision fp32>, predicted_cycles = 30 : i64, smear = 2 : i64, trained} {
  ^bb0(%x: tensor<1x3xf32>):
    %y = tensor.empty() : tensor<1x2xf32>
    fabric.yield %y : tensor<1x2xf32>
  }
  fabric.kernel @loss : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.softmax<loss = true> at <4, 0, 1, 1> attributes {input_gradient} {
  ^bb0(%x: tensor<1x2xf32>):
    fabric.yield %x : tensor<1x2xf32>
  }
  fabric.io @x input west rows 0 to 2 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x2xf32>
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 4>
  fabric.stream @fc1_to_fc2 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 3>
  fabric.stream @fc2_grad @fc2[0] -> @fc1[0] : !fabric.wavelets<f32, 3> {gradient}
  fabric.stream @fc2_to_loss @fc2[0] -> @loss[0] : !fabric.wavelets<f32, 2>
  fabric.stream @loss_grad @loss[0] -> @fc2[0] : !fabric.wavelets<f32, 2> {gradient}
  fabric.stream @loss_to_y @loss[0] -> @y[0] : !fabric.wavelets<f32, 2>
}
