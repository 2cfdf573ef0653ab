// RUN: weft-opt %s --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet --split-input-file --verify-diagnostics

// Feature-map host streams (fabric.io with `pixels`) the lowering rejects.

fabric.program @wrong_pixels attributes {target = #weft.target<4x3>} {
  // expected-error @below {{'fabric.io' op has pixels = 3 but 'tensor<1x6xf32>' has 1 pixels (the product of the dims after the channels)}}
  fabric.io @x input west rows 0 to 2 : tensor<1x6xf32> {pixels = 3 : i64}
  fabric.io @y output east rows 0 to 3 : tensor<1x5xf32>
  fabric.kernel @fc : (tensor<1x6xf32>) -> tensor<1x5xf32> scheme #fabric.dense<fan_in = 6, neurons = 5, relu = true, weights = dense<[[-0.80, -1.32, -0.25, 0.42, 1.14], [0.11, -0.55, -0.78, 0.75, 1.63], [0.27, -1.23, -0.96, 1.60, 0.20], [-1.73, -0.08, -1.16, -0.63, -0.49], [-0.71, 0.55, -0.06, -0.59, 0.41], [0.83, -1.64, -0.26, -0.98, -0.17]]> : tensor<6x5xf32>, bias = dense<[-1.29, 0.02, -0.04, -0.30, -1.05]> : tensor<5xf32>> at #weft.rect<0, 0, 2, 3>
      attributes {smear = 2 : i64} {
  ^bb0(%x: tensor<1x6xf32>):
    %w = arith.constant dense<[[-0.80, -1.32, -0.25, 0.42, 1.14], [0.11, -0.55, -0.78, 0.75, 1.63], [0.27, -1.23, -0.96, 1.60, 0.20], [-1.73, -0.08, -1.16, -0.63, -0.49], [-0.71, 0.55, -0.06, -0.59, 0.41], [0.83, -1.64, -0.26, -0.98, -0.17]]> : tensor<6x5xf32>
    %b = arith.constant dense<[-1.29, 0.02, -0.04, -0.30, -1.05]> : tensor<5xf32>
    %e = tensor.empty() : tensor<1x5xf32>
    %acc = linalg.broadcast ins(%b : tensor<5xf32>) outs(%e : tensor<1x5xf32>) dimensions = [0]
    %mm = linalg.matmul ins(%x, %w : tensor<1x6xf32>, tensor<6x5xf32>) outs(%acc : tensor<1x5xf32>) -> tensor<1x5xf32>
    %e2 = tensor.empty() : tensor<1x5xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<1x5xf32>) outs(%e2 : tensor<1x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %z = arith.constant 0.0 : f32
      %m = arith.maximumf %in, %z : f32
      linalg.yield %m : f32
    } -> tensor<1x5xf32>
    fabric.yield %r : tensor<1x5xf32>
  }
  fabric.stream @s0 @x[0] -> @fc[0] : !fabric.wavelets<f32, 6>
  fabric.stream @s1 @fc[0] -> @y[0] : !fabric.wavelets<f32, 5>
}

// -----

fabric.program @rows_do_not_divide attributes {target = #weft.target<4x3>} {
  fabric.io @x input west rows 0 to 2 : tensor<1x6xf32>
  // expected-error @below {{'fabric.io' op is a feature map of 5 channels streamed on 3 rows; the rows must divide the channels}}
  fabric.io @y output east rows 0 to 3 : tensor<1x5xf32> {pixels = 1 : i64}
  fabric.kernel @fc : (tensor<1x6xf32>) -> tensor<1x5xf32> scheme #fabric.dense<fan_in = 6, neurons = 5, relu = true, weights = dense<[[-0.80, -1.32, -0.25, 0.42, 1.14], [0.11, -0.55, -0.78, 0.75, 1.63], [0.27, -1.23, -0.96, 1.60, 0.20], [-1.73, -0.08, -1.16, -0.63, -0.49], [-0.71, 0.55, -0.06, -0.59, 0.41], [0.83, -1.64, -0.26, -0.98, -0.17]]> : tensor<6x5xf32>, bias = dense<[-1.29, 0.02, -0.04, -0.30, -1.05]> : tensor<5xf32>> at #weft.rect<0, 0, 2, 3>
      attributes {smear = 2 : i64} {
  ^bb0(%x: tensor<1x6xf32>):
    %w = arith.constant dense<[[-0.80, -1.32, -0.25, 0.42, 1.14], [0.11, -0.55, -0.78, 0.75, 1.63], [0.27, -1.23, -0.96, 1.60, 0.20], [-1.73, -0.08, -1.16, -0.63, -0.49], [-0.71, 0.55, -0.06, -0.59, 0.41], [0.83, -1.64, -0.26, -0.98, -0.17]]> : tensor<6x5xf32>
    %b = arith.constant dense<[-1.29, 0.02, -0.04, -0.30, -1.05]> : tensor<5xf32>
    %e = tensor.empty() : tensor<1x5xf32>
    %acc = linalg.broadcast ins(%b : tensor<5xf32>) outs(%e : tensor<1x5xf32>) dimensions = [0]
    %mm = linalg.matmul ins(%x, %w : tensor<1x6xf32>, tensor<6x5xf32>) outs(%acc : tensor<1x5xf32>) -> tensor<1x5xf32>
    %e2 = tensor.empty() : tensor<1x5xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<1x5xf32>) outs(%e2 : tensor<1x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %z = arith.constant 0.0 : f32
      %m = arith.maximumf %in, %z : f32
      linalg.yield %m : f32
    } -> tensor<1x5xf32>
    fabric.yield %r : tensor<1x5xf32>
  }
  fabric.stream @s0 @x[0] -> @fc[0] : !fabric.wavelets<f32, 6>
  fabric.stream @s1 @fc[0] -> @y[0] : !fabric.wavelets<f32, 5>
}

// -----

// More bands of output columns than the output has columns.
fabric.program @bands attributes {target = #weft.target<4x3>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x2x2x2xf32> {pixels = 4 : i64}
  fabric.io @y output east rows 0 to 1 : tensor<1x2x2x2xf32> {pixels = 4 : i64}
  // expected-error @below {{'fabric.kernel' op cannot cut its 2 output columns into 3 bands}}
  fabric.kernel @c : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> scheme #fabric.conv<in_channels = 2, out_channels = 2, in_height = 2, in_width = 2, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], weights = dense<1.0> : tensor<2x2x1x1xf32>> at #weft.rect<0, 0, 3, 1> attributes {tiles = 3 : i64} {
  ^bb0(%x: tensor<1x2x2x2xf32>):
    fabric.yield %x : tensor<1x2x2x2xf32>
  }
  fabric.stream @s0 @x[0] -> @c[0] : !fabric.wavelets<f32, 8> {pixels = 4 : i64}
  fabric.stream @s1 @c[0] -> @y[0] : !fabric.wavelets<f32, 8> {pixels = 4 : i64}
}
