// RUN: weft-opt %s --split-input-file --verify-diagnostics --weft-convert-to-fabric

// A per-channel operand of an add (no join kernel broadcasts one but a
// mul's).
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
func.func @add(%x: tensor<1x4x2x2xf32> {onnx.name = "x"}, %s: tensor<1x4x1x1xf32> {onnx.name = "s"}) -> (tensor<1x4x2x2xf32> {onnx.name = "y"}) {
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  // expected-error @below {{nor an elementwise op of two streams (one operand is per channel of the other, which only a mul takes, not add)}}
  %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x4x2x2xf32>
  return %y : tensor<1x4x2x2xf32>
}

// -----

// A scale per row of the map (broadcast over the channels and columns) is
// no per-channel operand.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, 0)>
func.func @per_row(%x: tensor<1x4x2x2xf32> {onnx.name = "x"}, %s: tensor<1x1x2x1xf32> {onnx.name = "s"}) -> (tensor<1x4x2x2xf32> {onnx.name = "y"}) {
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  // expected-error @below {{nor an elementwise op of two streams (its operands are broadcast or of another shape than its result)}}
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : tensor<1x4x2x2xf32>, tensor<1x1x2x1xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x4x2x2xf32>
  return %y : tensor<1x4x2x2xf32>
}
