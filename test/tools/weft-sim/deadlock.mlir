// A program that deadlocks: PE (1, 0) waits for 16 wavelets on color 1 but
// PE (0, 0) forwards only the 8 the host sends. weft-sim stops at the first
// quiet cycle and says who is stuck and why, instead of spinning; a cycle
// limit ends a run that would take too long.

// RUN: rm -rf %t && mkdir -p %t
// RUN: weft-translate --wavelet-to-wfb %s -o %t/dl.wfb
// RUN: %python %S/Inputs/npy.py arange %t/x.npy 8
// RUN: not weft-sim %t/dl.wfb --input x=%t/x.npy --output-dir %t/out 2>&1 | FileCheck %s
// RUN: weft-sim %t/dl.wfb --input x=%t/x.npy --mode reference 2>&1; test $? -eq 2
// RUN: not weft-sim %t/dl.wfb --input x=%t/x.npy --max-cycles 5 2>&1 | FileCheck %s --check-prefix=LIMIT

// CHECK: weft-sim: error: deadlock at cycle 13: nothing can move, but outputs are incomplete or inputs unread
// CHECK-NEXT: output 'y' row 0 (east port, color 2): received 0 of 16 wavelets
// CHECK-NEXT: PE (1, 0): task 32 at slot 322 executing mov32 at element 8 of 16, waiting: fabric input empty (color 1)
// LIMIT: weft-sim: error: the run reached the cycle limit of 5 cycles

wavelet.program @stuck attributes {target = #weft.target<2x1>} {
  wavelet.io @x input west rows 0 to 1 color 1 "dense32" : tensor<8xf32>
  wavelet.io @y output east rows 0 to 1 color 2 "dense32" : tensor<16xf32>
  wavelet.pe @relay at (0, 0) {
    wavelet.route color 1 from [west] to [east]
  }
  wavelet.pe @sink at (1, 0) {
    wavelet.route color 1 from [west] to [ramp]
    wavelet.route color 2 from [ramp] to [east]
    wavelet.dsd @in at 1024 fabin {length = 16, color = 1}
    wavelet.dsd @buf at 1028 mem1d {length = 16, base = 2048}
    wavelet.dsd @out at 1032 fabout {length = 16, color = 2}
    wavelet.task @main local 32 active {
      wavelet.dsr load s0dsr 0, @in
      wavelet.dsr load ddsr 0, @buf
      wavelet.inst mov32 ddsr 0, s0dsr 0
      wavelet.dsr load s0dsr 1, @buf
      wavelet.dsr load ddsr 1, @out
      wavelet.inst mov32 ddsr 1, s0dsr 1 term
    }
  }
}
