// RUN: weft-opt %s --split-input-file --weft-partition-dense | FileCheck %s
// RUN: weft-opt %s --split-input-file --weft-partition-dense=precision=mixed | FileCheck %s --check-prefix=MIXED
// RUN: weft-opt %s --split-input-file '--weft-partition-dense=grid=auto max-grid=8x8' | FileCheck %s --check-prefix=AUTO

// The cost model's choice is recorded on the kernel (rect, smear, precision,
// predicted cycles per sample) and the host ports follow it: input chunk c
// enters on west row c (rows [0, smear)), neuron chunk r leaves on east row
// y0 + r (rows [y0, y0 + rows)).

// CHECK-LABEL: fabric.program @layer
// CHECK: fabric.kernel @fc : (tensor<1x64xf32>) -> tensor<1x32xf32> scheme {{.*}} at <[[X0:[0-9]+]], [[Y0:[0-9]+]], [[S:[0-9]+]], [[R:[0-9]+]]> attributes {precision = #fabric<precision fp32>, predicted_cycles = {{[1-9][0-9]*}} : i64, smear = [[S]] : i64}
// CHECK: fabric.io @x input west rows 0 to [[S]] : tensor<1x64xf32>
// CHECK: fabric.io @y output east rows [[Y0]] to {{[0-9]+}} : tensor<1x32xf32>
// MIXED-LABEL: fabric.program @layer
// MIXED: precision = #fabric<precision mixed>
fabric.program @layer attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  fabric.kernel @fc : (tensor<1x64xf32>) -> tensor<1x32xf32> scheme #fabric.dense<fan_in = 64, neurons = 32, weights = dense<0.25> : tensor<64x32xf32>, bias = dense<1.0> : tensor<32xf32>> {
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
// CHECK: fabric.kernel @fc : (tensor<1x5xf32>) -> tensor<1x3xf32> scheme {{.*}} at <0, 0, 1, 1> attributes {precision = #fabric<precision fp32>, predicted_cycles = {{[1-9][0-9]*}} : i64}
// CHECK: fabric.io @x input west rows 0 to 1 : tensor<1x5xf32>
// CHECK: fabric.io @y output east rows 0 to 1 : tensor<1x3xf32>
fabric.program @one_pe attributes {target = #weft.target<1x1>, weft.batch = 1 : i64} {
  fabric.kernel @fc : (tensor<1x5xf32>) -> tensor<1x3xf32> scheme #fabric.dense<fan_in = 5, neurons = 3, weights = dense<0.25> : tensor<5x3xf32>> {
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

// -----

// A chain (dense, Sigmoid, Tanh, dense): rectangles west to east from
// column 0 at row 0, each dense kernel's smear equal to the rows of the
// kernel before it, column kernels one column wide with the rows they
// receive; the host input has the first kernel's smear in rows, the host
// output the last kernel's rows.

// CHECK-LABEL: fabric.program @main_graph
// CHECK: fabric.io @x input west rows 0 to [[#S0:]] : tensor<1x3xf32>
// CHECK: fabric.io @y output east rows 0 to [[#R3:]] : tensor<1x2xf32>
// CHECK: fabric.kernel @fc1 : {{.*}} scheme #fabric.dense<fan_in = 3, neurons = 4, weights = {{.*}}, bias = {{.*}}> at <0, 0, [[#S0]], [[#R0:]]> attributes {precision = #fabric<precision fp32>, predicted_cycles = {{[1-9][0-9]*}} : i64{{.*}}}
// CHECK: fabric.kernel @sigmoid_1 : {{.*}} scheme #fabric.elementwise<op = "Sigmoid"> at <[[#S0]], 0, 1, [[#R0]]> attributes {precision = #fabric<precision fp32>, predicted_cycles = {{[1-9][0-9]*}} : i64}
// CHECK: fabric.kernel @tanh_1 : {{.*}} at <[[#S0+1]], 0, 1, [[#R0]]> attributes {precision = #fabric<precision fp32>, predicted_cycles = {{[1-9][0-9]*}} : i64}
// CHECK: fabric.kernel @fc2 : {{.*}} at <[[#S0+2]], 0, [[#R0]], [[#R3]]> attributes {precision = #fabric<precision fp32>, predicted_cycles = {{[1-9][0-9]*}} : i64{{.*}}}
// AUTO-LABEL: fabric.program @main_graph
// AUTO-SAME: target = #weft.target<[[W:[0-9]+]]x[[H:[0-9]+]],
// AUTO-SAME: weft.grid_auto = "[[W]]x[[H]]: predicted utilization {{.*}}; {{[0-9]+}} grids fit up to 8x8)"
// AUTO: fabric.kernel @fc1 {{.*}} at <0, 0,
// AUTO: fabric.kernel @fc2
#map = affine_map<(d0, d1) -> (d0, d1)>
module {
  fabric.program @main_graph attributes {target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
    fabric.io @x  input  west rows 0 to 1 : tensor<1x3xf32>
    fabric.io @y  output  east rows 0 to 1 : tensor<1x2xf32>
    fabric.kernel @fc1 : (tensor<1x3xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 3, neurons = 4, weights = dense<[[0.199523121, 0.474361449, 0.190777928, -0.752378165], [0.522707462, 0.25771448, -0.310010105, 0.335508704], [0.210485965, 0.169817477, 0.016409589, 0.31564489]]> : tensor<3x4xf32>, bias = dense<[-0.736454069, -0.162909955, -0.482119322, 0.598846197]> : tensor<4xf32>> {
    ^bb0(%arg0: tensor<1x3xf32>):
      %cst = arith.constant dense<[[0.199523121, 0.474361449, 0.190777928, -0.752378165], [0.522707462, 0.25771448, -0.310010105, 0.335508704], [0.210485965, 0.169817477, 0.016409589, 0.31564489]]> : tensor<3x4xf32>
      %0 = tensor.empty() : tensor<1x4xf32>
      %cst_0 = arith.constant dense<[-0.736454069, -0.162909955, -0.482119322, 0.598846197]> : tensor<4xf32>
      %broadcasted = linalg.broadcast ins(%cst_0 : tensor<4xf32>) outs(%0 : tensor<1x4xf32>) dimensions = [0] 
      %1 = linalg.matmul ins(%arg0, %cst : tensor<1x3xf32>, tensor<3x4xf32>) outs(%broadcasted : tensor<1x4xf32>) -> tensor<1x4xf32>
      fabric.yield %1 : tensor<1x4xf32>
    }
    fabric.kernel @sigmoid_1 : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Sigmoid"> {
    ^bb0(%arg0: tensor<1x4xf32>):
      %cst = arith.constant 1.000000e+00 : f32
      %0 = tensor.empty() : tensor<1x4xf32>
      %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<1x4xf32>) outs(%0 : tensor<1x4xf32>) {
      ^bb0(%in: f32, %out: f32):
        %2 = arith.negf %in : f32
        %3 = math.exp %2 : f32
        %4 = arith.addf %3, %cst : f32
        %5 = arith.divf %cst, %4 : f32
        linalg.yield %5 : f32
      } -> tensor<1x4xf32>
      fabric.yield %1 : tensor<1x4xf32>
    }
    fabric.kernel @tanh_1 : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Tanh"> {
    ^bb0(%arg0: tensor<1x4xf32>):
      %0 = tensor.empty() : tensor<1x4xf32>
      %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<1x4xf32>) outs(%0 : tensor<1x4xf32>) {
      ^bb0(%in: f32, %out: f32):
        %2 = math.tanh %in : f32
        linalg.yield %2 : f32
      } -> tensor<1x4xf32>
      fabric.yield %1 : tensor<1x4xf32>
    }
    fabric.kernel @fc2 : (tensor<1x4xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 4, neurons = 2, weights = dense<[[0.0198610537, -0.146228373], [-0.390954226, -0.128596127], [0.00407109037, -0.137801453], [0.647031903, 0.503362179]]> : tensor<4x2xf32>, bias = dense<[-2.71116257, -1.88901329]> : tensor<2xf32>> {
    ^bb0(%arg0: tensor<1x4xf32>):
      %cst = arith.constant dense<[[0.0198610537, -0.146228373], [-0.390954226, -0.128596127], [0.00407109037, -0.137801453], [0.647031903, 0.503362179]]> : tensor<4x2xf32>
      %0 = tensor.empty() : tensor<1x2xf32>
      %cst_0 = arith.constant dense<[-2.71116257, -1.88901329]> : tensor<2xf32>
      %broadcasted = linalg.broadcast ins(%cst_0 : tensor<2xf32>) outs(%0 : tensor<1x2xf32>) dimensions = [0] 
      %1 = linalg.matmul ins(%arg0, %cst : tensor<1x4xf32>, tensor<4x2xf32>) outs(%broadcasted : tensor<1x2xf32>) -> tensor<1x2xf32>
      fabric.yield %1 : tensor<1x2xf32>
    }
    fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 3>
    fabric.stream @fc1_to_sigmoid_1 @fc1[0] -> @sigmoid_1[0] : !fabric.wavelets<f32, 4>
    fabric.stream @sigmoid_1_to_tanh_1 @sigmoid_1[0] -> @tanh_1[0] : !fabric.wavelets<f32, 4>
    fabric.stream @tanh_1_to_fc2 @tanh_1[0] -> @fc2[0] : !fabric.wavelets<f32, 4>
    fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 2>
  }
}


