// RUN: weft-opt %s --weft-fold-elementwise-constants | FileCheck %s
// What --weft-fold-elementwise-constants leaves alone: the generic keeps
// its inputs and its body (the pass never fails; --weft-convert-to-fabric
// reports what it cannot map).

#v = affine_map<(d0) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// Already a column kernel's form: x + C.
// CHECK-LABEL: func.func @one_op
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %{{.+}} : tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
func.func @one_op(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %e = tensor.empty() : tensor<3xf32>
  %y = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
       ins(%x, %c : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// Not affine: x * x + C, exp(x) + C1 + C2, C / x.
// CHECK-LABEL: func.func @not_affine
// CHECK: ins(%arg0, %{{.+}} : tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.mulf %[[IN:.+]], %[[IN]] : f32
// CHECK: ins(%arg0, %{{.+}}, %{{.+}} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: math.exp
// CHECK: ins(%{{.+}}, %arg0, %{{.+}} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.divf
func.func @not_affine(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %d = arith.constant dense<[4.0, 5.0, 6.0]> : tensor<3xf32>
  %e = tensor.empty() : tensor<3xf32>
  %y1 = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
       ins(%x, %c : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    %r = arith.addf %s, %b : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %y2 = linalg.generic {indexing_maps = [#v, #v, #v, #v], iterator_types = ["parallel"]}
       ins(%x, %c, %d : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %b2: f32, %o: f32):
    %s = math.exp %a : f32
    %r = arith.addf %s, %b : f32
    %t = arith.addf %r, %b2 : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  %y3 = linalg.generic {indexing_maps = [#v, #v, #v, #v], iterator_types = ["parallel"]}
       ins(%c, %x, %d : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %b2: f32, %o: f32):
    %s = arith.addf %a, %b2 : f32
    %r = arith.divf %s, %b : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  return %y1, %y2, %y3 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// Chains that mix max and min (a Clip with tensor bounds), or max with an
// affine term, are not one max/min.
// CHECK-LABEL: func.func @mixed_chains
// CHECK: arith.maximumf
// CHECK-NEXT: arith.minimumf
// CHECK: arith.mulf
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: arith.maximumf
func.func @mixed_chains(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %d = arith.constant dense<[4.0, 5.0, 6.0]> : tensor<3xf32>
  %e = tensor.empty() : tensor<3xf32>
  %y1 = linalg.generic {indexing_maps = [#v, #v, #v, #v], iterator_types = ["parallel"]}
       ins(%x, %c, %d : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %b2: f32, %o: f32):
    %s = arith.maximumf %a, %b : f32
    %r = arith.minimumf %s, %b2 : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %y2 = linalg.generic {indexing_maps = [#v, #v, #v, #v], iterator_types = ["parallel"]}
       ins(%x, %c, %d : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %b2: f32, %o: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %a, %two : f32
    %s = arith.maximumf %m, %b : f32
    %r = arith.maximumf %s, %b2 : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  return %y1, %y2 : tensor<3xf32>, tensor<3xf32>
}

// Two non-constant inputs.
// CHECK-LABEL: func.func @two_streams
// CHECK: ins(%arg0, %arg1, %{{.+}} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
func.func @two_streams(%x: tensor<3xf32>, %z: tensor<3xf32>) -> tensor<3xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %e = tensor.empty() : tensor<3xf32>
  %y = linalg.generic {indexing_maps = [#v, #v, #v, #v], iterator_types = ["parallel"]}
       ins(%x, %z, %c : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %b2: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.addf %s, %b2 : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// A zero scale makes A infinite: x * inf + B would turn finite results
// into NaN, so the generic stays.
// CHECK-LABEL: func.func @infinite_coefficient
// CHECK: linalg.generic
// CHECK: arith.subf
// CHECK-NEXT: arith.divf
func.func @infinite_coefficient(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %d = arith.constant dense<[1.0, 0.0, 2.0]> : tensor<3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x, %c, %d : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %b2: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    %r = arith.divf %s, %b2 : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// A constant whose data was elided cannot be evaluated (and is not x).
// CHECK-LABEL: func.func @elided
// CHECK: ins(%arg0, %{{.+}}, %{{.+}} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
func.func @elided(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %d = arith.constant dense_resource<__elided__> : tensor<3xf32>
  %e = tensor.empty() : tensor<3xf32>
  %y = linalg.generic {indexing_maps = [#v, #v, #v, #v], iterator_types = ["parallel"]}
       ins(%x, %c, %d : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %b2: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.addf %s, %b2 : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// A reduction, and x read through a broadcasting map, are not elementwise
// in x.
// CHECK-LABEL: func.func @not_elementwise
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: ins(%arg1, %{{.+}}, %{{.+}} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
func.func @not_elementwise(%x: tensor<2x3xf32>, %w: tensor<3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>) {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %z = arith.constant dense<0.0> : tensor<2xf32>
  %y1 = linalg.generic {indexing_maps = [#id, #row, affine_map<(d0, d1) -> (d0)>],
                        iterator_types = ["parallel", "reduction"]}
       ins(%x, %c : tensor<2x3xf32>, tensor<3xf32>) outs(%z : tensor<2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    %r = arith.addf %s, %o : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %y2 = linalg.generic {indexing_maps = [#row, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
       ins(%w, %c, %c : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %b2: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.addf %s, %b2 : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  return %y1, %y2 : tensor<2xf32>, tensor<2x3xf32>
}
