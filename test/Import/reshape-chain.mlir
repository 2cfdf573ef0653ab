// The Shape -> Gather -> Unsqueeze -> Concat -> Reshape chain of a flatten is
// evaluated at import: one collapse_shape remains. The symbolic batch
// dimension is bound by --batch-size; Identity disappears.
// RUN: %python %S/../models/gen_models.py reshape_chain %t.onnx
// RUN: weft-translate --import-onnx %t.onnx | FileCheck %s
// RUN: weft-translate --import-onnx --batch-size=5 %t.onnx | FileCheck %s --check-prefix=BATCH5

// CHECK-LABEL: func.func @main_graph(
// CHECK-SAME: %[[X:.+]]: tensor<1x2x3x4xf32> {onnx.name = "x"}) -> (tensor<1x24xf32> {onnx.name = "y"})
// CHECK-NEXT: %[[F:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2, 3]] : tensor<1x2x3x4xf32> into tensor<1x24xf32>
// CHECK-NEXT: return %[[F]]

// BATCH5: tensor<5x2x3x4xf32> {onnx.name = "x"}) -> (tensor<5x24xf32> {onnx.name = "y"})
// BATCH5-NOT: arith.constant
// BATCH5: tensor.collapse_shape
