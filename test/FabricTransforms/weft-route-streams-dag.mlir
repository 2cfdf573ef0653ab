// --weft-route-streams on a DAG: a residual block whose fc1 result forks to
// fc2, the join and a host output, routed, colored, lowered, simulated and
// checked against numpy (all weights 1: h = fc1(x), y = fc2(h) + h).
// RUN: weft-opt %s --weft-route-streams | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: weft-opt %s --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet | weft-translate --wavelet-to-wfb -o %t/net.wfb
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.random.default_rng(5).standard_normal((3, 2)).astype(np.float32))"
// RUN: weft-sim %t/net.wfb --samples 3 --input x=%t/x.npy --output-dir %t/out | FileCheck %s --check-prefix=SIM
// RUN: %python -c "import numpy as np; x = np.load('%t/x.npy'); h = x @ np.ones((2, 2), np.float32); y = h @ np.ones((2, 2), np.float32) + h; gh = np.load('%t/out/h.npy').reshape(3, 2); gy = np.load('%t/out/y.npy').reshape(3, 2); assert np.allclose(gh, h, rtol=1e-5) and np.allclose(gy, y, rtol=1e-5), (gh, gy); print('MATCH')" | FileCheck %s --check-prefix=MATCH
// SIM: weft-sim: done in
// MATCH: MATCH

// A fork to a dense layer, a join and a host output (fc1's result): one
// route, a multicast tree: into fc2's turns at its diagonal PEs and on
// east, into the join's column and on east to the east edge.
// CHECK-LABEL: fabric.program @main_graph
// CHECK: fabric.route @fc1_fork {
// CHECK-NEXT: fabric.switch (1, 0) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (1, 1) from [ramp] to [east]
// CHECK-NEXT: fabric.switch (2, 0) from [west] to [east, ramp]
// CHECK-NEXT: fabric.switch (2, 1) from [west] to [east]
// CHECK-NEXT: fabric.switch (3, 0) from [west] to [east]
// CHECK-NEXT: fabric.switch (3, 1) from [west] to [east, ramp]
// CHECK-NEXT: fabric.switch (4, 0) from [west] to [east, ramp]
// CHECK-NEXT: fabric.switch (4, 1) from [west] to [east, ramp]
// CHECK-NEXT: fabric.switch (5, 0) from [west] to [east]
// CHECK-NEXT: fabric.switch (5, 1) from [west] to [east]
// CHECK-NEXT: }
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
