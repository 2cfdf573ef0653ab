// An exporter-style model with BN after a Conv and after a Gemm (as with
// do_constant_folding=False), Dropout and Flatten: after --weft-import-cleanup
// no normalization is left and the weights are (new) blobs.
// RUN: %python %S/../models/gen_models.py batchnorm %t.onnx
// RUN: weft-translate --import-onnx %t.onnx -o %t.mlir
// RUN: FileCheck %s --check-prefix=IMPORT < %t.mlir
// RUN: weft-opt %t.mlir --weft-import-cleanup --mlir-elide-resource-strings-if-larger=1 | FileCheck %s

// IMPORT-COUNT-2: weft.batchnorm_epsilon
// CHECK-NOT: weft.batchnorm_epsilon
// CHECK-DAG: arith.constant dense_resource<bn_folded_weight{{[_0-9]*}}> : tensor<6x3x3x3xf32>
// CHECK-DAG: arith.constant dense_resource<bn_folded_weight{{[_0-9]*}}> : tensor<6x6xf32>
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: linalg.matmul
// CHECK-NOT: weft.batchnorm_epsilon
