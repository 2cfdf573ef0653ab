// RUN: weft-opt %s --weft-route-streams --weft-allocate-colors | FileCheck %s

// A placed training program with its gradient stream (docs/training.md):
// fc2 sends dL/dx west out of its diagonals' west sides into fc1's last
// column; both trained layers get their delta channel, fc2 (input_gradient)
// its two reduction channels, fc1 (the first trained layer) none.

// CHECK-LABEL: fabric.program @mlp
// CHECK: fabric.stream @fc2_grad @fc2[0] -> @fc1[0] : !fabric.wavelets<f32, 3> {color = #fabric.color<{{[0-9]+}}>, gradient}
// CHECK: fabric.route @fc2_grad color
// CHECK-NEXT: fabric.switch (1, 0) from [east] to [ramp]
// CHECK-NEXT: fabric.switch (1, 1) from [east] to [ramp]
// CHECK-NEXT: fabric.switch (2, 0) from [ramp] to [west]
// CHECK-NEXT: fabric.switch (2, 1) from [east] to [west]
// CHECK-NEXT: fabric.switch (3, 1) from [ramp] to [west]
// CHECK-NEXT: }
// CHECK-NOT: fabric.route @fc1 channel "grad_reduce
// CHECK: fabric.route @fc1 channel "delta" color
// CHECK-NEXT: fabric.switch (0, 0) from [east] to [ramp]
// CHECK-NEXT: fabric.switch (0, 1) from [east] to [ramp]
// CHECK-NEXT: fabric.switch (1, 0) from [ramp] to [west]
// CHECK-NEXT: fabric.switch (1, 1) from [ramp] to [west]
// CHECK-NOT: fabric.route @fc1 channel "grad_reduce
// CHECK: fabric.route @fc2 channel "delta" color
// CHECK-NEXT: fabric.switch (2, 0) from [east] to [ramp]
// CHECK-NEXT: fabric.switch (3, 0) from [ramp] to [west]
// CHECK: fabric.route @fc2 channel "grad_reduce_even" color
// CHECK-NEXT: fabric.switch (3, 0) from [ramp] to [south]
// CHECK-NEXT: fabric.switch (3, 1) from [north] to [ramp]

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
  fabric.io @x input west rows 0 to 2 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x2xf32>
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 4>
  fabric.stream @fc1_to_fc2 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 3>
  fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 2>
  fabric.stream @fc2_grad @fc2[0] -> @fc1[0] : !fabric.wavelets<f32, 3> {gradient}
}
