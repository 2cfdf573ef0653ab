// MaxPool with ceil_mode pads the end for the extra window; AveragePool with
// pads and count_include_pad=0 divides by a per-position count table;
// GlobalAveragePool is a reduction plus a division.
// RUN: %python %S/../models/gen_models.py pool %t.onnx
// RUN: weft-translate --import-onnx %t.onnx | FileCheck %s

// CHECK-LABEL: func.func @main_graph(
// CHECK-SAME: %[[X:.+]]: tensor<1x3x8x8xf32> {onnx.name = "x"}) -> (tensor<1x3x1x1xf32> {onnx.name = "z"})
// 8 rows, kernel 3, stride 2, ceil mode: 4 windows, the last one reaches row 8.
// CHECK-DAG: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[DIV:.+]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00], [2.000000e+00, 4.000000e+00, 4.000000e+00, 4.000000e+00]{{.*}}> : tensor<4x4xf32>
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NEGINF]]
// CHECK: tensor<1x3x8x8xf32> to tensor<1x3x9x9xf32>
// CHECK: %[[W:.+]] = tensor.empty() : tensor<3x3xf32>
// CHECK: %[[M:.+]] = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[W]] : tensor<1x3x9x9xf32>, tensor<3x3xf32>) outs(%{{.+}} : tensor<1x3x4x4xf32>)
// CHECK: %[[P2:.+]] = tensor.pad %[[M]] low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK: %[[S:.+]] = linalg.pooling_nchw_sum {{.*}} ins(%[[P2]], %{{.+}} : tensor<1x3x5x5xf32>, tensor<2x2xf32>) outs(%{{.+}} : tensor<1x3x4x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[S]], %[[DIV]] : tensor<1x3x4x4xf32>, tensor<4x4xf32>)
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK: tensor.expand_shape {{.*}} into tensor<1x3x1x1xf32>
// CHECK: arith.constant 1.600000e+01 : f32
