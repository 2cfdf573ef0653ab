// Two dense layers side by side: the first's three output row chunks are
// the second's three input chunks (S2 = R1), so its results enter the
// second layer's rows directly. Colors are allocated over the whole chain.
// Lowered, translated, simulated for four samples and checked against numpy.

// RUN: rm -rf %t && mkdir -p %t
// RUN: weft-opt %s --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet | FileCheck %s
// RUN: weft-opt %s --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet | weft-translate --wavelet-to-wfb -o %t/mlp.wfb
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32))"
// RUN: weft-sim %t/mlp.wfb --samples 4 --input x=%t/x.npy --output-dir %t/out | FileCheck %s --check-prefix=SIM
// RUN: %python -c "import numpy as np; x = np.load('%t/x.npy'); W1 = np.array([[-1.7400000095367432, -1.340000033378601, -1.3600000143051147, -0.3499999940395355, -2.309999942779541, -0.1899999976158142], [-0.9599999785423279, 0.8899999856948853, 0.9599999785423279, 1.3899999856948853, 0.7699999809265137, -0.05000000074505806], [0.8600000143051147, 1.5099999904632568, -0.6499999761581421, 0.6100000143051147, -0.03999999910593033, 1.440000057220459], [-0.8399999737739563, -0.30000001192092896, 0.36000001430511475, 0.25999999046325684, -1.6399999856948853, 0.36000001430511475], [-0.11999999731779099, -0.23999999463558197, -0.1599999964237213, 0.2199999988079071, -1.8200000524520874, 1.5499999523162842], [-0.8600000143051147, -2.240000009536743, -0.07999999821186066, 1.4600000381469727, -0.5199999809265137, 1.5499999523162842]], np.float32); b1 = np.array([1.559999942779541, -0.8600000143051147, -2.4700000286102295, -1.2400000095367432, 1.190000057220459, -0.8199999928474426], np.float32); W2 = np.array([[-1.5099999904632568, -1.340000033378601, 0.0, -0.029999999329447746], [0.8700000047683716, 0.9900000095367432, -0.9300000071525574, -0.1599999964237213], [-1.1299999952316284, 0.07000000029802322, -1.149999976158142, -1.2000000476837158], [2.119999885559082, 0.029999999329447746, 0.6399999856948853, 2.5399999618530273], [0.7900000214576721, -0.10999999940395355, 0.05000000074505806, -0.7400000095367432], [1.090000033378601, -0.33000001311302185, 1.7599999904632568, -0.3400000035762787]], np.float32); b2 = np.array([-0.3499999940395355, -0.41999998688697815, 0.6299999952316284, 0.1899999976158142], np.float32); y = np.maximum(x @ W1 + b1, 0) @ W2 + b2; got = np.load('%t/out/y.npy').reshape(4, 4); assert np.allclose(got, y, rtol=1e-5, atol=1e-5), (got, y); print('MATCH')" | FileCheck %s --check-prefix=MATCH

// CHECK-LABEL: wavelet.program @mlp
// CHECK-SAME: layers = ["fc1", "fc2"]
// CHECK: wavelet.pe @fc2_c0_r0 at (2, 0)
// CHECK: wavelet.pe_group @relay_5_0 at <5, 0, 1, 2>
// SIM: weft-sim: done in
// MATCH: MATCH