// -----

// A residual block with two outputs (fc1's result forks to fc2, the join
// and the host output h): kernels side by side in topological order, the
// join buffers its second input (fc1's result, which arrives a whole fc2
// earlier) in a FIFO the cost model sizes, and every stream's rows are one.
// CHECK-LABEL: fabric.program @main_graph
// CHECK: fabric.io @x input west rows 0 to [[#SX:]] :
// CHECK: fabric.io @y output east rows 0 to [[#RX:]] :
// CHECK: fabric.io @h output east rows 0 to [[#RX]] :
// CHECK: fabric.kernel @fc1 : {{.*}} at <0, 0, [[#SX]], [[#RX]]>
// CHECK: fabric.kernel @fc2 : {{.*}} at <[[#SX]], 0, [[#RX]], [[#RX]]>
// CHECK: fabric.kernel @res : {{.*}} scheme #fabric.join<op = add, buffered = 1, fifo = {{[1-9][0-9]*}}> at <[[#SX+RX]], 0, 1, [[#RX]]>
#map = affine_map<(d0, d1) -> (d0, d1)>
fabric.program @main_graph attributes {target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x  input  west rows 0 to 1 : tensor<1x2xf32>
  fabric.io @y  output  east rows 0 to 1 : tensor<1x2xf32>
  fabric.io @h  output  east rows 0 to 1 : tensor<1x2xf32>
  fabric.kernel @fc1 : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 2, neurons = 2, weights = dense<1.000000e+00> : tensor<2x2xf32>> {
  ^bb0(%arg0: tensor<1x2xf32>):
    %cst = arith.constant dense<1.000000e+00> : tensor<2x2xf32>
    %0 = tensor.empty() : tensor<1x2xf32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %2 = linalg.matmul ins(%arg0, %cst : tensor<1x2xf32>, tensor<2x2xf32>) outs(%1 : tensor<1x2xf32>) -> tensor<1x2xf32>
    fabric.yield %2 : tensor<1x2xf32>
  }
  fabric.kernel @fc2 : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.dense<fan_in = 2, neurons = 2, weights = dense<1.000000e+00> : tensor<2x2xf32>> {
  ^bb0(%arg0: tensor<1x2xf32>):
    %cst = arith.constant dense<1.000000e+00> : tensor<2x2xf32>
    %0 = tensor.empty() : tensor<1x2xf32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %2 = linalg.matmul ins(%arg0, %cst : tensor<1x2xf32>, tensor<2x2xf32>) outs(%1 : tensor<1x2xf32>) -> tensor<1x2xf32>
    fabric.yield %2 : tensor<1x2xf32>
  }
  fabric.kernel @res : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.join<op = add> {
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

// A join with its ReLU fused keeps it through partitioning, and the cost
// model counts the fmax: 6 cycles per sample for a chunk of 2 (3 per
// element; a plain add takes 4).
// CHECK-LABEL: fabric.program @relu_join
// CHECK: fabric.kernel @res : {{.*}} scheme #fabric.join<op = add, relu = true, buffered = 1, fifo = 1> at <0, 0, 1, 1> attributes {precision = #fabric<precision fp32>, predicted_cycles = 6 : i64}
#map = affine_map<(d0, d1) -> (d0, d1)>
fabric.program @relu_join attributes {target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @a  input  west rows 0 to 1 : tensor<1x2xf32>
  fabric.io @b  input  west rows 0 to 1 : tensor<1x2xf32>
  fabric.io @y  output  east rows 0 to 1 : tensor<1x2xf32>
  fabric.kernel @res : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.join<op = add, relu = true> {
  ^bb0(%arg0: tensor<1x2xf32>, %arg1: tensor<1x2xf32>):
    %0 = tensor.empty() : tensor<1x2xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<1x2xf32>, tensor<1x2xf32>) outs(%0 : tensor<1x2xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.addf %in, %in_0 : f32
      %cst = arith.constant 0.000000e+00 : f32
      %3 = arith.maximumf %2, %cst : f32
      linalg.yield %3 : f32
    } -> tensor<1x2xf32>
    fabric.yield %1 : tensor<1x2xf32>
  }
  fabric.stream @a_to_res @a[0] -> @res[0] : !fabric.wavelets<f32, 2>
  fabric.stream @b_to_res @b[0] -> @res[1] : !fabric.wavelets<f32, 2>
  fabric.stream @res_to_y @res[0] -> @y[0] : !fabric.wavelets<f32, 2>
}

// -----

// Two branches from x, written interleaved (a1, b1, a2): each branch is laid
// out in one piece (a1 then a2, which reads a1's result; then b1), so a1's
// result is not relayed past b1. The join comes last.
// CHECK-LABEL: fabric.program @branches
// CHECK: fabric.kernel @a1 : {{.*}} at <0, 0, 1,
// CHECK: fabric.kernel @b1 : {{.*}} at <2, 0, 1,
// CHECK: fabric.kernel @a2 : {{.*}} at <1, 0, 1,
// CHECK: fabric.kernel @j : {{.*}} at <3, 0, 1,
fabric.program @branches attributes {target = #weft.target<8x4>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x8xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x8xf32>
  fabric.kernel @a1 : (tensor<1x8xf32>) -> tensor<1x8xf32> scheme #fabric.elementwise<op = "Relu"> {
  ^bb0(%v: tensor<1x8xf32>):
    fabric.yield %v : tensor<1x8xf32>
  }
  fabric.kernel @b1 : (tensor<1x8xf32>) -> tensor<1x8xf32> scheme #fabric.elementwise<op = "Neg"> {
  ^bb0(%v: tensor<1x8xf32>):
    fabric.yield %v : tensor<1x8xf32>
  }
  fabric.kernel @a2 : (tensor<1x8xf32>) -> tensor<1x8xf32> scheme #fabric.elementwise<op = "Abs"> {
  ^bb0(%v: tensor<1x8xf32>):
    fabric.yield %v : tensor<1x8xf32>
  }
  fabric.kernel @j : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32> scheme #fabric.join<op = add> {
  ^bb0(%a: tensor<1x8xf32>, %b: tensor<1x8xf32>):
    fabric.yield %a : tensor<1x8xf32>
  }
  fabric.stream @x_fork @x[0] -> @a1[0], @b1[0] : !fabric.wavelets<f32, 8>
  fabric.stream @a1_to_a2 @a1[0] -> @a2[0] : !fabric.wavelets<f32, 8>
  fabric.stream @a2_to_j @a2[0] -> @j[0] : !fabric.wavelets<f32, 8>
  fabric.stream @b1_to_j @b1[0] -> @j[1] : !fabric.wavelets<f32, 8>
  fabric.stream @j_to_y @j[0] -> @y[0] : !fabric.wavelets<f32, 8>
}

