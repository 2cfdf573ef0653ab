// RUN: echo 'module {}' | not weft-opt --weft-select-sliced-weights=sparse-weights=maybe 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not weft-opt %s --weft-partition-dense --weft-select-sliced-weights=sparse-weights=on 2>&1 | FileCheck %s
// RUN: weft-opt %s --weft-partition-dense --weft-select-sliced-weights=sparse-weights=auto | FileCheck %s --check-prefix=AUTO

// MODE: sparse-weights must be off, auto or on, not 'maybe'

// One PE holds 3000 fp32 weights of one neuron: 12 KB dense, but sliced
// each column of one lane takes a word of four lanes and its mask (9
// words instead of 2), more than the PE's 48 KB: `on` refuses and says
// how much it would need; `auto` keeps the weights dense.
// CHECK: error: 'fabric.kernel' op cannot store its weights sliced (--sparse-weights=on): its busiest PE would need 56320 bytes (14320 dense) of the 49152 a PE has
// AUTO-NOT: sliced_weights
fabric.program @tall attributes {target = #weft.target<1x1>, weft.batch = 1 : i64} {
  fabric.kernel @fc : (tensor<1x3000xf32>) -> tensor<1x1xf32> scheme #fabric.dense<fan_in = 3000, neurons = 1, weights = dense<0.0> : tensor<3000x1xf32>> {
  ^bb0(%x: tensor<1x3000xf32>):
    %w = arith.constant dense<0.0> : tensor<3000x1xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x1xf32>
    %acc = linalg.fill ins(%z : f32) outs(%e : tensor<1x1xf32>) -> tensor<1x1xf32>
    %y = linalg.matmul ins(%x, %w : tensor<1x3000xf32>, tensor<3000x1xf32>) outs(%acc : tensor<1x1xf32>) -> tensor<1x1xf32>
    fabric.yield %y : tensor<1x1xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x3000xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x1xf32>
  fabric.stream @x_to_fc @x[0] -> @fc[0] : !fabric.wavelets<f32, 3000>
  fabric.stream @fc_to_y @fc[0] -> @y[0] : !fabric.wavelets<f32, 1>
}
