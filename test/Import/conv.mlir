// Grouped, depthwise and plain convolutions with pads, strides, dilations,
// auto_pad and bias. Weights stay dense_resource blobs named after the ONNX
// initializers; locations carry the node names.
// RUN: %python %S/../models/gen_models.py conv %t.onnx
// RUN: weft-translate --import-onnx %t.onnx --mlir-print-debuginfo \
// RUN:   --mlir-elide-resource-strings-if-larger=1 | FileCheck %s

// CHECK-DAG: #[[LDW:loc[0-9]+]] = loc("conv_depthwise"(#loc))
// CHECK-DAG: #[[LGROUP:loc[0-9]+]] = loc("conv_grouped"(#loc))
// CHECK: module attributes {onnx.ir_version = 8 : i64, onnx.opset = 13 : i64, onnx.producer = "weft-test"}
// CHECK-LABEL: func.func @main_graph(
// CHECK-SAME: %[[X:.+]]: tensor<1x4x9x9xf32> {onnx.name = "x"}
// CHECK-SAME: -> (tensor<1x4x5x9xf32> {onnx.name = "y"})
// CHECK-DAG: %[[W3:.+]] = arith.constant dense_resource<w3> : tensor<4x8x1x1xf32>
// CHECK-DAG: %[[W2:.+]] = arith.constant dense_resource<w2> : tensor<8x3x3xf32>
// CHECK-DAG: %[[W1:.+]] = arith.constant dense_resource<w1> : tensor<2x4x2x3x3xf32>
// Eight bias values are small enough to print inline.
// CHECK-DAG: %[[B1:.+]] = arith.constant dense<[{{.*}}]> : tensor<8xf32>

// group=2: pads [1,2,1,2] become a tensor.pad, the input and weights get a
// group dimension, the bias is the accumulator.
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 2] high[0, 0, 1, 2]
// CHECK: tensor<1x4x9x9xf32> to tensor<1x4x11x13xf32> loc(#[[LGROUP]])
// CHECK: %[[BG:.+]] = tensor.expand_shape %[[B1]] {{\[}}[0, 1]] output_shape [2, 4]
// CHECK: %[[ACC:.+]] = linalg.broadcast ins(%[[BG]] : tensor<2x4xf32>) outs(%{{.+}} : tensor<1x2x4x5x9xf32>) dimensions = [0, 3, 4]
// CHECK: %[[PG:.+]] = tensor.expand_shape %[[P]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 11, 13]
// CHECK: %[[G:.+]] = linalg.conv_2d_ngchw_gfchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>}
// CHECK-SAME: ins(%[[PG]], %[[W1]] : tensor<1x2x2x11x13xf32>, tensor<2x4x2x3x3xf32>) outs(%[[ACC]] : tensor<1x2x4x5x9xf32>)
// CHECK: %[[Y1:.+]] = tensor.collapse_shape %[[G]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x4x5x9xf32> into tensor<1x8x5x9xf32>

// group=8 on 8 channels: depthwise, SAME_UPPER padding of 1 on each side.
// CHECK: %[[P2:.+]] = tensor.pad %[[Y1]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[Z:.+]] = linalg.fill
// CHECK: %[[D:.+]] = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
// CHECK-SAME: ins(%[[P2]], %[[W2]] : tensor<1x8x7x11xf32>, tensor<8x3x3xf32>) outs(%[[Z]] : tensor<1x8x5x9xf32>)
// CHECK-SAME: loc(#[[LDW]])

// CHECK: %[[C:.+]] = linalg.conv_2d_nchw_fchw
// CHECK-SAME: ins(%[[D]], %[[W3]] : tensor<1x8x5x9xf32>, tensor<4x8x1x1xf32>)
// CHECK: return %[[C]]
