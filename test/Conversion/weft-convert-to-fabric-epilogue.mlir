// An activation that is the only reader of a convolution's result (and not
// a graph output) is fused into the convolution as its `epilogue`: the
// activation's expression, which the PE sending each output row applies to
// it (docs/execution-model.md, "Fused activations"). Sigmoid, HardSigmoid,
// HardSwish, Tanh and expressions (SiLU...) fuse; ReLU and ReLU6 keep their
// own `relu` / `relu_max`; the kernel's body keeps the activation's ops.
// RUN: weft-opt %s --split-input-file --weft-convert-to-fabric | FileCheck %s
// RUN: weft-opt %s --split-input-file --weft-convert-to-fabric=fuse-activations=false | FileCheck %s --check-prefix=OFF

// A squeeze-and-excitation pair on a 1x1 map: conv 1x1 + Sigmoid, and
// conv 1x1 + HardSigmoid from another branch. Two kernels, no column kernel.
// CHECK-LABEL: fabric.program @se
// CHECK: fabric.kernel @squeeze : (tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32> scheme #fabric.conv<in_channels = 4, out_channels = 4, in_height = 1, in_width = 1, kernel = [1, 1], strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0], weights = dense<2.500000e-01> : tensor<4x4x1x1xf32>, epilogue = [#fabric.node<kind = unary, fn = "Neg">, #fabric.node<kind = unary, a = 1, fn = "Exp">, #fabric.node<kind = constant, value = 1.000000e+00 : f32>, #fabric.node<kind = add, a = 2, b = 3>, #fabric.node<kind = unary, a = 4, fn = "Reciprocal">]>
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: fabric.yield
// CHECK: fabric.kernel @gate : {{.*}} weights = dense<5.000000e-01> : tensor<4x4x1x1xf32>, epilogue = [#fabric.node<kind = constant, value = 0.166666672 : f32>, #fabric.node<kind = mul, b = 1>, #fabric.node<kind = constant, value = 5.000000e-01 : f32>, #fabric.node<kind = add, a = 2, b = 3>, #fabric.node<kind = constant, value = 1.000000e+00 : f32>, #fabric.node<kind = min, a = 4, b = 5>, #fabric.node<kind = constant, value = 0.000000e+00 : f32>, #fabric.node<kind = max, a = 6, b = 7>]>
// CHECK-NOT: fabric.kernel
// CHECK: fabric.stream @x_fork @x[0] -> @squeeze[0], @gate[0]
// With fuse-activations=false the activations stay column kernels.
// OFF-LABEL: fabric.program @se
// OFF: fabric.kernel @squeeze : {{.*}} weights = dense<2.500000e-01> : tensor<4x4x1x1xf32>>
// OFF: scheme #fabric.elementwise<op = "Sigmoid">
// OFF: fabric.kernel @gate : {{.*}} weights = dense<5.000000e-01> : tensor<4x4x1x1xf32>>
// OFF: scheme #fabric.elementwise<op = "HardSigmoid", params = [1.666667e-01, 5.000000e-01]>
// OFF-NOT: epilogue
// CHECK: fabric.stream @squeeze_to_s @squeeze[0] -> @s[0]
// CHECK: fabric.stream @gate_to_g @gate[0] -> @g[0]
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @se(%x: tensor<1x4x1x1xf32> {onnx.name = "x"}) -> (tensor<1x4x1x1xf32> {onnx.name = "s"}, tensor<1x4x1x1xf32> {onnx.name = "g"}) {
  %zero = arith.constant 0.000000e+00 : f32
  %sixth = arith.constant 0.166666672 : f32
  %half = arith.constant 5.000000e-01 : f32
  %one = arith.constant 1.000000e+00 : f32
  %w1 = arith.constant dense<0.25> : tensor<4x4x1x1xf32>
  %w2 = arith.constant dense<0.5> : tensor<4x4x1x1xf32>
  %e = tensor.empty() : tensor<1x4x1x1xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w1 : tensor<1x4x1x1xf32>, tensor<4x4x1x1xf32>) outs(%i : tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32> loc("squeeze")
  %s = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1 : tensor<1x4x1x1xf32>) outs(%e : tensor<1x4x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %x1, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<1x4x1x1xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w2 : tensor<1x4x1x1xf32>, tensor<4x4x1x1xf32>) outs(%i : tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32> loc("gate")
  %g = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c2 : tensor<1x4x1x1xf32>) outs(%e : tensor<1x4x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %sixth : f32
    %a = arith.addf %m, %half : f32
    %lo = arith.minimumf %a, %one : f32
    %hi = arith.maximumf %lo, %zero : f32
    linalg.yield %hi : f32
  } -> tensor<1x4x1x1xf32>
  return %s, %g : tensor<1x4x1x1xf32>, tensor<1x4x1x1xf32>
}