fabric.program @mlp attributes {target = #weft.target<6x3>} {
  fabric.io @x input west rows 0 to 2 : tensor<1x6xf32>
  fabric.io @y output east rows 0 to 2 : tensor<1x4xf32>
  fabric.kernel @fc1 : (tensor<1x6xf32>) -> tensor<1x6xf32> scheme #fabric.dense<fan_in = 6, neurons = 6, relu = true, weights = dense<[[-1.74, -1.34, -1.36, -0.35, -2.31, -0.19], [-0.96, 0.89, 0.96, 1.39, 0.77, -0.05], [0.86, 1.51, -0.65, 0.61, -0.04, 1.44], [-0.84, -0.30, 0.36, 0.26, -1.64, 0.36], [-0.12, -0.24, -0.16, 0.22, -1.82, 1.55], [-0.86, -2.24, -0.08, 1.46, -0.52, 1.55]]> : tensor<6x6xf32>, bias = dense<[1.56, -0.86, -2.47, -1.24, 1.19, -0.82]> : tensor<6xf32>> at #weft.rect<0, 0, 2, 3>
      attributes {smear = 2 : i64} {
  ^bb0(%x: tensor<1x6xf32>):
    %w = arith.constant dense<[[-1.74, -1.34, -1.36, -0.35, -2.31, -0.19], [-0.96, 0.89, 0.96, 1.39, 0.77, -0.05], [0.86, 1.51, -0.65, 0.61, -0.04, 1.44], [-0.84, -0.30, 0.36, 0.26, -1.64, 0.36], [-0.12, -0.24, -0.16, 0.22, -1.82, 1.55], [-0.86, -2.24, -0.08, 1.46, -0.52, 1.55]]> : tensor<6x6xf32>
    %b = arith.constant dense<[1.56, -0.86, -2.47, -1.24, 1.19, -0.82]> : tensor<6xf32>
    %e = tensor.empty() : tensor<1x6xf32>
    %acc = linalg.broadcast ins(%b : tensor<6xf32>) outs(%e : tensor<1x6xf32>) dimensions = [0]
    %mm = linalg.matmul ins(%x, %w : tensor<1x6xf32>, tensor<6x6xf32>) outs(%acc : tensor<1x6xf32>) -> tensor<1x6xf32>
    %e2 = tensor.empty() : tensor<1x6xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<1x6xf32>) outs(%e2 : tensor<1x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %z = arith.constant 0.0 : f32
      %m = arith.maximumf %in, %z : f32
      linalg.yield %m : f32
    } -> tensor<1x6xf32>
    fabric.yield %r : tensor<1x6xf32>
  }
  fabric.kernel @fc2 : (tensor<1x6xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 6, neurons = 4, weights = dense<[[-1.51, -1.34, 0.00, -0.03], [0.87, 0.99, -0.93, -0.16], [-1.13, 0.07, -1.15, -1.20], [2.12, 0.03, 0.64, 2.54], [0.79, -0.11, 0.05, -0.74], [1.09, -0.33, 1.76, -0.34]]> : tensor<6x4xf32>, bias = dense<[-0.35, -0.42, 0.63, 0.19]> : tensor<4xf32>> at #weft.rect<2, 0, 3, 2>
      attributes {smear = 3 : i64} {
  ^bb0(%x: tensor<1x6xf32>):
    %w = arith.constant dense<[[-1.51, -1.34, 0.00, -0.03], [0.87, 0.99, -0.93, -0.16], [-1.13, 0.07, -1.15, -1.20], [2.12, 0.03, 0.64, 2.54], [0.79, -0.11, 0.05, -0.74], [1.09, -0.33, 1.76, -0.34]]> : tensor<6x4xf32>
    %b = arith.constant dense<[-0.35, -0.42, 0.63, 0.19]> : tensor<4xf32>
    %e = tensor.empty() : tensor<1x4xf32>
    %acc = linalg.broadcast ins(%b : tensor<4xf32>) outs(%e : tensor<1x4xf32>) dimensions = [0]
    %mm = linalg.matmul ins(%x, %w : tensor<1x6xf32>, tensor<6x4xf32>) outs(%acc : tensor<1x4xf32>) -> tensor<1x4xf32>
    fabric.yield %mm : tensor<1x4xf32>
  }
  fabric.stream @s0 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 6>
  fabric.stream @s1 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 6>
  fabric.stream @s2 @fc2[0] -> @y[0] : !fabric.wavelets<f32, 4>
}
