// RUN: weft-opt %s --split-input-file --weft-partition-dense | FileCheck %s
// RUN: weft-opt %s --split-input-file --weft-partition-dense=objective=interval | FileCheck %s --check-prefix=INTERVAL
// RUN: weft-opt %s --split-input-file --weft-partition-dense=objective=latency | FileCheck %s --check-prefix=LATENCY

// What the layout minimises first (then the PEs): the slowest kernel's
// predicted cycles (interval: the pipeline's period), or the kernels'
// cycles summed with 4 cycles for each column and row a dense kernel's
// vectors stream across (latency). objective=auto takes latency for a
// program trained by SGD and interval otherwise; the latency objective is
// recorded on the program.

// A program trained by SGD holds one sample in flight: each kernel waits
// for the sample to come back through the others. fc2 then takes 5 rows
// where the interval objective gives it the fewest PEs that keep it under
// fc1's 143 cycles, 3 rows: 101 predicted cycles instead of 139.

// CHECK-LABEL: fabric.program @sgd
// CHECK-SAME: weft.objective = "latency"
// CHECK: fabric.kernel @fc1 {{.*}} at <0, 0, 7, 8> attributes {precision = #fabric<precision fp32>, predicted_cycles = 143 : i64, smear = 7 : i64, trained}
// CHECK: fabric.kernel @fc2 {{.*}} at <7, 0, 8, 5> attributes {input_gradient, precision = #fabric<precision fp32>, predicted_cycles = 101 : i64, smear = 8 : i64, trained}
// INTERVAL-LABEL: fabric.program @sgd
// INTERVAL-NOT: weft.objective
// INTERVAL: fabric.kernel @fc1 {{.*}} at <0, 0, 7, 8>
// INTERVAL: fabric.kernel @fc2 {{.*}} at <7, 0, 8, 3> attributes {input_gradient, precision = #fabric<precision fp32>, predicted_cycles = 139 : i64, smear = 8 : i64, trained}
fabric.program @sgd attributes {target = #weft.target<15x16>, training = #fabric.training<optimizer = sgd, lr = 0.00999999977 : f32, batch = 1>, weft.batch = 1 : i64} {
  fabric.kernel @fc1 : (tensor<1x64xf32>) -> tensor<1x32xf32> scheme #fabric.dense<fan_in = 64, neurons = 32, relu = true, weights = dense<2.500000e-01> : tensor<64x32xf32>, bias = dense<1.000000e+00> : tensor<32xf32>, weights_source = "fc1_w", bias_source = "fc1_b"> attributes {trained} {
  ^bb0(%x: tensor<1x64xf32>):
    %y = tensor.empty() : tensor<1x32xf32>
    fabric.yield %y : tensor<1x32xf32>
  }
  fabric.kernel @fc2 : (tensor<1x32xf32>) -> tensor<1x10xf32> scheme #fabric.dense<fan_in = 32, neurons = 10, weights = dense<5.000000e-01> : tensor<32x10xf32>, bias = dense<1.000000e+00> : tensor<10xf32>, weights_source = "fc2_w", bias_source = "fc2_b"> attributes {input_gradient, trained} {
  ^bb0(%x: tensor<1x32xf32>):
    %y = tensor.empty() : tensor<1x10xf32>
    fabric.yield %y : tensor<1x10xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x64xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x10xf32>
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 64>
  fabric.stream @fc1_to_fc2 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 32>
  fabric.stream @fc2_grad @fc2[0] -> @fc1[0] : !fabric.wavelets<f32, 32> {gradient}
  fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 10>
}

// -----

// MBGD one sample at a time (no lag) keeps the interval objective under
// auto: its weights are then bit-identical to the pipelined schedule's,
// which sums the partial sums in the same layout's order.

// CHECK-LABEL: fabric.program @mbgd
// CHECK-NOT: weft.objective
// CHECK: fabric.kernel @fc1 {{.*}} at <0, 0, 7, 8>
// CHECK: fabric.kernel @fc2 {{.*}} at <7, 0, 8, 3>
// LATENCY-LABEL: fabric.program @mbgd
// LATENCY-SAME: weft.objective = "latency"
// LATENCY: fabric.kernel @fc2 {{.*}} at <7, 0, 8, 5>
fabric.program @mbgd attributes {target = #weft.target<15x16>, training = #fabric.training<optimizer = mbgd, lr = 0.00999999977 : f32, batch = 4>, weft.batch = 1 : i64} {
  fabric.kernel @fc1 : (tensor<1x64xf32>) -> tensor<1x32xf32> scheme #fabric.dense<fan_in = 64, neurons = 32, relu = true, weights = dense<2.500000e-01> : tensor<64x32xf32>, bias = dense<1.000000e+00> : tensor<32xf32>, weights_source = "fc1_w", bias_source = "fc1_b"> attributes {trained} {
  ^bb0(%x: tensor<1x64xf32>):
    %y = tensor.empty() : tensor<1x32xf32>
    fabric.yield %y : tensor<1x32xf32>
  }
  fabric.kernel @fc2 : (tensor<1x32xf32>) -> tensor<1x10xf32> scheme #fabric.dense<fan_in = 32, neurons = 10, weights = dense<5.000000e-01> : tensor<32x10xf32>, bias = dense<1.000000e+00> : tensor<10xf32>, weights_source = "fc2_w", bias_source = "fc2_b"> attributes {input_gradient, trained} {
  ^bb0(%x: tensor<1x32xf32>):
    %y = tensor.empty() : tensor<1x10xf32>
    fabric.yield %y : tensor<1x10xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x64xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x10xf32>
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 64>
  fabric.stream @fc1_to_fc2 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 32>
  fabric.stream @fc2_grad @fc2[0] -> @fc1[0] : !fabric.wavelets<f32, 32> {gradient}
  fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 10>
}

// -----

// Inference: interval under auto.

// CHECK-LABEL: fabric.program @inference
// CHECK-NOT: weft.objective
// CHECK: fabric.kernel @fc1
// LATENCY-LABEL: fabric.program @inference
// LATENCY-SAME: weft.objective = "latency"
// LATENCY: fabric.kernel @fc2 {{.*}} at <7, 0, 8, 5>
fabric.program @inference attributes {target = #weft.target<15x16>, weft.batch = 1 : i64} {
  fabric.kernel @fc1 : (tensor<1x64xf32>) -> tensor<1x32xf32> scheme #fabric.dense<fan_in = 64, neurons = 32, relu = true, weights = dense<2.500000e-01> : tensor<64x32xf32>, bias = dense<1.000000e+00> : tensor<32xf32>, weights_source = "fc1_w", bias_source = "fc1_b"> {
  ^bb0(%x: tensor<1x64xf32>):
    %y = tensor.empty() : tensor<1x32xf32>
    fabric.yield %y : tensor<1x32xf32>
  }
  fabric.kernel @fc2 : (tensor<1x32xf32>) -> tensor<1x10xf32> scheme #fabric.dense<fan_in = 32, neurons = 10, weights = dense<5.000000e-01> : tensor<32x10xf32>, bias = dense<1.000000e+00> : tensor<10xf32>, weights_source = "fc2_w", bias_source = "fc2_b"> {
  ^bb0(%x: tensor<1x32xf32>):
    %y = tensor.empty() : tensor<1x10xf32>
    fabric.yield %y : tensor<1x10xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x64xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x10xf32>
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 64>
  fabric.stream @fc1_to_fc2 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 32>
  fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 10>
}
