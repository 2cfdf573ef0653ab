// RUN: weft-opt %s --verify-roundtrip | FileCheck %s
// RUN: weft-opt %s --mlir-print-op-generic | weft-opt | FileCheck %s
// RUN: weft-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Positioned routes (docs/architecture.md §4.4): a fixed-order merge of the
// west stream and the CE's, and a segment taken out of a passing stream.

// CHECK-LABEL: wavelet.program @positions
wavelet.program @positions attributes {target = #weft.target<4x2>} {
  wavelet.pe @merge at (1, 0) {
    // CHECK: wavelet.route color 3 from [west, ramp] to [east] positions [from [west] to [east] x 12, from [ramp] to [east] x 4]
    // GENERIC: "wavelet.route"() <{color = 3 : i64, inputs = 24 : i32, outputs = 2 : i32, positions = array<i64: 8, 2, 12, 16, 2, 4>}>
    wavelet.route color 3 from [west, ramp] to [east] positions [from [west] to [east] x 12, from [ramp] to [east] x 4]
    // Without positions the route prints as before.
    // CHECK-NEXT: wavelet.route color 4 from [west] to [east]{{$}}
    wavelet.route color 4 from [west] to [east]
  }
  wavelet.pe @tap at (2, 0) {
    // CHECK: wavelet.route color 3 from [west] to [east, ramp] positions [from [west] to [east] x 10, from [west] to [east, ramp] x 6, from [west] to [ramp] x 20]
    wavelet.route color 3 from [west] to [east, ramp] positions [from [west] to [east] x 10, from [west] to [east, ramp] x 6, from [west] to [ramp] x 20]
  }
  wavelet.pe @four at (1, 1) {
    // Four positions, the largest count, and attributes after the list.
    // CHECK: wavelet.route color 5 from [north, west, ramp] to [east, ramp] positions [from [north] to [east] x 1, from [west] to [ramp] x 16777216, from [ramp] to [east] x 2, from [north, west] to [east, ramp] x 3] {note = "four"}
    wavelet.route color 5 from [north, west, ramp] to [east, ramp] positions [from [north] to [east] x 1, from [west] to [ramp] x 16777216, from [ramp] to [east] x 2, from [north, west] to [east, ramp] x 3] {note = "four"}
  }
}
