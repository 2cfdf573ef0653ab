// RUN: weft-opt %s --weft-partition-dense=precision=mixed --weft-select-sparse-streams=sparse-activations=on | FileCheck %s --check-prefix=ON
// RUN: weft-opt %s --weft-partition-dense=precision=mixed --weft-select-sparse-streams=sparse-activations=off | FileCheck %s --check-prefix=OFF
// RUN: weft-opt %s --weft-partition-dense=precision=mixed --weft-route-streams --weft-allocate-colors '--weft-select-sparse-streams=sparse-activations=on density=0.25' | FileCheck %s --check-prefix=ROUTED
// RUN: weft-opt %s --weft-partition-dense --weft-select-sparse-streams=sparse-activations=on | FileCheck %s --check-prefix=FP32
// RUN: weft-opt %s --weft-partition-dense=precision=mixed '--weft-select-sparse-streams=sparse-activations=auto explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: weft-opt %s --weft-partition-dense=precision=mixed '--weft-select-sparse-streams=sparse-activations=on densities=relu_1=0.125,fc1=0.9 density=0.75' | FileCheck %s --check-prefix=MEASURED
// RUN: weft-opt %s --weft-partition-dense=precision=mixed '--weft-select-sparse-streams=sparse-activations=auto densities=relu_1=0.125 explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN-MEASURED
// RUN: weft-opt %s --weft-partition-dense=precision=mixed '--weft-select-sparse-streams=sparse-activations=auto explain=true densities=relu_1=0.5:1:1:1:1:1:1:1:1:1:1:1:1:1:1:1:1:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0 input-densities=x=0.15625:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:1:1:1:1:1:1:1:1:1:1' 2>&1 | FileCheck %s --check-prefix=PROFILE
// RUN: weft-opt %s --weft-partition-dense=precision=mixed '--weft-select-sparse-streams=sparse-activations=auto explain=true densities=relu_1=0.5:1:0 input-densities=x=0.15625' -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOPROFILE

// A ReLU layer into a dense layer computing in mixed precision: `on` marks
// the stream between them with the density assumed, and the host input
// into the first layer with the input density (the host then sends only
// its non-zero values); the output stays dense; `off` marks nothing; in
// fp32 nothing is eligible; a routed program keeps the mark on the stream
// into the turn.

// ON: fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 64> {sparse = #fabric.sparse<density = 0.5>}
// ON: fabric.stream @h @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 32> {sparse = #fabric.sparse<density = 0.5>}
// ON: fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 16>{{$}}
// EXPLAIN: remark: {{sparse|stays dense}}: a host input at density 0.500 (expected); predicted cycles per sample of @fc1 {{[0-9]+}} dense, {{[0-9]+}} sparse; wavelets 64 -> {{[0-9]+}}
// EXPLAIN: remark: {{sparse|stays dense}}: at density 0.500 (expected), predicted cycles per sample {{[0-9]+}} dense, {{[0-9]+}} sparse (@fc2 {{[0-9]+}} -> {{[0-9]+}}); wavelets 32 -> {{[0-9]+}}

// A calibration run measured the results of ONNX nodes (`densities`): the
// stream from @fc1, whose location ends with node relu_1, expects relu_1's
// density, not fc1's (the node before the ReLU) nor `density`.
// MEASURED: fabric.stream @h @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 32> {sparse = #fabric.sparse<density = 0.125>}
// EXPLAIN-MEASURED: remark: {{sparse|stays dense}}: at density 0.125 (measured), predicted cycles per sample {{[0-9]+}} dense, {{[0-9]+}} sparse (@fc2 {{[0-9]+}} -> {{[0-9]+}}); wavelets 32 -> 10
// Measured per element (`densities=NODE=D:P0:...`, `input-densities`): each
// column of the consumer is costed at its own chunk's density. Half of
// relu_1's values are never zero and all in @fc2's first columns (chunks of
// 7: 1, 1, 2/7, 0, 0), so @fc2's busiest column runs all 7 of its data
// tasks: sparse gains it nothing (52 -> 52, against 52 -> 37 at a uniform
// 0.5) and auto keeps the stream dense. The host input's non-zeros are all
// in @fc1's last two columns; the last column sets @fc1's pace dense or
// sparse, so the input stays dense too, and @fc1 keeps its dense
// prediction. A profile of another length than the stream (NOPROFILE) is
// ignored: the mean decides.
// PROFILE: remark: stays dense: a host input at density 0.156 (measured, per element; the densest column chunk 1.000); predicted cycles per sample of @fc1 59 dense, 59 sparse; wavelets 64 -> 21
// PROFILE: remark: stays dense: at density 0.500 (measured, per element; the densest column chunk 1.000), predicted cycles per sample 59 dense, 68 sparse (@fc2 52 -> 52); wavelets 32 -> 21
// PROFILE: fabric.kernel @fc1 {{.*}}predicted_cycles = 59
// PROFILE: fabric.kernel @fc2 {{.*}}predicted_cycles = 52
// PROFILE-NOT: sparse =
// NOPROFILE: remark: sparse: a host input at density 0.156 (measured); predicted cycles per sample of @fc1 59 dense, 43 sparse; wavelets 64 -> 22
// NOPROFILE: remark: stays dense: at density 0.500 (measured), predicted cycles per sample 52 dense, 56 sparse (@fc2 52 -> 37); wavelets 32 -> 23
// OFF-NOT: sparse
// FP32-NOT: sparse
// ROUTED: fabric.stream @x_to_fc1 @x[0] -> @fc1_turn[0] : !fabric.wavelets<f32, 64> {color = #fabric.color<{{[0-9]+}}>, sparse = #fabric.sparse<density = 0.5>}
// ROUTED: fabric.stream @h @fc1[0] -> @fc2_turn[0] : !fabric.wavelets<f32, 32> {color = #fabric.color<{{[0-9]+}}>, sparse = #fabric.sparse<density = 0.25>}
// ROUTED-NOT: sparse =
fabric.program @mlp attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  fabric.kernel @fc1 : (tensor<1x64xf32>) -> tensor<1x32xf32> scheme #fabric.dense<fan_in = 64, neurons = 32, relu = true, weights = dense<0.25> : tensor<64x32xf32>> {
  ^bb0(%x: tensor<1x64xf32>):
    %w = arith.constant dense<0.25> : tensor<64x32xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x32xf32>
    %acc = linalg.fill ins(%z : f32) outs(%e : tensor<1x32xf32>) -> tensor<1x32xf32>
    %y = linalg.matmul ins(%x, %w : tensor<1x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<1x32xf32>) -> tensor<1x32xf32>
    fabric.yield %y : tensor<1x32xf32>
  } loc(fused["fc1", "relu_1"])
  fabric.kernel @fc2 : (tensor<1x32xf32>) -> tensor<1x16xf32> scheme #fabric.dense<fan_in = 32, neurons = 16, weights = dense<0.5> : tensor<32x16xf32>> {
  ^bb0(%x: tensor<1x32xf32>):
    %w = arith.constant dense<0.5> : tensor<32x16xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x16xf32>
    %acc = linalg.fill ins(%z : f32) outs(%e : tensor<1x16xf32>) -> tensor<1x16xf32>
    %y = linalg.matmul ins(%x, %w : tensor<1x32xf32>, tensor<32x16xf32>) outs(%acc : tensor<1x16xf32>) -> tensor<1x16xf32>
    fabric.yield %y : tensor<1x16xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x64xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x16xf32>
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 64>
  fabric.stream @h @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 32>
  fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 16>
}
