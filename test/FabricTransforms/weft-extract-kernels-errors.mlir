// A bad kernel range of --weft-extract-kernels names what is wrong; so does
// a program it cannot slice (unplaced, or already routed). A join of
// feature maps whose fork the range leaves out: test/e2e/slice-resnet.test.
// RUN: not weft-opt %s --split-input-file '--weft-extract-kernels=kernels=0..3' 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not weft-opt %s --split-input-file '--weft-extract-kernels=kernels=fc1..fc3' 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not weft-opt %s --split-input-file '--weft-extract-kernels=kernels=2..1' 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not weft-opt %s --split-input-file '--weft-extract-kernels=kernels=fc2' 2>&1 | FileCheck %s --check-prefix=FORM
// RUN: not weft-opt %s --split-input-file '--weft-extract-kernels=kernels=0..0' 2>&1 | FileCheck %s --check-prefix=STATE

// RANGE: error: 'fabric.program' op has 3 kernels (0 to 2); kernel index 3 is out of range
// NAME: error: 'fabric.program' op has no kernel 'fc3'
// EMPTY: error: 'fabric.program' op kernel range '2..1' is empty: kernel 2 comes after kernel 1 in the topological order
// FORM: error: 'fabric.program' op kernel range 'fc2' is not FIRST..LAST (indices or kernel names)

#map = affine_map<(d0, d1) -> (d0, d1)>
fabric.program @main_graph attributes {target = #weft.target<6x4, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x  input  west rows 0 to 2 : tensor<1x2xf32>
  fabric.io @y  output  east rows 0 to 2 : tensor<1x2xf32>
  fabric.io @h  output  east rows 0 to 2 : tensor<1x2xf32>
  fabric.kernel @fc1 : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 2, neurons = 2, weights = dense<1.000000e+00> : tensor<2x2xf32>> at <0, 0, 2, 2> attributes {precision = #fabric<precision fp32>, predicted_cycles = 18 : i64, smear = 2 : i64} {
  ^bb0(%arg0: tensor<1x2xf32>):
    %cst = arith.constant dense<1.000000e+00> : tensor<2x2xf32>
    %0 = tensor.empty() : tensor<1x2xf32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %2 = linalg.matmul ins(%arg0, %cst : tensor<1x2xf32>, tensor<2x2xf32>) outs(%1 : tensor<1x2xf32>) -> tensor<1x2xf32>
    fabric.yield %2 : tensor<1x2xf32>
  }
  fabric.kernel @fc2 : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 2, neurons = 2, weights = dense<1.000000e+00> : tensor<2x2xf32>> at <2, 0, 2, 2> attributes {precision = #fabric<precision fp32>, predicted_cycles = 18 : i64, smear = 2 : i64} {
  ^bb0(%arg0: tensor<1x2xf32>):
    %cst = arith.constant dense<1.000000e+00> : tensor<2x2xf32>
    %0 = tensor.empty() : tensor<1x2xf32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %2 = linalg.matmul ins(%arg0, %cst : tensor<1x2xf32>, tensor<2x2xf32>) outs(%1 : tensor<1x2xf32>) -> tensor<1x2xf32>
    fabric.yield %2 : tensor<1x2xf32>
  }
  fabric.kernel @res : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.join<op = add, buffered = 1, fifo = 2> at <4, 0, 1, 2> attributes {precision = #fabric<precision fp32>, predicted_cycles = 4 : i64} {
  ^bb0(%arg0: tensor<1x2xf32>, %arg1: tensor<1x2xf32>):
    %0 = tensor.empty() : tensor<1x2xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<1x2xf32>, tensor<1x2xf32>) outs(%0 : tensor<1x2xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.addf %in, %in_0 : f32
      linalg.yield %2 : f32
    } -> tensor<1x2xf32>
    fabric.yield %1 : tensor<1x2xf32>
  }
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 2>
  fabric.stream @fc1_fork @fc1[0] -> @fc2[0], @res[1], @h[0] : !fabric.wavelets<f32, 2>
  fabric.stream @fc2_to_res @fc2[0] -> @res[0] : !fabric.wavelets<f32, 2>
  fabric.stream @res_to_y @res[0] -> @y[0] : !fabric.wavelets<f32, 2>
}

// -----

// STATE: error: 'fabric.kernel' op is not placed; --weft-extract-kernels runs after --weft-partition-dense
fabric.program @unplaced attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.kernel @fc : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 4, neurons = 4, weights = dense<1.000000e+00> : tensor<4x4xf32>> {
  ^bb0(%arg0: tensor<1x4xf32>):
    fabric.yield %arg0 : tensor<1x4xf32>
  }
  fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 4>
  fabric.stream @fc_to_y @fc[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

// STATE: error: 'fabric.route' op is already in the program; --weft-extract-kernels runs after partitioning and before routing
fabric.program @routed attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @s @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.route @s {
    fabric.switch (0, 0) from [west] to [east]
    fabric.switch (1, 0) from [west] to [east]
    fabric.switch (2, 0) from [west] to [east]
    fabric.switch (3, 0) from [west] to [east]
  }
}