// -----

// Sparse inputs (docs/execution-model.md, "Sparse activations"): with
// sparse-activations, a mixed-precision dense layer whose input will arrive
// sparse is placed at its cost at the expected density. At 20 % non-zeros
// (the host input and fc1's ReLU results) both layers need fewer PEs for
// the same pace, so the pipeline gets faster (496 -> 212 cycles per
// sample); measured for fc1's node alone (10 %, the host input dense),
// fc2 needs one row instead of three; fp32 layers stay dense.
// RUN: weft-opt %s --split-input-file '--weft-partition-dense=precision=mixed sparse-activations=auto density=0.2 input-density=0.2' | FileCheck %s --check-prefix=SPARSE
// RUN: weft-opt %s --split-input-file '--weft-partition-dense=precision=mixed sparse-activations=auto densities=fc1=0.1 input-density=1' | FileCheck %s --check-prefix=MEASURED
// RUN: weft-opt %s --split-input-file '--weft-partition-dense=sparse-activations=on density=0.1' | FileCheck %s --check-prefix=FP32
// MIXED-LABEL: fabric.program @sparse
// MIXED: fabric.kernel @fc1 {{.*}} at <0, 0, 9, 7> attributes {precision = #fabric<precision mixed>, predicted_cycles = 496 : i64
// MIXED: fabric.kernel @fc2 {{.*}} at <9, 0, 7, 3> attributes {precision = #fabric<precision mixed>, predicted_cycles = 440 : i64
// SPARSE-LABEL: fabric.program @sparse
// SPARSE: fabric.kernel @fc1 {{.*}} at <0, 0, 5, 11> attributes {precision = #fabric<precision mixed>, predicted_cycles = 212 : i64
// SPARSE: fabric.kernel @fc2 {{.*}} at <5, 0, 11, 2> attributes {precision = #fabric<precision mixed>, predicted_cycles = 212 : i64
// MEASURED-LABEL: fabric.program @sparse
// MEASURED: fabric.kernel @fc1 {{.*}} at <0, 0, 9, 7>
// MEASURED: fabric.kernel @fc2 {{.*}} at <9, 0, 7, 1> attributes {precision = #fabric<precision mixed>, predicted_cycles = 404 : i64
// FP32-LABEL: fabric.program @sparse
// FP32: fabric.kernel @fc1 {{.*}} at <0, 0, 9, 7>
// FP32: fabric.kernel @fc2 {{.*}} at <9, 0, 7, 3>
fabric.program @sparse attributes {target = #weft.target<16x16, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x input west rows 0 to 1 : tensor<1x256xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x64xf32>
  fabric.kernel @fc1 : (tensor<1x256xf32>) -> tensor<1x256xf32> scheme #fabric.dense<fan_in = 256, neurons = 256, relu = true, weights = dense<0.25> : tensor<256x256xf32>, bias = dense<1.0> : tensor<256xf32>> {
  ^bb0(%a: tensor<1x256xf32>):
    fabric.yield %a : tensor<1x256xf32>
  } loc("fc1")
  fabric.kernel @fc2 : (tensor<1x256xf32>) -> tensor<1x64xf32> scheme #fabric.dense<fan_in = 256, neurons = 64, weights = dense<0.25> : tensor<256x64xf32>, bias = dense<1.0> : tensor<64xf32>> {
  ^bb0(%a: tensor<1x256xf32>):
    %e = tensor.empty() : tensor<1x64xf32>
    fabric.yield %e : tensor<1x64xf32>
  }
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 256>
  fabric.stream @fc1_to_fc2 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 256>
  fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 64>
}
