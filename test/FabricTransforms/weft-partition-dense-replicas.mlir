// RUN: weft-opt %s --split-input-file '--weft-partition-dense=replicas=4' | FileCheck %s --check-prefix=FOUR
// RUN: weft-opt %s --split-input-file '--weft-partition-dense=replicas=auto' | FileCheck %s --check-prefix=AUTO
// RUN: weft-opt %s --split-input-file '--weft-partition-dense=replicas=1' | FileCheck %s --check-prefix=ONE
// RUN: weft-opt %s --split-input-file '--weft-partition-dense=grid=auto max-grid=16x16 replicas=3' | FileCheck %s --check-prefix=GROW
// RUN: weft-opt %s --split-input-file '--weft-partition-dense=grid=auto max-grid=16x16 replicas=auto' | FileCheck %s --check-prefix=GRIDAUTO

// Copies of the network (docs/execution-model.md, "Replicas"): with N
// copies one copy is partitioned for floor(16 / N) rows and the count is
// recorded for --weft-replicate (weft.replicas, weft.replica_plan). Auto
// tries every count: a single dense layer of 64 -> 32 is fastest on the
// whole fabric alone, but 256 copies of it on one PE each (16 side by side
// in 16 bands) deliver more samples per cycle; so do copies of a chain of
// small layers (below). One copy
// changes nothing; with grid=auto the grid is chosen for one copy and N
// copies make it N times as tall (auto adds none).

// FOUR-LABEL: fabric.program @layer
// FOUR-SAME: target = #weft.target<16x16,
// FOUR-SAME: weft.replica_plan = "4 copies of 16x4 PEs (each partitioned for 16x4: predicted {{[0-9]+}} cycles per sample)"
// FOUR-SAME: weft.replicas = 4 : i64
// FOUR: fabric.kernel @fc {{.*}} at <0, 0, 4, 4>
// FOUR: fabric.io @x input west rows 0 to 4
// FOUR: fabric.io @y output east rows 0 to 4

// Auto also puts copies side by side in a band, as many as the width
// allows (the colors, checked by routing, may allow fewer: docs/weftc.md):
// copy k of a band k x 4 columns east, its symbols suffixed _r<k>, its host
// ports on the same rows marked with their copy.
// AUTO-LABEL: fabric.program @layer
// AUTO-SAME: weft.replica_columns = 16 : i64
// AUTO-SAME: weft.replica_plan = "256 copies of 1x1 PEs (each partitioned for 16x1: predicted [[T:[0-9]+]] cycles per sample); one copy on the whole 16x16 fabric: {{[0-9]+}} cycles per sample; 7 of 7 bands fit; 16 side by side in each of 16 bands of rows"
// AUTO-SAME: weft.replicas = 256 : i64
// AUTO: fabric.kernel @fc : {{.*}} at <0, 0, 1, 1> attributes {precision = #fabric<precision fp32>, predicted_cycles = [[T]] : i64}
// AUTO: fabric.io @x input west rows 0 to 1 : tensor<1x64xf32> {weft.replica = 0 : i64}
// AUTO: fabric.kernel @fc_r1 : {{.*}} at <1, 0, 1, 1> attributes {{{.*}}weft.replica = 1 : i64}
// AUTO: fabric.io @x_r1 input west rows 0 to 1 : tensor<1x64xf32> {weft.replica = 1 : i64, weft.replica_of = "x"}
// AUTO: fabric.io @y_r1 output east rows 0 to 1 : tensor<1x32xf32> {weft.replica = 1 : i64, weft.replica_of = "y"}
// AUTO: fabric.stream @x_to_fc_r1 @x_r1[0] -> @fc_r1[0] : !fabric.wavelets<f32, 64> {weft.replica = 1 : i64}
// AUTO: fabric.stream @fc_to_y_r1 @fc_r1[0] -> @y_r1[0]
// AUTO: fabric.kernel @fc_r15 : {{.*}} at <15, 0, 1, 1>
// AUTO-NOT: fabric.kernel

// ONE-LABEL: fabric.program @layer
// ONE-NOT: weft.replica
// ONE: fabric.kernel @fc {{.*}} at <0, 0, 13, 16>

// GROW-LABEL: fabric.program @layer
// GROW-SAME: target = #weft.target<1x3,
// GROW-SAME: weft.grid_auto = "1x1:
// GROW-SAME: weft.replica_plan = "3 copies of 1x1 PEs (each partitioned for 1x1: predicted {{[0-9]+}} cycles per sample)"
// GROW-SAME: weft.replicas = 3 : i64

// GRIDAUTO-LABEL: fabric.program @layer
// GRIDAUTO-SAME: target = #weft.target<1x1,
// GRIDAUTO-NOT: weft.replica
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

// The chain 37 -> 129 -> 61 on 16x16: each copy on a band
// of fewer rows is slower, but more copies deliver more samples per cycle.

// FOUR-LABEL: fabric.program @mlp
// FOUR-SAME: weft.replicas = 4 : i64
// AUTO-LABEL: fabric.program @mlp
// AUTO-SAME: weft.replica_plan = "{{[0-9]+}} copies of {{[0-9]+}}x{{[0-9]+}} PEs (each partitioned for 16x{{[0-9]+}}: predicted {{[0-9]+}} cycles per sample); one copy on the whole 16x16 fabric: {{[0-9]+}} cycles per sample; 7 of 7 bands fit
// AUTO-SAME: weft.replicas = {{[1-9][0-9]*}} : i64
fabric.program @mlp attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  fabric.kernel @fc1 : (tensor<1x37xf32>) -> tensor<1x129xf32> scheme #fabric.dense<fan_in = 37, neurons = 129, weights = dense<0.25> : tensor<37x129xf32>> {
  ^bb0(%x: tensor<1x37xf32>):
    %w = arith.constant dense<0.25> : tensor<37x129xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x129xf32>
    %acc = linalg.fill ins(%z : f32) outs(%e : tensor<1x129xf32>) -> tensor<1x129xf32>
    %y = linalg.matmul ins(%x, %w : tensor<1x37xf32>, tensor<37x129xf32>) outs(%acc : tensor<1x129xf32>) -> tensor<1x129xf32>
    fabric.yield %y : tensor<1x129xf32>
  }
  fabric.kernel @fc2 : (tensor<1x129xf32>) -> tensor<1x61xf32> scheme #fabric.dense<fan_in = 129, neurons = 61, weights = dense<0.25> : tensor<129x61xf32>> {
  ^bb0(%x: tensor<1x129xf32>):
    %w = arith.constant dense<0.25> : tensor<129x61xf32>
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x61xf32>
    %acc = linalg.fill ins(%z : f32) outs(%e : tensor<1x61xf32>) -> tensor<1x61xf32>
    %y = linalg.matmul ins(%x, %w : tensor<1x129xf32>, tensor<129x61xf32>) outs(%acc : tensor<1x61xf32>) -> tensor<1x61xf32>
    fabric.yield %y : tensor<1x61xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x37xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x61xf32>
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 37>
  fabric.stream @fc1_to_fc2 @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 129>
  fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 61>
}
