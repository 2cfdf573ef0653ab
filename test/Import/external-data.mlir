// Weights in an external data file next to the model are read (mapped) and
// end up as the same blobs as inline weights.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../models/gen_models.py external %t/model.onnx
// RUN: weft-translate --import-onnx %t/model.onnx | FileCheck %s

// CHECK-DAG: arith.constant dense_resource<w1> : tensor<32x16xf32>
// CHECK-DAG: arith.constant dense_resource<w2> : tensor<32x4xf32>
// CHECK: dialect_resources
// CHECK: w1: "0x04000000
