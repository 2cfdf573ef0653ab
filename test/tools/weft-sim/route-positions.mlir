// Positioned routes (docs/architecture.md §4.4), end to end: wavelet text ->
// .wfb -> wavelet text -> .wfb is the identity, and weft-sim merges two
// streams in a fixed order and takes a segment out of the merged stream
// with no CE instruction doing either.
//
// PE (0, 0) merges its west input a (6 values) with b (4 values), which
// PE (0, 1) lifts from row 1: 3 from the west, then 2 from the south, twice.
// b arrives later than a, so plain round robin would put all of a first.
// PE (1, 0) passes the merged stream m east and, in every round of 5,
// also hands wavelets 2 and 3 to its CE, which sends them east on color 2:
// t = m[1], m[2], m[6], m[7] = a[1], a[2], a[4], a[5].

// RUN: rm -rf %t && mkdir -p %t
// RUN: weft-translate --wavelet-to-wfb %s -o %t/pos.wfb
// RUN: weft-translate --wfb-to-wavelet %t/pos.wfb -o %t/pos.mlir
// RUN: weft-translate --wavelet-to-wfb %t/pos.mlir -o %t/pos2.wfb
// RUN: cmp %t/pos.wfb %t/pos2.wfb
// RUN: FileCheck %s --check-prefix=DIS < %t/pos.mlir
// RUN: %python %S/Inputs/npy.py arange %t/a.npy 6
// RUN: %python %S/Inputs/npy.py arange %t/b.npy 4 --start 100
// RUN: weft-sim %t/pos.wfb --input a=%t/a.npy --input b=%t/b.npy --output-dir %t/ref --mode reference | FileCheck %s
// RUN: weft-sim %t/pos.wfb --input a=%t/a.npy --input b=%t/b.npy --output-dir %t/fast --mode fast | FileCheck %s
// RUN: cmp %t/ref/y.npy %t/fast/y.npy
// RUN: %python %S/Inputs/npy.py expect %t/ref/y.npy "np.concatenate([a[0:3], b[0:2], a[3:6], b[2:4]])" a=%t/a.npy b=%t/b.npy | FileCheck %s --check-prefix=Y
// RUN: %python %S/Inputs/npy.py expect %t/ref/t.npy "a[[1, 2, 4, 5]]" a=%t/a.npy | FileCheck %s --check-prefix=T

// DIS: wavelet.route color 1 from [south, west] to [east] positions [from [west] to [east] x 3, from [south] to [east] x 2]
// DIS: wavelet.route color 1 from [west] to [east, ramp] positions [from [west] to [east] x 1, from [west] to [east, ramp] x 2, from [west] to [east] x 2]
// CHECK: weft-sim: done in 17 cycles, latency 17 cycles, 44 busy PE-cycles, 0 MACs, 46 wavelet hops
// Y: EXACT 10 elements
// T: EXACT 4 elements

wavelet.program @positions attributes {target = #weft.target<3x2>} {
  wavelet.io @a input west rows 0 to 1 color 1 "dense32" : tensor<6xf32>
  wavelet.io @b input west rows 1 to 2 color 1 "dense32" : tensor<4xf32>
  wavelet.io @y output east rows 0 to 1 color 1 "dense32" : tensor<10xf32>
  wavelet.io @t output east rows 0 to 1 color 2 "dense32" : tensor<4xf32>
  wavelet.pe @merge at (0, 0) {
    wavelet.route color 1 from [west, south] to [east] positions [from [west] to [east] x 3, from [south] to [east] x 2]
  }
  wavelet.pe @lift at (0, 1) {
    wavelet.route color 1 from [west] to [north]
  }
  wavelet.pe @tap at (1, 0) {
    wavelet.route color 1 from [west] to [east, ramp] positions [from [west] to [east] x 1, from [west] to [east, ramp] x 2, from [west] to [east] x 2]
    wavelet.route color 2 from [ramp] to [east]
    wavelet.dsd @in at 1024 fabin {length = 4, color = 1}
    wavelet.dsd @out at 1028 fabout {length = 4, color = 2}
    wavelet.task @main local 32 active {
      wavelet.dsr load s0dsr 0, @in
      wavelet.dsr load ddsr 0, @out
      wavelet.inst mov32 ddsr 0, s0dsr 0 term
    }
  }
  wavelet.pe @relay at (2, 0) {
    wavelet.route color 1 from [west] to [east]
    wavelet.route color 2 from [west] to [east]
  }
}
