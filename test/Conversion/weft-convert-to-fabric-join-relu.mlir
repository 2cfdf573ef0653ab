// RUN: weft-opt %s --split-input-file --weft-convert-to-fabric | FileCheck %s

// A residual join followed by a ReLU that reads nothing else (a ResNet
// block's Add then Relu): one join kernel with the ReLU fused, named after
// the join; its body computes max(a + b, 0), and the ReLU's readers read
// the join.
// CHECK-LABEL: fabric.program @fused
// CHECK: fabric.kernel @fc1 :
// CHECK: fabric.kernel @fc2 :
// CHECK: fabric.kernel @res : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.join<op = add, relu = true> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<1x2xf32>, %[[B:.+]]: tensor<1x2xf32>):
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[B]] : tensor<1x2xf32>, tensor<1x2xf32>)
// CHECK: %[[S:.+]] = arith.addf
// CHECK: %[[Y:.+]] = arith.maximumf %[[S]], %{{.+}} : f32
// CHECK: linalg.yield %[[Y]] : f32
// CHECK-NOT: fabric.kernel @act
// CHECK: fabric.kernel @fc3 :
// CHECK-NOT: fabric.kernel
// CHECK: fabric.stream @x_fork @x[0] -> @fc1[0], @res[1]
// CHECK: fabric.stream @fc2_to_res @fc2[0] -> @res[0]
// CHECK: fabric.stream @res_to_fc3 @res[0] -> @fc3[0]
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @fused(%x: tensor<1x2xf32> {onnx.name = "x"}) -> (tensor<1x2xf32> {onnx.name = "y"}) {
  %w = arith.constant dense<1.0> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  %h = linalg.matmul ins(%x, %w : tensor<1x2xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2xf32>) -> tensor<1x2xf32> loc("fc1")
  %g = linalg.matmul ins(%h, %w : tensor<1x2xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2xf32>) -> tensor<1x2xf32> loc("fc2")
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%g, %x : tensor<1x2xf32>, tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2xf32> loc("res")
  %act = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2xf32> loc("act")
  %y = linalg.matmul ins(%act, %w : tensor<1x2xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2xf32>) -> tensor<1x2xf32> loc("fc3")
  return %y : tensor<1x2xf32>
}

// -----

// The join's result has a second reader (fc3): the ReLU stays a column
// kernel of its own and the join forks to both.
// CHECK-LABEL: fabric.program @second_user
// CHECK: fabric.kernel @res : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.join<op = add> {
// CHECK-NOT: arith.maximumf
// CHECK: fabric.kernel @act : (tensor<1x2xf32>) -> tensor<1x2xf32> scheme #fabric.elementwise<op = "Relu">
// CHECK: fabric.kernel @fc3 :
// CHECK: fabric.stream @res_fork @res[0] -> @act[0], @fc3[0]
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @second_user(%x: tensor<1x2xf32> {onnx.name = "x"}) -> (tensor<1x2xf32> {onnx.name = "y"}, tensor<1x2xf32> {onnx.name = "z"}) {
  %w = arith.constant dense<1.0> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  %h = linalg.matmul ins(%x, %w : tensor<1x2xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2xf32>) -> tensor<1x2xf32> loc("fc1")
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%h, %x : tensor<1x2xf32>, tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2xf32> loc("res")
  %act = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2xf32> loc("act")
  %y = linalg.matmul ins(%r, %w : tensor<1x2xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2xf32>) -> tensor<1x2xf32> loc("fc3")
  return %act, %y : tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// The join's result is also a graph output: not fused either.
// CHECK-LABEL: fabric.program @also_output
// CHECK: fabric.kernel @res : {{.*}} scheme #fabric.join<op = mul> {
// CHECK: fabric.kernel @act : {{.*}} scheme #fabric.elementwise<op = "Relu">
// CHECK: fabric.stream @res_fork @res[0] -> @act[0], @r[0]
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @also_output(%x: tensor<1x2xf32> {onnx.name = "x"}, %v: tensor<1x2xf32> {onnx.name = "v"}) -> (tensor<1x2xf32> {onnx.name = "y"}, tensor<1x2xf32> {onnx.name = "r"}) {
  %e = tensor.empty() : tensor<1x2xf32>
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %v : tensor<1x2xf32>, tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2xf32> loc("res")
  %act = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2xf32> loc("act")
  return %act, %r : tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// b op a of the generic's inputs with the ReLU fused: the kernel's inputs
// are swapped as for any join, and the ReLU is applied to max(b, a).
// CHECK-LABEL: fabric.program @swapped
// CHECK: fabric.kernel @res : {{.*}} scheme #fabric.join<op = max, relu = true> {
// CHECK: arith.maximumf
// CHECK: arith.maximumf
// CHECK-NOT: fabric.kernel @act
// CHECK: fabric.stream @x_to_res @x[0] -> @res[1]
// CHECK: fabric.stream @v_to_res @v[0] -> @res[0]
// CHECK: fabric.stream @res_to_y @res[0] -> @y[0]
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @swapped(%x: tensor<1x2xf32> {onnx.name = "x"}, %v: tensor<1x2xf32> {onnx.name = "v"}) -> (tensor<1x2xf32> {onnx.name = "y"}) {
  %e = tensor.empty() : tensor<1x2xf32>
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %v : tensor<1x2xf32>, tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.maximumf %b, %a : f32
    linalg.yield %s : f32
  } -> tensor<1x2xf32> loc("res")
  %act = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %zero, %a : f32
    linalg.yield %m : f32
  } -> tensor<1x2xf32> loc("act")
  return %act : tensor<1x2xf32>
}

// -----

// A sub (or div) can take two vector steps before a ReLU, which the join
// kernel cannot follow with a third: the ReLU stays a column kernel.
// CHECK-LABEL: fabric.program @sub
// CHECK: fabric.kernel @res : {{.*}} scheme #fabric.join<op = sub> {
// CHECK: fabric.kernel @act : {{.*}} scheme #fabric.elementwise<op = "Relu">
// CHECK: fabric.stream @res_to_act @res[0] -> @act[0]
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @sub(%x: tensor<1x2xf32> {onnx.name = "x"}, %v: tensor<1x2xf32> {onnx.name = "v"}) -> (tensor<1x2xf32> {onnx.name = "y"}) {
  %e = tensor.empty() : tensor<1x2xf32>
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %v : tensor<1x2xf32>, tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2xf32> loc("res")
  %act = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<1x2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2xf32> loc("act")
  return %act : tensor<1x2xf32>
}
