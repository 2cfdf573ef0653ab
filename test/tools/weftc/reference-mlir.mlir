// weftc reference also takes a module already in the imported form, so the
// reference is tested without the importer. Softmax (an aggregate op the
// lowering decomposes), a reduction and a dense_resource weight.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.array([[1, 2, 3, 4], [0, 0, 0, 0]], np.float32))"
// RUN: weftc reference %s --input x=%t/x.npy --output-dir %t/out --print-lowered-ir | FileCheck %s
// RUN: %python -c "import numpy as np; x = np.array([[1, 2, 3, 4], [0, 0, 0, 0]], np.float32); e = np.exp(x - x.max(1, keepdims=True)); np.save('%t/p.npy', e / e.sum(1, keepdims=True)); np.save('%t/s.npy', (x * np.array([1, 2, 3, 4], np.float32)).sum(1))"
// RUN: %python %S/Inputs/compare.py %t/out/p.npy %t/p.npy | FileCheck %s --check-prefix=MATCH
// RUN: %python %S/Inputs/compare.py %t/out/s.npy %t/s.npy | FileCheck %s --check-prefix=MATCH

// The weight blob is not copied into the JIT module: the global is external
// and the JIT links it to the blob's bytes.
// CHECK: llvm.mlir.global external constant @[[W:.*]]() {{.*}} : !llvm.array<4 x f32>
// The entry point takes inputs then caller-allocated outputs, through a C
// interface wrapper.
// CHECK: llvm.func @main_graph(
// CHECK: llvm.func @_mlir_ciface_main_graph(%{{[^:]*}}: !llvm.ptr {onnx.name = "x"}, %{{[^:]*}}: !llvm.ptr {onnx.name = "p"}, %{{[^:]*}}: !llvm.ptr {onnx.name = "s"})
// CHECK: wrote {{.*}}out/p.npy (f32[2, 4])
// CHECK: wrote {{.*}}out/s.npy (f32[2])
// MATCH: match

func.func @main_graph(%x: tensor<2x4xf32> {onnx.name = "x"})
    -> (tensor<2x4xf32> {onnx.name = "p"}, tensor<2xf32> {onnx.name = "s"}) {
  %e = tensor.empty() : tensor<2x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<2x4xf32>)
      outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %w = arith.constant dense_resource<w> : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%se : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : tensor<2x4xf32>, tensor<4xf32>) outs(%init : tensor<2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  return %p, %s : tensor<2x4xf32>, tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
