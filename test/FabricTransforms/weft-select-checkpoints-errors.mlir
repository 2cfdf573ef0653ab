// RUN: not weft-opt %s --weft-select-checkpoints="policy=none pe-memory=2700" 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not weft-opt %s --weft-select-checkpoints="policy=auto pe-memory=2680" 2>&1 | FileCheck %s --check-prefix=DROPPED
// RUN: not weft-opt %s --weft-select-checkpoints="policy=auto pe-memory=2660" 2>&1 | FileCheck %s --check-prefix=FIRST
// RUN: not weft-opt %s --weft-select-checkpoints="policy=every-2 pe-memory=2600" 2>&1 | FileCheck %s --check-prefix=EVERY
// RUN: not weft-opt %s --weft-select-checkpoints="policy=sometimes" 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not weft-opt %s --weft-select-checkpoints="policy=auto pe-memory=60000" 2>&1 | FileCheck %s --check-prefix=MEMORY

// Budgets the policies do not fit name the kernel and the bytes it needs
// (weft-select-checkpoints.mlir has the same program).

// NONE: error: cannot train within 2700 bytes per PE with checkpoints none: node 'fc2' needs 2712 bytes per PE storing its activations (none), more than the budget of 2700 bytes
// DROPPED: error: cannot train within 2680 bytes per PE with checkpoints auto: node 'fc2' needs 2700 bytes per PE even recomputing its activations, more than the budget of 2680 bytes
// FIRST: error: cannot train within 2660 bytes per PE with checkpoints auto: node 'fc1' needs 2664 bytes per PE storing its activations, which it cannot recompute, more than the budget of 2660 bytes
// EVERY: error: cannot train within 2600 bytes per PE with checkpoints every-2: node 'fc1' needs 2664 bytes per PE storing its activations (every-2), more than the budget of 2600 bytes
// POLICY: error: the checkpoint policy must be none, auto or every-K with K >= 1, not 'sometimes'
// MEMORY: error: 'fabric.program' op cannot give a PE 60000 bytes (pe-memory): the target's PEs have 49152
fabric.program @mlp attributes {target = #weft.target<7x2>, training = #fabric.training<optimizer = sgd, lr = 5.000000e-01 : f32, batch = 1>, weft.batch = 1 : i64} {
  fabric.kernel @fc1 : (tensor<1x4xf32>) -> tensor<1x6xf32> scheme #fabric.dense<fan_in = 4, neurons = 6, relu = true, weights = dense<0.25> : tensor<4x6xf32>, bias = dense<1.0> : tensor<6xf32>> at <0, 0, 2, 2> attributes {precision = #fabric<precision fp32>, predicted_cycles = 40 : i64, smear = 2 : i64, trained} {
  ^bb0(%x: tensor<1x4xf32>):
    %y = tensor.empty() : tensor<1x6xf32>
    fabric.yield %y : tensor<1x6xf32>
  }
  fabric.kernel @fc2 : (tensor<1x6xf32>) -> tensor<1x8xf32> scheme #fabric.dense<fan_in = 6, neurons = 8, relu = true, weights = dense<0.5> : tensor<6x8xf32>> at <2, 0, 2, 2> attributes {input_gradient, precision = #fabric<precision fp32>, predicted_cycles = 30 : i64, smear = 2 : i64, trained} {
  ^bb0(%x: tensor<1x6xf32>):
    %y = tensor.empty() : tensor<1x8xf32>
    fabric.yield %y : tensor<1x8xf32>
  }
  fabric.kernel @fc3 : (tensor<1x8xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 8, neurons = 2, weights = dense<0.5> : tensor<8x2xf32>> at <4, 0, 2, 1> attributes {input_gradient, precision = #fabric<precision fp32>, predicted_cycles = 30 : i64, smear = 2 : i64, trained} {
  ^bb0(%x: tensor<1x8xf32>):
    %y = tensor.empty() : tensor<1x2xf32>
    fabric.yield %y : tensor<1x2xf32>
  }
  fabric.io @x input west rows 0 to 2 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x2xf32>
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 4>
  fabric.stream @fc1_to_fc2 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 6>
  fabric.stream @fc2_to_fc3 @fc2[0] -> @fc3[0] : !fabric.wavelets<f32, 8>
  fabric.stream @fc3_to_y @fc3[0] -> @y[0] : !fabric.wavelets<f32, 2>
}
