// RUN: not weft-opt %s '--weft-partition-dense=replicas=17' 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not weft-opt %s '--weft-partition-dense=replicas=0' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not weft-opt %s '--weft-partition-dense=replicas=-2' 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not weft-opt %s '--weft-partition-dense=replicas=many' 2>&1 | FileCheck %s --check-prefix=TEXT
// RUN: not weft-opt %s '--weft-partition-dense=grid=auto max-grid=16x16 replicas=40' 2>&1 | FileCheck %s --check-prefix=GROW
// RUN: not weft-opt %s '--weft-partition-dense=grid=2x2,mem=6144 replicas=2' 2>&1 | FileCheck %s --check-prefix=BAND

// Counts of copies that cannot be: an error with the numbers (checked with
// FileCheck: each RUN line gives the pass other options).

// ROWS: error: 'fabric.program' op does not fit 17 copies: 17 copies need at least one row each, but the fabric has 16 rows
// ZERO: error: replicas must be auto or a number of copies of at least 1, not '0'
// NEG: error: replicas must be auto or a number of copies of at least 1, not '-2'
// TEXT: error: replicas must be auto or a number of copies of at least 1, not 'many'
// GROW: error: 'fabric.program' op cannot stack 40 copies of the 1x1 fabric grid auto chose for one copy: they need 40 rows, more than the 16 of max-grid
// BAND: error: 'fabric.program' op does not fit 2 copies: 2 copies get 1 of the fabric's 2 rows each, and one copy does not fit 2x1: kernel 0 (dense 64 -> 32): {{.*}} at least 3 PEs of 6144 bytes, but the 2x1 fabric has no such rectangle
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
