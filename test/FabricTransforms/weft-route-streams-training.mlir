// RUN: weft-opt %s --split-input-file --weft-route-streams --weft-allocate-colors | FileCheck %s

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

// -----

// The loss kernel --weft-prepare-training adds after the logits is routed as
// the softmax column it is (the logits in, the probabilities relayed to the
// east edge, its reductions up and down its 2 rows), plus its labels from
// the east edge's row 0 port down its column, and the gradient of its input
// west into fc's last column.

// CHECK-LABEL: fabric.program @loss
// CHECK: fabric.route @fc_to_loss color
// CHECK: fabric.route @loss_out color
// CHECK-NEXT: fabric.switch (1, 0) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (1, 1) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (2, 0) from [west] to [east]
// CHECK-NEXT: fabric.switch (2, 1) from [west] to [east]
// CHECK: fabric.route @loss_grad color
// CHECK-NEXT: fabric.switch (0, 0) from [east] to [ramp]
// CHECK-NEXT: fabric.switch (0, 1) from [east] to [ramp]
// CHECK-NEXT: fabric.switch (1, 0) from [ramp] to [west]
// CHECK-NEXT: fabric.switch (1, 1) from [ramp] to [west]
// CHECK: fabric.route @loss channel "reduce_odd" color
// CHECK-NEXT: fabric.switch (1, 0) from [south] to [ramp]
// CHECK-NEXT: fabric.switch (1, 1) from [ramp] to [north]
// CHECK: fabric.route @loss channel "broadcast"
// CHECK: fabric.route @loss channel "labels" color
// CHECK-NEXT: fabric.switch (1, 0) from [east] to [south, ramp]
// CHECK-NEXT: fabric.switch (1, 1) from [north] to [ramp]
// CHECK-NEXT: fabric.switch (2, 0) from [east] to [west]
fabric.program @loss attributes {target = #weft.target<3x2>, training = #fabric.training<optimizer = sgd, lr = 5.000000e-01 : f32, batch = 1>, weft.batch = 1 : i64} {
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 4, neurons = 4, weights = dense<0.5> : tensor<4x4xf32>> at <0, 0, 1, 2> attributes {precision = #fabric<precision fp32>, predicted_cycles = 30 : i64, trained} {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
  fabric.kernel @loss : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.softmax<loss = true> at <1, 0, 1, 2> attributes {input_gradient} {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 2 : tensor<1x4xf32>
  fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 4>
  fabric.stream @fc_to_loss @fc[0] -> @loss[0] : !fabric.wavelets<f32, 4>
  fabric.stream @loss_out @loss[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.stream @loss_grad @loss[0] -> @fc[0] : !fabric.wavelets<f32, 4> {gradient}
}

// -----

// A gradient past the kernels in between (a residual block's skip,
// docs/training.md, "Residual blocks"): fc2's dL/dx crosses the relu
// column's routers (column 2) west into fc1's last column.

// CHECK-LABEL: fabric.program @skip
// CHECK: fabric.route @fc2_grad color
// CHECK-DAG: fabric.switch (1, 0) from [east] to [ramp]
// CHECK-DAG: fabric.switch (1, 1) from [east] to [ramp]
// CHECK-DAG: fabric.switch (2, 0) from [east] to [west]
// CHECK-DAG: fabric.switch (2, 1) from [east] to [west]
// CHECK: }
fabric.program @skip attributes {target = #weft.target<6x2>, training = #fabric.training<optimizer = sgd, lr = 5.000000e-01 : f32, batch = 1>} {
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
  fabric.stream @fc2_grad @fc2[0] -> @fc1[0] : !fabric.wavelets<f32, 3> {gradient}
}

