// A partial-sum reduction along a chain of PEs ended by a closeout control
// wavelet. PE 0 sends its weights and then a control wavelet with index 5.
// Every later PE accumulates weights + incoming partial sums (task 32); the
// closeout then starts its control task 5, which sends the sums on and
// forwards the closeout. The last PE sends the sums to the east host port:
// sum[i] = (1 + 2 + 3 + 4) * (i + 1).
//
// The data task on each input color only exists to make the color active
// (control wavelets are picked through the color's active bit); data
// wavelets never reach the picker because task 32 consumes them.

// RUN: rm -rf %t && mkdir -p %t
// RUN: weft-translate --wavelet-to-wfb %s -o %t/chain.wfb
// RUN: weft-sim %t/chain.wfb --output-dir %t/out --stats %t/stats.json | FileCheck %s
// RUN: %python %S/Inputs/npy.py print %t/out/sum.npy | FileCheck %s --check-prefix=SUM
// RUN: FileCheck %s --check-prefix=STATS < %t/stats.json

// CHECK: weft-sim: done in 68 cycles, latency 68 cycles, 110 busy PE-cycles, 0 MACs, 62 wavelet hops
// CHECK-NOT: warning
// SUM: 10 20 30 40 50 60 70 80
// PE 0 picks its local task; the others pick the local task and then the
// closeout's control task.
// STATS: "picks": 1,
// STATS: "picks": 2,
// STATS: "picks": 2,
// STATS: "picks": 2,

wavelet.program @chain attributes {target = #weft.target<4x1>} {
  wavelet.io @sum output east rows 0 to 1 color 1 "dense32" : tensor<8xf32>

  wavelet.pe @first at (0, 0) {
    wavelet.route color 2 from [ramp] to [east]
    wavelet.segment @w at 2048 = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
    wavelet.dsd @wv at 1024 mem1d {length = 8, base = 2048}
    wavelet.dsd @out at 1028 fabout {length = 8, color = 2}
    wavelet.dsd @close at 1032 fabout {length = 1, color = 2, format = "sparse16", ctrl, index = 5}
    wavelet.task @send local 32 active {
      wavelet.dsr load s0dsr 0, @wv
      wavelet.dsr load ddsr 0, @out
      wavelet.inst mov32 ddsr 0, s0dsr 0
      wavelet.dsr load ddsr 1, @close
      wavelet.inst mov16 ddsr 1, imm zero term
    }
  }
  wavelet.pe @second at (1, 0) {
    wavelet.route color 2 from [west] to [ramp]
    wavelet.route color 1 from [ramp] to [east]
    wavelet.segment @w at 2048 = dense<[2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0]> : tensor<8xf32>
    wavelet.dsd @wv at 1024 mem1d {length = 8, base = 2048}
    wavelet.dsd @in at 1028 fabin {length = 8, color = 2}
    wavelet.dsd @acc at 1032 mem1d {length = 8, base = 3072}
    wavelet.dsd @out at 1036 fabout {length = 8, color = 1}
    wavelet.dsd @close at 1040 fabout {length = 1, color = 1, format = "sparse16", ctrl, index = 5}
    wavelet.task @stray data 2 {
      wavelet.inst nop term
    }
    wavelet.task @accumulate local 32 active {
      wavelet.dsr load s0dsr 0, @wv
      wavelet.dsr load s1dsr 0, @in
      wavelet.dsr load ddsr 0, @acc
      wavelet.inst fadd dsr 0, s1dsr 0 term
    }
    wavelet.task @closeout control 5 {
      wavelet.dsr load s0dsr 1, @acc
      wavelet.dsr load ddsr 1, @out
      wavelet.inst mov32 ddsr 1, s0dsr 1
      wavelet.dsr load ddsr 2, @close
      wavelet.inst mov16 ddsr 2, imm zero term
    }
  }
  wavelet.pe @third at (2, 0) {
    wavelet.route color 1 from [west] to [ramp]
    wavelet.route color 2 from [ramp] to [east]
    wavelet.segment @w at 2048 = dense<[3.0, 6.0, 9.0, 12.0, 15.0, 18.0, 21.0, 24.0]> : tensor<8xf32>
    wavelet.dsd @wv at 1024 mem1d {length = 8, base = 2048}
    wavelet.dsd @in at 1028 fabin {length = 8, color = 1}
    wavelet.dsd @acc at 1032 mem1d {length = 8, base = 3072}
    wavelet.dsd @out at 1036 fabout {length = 8, color = 2}
    wavelet.dsd @close at 1040 fabout {length = 1, color = 2, format = "sparse16", ctrl, index = 5}
    wavelet.task @stray data 1 {
      wavelet.inst nop term
    }
    wavelet.task @accumulate local 32 active {
      wavelet.dsr load s0dsr 0, @wv
      wavelet.dsr load s1dsr 0, @in
      wavelet.dsr load ddsr 0, @acc
      wavelet.inst fadd dsr 0, s1dsr 0 term
    }
    wavelet.task @closeout control 5 {
      wavelet.dsr load s0dsr 1, @acc
      wavelet.dsr load ddsr 1, @out
      wavelet.inst mov32 ddsr 1, s0dsr 1
      wavelet.dsr load ddsr 2, @close
      wavelet.inst mov16 ddsr 2, imm zero term
    }
  }
  wavelet.pe @last at (3, 0) {
    wavelet.route color 2 from [west] to [ramp]
    wavelet.route color 1 from [ramp] to [east]
    wavelet.segment @w at 2048 = dense<[4.0, 8.0, 12.0, 16.0, 20.0, 24.0, 28.0, 32.0]> : tensor<8xf32>
    wavelet.dsd @wv at 1024 mem1d {length = 8, base = 2048}
    wavelet.dsd @in at 1028 fabin {length = 8, color = 2}
    wavelet.dsd @acc at 1032 mem1d {length = 8, base = 3072}
    wavelet.dsd @out at 1036 fabout {length = 8, color = 1}
    wavelet.task @stray data 2 {
      wavelet.inst nop term
    }
    wavelet.task @accumulate local 32 active {
      wavelet.dsr load s0dsr 0, @wv
      wavelet.dsr load s1dsr 0, @in
      wavelet.dsr load ddsr 0, @acc
      wavelet.inst fadd dsr 0, s1dsr 0 term
    }
    wavelet.task @closeout control 5 {
      wavelet.dsr load s0dsr 1, @acc
      wavelet.dsr load ddsr 1, @out
      wavelet.inst mov32 ddsr 1, s0dsr 1 term
    }
  }
}
