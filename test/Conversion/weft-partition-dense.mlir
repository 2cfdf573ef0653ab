// RUN: weft-opt %s --split-input-file --weft-partition-dense | FileCheck %s
// RUN: weft-opt %s --split-input-file --weft-partition-dense=precision=mixed | FileCheck %s --check-prefix=MIXED

// The cost model's choice is recorded on the kernel (rect, smear, precision,
// predicted cycles per sample) and the host ports follow it: input chunk c
// enters on west row c (rows [0, smear)), neuron chunk r leaves on east row
// y0 + r (rows [y0, y0 + rows)).

// CHECK-LABEL: fabric.program @layer
// CHECK: fabric.kernel @fc : (tensor<1x64xf32>) -> tensor<1x32xf32> at <[[X0:[0-9]+]], [[Y0:[0-9]+]], [[S:[0-9]+]], [[R:[0-9]+]]> attributes {smear = [[S]] : i64, weft.precision = "fp32", weft.predicted_cycles = {{[1-9][0-9]*}} : i64}
// CHECK: fabric.io @x input west rows 0 to [[S]] : tensor<1x64xf32>
// CHECK: fabric.io @y output east rows [[Y0]] to {{[0-9]+}} : tensor<1x32xf32>
// MIXED-LABEL: fabric.program @layer
// MIXED: weft.precision = "mixed"
fabric.program @layer attributes {target = #fabric.target<16x16>, weft.batch = 1 : i64} {
  fabric.kernel @fc : (tensor<1x64xf32>) -> tensor<1x32xf32> {
  ^bb0(%x: tensor<1x64xf32>):
    %w = arith.constant dense<0.25> : tensor<64x32xf32>
    %b = arith.constant dense<1.0> : tensor<32xf32>
    %e = tensor.empty() : tensor<1x32xf32>
    %acc = linalg.broadcast ins(%b : tensor<32xf32>) outs(%e : tensor<1x32xf32>) dimensions = [0]
    %y = linalg.matmul ins(%x, %w : tensor<1x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<1x32xf32>) -> tensor<1x32xf32>
    fabric.yield %y : tensor<1x32xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x64xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x32xf32>
  fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 64>
  fabric.stream @fc_to_y @fc[0] -> @y[0] : !fabric.wavelets<f32, 32>
}

// -----

// On a single PE there is one choice: the whole layer on PE (0, 0).
// CHECK-LABEL: fabric.program @one_pe
// CHECK: fabric.kernel @fc : (tensor<1x5xf32>) -> tensor<1x3xf32> at <0, 0, 1, 1> attributes {weft.precision = "fp32", weft.predicted_cycles = {{[1-9][0-9]*}} : i64}
// CHECK: fabric.io @x input west rows 0 to 1 : tensor<1x5xf32>
// CHECK: fabric.io @y output east rows 0 to 1 : tensor<1x3xf32>
fabric.program @one_pe attributes {target = #fabric.target<1x1>, weft.batch = 1 : i64} {
  fabric.kernel @fc : (tensor<1x5xf32>) -> tensor<1x3xf32> {
  ^bb0(%x: tensor<1x5xf32>):
    %w = arith.constant dense<0.25> : tensor<5x3xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x3xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3xf32>) -> tensor<1x3xf32>
    %y = linalg.matmul ins(%x, %w : tensor<1x5xf32>, tensor<5x3xf32>) outs(%acc : tensor<1x3xf32>) -> tensor<1x3xf32>
    fabric.yield %y : tensor<1x3xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x5xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x3xf32>
  fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 5>
  fabric.stream @fc_to_y @fc[0] -> @y[0] : !fabric.wavelets<f32, 3>
}
