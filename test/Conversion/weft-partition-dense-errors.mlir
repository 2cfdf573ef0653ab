// A layer the fabric cannot hold gets an error saying what it needs; so do a
// bad precision and a kernel that is not a dense layer.
// RUN: weft-opt %s --split-input-file --verify-diagnostics --weft-partition-dense
// RUN: not weft-opt %s --split-input-file --weft-partition-dense=precision=fp8 2>&1 | FileCheck %s --check-prefix=PREC

// PREC: error: precision must be fp32 or mixed, not 'fp8'

fabric.program @too_big attributes {target = #fabric.target<4x4>, weft.batch = 1 : i64} {
  // expected-error @below {{'fabric.kernel' op does not fit: a dense layer of 784 inputs and 256 neurons needs 802816 bytes of weights: at least}}
  fabric.kernel @fc : (tensor<1x784xf32>) -> tensor<1x256xf32> {
  ^bb0(%x: tensor<1x784xf32>):
    %w = arith.constant dense<0.25> : tensor<784x256xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x256xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x256xf32>) -> tensor<1x256xf32>
    %y = linalg.matmul ins(%x, %w : tensor<1x784xf32>, tensor<784x256xf32>) outs(%acc : tensor<1x256xf32>) -> tensor<1x256xf32>
    fabric.yield %y : tensor<1x256xf32>
  }
}

// -----

#map = affine_map<(d0, d1) -> (d0, d1)>
fabric.program @not_dense attributes {target = #fabric.target<4x4>, weft.batch = 1 : i64} {
  // expected-error @below {{'fabric.kernel' op is not a dense layer: it is not a matrix product (linalg.matmul) with optional bias and ReLU}}
  fabric.kernel @neg : (tensor<1x4xf32>) -> tensor<1x4xf32> {
  ^bb0(%x: tensor<1x4xf32>):
    %e = tensor.empty() : tensor<1x4xf32>
    %y = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<1x4xf32>) outs(%e : tensor<1x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %n = arith.negf %in : f32
      linalg.yield %n : f32
    } -> tensor<1x4xf32>
    fabric.yield %y : tensor<1x4xf32>
  }
}
