// --weft-extract-kernels on a placed residual block (h = fc1(x),
// y = fc2(h) + h, h also a host output; kernels fc1, fc2, res in that
// order): the slice keeps its kernels as placed, moved to column 0, the
// streams that enter it become host inputs and those that leave it host
// outputs. The slice 1..2 (fc2 and the join, fed h by the host) is routed,
// lowered, simulated and checked against numpy: y = h @ 1 + h.
// RUN: weft-opt %s --split-input-file '--weft-extract-kernels=kernels=1..2' | FileCheck %s --check-prefix=TAIL
// RUN: weft-opt %s --split-input-file '--weft-extract-kernels=kernels=fc1..fc1' | FileCheck %s --check-prefix=HEAD
// RUN: weft-opt %s --split-input-file '--weft-extract-kernels=kernels=0..fc2' | FileCheck %s --check-prefix=TWO
// RUN: weft-opt %s --split-input-file '--weft-extract-kernels=kernels=2..2' | FileCheck %s --check-prefix=JOIN
// RUN: weft-opt %s --split-input-file --weft-extract-kernels | FileCheck %s --check-prefix=ALL
// RUN: rm -rf %t && mkdir -p %t
// RUN: weft-opt %s '--weft-extract-kernels=kernels=1..2' --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet | weft-translate --wavelet-to-wfb -o %t/net.wfb
// RUN: %python -c "import numpy as np; np.save('%t/h.npy', np.random.default_rng(5).standard_normal((3, 2)).astype(np.float32))"
// RUN: weft-sim %t/net.wfb --samples 3 --input fc1_fork_in=%t/h.npy --output-dir %t/out | FileCheck %s --check-prefix=SIM
// RUN: %python -c "import numpy as np; h = np.load('%t/h.npy'); y = h @ np.ones((2, 2), np.float32) + h; gy = np.load('%t/out/y.npy').reshape(3, 2); assert np.allclose(gy, y, rtol=1e-5), gy; print('MATCH')" | FileCheck %s --check-prefix=MATCH
// SIM: weft-sim: done in
// MATCH: MATCH

// fc1's result enters from the west edge in the rows fc1 sent it on; x
// and h (fed by fc1 alone) go; fc2 and the join keep their layouts and
// decisions, two columns further west.
// TAIL-LABEL: fabric.program @main_graph
// TAIL-SAME: target = #weft.target<3x2,
// TAIL-SAME: weft.slice = "kernels 1..2 of 3 from column 2; the whole network predicts 18 cycles per sample"
// TAIL-NOT: fabric.io @x
// TAIL-NOT: fabric.io @h
// TAIL: fabric.io @y output east rows 0 to 2
// TAIL-NOT: fabric.kernel @fc1
// TAIL: fabric.kernel @fc2 {{.*}} at <0, 0, 2, 2> attributes {precision = #fabric<precision fp32>, predicted_cycles = 18 : i64, smear = 2 : i64}
// TAIL: fabric.kernel @res {{.*}} scheme #fabric.join<op = add, buffered = 1, fifo = 2> at <2, 0, 1, 2>
// TAIL-NOT: fabric.stream @x_to_fc1
// TAIL: fabric.io @fc1_fork_in input west rows 0 to 2 : tensor<1x2xf32>
// TAIL-NEXT: fabric.stream @fc1_fork @fc1_fork_in[0] -> @fc2[0], @res[1] : !fabric.wavelets<f32, 2>
// TAIL: fabric.stream @fc2_to_res @fc2[0] -> @res[0]
// TAIL: fabric.stream @res_to_y @res[0] -> @y[0]

// fc1 alone: its fork keeps the host output h only.
// HEAD-LABEL: fabric.program @main_graph
// HEAD-SAME: target = #weft.target<2x2,
// HEAD: fabric.io @x input west rows 0 to 2
// HEAD-NOT: fabric.io @y
// HEAD: fabric.io @h output east
// HEAD: fabric.kernel @fc1 {{.*}} at <0, 0, 2, 2>
// HEAD-NOT: fabric.kernel
// HEAD: fabric.stream @x_to_fc1 @x[0] -> @fc1[0]
// HEAD-NEXT: fabric.stream @fc1_fork @fc1[0] -> @h[0]
// HEAD-NOT: fabric.stream

// fc1 and fc2: fc2's result leaves on the east edge.
// TWO-LABEL: fabric.program @main_graph
// TWO-SAME: target = #weft.target<4x2,
// TWO: fabric.kernel @fc1 {{.*}} at <0, 0, 2, 2>
// TWO: fabric.kernel @fc2 {{.*}} at <2, 0, 2, 2>
// TWO-NOT: fabric.kernel
// TWO: fabric.stream @fc1_fork @fc1[0] -> @fc2[0], @h[0]
// TWO: fabric.io @fc2_to_res_out output east rows 0 to 2 : tensor<1x2xf32>
// TWO-NEXT: fabric.stream @fc2_to_res @fc2[0] -> @fc2_to_res_out[0]

// The join alone (of vectors: its FIFO holds whole samples) takes both
// inputs from the host.
// JOIN-LABEL: fabric.program @main_graph
// JOIN-SAME: target = #weft.target<1x2,
// JOIN: fabric.kernel @res {{.*}} at <0, 0, 1, 2>
// JOIN: fabric.io @fc1_fork_in input west rows 0 to 2
// JOIN-NEXT: fabric.stream @fc1_fork @fc1_fork_in[0] -> @res[1]
// JOIN: fabric.io @fc2_to_res_in input west rows 0 to 2
// JOIN-NEXT: fabric.stream @fc2_to_res @fc2_to_res_in[0] -> @res[0]

// Without a range, the program is left as it is.
// ALL-LABEL: fabric.program @main_graph
// ALL-NOT: weft.slice
// ALL: fabric.kernel @fc1 {{.*}} at <0, 0, 2, 2>
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
