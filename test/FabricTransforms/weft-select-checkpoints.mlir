// RUN: weft-opt %s --weft-select-checkpoints | FileCheck %s --check-prefix=NONE
// RUN: weft-opt %s --weft-select-checkpoints="policy=auto pe-memory=2700" | FileCheck %s --check-prefix=AUTO
// RUN: weft-opt %s --weft-select-checkpoints="policy=auto" | FileCheck %s --check-prefix=NONE
// RUN: weft-opt %s --weft-select-checkpoints="policy=every-2" | FileCheck %s --check-prefix=AUTO
// RUN: weft-opt %s --weft-select-checkpoints="policy=every-1" | FileCheck %s --check-prefix=NONE

// Reverse checkpoints (docs/training.md): three trained dense layers, fc2's
// PEs the fullest (2,712 bytes storing its input, 2,700 without; fc1 needs
// 2,664 and cannot drop its input, which comes from the host). `none` and
// `auto` on the whole memory store everything; `auto` within 2,700 bytes
// has fc2 recompute its input (fc1 runs its forward again: the predicted
// 158 CE cycles per sample), as does `every-2` (layers 0 and 2 store).

// NONE: fabric.kernel @fc1 {{.*}}checkpoint = #fabric<checkpoint save>
// NONE-NOT: recompute
// NONE: fabric.kernel @fc2 {{.*}}checkpoint = #fabric<checkpoint save>
// NONE-NOT: recompute
// NONE: fabric.kernel @fc3 {{.*}}checkpoint = #fabric<checkpoint save>
// NONE-NOT: recompute

// AUTO: fabric.kernel @fc1 {{.*}}checkpoint = #fabric<checkpoint save>
// AUTO: fabric.kernel @fc2 {{.*}}checkpoint = #fabric<checkpoint recompute>{{.*}}recompute_cycles = 158 : i64
// AUTO: fabric.kernel @fc3 {{.*}}checkpoint = #fabric<checkpoint save>
// AUTO-NOT: recompute_cycles
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