// -----

// The convolution's result is also a graph output: the Sigmoid stays a
// column kernel of its own (fusing would lose the unactivated output).
// CHECK-LABEL: fabric.program @fork
// CHECK: fabric.kernel @c : {{.*}} scheme #fabric.conv<{{.*}}bias = dense<[-5.000000e-01, 5.000000e-01]> : tensor<2xf32>>
// CHECK: fabric.kernel @sig : {{.*}} scheme #fabric.elementwise<op = "Sigmoid">
// CHECK: fabric.stream @c_fork @c[0] -> @sig[0], @raw[0]
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @fork(%x: tensor<1x2x2x2xf32> {onnx.name = "x"}) -> (tensor<1x2x2x2xf32> {onnx.name = "y"}, tensor<1x2x2x2xf32> {onnx.name = "raw"}) {
  %one = arith.constant 1.000000e+00 : f32
  %w = arith.constant dense<0.5> : tensor<2x2x1x1xf32>
  %b = arith.constant dense<[[[[-0.5, -0.5], [-0.5, -0.5]], [[0.5, 0.5], [0.5, 0.5]]]]> : tensor<1x2x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) outs(%b : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc("c")
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %s = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %x1, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32> loc("sig")
  return %s, %c : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// A ReLU is fused as `relu`; the Tanh after it is not fused (an epilogue
// never follows a ReLU) and stays a column kernel. The LeakyRelu after the
// next convolution is fused: max(x, 0.1 x), as the LeakyRelu kernel.
// CHECK-LABEL: fabric.program @unfused
// CHECK: fabric.kernel @r : {{.*}} scheme #fabric.conv<{{.*}}relu = true, weights = dense<5.000000e-01> : tensor<2x2x1x1xf32>>
// CHECK: fabric.kernel @t : {{.*}} scheme #fabric.elementwise<op = "Tanh">
// CHECK: fabric.kernel @l : {{.*}} scheme #fabric.conv<{{.*}}weights = dense<2.500000e-01> : tensor<2x2x1x1xf32>, epilogue = [#fabric.node<kind = constant, value = 1.000000e-01 : f32>, #fabric.node<kind = mul, b = 1>, #fabric.node<kind = max, b = 2>]>
// CHECK-NOT: fabric.kernel
// CHECK: fabric.stream @l_to_y @l[0] -> @y[0]
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @unfused(%x: tensor<1x2x2x2xf32> {onnx.name = "x"}) -> (tensor<1x2x2x2xf32> {onnx.name = "y"}) {
  %zero = arith.constant 0.000000e+00 : f32
  %alpha = arith.constant 1.000000e-01 : f32
  %w = arith.constant dense<0.5> : tensor<2x2x1x1xf32>
  %w2 = arith.constant dense<0.25> : tensor<2x2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) outs(%i : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc("r")
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x2x2xf32>
  %t = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %h = math.tanh %in : f32
    linalg.yield %h : f32
  } -> tensor<1x2x2x2xf32> loc("t")
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%t, %w2 : tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) outs(%i : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc("l")
  %l = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c2 : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.cmpf olt, %in, %zero : f32
    %s = arith.mulf %in, %alpha : f32
    %v = arith.select %neg, %s, %in : f32
    linalg.yield %v : f32
  } -> tensor<1x2x2x2xf32> loc("leaky")
  return %l : tensor<1x2x2x2xf32>
}

// -----

// An Elu has no epilogue form yet: it stays a column kernel.
// CHECK-LABEL: fabric.program @elu
// CHECK: fabric.kernel @c : {{.*}} scheme #fabric.conv<{{.*}}weights = dense<2.500000e-01> : tensor<2x2x1x1xf32>>
// CHECK: fabric.kernel @elu : {{.*}} scheme #fabric.elementwise<op = "Elu", params = [5.000000e-01]>
// CHECK: fabric.stream @c_to_elu @c[0] -> @elu[0]
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @elu(%x: tensor<1x2x2x2xf32> {onnx.name = "x"}) -> (tensor<1x2x2x2xf32> {onnx.name = "y"}) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %alpha = arith.constant 5.000000e-01 : f32
  %w = arith.constant dense<0.25> : tensor<2x2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) outs(%i : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc("c")
  %l = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.cmpf olt, %in, %zero : f32
    %ex = math.exp %in : f32
    %s = arith.subf %ex, %one : f32
    %m = arith.mulf %s, %alpha : f32
    %v = arith.select %neg, %m, %in : f32
    linalg.yield %v : f32
  } -> tensor<1x2x2x2xf32> loc("elu")
  return %l : tensor<1x2x2x2xf32>
}
