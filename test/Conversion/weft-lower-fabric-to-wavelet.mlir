// A placed dense layer (6 inputs, 5 neurons, bias, ReLU) on a 2x3
// rectangle of a 4x3 fabric, lowered to per-PE programs, translated to a
// binary and simulated; the result is checked against numpy.

// RUN: weft-opt %s --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: weft-opt %s --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet | weft-translate --wavelet-to-wfb -o %t/fc.wfb
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.array([[0.5, -1.0, 2.0, 0.25, -0.75, 1.5]], np.float32))"
// RUN: weft-sim %t/fc.wfb --input x=%t/x.npy --output-dir %t/out --stats %t/stats.json | FileCheck %s --check-prefix=SIM
// RUN: %python %S/../tools/weft-sim/Inputs/npy.py print %t/out/y.npy | FileCheck %s --check-prefix=Y
// RUN: %python -c "import numpy as np; x = np.load('%t/x.npy'); W = np.array([[-0.800000011920929, -1.3200000524520874, -0.25, 0.41999998688697815, 1.1399999856948853], [0.10999999940395355, -0.550000011920929, -0.7799999713897705, 0.75, 1.6299999952316284], [0.27000001072883606, -1.2300000190734863, -0.9599999785423279, 1.600000023841858, 0.20000000298023224], [-1.7300000190734863, -0.07999999821186066, -1.159999966621399, -0.6299999952316284, -0.49000000953674316], [-0.7099999785423279, 0.550000011920929, -0.05999999865889549, -0.5899999737739563, 0.4099999964237213], [0.8299999833106995, -1.6399999856948853, -0.25999999046325684, -0.9800000190734863, -0.17000000178813934]], np.float32); b = np.array([-1.2899999618530273, 0.019999999552965164, -0.03999999910593033, -0.30000001192092896, -1.0499999523162842], np.float32); y = np.maximum(x @ W + b, 0); got = np.load('%t/out/y.npy'); assert np.allclose(got, y, rtol=1e-6, atol=1e-6), (got, y); print('MATCH')" | FileCheck %s --check-prefix=MATCH

// CHECK-LABEL: wavelet.program @dense
// CHECK-SAME: layers = ["fc"]
// Routes and colors come from --weft-route-streams and
// --weft-allocate-colors: the input stream (0), the turn's column multicast
// (1), the output stream (2) and the partial sums (3).
// CHECK: wavelet.io @x input west rows 0 to 2 color 0 "dense32" : tensor<1x6xf32>
// CHECK: wavelet.io @y output east rows 0 to 3 color 2 "dense32" : tensor<1x5xf32>
// The diagonal PE of column 0 turns the row-0 input into its column.
// CHECK: wavelet.pe @fc_c0_r0 at (0, 0)
// CHECK: wavelet.route color 0 from [west] to [ramp]
// CHECK-NEXT: wavelet.route color 1 from [ramp] to [south, ramp]
// CHECK-NEXT: wavelet.route color 3 from [ramp] to [east]
// CHECK: wavelet.task @mac data 1 {
// CHECK-NEXT: wavelet.inst fmac dsr 0, gpr 0
// CHECK-NEXT: wavelet.inst add16 gpr 4, gpr 5 term
// CHECK: wavelet.task @closeout_even control 1 {
// CHECK: wavelet.task @closeout_odd control 2 {
// CHECK: wavelet.task @copy_even local 33 {
// CHECK-NEXT: wavelet.inst mov32 ddsr 5, s0dsr 5 term
// The last column adds the bias and applies ReLU on the way out.
// CHECK: wavelet.pe @fc_c1_r2 at (1, 2)
// CHECK: wavelet.inst fadd dsr 2, s1dsr 2
// CHECK-NEXT: wavelet.inst fmax dsr 3, imm zero
// CHECK-NEXT: wavelet.inst mov32 ddsr 8, s0dsr 8
// CHECK: wavelet.pe_group @relay_2_0 at <2, 0, 2, 3>
// CHECK-NEXT: wavelet.route color 2 from [west] to [east]

// SIM: weft-sim: done in
// MATCH: MATCH
// Y: {{[-0-9.e]+ [-0-9.e]+ [-0-9.e]+ [-0-9.e]+ [-0-9.e]+$}}

fabric.program @dense attributes {target = #weft.target<4x3>} {
  fabric.io @x input west rows 0 to 2 : tensor<1x6xf32>
  fabric.io @y output east rows 0 to 3 : tensor<1x5xf32>
  fabric.kernel @fc : (tensor<1x6xf32>) -> tensor<1x5xf32> scheme #fabric.dense<fan_in = 6, neurons = 5, relu = true, weights = dense<[[-0.80, -1.32, -0.25, 0.42, 1.14], [0.11, -0.55, -0.78, 0.75, 1.63], [0.27, -1.23, -0.96, 1.60, 0.20], [-1.73, -0.08, -1.16, -0.63, -0.49], [-0.71, 0.55, -0.06, -0.59, 0.41], [0.83, -1.64, -0.26, -0.98, -0.17]]> : tensor<6x5xf32>, bias = dense<[-1.29, 0.02, -0.04, -0.30, -1.05]> : tensor<5xf32>> at #weft.rect<0, 0, 2, 3>
      attributes {smear = 2 : i64} {
  ^bb0(%x: tensor<1x6xf32>):
    %w = arith.constant dense<[[-0.80, -1.32, -0.25, 0.42, 1.14], [0.11, -0.55, -0.78, 0.75, 1.63], [0.27, -1.23, -0.96, 1.60, 0.20], [-1.73, -0.08, -1.16, -0.63, -0.49], [-0.71, 0.55, -0.06, -0.59, 0.41], [0.83, -1.64, -0.26, -0.98, -0.17]]> : tensor<6x5xf32>
    %b = arith.constant dense<[-1.29, 0.02, -0.04, -0.30, -1.05]> : tensor<5xf32>
    %e = tensor.empty() : tensor<1x5xf32>
    %acc = linalg.broadcast ins(%b : tensor<5xf32>) outs(%e : tensor<1x5xf32>) dimensions = [0]
    %mm = linalg.matmul ins(%x, %w : tensor<1x6xf32>, tensor<6x5xf32>) outs(%acc : tensor<1x5xf32>) -> tensor<1x5xf32>
    %e2 = tensor.empty() : tensor<1x5xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<1x5xf32>) outs(%e2 : tensor<1x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %z = arith.constant 0.0 : f32
      %m = arith.maximumf %in, %z : f32
      linalg.yield %m : f32
    } -> tensor<1x5xf32>
    fabric.yield %r : tensor<1x5xf32>
  }
  fabric.stream @s0 @x[0] -> @fc[0] : !fabric.wavelets<f32, 6>
  fabric.stream @s1 @fc[0] -> @y[0] : !fabric.wavelets<f32, 5>
}
