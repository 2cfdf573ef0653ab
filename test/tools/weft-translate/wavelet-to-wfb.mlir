// RUN: weft-translate --wavelet-to-wfb %s -o %t.wfb
// RUN: weft-translate --wfb-to-wavelet %t.wfb | FileCheck %s
// RUN: weft-translate --wavelet-to-wfb %S/../../../examples/vector-add.mlir | weft-translate --wfb-to-wavelet | FileCheck %s --check-prefix=VADD
// RUN: weft-translate --wavelet-to-wfb %S/../../dialects/wavelet/round-trip.mlir -o %t.row.wfb
// RUN: weft-translate --wfb-to-wavelet %t.row.wfb | FileCheck %s --check-prefix=ROW
// Same input, same bytes.
// RUN: weft-translate --wavelet-to-wfb %s | cmp - %t.wfb

// Two identical PEs share one code image in the binary and still come back
// as two PEs; a 1x1 pe_group stays a group and a pe stays a pe.

// CHECK-LABEL: wavelet.program @twins
// CHECK-SAME: target = #weft.target<3x1, mem = 4096, colors = 4, rq = 2, cq = 8>
wavelet.program @twins attributes {target = #weft.target<3x1, mem = 4096, colors = 4>} {
  // CHECK: wavelet.io @i input west rows 0 to 1 color 0 "sparse16" : tensor<3x5xi16>
  wavelet.io @i input west rows 0 to 1 color 0 "sparse16" : tensor<3x5xi16>
  // CHECK: wavelet.io @o output east rows 0 to 1 color 3 "dense32" : tensor<2xi32>
  wavelet.io @o output east rows 0 to 1 color 3 "dense32" : tensor<2xi32>
  // CHECK: wavelet.pe @a at (0, 0) {
  // CHECK-NEXT: wavelet.route color 0 from [west] to [east, ramp]
  // CHECK-NEXT: wavelet.segment @k at 700 = dense_resource<k> : tensor<2xi32>
  // CHECK-NEXT: wavelet.task @t data 0 {
  // CHECK-NEXT: wavelet.inst add16 gpr 0, imm one term
  wavelet.pe @a at (0, 0) {
    wavelet.route color 0 from [west] to [east, ramp]
    wavelet.segment @k at 700 = dense<[65537, -1]> : tensor<2xi32>
    wavelet.task @t data 0 {
      wavelet.inst add16 gpr 0, imm one term
    }
  }
  // CHECK: wavelet.pe_group @b at <1, 0, 1, 1> {
  // CHECK-NEXT: wavelet.route color 0 from [west] to [east, ramp]
  // CHECK-NEXT: wavelet.segment @k at 700 = dense_resource<k_1> : tensor<2xi32>
  // CHECK-NEXT: wavelet.task @t data 0 {
  wavelet.pe_group @b at #weft.rect<1, 0, 1, 1> {
    wavelet.route color 0 from [west] to [east, ramp]
    wavelet.segment @k at 700 = dense<[65537, -1]> : tensor<2xi32>
    wavelet.task @t data 0 {
      wavelet.inst add16 gpr 0, imm one term
    }
  }
  // CHECK: wavelet.pe @c at (2, 0) {
  wavelet.pe @c at (2, 0) {
    wavelet.route color 0 from [west] to [ramp]
    wavelet.route color 3 from [ramp] to [east]
  }
}
// The blob holds the words exactly: 65537 = 0x00010001, -1 = 0xffffffff.
// CHECK: k: "0x0400000001000100FFFFFFFF"

// VADD-LABEL: wavelet.program @vadd
// VADD: wavelet.pe @pe_0_0 at (0, 0) {
// VADD: wavelet.dsd @a_in at 1024 fabin {color = 1 : i64, length = 64 : i64}
// VADD: wavelet.dsd @sum_out at 1036 fabout {color = 3 : i64, length = 64 : i64}
// VADD: wavelet.task @main local 32 active {
// VADD-NEXT: wavelet.dsr load s0dsr 0, @a_in
// VADD-NEXT: wavelet.dsr load ddsr 0, @a_mem
// VADD-NEXT: wavelet.inst mov32 ddsr 0, s0dsr 0
// VADD-NEXT: wavelet.dsr load s0dsr 1, @a_mem
// VADD-NEXT: wavelet.dsr load s1dsr 1, @b_in
// VADD-NEXT: wavelet.dsr load ddsr 1, @sum_out
// VADD-NEXT: wavelet.inst fadd dsr 1, s1dsr 1 term
// VADD-NEXT: }

// ROW-LABEL: wavelet.program @row
// ROW: wavelet.pe_group @mac at <0, 0, 4, 1> {
// ROW-NEXT: wavelet.param gpr 5 = #{{.+}}
// ROW: wavelet.segment @w at 4096 per_pe = dense_resource<w> : tensor<1x4x64xf32>
// ROW: wavelet.task @recv data 1 blocked {
// ROW: wavelet.task @start local 32 active {
// ROW: wavelet.jump "loop" if_true
// ROW: wavelet.task @close control 5 {
// ROW-NEXT: wavelet.jump "end"
// ROW-NEXT: wavelet.label "end"
// ROW-NEXT: wavelet.inst nop term
// ROW: wavelet.pe @pe_4_0 at (4, 0) {
// The per-PE weights keep their f32 bit patterns: 1.0 is 0x3F800000.
// ROW: w: "0x04000000000000000000803F
