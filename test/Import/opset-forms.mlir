// The op table picks an op's form by the model's opset: where a parameter
// is read from (attribute or input), Softmax's coercion to 2D, Concat's
// default axis, the broadcasting of opset < 7.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/opset_forms.py reduce_sum_11 %t/reduce_sum_11.onnx
// RUN: weft-translate --import-onnx %t/reduce_sum_11.onnx | FileCheck %s --check-prefix=REDUCE11
// RUN: %python %S/Inputs/opset_forms.py reduce_sum_13 %t/reduce_sum_13.onnx
// RUN: weft-translate --import-onnx %t/reduce_sum_13.onnx | FileCheck %s --check-prefix=REDUCE13
// RUN: %python %S/Inputs/opset_forms.py reduce_mean_18 %t/reduce_mean_18.onnx
// RUN: weft-translate --import-onnx %t/reduce_mean_18.onnx | FileCheck %s --check-prefix=REDUCE18
// RUN: %python %S/Inputs/opset_forms.py softmax_11 %t/softmax_11.onnx
// RUN: weft-translate --import-onnx %t/softmax_11.onnx | FileCheck %s --check-prefix=SOFTMAX11
// RUN: %python %S/Inputs/opset_forms.py softmax_13 %t/softmax_13.onnx
// RUN: weft-translate --import-onnx %t/softmax_13.onnx | FileCheck %s --check-prefix=SOFTMAX13
// RUN: %python %S/Inputs/opset_forms.py clip_6 %t/clip_6.onnx
// RUN: weft-translate --import-onnx %t/clip_6.onnx | FileCheck %s --check-prefix=CLIP6
// RUN: %python %S/Inputs/opset_forms.py split_11 %t/split_11.onnx
// RUN: weft-translate --import-onnx %t/split_11.onnx | FileCheck %s --check-prefix=SPLIT
// RUN: %python %S/Inputs/opset_forms.py split_13 %t/split_13.onnx
// RUN: weft-translate --import-onnx %t/split_13.onnx | FileCheck %s --check-prefix=SPLIT
// RUN: %python %S/Inputs/opset_forms.py pad_2 %t/pad_2.onnx
// RUN: weft-translate --import-onnx %t/pad_2.onnx | FileCheck %s --check-prefix=PAD2
// RUN: %python %S/Inputs/opset_forms.py concat_3 %t/concat_3.onnx
// RUN: weft-translate --import-onnx %t/concat_3.onnx | FileCheck %s --check-prefix=CONCAT3
// RUN: %python %S/Inputs/opset_forms.py add_6_broadcast %t/add_6_broadcast.onnx
// RUN: weft-translate --import-onnx %t/add_6_broadcast.onnx | FileCheck %s --check-prefix=ADD6
// RUN: %python %S/Inputs/opset_forms.py dropout_12 %t/dropout_12.onnx
// RUN: weft-translate --import-onnx %t/dropout_12.onnx | FileCheck %s --check-prefix=DROPOUT12
// RUN: %python %S/Inputs/opset_forms.py sum_first_omitted %t/sum_first_omitted.onnx
// RUN: weft-translate --import-onnx %t/sum_first_omitted.onnx | FileCheck %s --check-prefix=SUM

// ReduceSum-11 reads the axes attribute, ReduceSum-13 and ReduceMean-18
// input #1.
// REDUCE11: -> (tensor<2x4xf32> {onnx.name = "y"})
// REDUCE11: iterator_types = ["parallel", "reduction", "parallel"]
// REDUCE13: -> (tensor<2x3xf32> {onnx.name = "y"})
// REDUCE13: iterator_types = ["parallel", "parallel", "reduction"]
// REDUCE18: -> (tensor<3x4xf32> {onnx.name = "y"})
// REDUCE18: iterator_types = ["reduction", "parallel", "parallel"]
// REDUCE18: arith.constant 2.000000e+00 : f32
// REDUCE18: arith.divf

// Softmax-11 normalizes dimensions 1 and 2, Softmax-13 dimension 1 only.
// SOFTMAX11: iterator_types = ["parallel", "reduction", "reduction"]
// SOFTMAX11: arith.maximumf
// SOFTMAX11: iterator_types = ["parallel", "reduction", "reduction"]
// SOFTMAX11: arith.addf
// SOFTMAX13: iterator_types = ["parallel", "reduction", "parallel"]
// SOFTMAX13: arith.maximumf
// SOFTMAX13: iterator_types = ["parallel", "reduction", "parallel"]
// SOFTMAX13: arith.addf

// Clip-6 takes its bounds from attributes.
// CLIP6: arith.constant -5.000000e-01 : f32
// CLIP6: arith.constant 2.500000e-01 : f32
// CLIP6: arith.maximumf
// CLIP6-NEXT: arith.minimumf

// Split-11 (attribute) and Split-13 (input #1) cut the same [1, 2] parts.
// SPLIT: tensor.extract_slice %arg0[0, 0, 0] [2, 1, 4] [1, 1, 1]
// SPLIT: tensor.extract_slice %arg0[0, 1, 0] [2, 2, 4] [1, 1, 1]

// Pad-2: `pads` and `value` attributes.
// PAD2: %[[V:.+]] = arith.constant 1.500000e+00 : f32
// PAD2: tensor.pad %arg0 low[0, 1, 0] high[0, 2, 0]
// PAD2: tensor.yield %[[V]]

// CONCAT3: tensor.concat dim(1) %arg0, %arg0

// Add-6 with broadcast=1, axis=1: B [3] lines up with dimension 1 of A.
// ADD6: tensor.expand_shape %arg1 {{\[}}[0, 1, 2]] output_shape [1, 3, 1]
// ADD6: arith.addf

// Dropout-12: the ratio input does not matter for inference.
// DROPOUT12: func.func @main_graph(%arg0: tensor<2x3x4xf32> {onnx.name = "x"})
// DROPOUT12-NEXT: return %arg0

// A Sum with its first input omitted adds the others.
// SUM: ins(%arg0, %arg0 : tensor<2x3x4xf32>, tensor<2x3x4xf32>)
// SUM: arith.addf
