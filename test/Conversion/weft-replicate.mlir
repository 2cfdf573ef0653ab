// RUN: weft-opt %s --weft-replicate --split-input-file | FileCheck %s

// Three copies of a one-row vector add stacked on the 2x4 fabric: every PE,
// group and host port moved down by one row per copy, renamed _r<k> (a free
// name when that is taken), layers renamed alike, the host ports marked with
// their copy; colors unchanged.

// CHECK-LABEL: wavelet.program @vadd
// CHECK-SAME: layers = ["add", "add_r1", "add_r2"]
// CHECK-SAME: weft.replica_rows = 1 : i64
// CHECK-SAME: weft.replicas = 3 : i64
// CHECK: wavelet.io @a input west rows 0 to 1 color 1 "dense32" : tensor<64xf32> {weft.replica = 0 : i64}
// CHECK: wavelet.io @sum output east rows 0 to 1 color 3 "dense32" : tensor<64xf32> {weft.replica = 0 : i64}
// CHECK: wavelet.pe @pe_0_0 at (0, 0) attributes {layer = "add"}
// CHECK: wavelet.pe_group @pe_0_0_r1 at <1, 0, 1, 1> attributes {layer = "add"}
// CHECK: wavelet.io @a_r1 input west rows 1 to 2 color 1 "dense32" : tensor<64xf32> {weft.replica = 1 : i64, weft.replica_of = "a"}
// CHECK: wavelet.io @sum_r1 output east rows 1 to 2 color 3 "dense32" : tensor<64xf32> {weft.replica = 1 : i64, weft.replica_of = "sum"}
// CHECK: wavelet.pe @pe_0_0_r1_1 at (0, 1) attributes {layer = "add_r1"}
// CHECK: wavelet.route color 1 from [west] to [ramp]
// CHECK: wavelet.pe_group @pe_0_0_r1_r1 at <1, 1, 1, 1> attributes {layer = "add_r1"}
// CHECK: wavelet.io @a_r2 input west rows 2 to 3
// CHECK: wavelet.io @sum_r2 output east rows 2 to 3 color 3 "dense32" : tensor<64xf32> {weft.replica = 2 : i64, weft.replica_of = "sum"}
// CHECK: wavelet.pe @pe_0_0_r2 at (0, 2) attributes {layer = "add_r2"}
// CHECK: wavelet.pe_group @pe_0_0_r1_r2 at <1, 2, 1, 1> attributes {layer = "add_r2"}
// CHECK-NOT: wavelet.pe

wavelet.program @vadd attributes {layers = ["add"],
    target = #weft.target<2x4>, weft.replicas = 3 : i64} {
  wavelet.io @a input west rows 0 to 1 color 1 "dense32" : tensor<64xf32>
  wavelet.io @sum output east rows 0 to 1 color 3 "dense32" : tensor<64xf32>
  wavelet.pe @pe_0_0 at (0, 0) attributes {layer = "add"} {
    wavelet.route color 1 from [west] to [ramp]
    wavelet.route color 3 from [ramp] to [east]
    wavelet.dsd @a_in at 1024 fabin {length = 64, color = 1}
    wavelet.dsd @sum_out at 1036 fabout {length = 64, color = 3}
    wavelet.task @main local 32 active {
      wavelet.dsr load s0dsr 0, @a_in
      wavelet.dsr load ddsr 0, @sum_out
      wavelet.inst mov32 ddsr 0, s0dsr 0 term
    }
  }
  // (Named as the first copy of @pe_0_0 would be.)
  wavelet.pe_group @pe_0_0_r1 at <1, 0, 1, 1> attributes {layer = "add"} {
    wavelet.route color 3 from [west] to [east]
  }
}

// -----

// Without weft.replicas (one copy) the program is left as it is.

// CHECK-LABEL: wavelet.program @one
// CHECK-NOT: weft.replica
// CHECK: wavelet.io @a input west rows 0 to 1 color 1 "dense32" : tensor<64xf32>
// CHECK-NOT: wavelet.io
wavelet.program @one attributes {target = #weft.target<1x4>} {
  wavelet.io @a input west rows 0 to 1 color 1 "dense32" : tensor<64xf32>
  wavelet.pe @pe_0_0 at (0, 0) {
    wavelet.route color 1 from [west] to [ramp]
  }
}

// -----

// Two copies side by side already (weft.replica_columns = 2, placed before
// routing) stacked in two bands: copy j of band b is copy 2b + j.

// CHECK-LABEL: wavelet.program @pair
// CHECK: wavelet.io @a input west rows 0 to 1 color 1 "dense32" : tensor<64xf32> {weft.replica = 0 : i64}
// CHECK: wavelet.io @a_r1 input west rows 0 to 1 color 2 "dense32" : tensor<64xf32> {weft.replica = 1 : i64, weft.replica_of = "a"}
// CHECK: wavelet.io @a_r2 input west rows 1 to 2 color 1 "dense32" : tensor<64xf32> {weft.replica = 2 : i64, weft.replica_of = "a"}
// CHECK: wavelet.io @a_r3 input west rows 1 to 2 color 2 "dense32" : tensor<64xf32> {weft.replica = 3 : i64, weft.replica_of = "a"}
wavelet.program @pair attributes {target = #weft.target<2x2>, weft.replicas = 4 : i64, weft.replica_columns = 2 : i64} {
  wavelet.io @a input west rows 0 to 1 color 1 "dense32" : tensor<64xf32> {weft.replica = 0 : i64}
  wavelet.io @a_r1 input west rows 0 to 1 color 2 "dense32" : tensor<64xf32> {weft.replica = 1 : i64, weft.replica_of = "a"}
  wavelet.pe @pe_0_0 at (0, 0) {
    wavelet.route color 1 from [west] to [ramp]
    wavelet.route color 2 from [west] to [east]
  }
  wavelet.pe @pe_1_0 at (1, 0) {
    wavelet.route color 2 from [west] to [ramp]
  }
}
