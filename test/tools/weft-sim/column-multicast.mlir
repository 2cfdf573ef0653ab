// A multicast down a column: PE (0, 0) takes the input from its west port
// and its router sends every wavelet both to its own CE and south; each PE
// below does the same. Every CE adds its row's constant (a per-PE segment)
// and sends the sum east on its own row.

// RUN: rm -rf %t && mkdir -p %t
// RUN: weft-translate --wavelet-to-wfb %s -o %t/col.wfb
// RUN: %python %S/Inputs/npy.py arange %t/x.npy 16 --start 10
// RUN: weft-sim %t/col.wfb --input x=%t/x.npy --output-dir %t/out | FileCheck %s
// RUN: %python %S/Inputs/npy.py print %t/out/y0.npy | FileCheck %s --check-prefix=Y0
// RUN: %python %S/Inputs/npy.py expect %t/out/y3.npy "x + 4" x=%t/x.npy | FileCheck %s --check-prefix=Y3

// CHECK: weft-sim: done in 22 cycles, latency 22 cycles, 88 busy PE-cycles, 0 MACs, 176 wavelet hops
// Y0: 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26
// Y3: EXACT 16 elements

wavelet.program @column attributes {target = #weft.target<1x4>} {
  wavelet.io @x input west rows 0 to 1 color 1 "dense32" : tensor<16xf32>
  wavelet.io @y0 output east rows 0 to 1 color 2 "dense32" : tensor<16xf32>
  wavelet.io @y1 output east rows 1 to 2 color 2 "dense32" : tensor<16xf32>
  wavelet.io @y2 output east rows 2 to 3 color 2 "dense32" : tensor<16xf32>
  wavelet.io @y3 output east rows 3 to 4 color 2 "dense32" : tensor<16xf32>

  wavelet.pe @top at (0, 0) {
    wavelet.route color 1 from [west] to [ramp, south]
    wavelet.route color 2 from [ramp] to [east]
    wavelet.segment @k at 2048 = dense<1.0> : tensor<1xf32>
    wavelet.dsd @in at 1024 fabin {length = 16, color = 1}
    wavelet.dsd @out at 1028 fabout {length = 16, color = 2}
    wavelet.dsd @kv at 1032 mem1d {length = 16, base = 2048, stride = 0}
    wavelet.task @add local 32 active {
      wavelet.dsr load s0dsr 0, @in
      wavelet.dsr load s1dsr 0, @kv
      wavelet.dsr load ddsr 0, @out
      wavelet.inst fadd dsr 0, s1dsr 0 term
    }
  }
  wavelet.pe_group @middle at #weft.rect<0, 1, 1, 2> {
    wavelet.route color 1 from [north] to [ramp, south]
    wavelet.route color 2 from [ramp] to [east]
    wavelet.segment @k at 2048 per_pe = dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
    wavelet.dsd @in at 1024 fabin {length = 16, color = 1}
    wavelet.dsd @out at 1028 fabout {length = 16, color = 2}
    wavelet.dsd @kv at 1032 mem1d {length = 16, base = 2048, stride = 0}
    wavelet.task @add local 32 active {
      wavelet.dsr load s0dsr 0, @in
      wavelet.dsr load s1dsr 0, @kv
      wavelet.dsr load ddsr 0, @out
      wavelet.inst fadd dsr 0, s1dsr 0 term
    }
  }
  wavelet.pe @bottom at (0, 3) {
    wavelet.route color 1 from [north] to [ramp]
    wavelet.route color 2 from [ramp] to [east]
    wavelet.segment @k at 2048 = dense<4.0> : tensor<1xf32>
    wavelet.dsd @in at 1024 fabin {length = 16, color = 1}
    wavelet.dsd @out at 1028 fabout {length = 16, color = 2}
    wavelet.dsd @kv at 1032 mem1d {length = 16, base = 2048, stride = 0}
    wavelet.task @add local 32 active {
      wavelet.dsr load s0dsr 0, @in
      wavelet.dsr load s1dsr 0, @kv
      wavelet.dsr load ddsr 0, @out
      wavelet.inst fadd dsr 0, s1dsr 0 term
    }
  }
}
