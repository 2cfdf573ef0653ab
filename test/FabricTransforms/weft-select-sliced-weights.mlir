// RUN: weft-opt %s --weft-partition-dense --weft-select-sliced-weights | FileCheck %s --check-prefix=AUTO
// RUN: weft-opt %s --weft-partition-dense --weft-select-sliced-weights=sparse-weights=on | FileCheck %s --check-prefix=ON
// RUN: weft-opt %s --weft-partition-dense --weft-select-sliced-weights=sparse-weights=off | FileCheck %s --check-prefix=OFF
// RUN: weft-opt %s --weft-partition-dense '--weft-select-sliced-weights=explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: weft-opt %s --weft-partition-dense --weft-route-streams --weft-allocate-colors --weft-select-sliced-weights --weft-lower-fabric-to-wavelet | FileCheck %s --check-prefix=LOWER
// RUN: weft-opt %s --weft-partition-dense=precision=mixed --weft-route-streams --weft-allocate-colors --weft-select-sliced-weights --weft-lower-fabric-to-wavelet | FileCheck %s --check-prefix=MIXED

// fc1's weights are 101 of 128 zeros: auto slices them (the weight reads
// take far less energy) and the prediction falls by the MAC groups the
// busiest PE no longer issues; fc2's have no zero: auto keeps them dense,
// on slices them too, off marks nothing. The lowering reads the mark: fc1's
// weight DSD is sliced and its weights are packed words (i16), fc2's are
// plain fp32.

// AUTO: fabric.kernel @fc1 {{.*}} attributes {precision = #fabric<precision fp32>, predicted_cycles = 33 : i64, sliced_weights, smear = 4 : i64}
// AUTO: fabric.kernel @fc2
// AUTO-NOT: sliced_weights
// ON-COUNT-2: sliced_weights
// OFF-NOT: sliced_weights
// EXPLAIN: remark: sliced weights: 101 of 128 weights are zero; weight reads 384.0 pJ dense, {{[0-9.]+}} pJ sliced ({{[0-9.]+}} % less); MAC groups 128 -> 27 (busiest PE {{[0-9]+}} -> {{[0-9]+}}); busiest PE {{[0-9]+}} -> {{[0-9]+}} bytes of 49152
// EXPLAIN: remark: dense weights: 0 of 32 weights are zero; weight reads 96.0 pJ dense, 92.0 pJ sliced (4.2 % less); MAC groups 32 -> 32
// LOWER: wavelet.segment @weights at {{[0-9]+}} per_pe = dense_resource<fc1_w_{{[0-9]+}}> : tensor<{{[0-9]+}}x1x{{[0-9]+}}xi16>
// LOWER: wavelet.dsd @w at {{[0-9]+}} mem1d {{{.*}}ix, length = {{[0-9]+}} : i64, sl}
// LOWER: wavelet.segment @weights at {{[0-9]+}} per_pe = dense_resource<fc2_w_{{[0-9]+}}> : tensor<{{[0-9]+}}x1x{{[0-9]+}}xf32>
// LOWER-NOT: sl}
// MIXED: wavelet.segment @weights at {{[0-9]+}} per_pe = dense_resource<fc1_w_{{[0-9]+}}> : tensor<{{[0-9]+}}x1x{{[0-9]+}}xi16>
// MIXED: wavelet.dsd @w at {{[0-9]+}} mem1d {{{.*}}ix, length = {{[0-9]+}} : i64, sl}
fabric.program @mlp attributes {target = #weft.target<8x8>, weft.batch = 1 : i64} {
  fabric.kernel @fc1 : (tensor<1x16xf32>) -> tensor<1x8xf32> scheme #fabric.dense<fan_in = 16, neurons = 8, relu = true, weights = dense<[[0.0, 0.0, 0.0, -1.25, 1.0, 0.5, -0.5, 0.0], [0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, -0.75, 0.0, 0.0, -0.25, 0.0, 0.0], [-2.75, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0], [-0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25, 0.0], [-1.25, -0.75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, -0.25, 0.0, 0.25, 0.0, 0.0], [0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.75, 0.0, 1.0, 0.0, 0.0, 0.0, -0.5], [0.0, 0.0, -1.75, 0.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.25, 0.5, -1.0, 0.0, 1.75, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<16x8xf32>> {
  ^bb0(%x: tensor<1x16xf32>):
    %w = arith.constant dense<[[0.0, 0.0, 0.0, -1.25, 1.0, 0.5, -0.5, 0.0], [0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, -0.75, 0.0, 0.0, -0.25, 0.0, 0.0], [-2.75, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0], [-0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25, 0.0], [-1.25, -0.75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, -0.25, 0.0, 0.25, 0.0, 0.0], [0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.75, 0.0, 1.0, 0.0, 0.0, 0.0, -0.5], [0.0, 0.0, -1.75, 0.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.25, 0.5, -1.0, 0.0, 1.75, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<16x8xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x8xf32>
    %acc = linalg.fill ins(%z : f32) outs(%e : tensor<1x8xf32>) -> tensor<1x8xf32>
    %y = linalg.matmul ins(%x, %w : tensor<1x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<1x8xf32>) -> tensor<1x8xf32>
    %r = linalg.map { arith.maximumf } ins(%y, %acc : tensor<1x8xf32>, tensor<1x8xf32>) outs(%e : tensor<1x8xf32>)
    fabric.yield %r : tensor<1x8xf32>
  }
  fabric.kernel @fc2 : (tensor<1x8xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 8, neurons = 4, weights = dense<0.5> : tensor<8x4xf32>> {
  ^bb0(%x: tensor<1x8xf32>):
    %w = arith.constant dense<0.5> : tensor<8x4xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x4xf32>
    %acc = linalg.fill ins(%z : f32) outs(%e : tensor<1x4xf32>) -> tensor<1x4xf32>
    %y = linalg.matmul ins(%x, %w : tensor<1x8xf32>, tensor<8x4xf32>) outs(%acc : tensor<1x4xf32>) -> tensor<1x4xf32>
    fabric.yield %y : tensor<1x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x16xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 16>
  fabric.stream @h @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 8>
  fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 4>
}
