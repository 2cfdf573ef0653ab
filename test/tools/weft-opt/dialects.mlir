// RUN: weft-opt --show-dialects | FileCheck %s
// RUN: weft-opt --help | FileCheck %s --check-prefix=HELP
// RUN: weft-opt %S/../../../examples/vector-add.mlir | weft-opt | FileCheck %s --check-prefix=EXAMPLE

// CHECK: Available Dialects:
// CHECK-SAME: fabric
// CHECK-SAME: linalg
// CHECK-SAME: wavelet

// HELP: Available Dialects: {{.*}}fabric{{.*}}wavelet
// HELP: --canonicalize

// EXAMPLE: wavelet.program @vadd
