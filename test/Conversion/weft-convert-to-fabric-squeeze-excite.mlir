// RUN: weft-opt %s --split-input-file --weft-convert-to-fabric | FileCheck %s

// A squeeze-and-excitation product y = x * s: s is [1, C, 1, 1], read
// through (d0, d1, 0, 0), per channel of the feature map x. One join with
// broadcast = 1: the map is input 0, the scale input 1 (a [1, 4, 1, 1]
// argument of the kernel and a stream of 4 elements).
// CHECK-LABEL: fabric.program @x_times_s
// CHECK: fabric.kernel @se : (tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x2x2xf32> scheme #fabric.join<op = mul, broadcast = 1> {
// CHECK-NEXT: ^bb0(%[[X:.+]]: tensor<1x4x2x2xf32>, %[[S:.+]]: tensor<1x4x1x1xf32>):
// CHECK: linalg.generic {indexing_maps = [#[[ID:.+]], #[[CH:.+]], #[[ID]]], {{.*}} ins(%[[X]], %[[S]] : tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>)
// CHECK: arith.mulf
// CHECK: fabric.stream @x_to_se @x[0] -> @se[0] : !fabric.wavelets<f32, 16>
// CHECK: fabric.stream @s_to_se @s[0] -> @se[1] : !fabric.wavelets<f32, 4>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
func.func @x_times_s(%x: tensor<1x4x2x2xf32> {onnx.name = "x"}, %s: tensor<1x4x1x1xf32> {onnx.name = "s"}) -> (tensor<1x4x2x2xf32> {onnx.name = "y"}) {
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x4x2x2xf32> loc("se")
  return %y : tensor<1x4x2x2xf32>
}

// -----

// s * x (MobileNetV3's order): the same join, the map still input 0; the
// body keeps the model's operand order (a product commutes exactly).
// CHECK-LABEL: fabric.program @s_times_x
// CHECK: fabric.kernel @se : (tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x2x2xf32> scheme #fabric.join<op = mul, broadcast = 1> {
// CHECK-NEXT: ^bb0(%[[X:.+]]: tensor<1x4x2x2xf32>, %[[S:.+]]: tensor<1x4x1x1xf32>):
// CHECK: ^bb0(%[[IX:.+]]: f32, %[[IS:.+]]: f32, %{{.+}}: f32):
// CHECK: arith.mulf %[[IS]], %[[IX]] : f32
// CHECK: fabric.stream @x_to_se @x[0] -> @se[0] : !fabric.wavelets<f32, 16>
// CHECK: fabric.stream @s_to_se @s[0] -> @se[1] : !fabric.wavelets<f32, 4>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
func.func @s_times_x(%x: tensor<1x4x2x2xf32> {onnx.name = "x"}, %s: tensor<1x4x1x1xf32> {onnx.name = "s"}) -> (tensor<1x4x2x2xf32> {onnx.name = "y"}) {
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %y = linalg.generic {indexing_maps = [#ch, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %x : tensor<1x4x1x1xf32>, tensor<1x4x2x2xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x4x2x2xf32> loc("se")
  return %y : tensor<1x4x2x2xf32>
}
