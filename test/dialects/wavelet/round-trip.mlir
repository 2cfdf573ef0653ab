// RUN: weft-opt %s --verify-roundtrip | FileCheck %s
// RUN: weft-opt %s --mlir-print-op-generic | weft-opt | FileCheck %s
// RUN: weft-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// A row of four PEs that receive a 64-element vector from the west edge,
// scale it by a per-PE weight vector, and pass partial sums east, ending in
// a PE that sends the result to the east host port.

// CHECK: #[[MAP:.+]] = affine_map<(d0, d1) -> (d0 * 64)>
// CHECK-LABEL: wavelet.program @row
wavelet.program @row attributes {target = #weft.target<5x1>} {
  // CHECK: wavelet.io @x input west rows 0 to 1 color 1 "dense32" : tensor<64xf32>
  wavelet.io @x input west rows 0 to 1 color 1 "dense32" : tensor<64xf32>
  wavelet.io @y output east rows 0 to 1 color 2 "dense32" : tensor<64xf32>
  // A sparse input: the host sends only the non-zero values, then a
  // closeout control wavelet (index 1) per chunk.
  // CHECK: wavelet.io @s input west rows 0 to 1 color 3 "sparse16" nz closeout 1 : tensor<64xf16>
  wavelet.io @s input west rows 0 to 1 color 3 "sparse16" nz closeout 1 : tensor<64xf16>

  // CHECK: wavelet.pe_group @mac at <0, 0, 4, 1> {
  wavelet.pe_group @mac at #weft.rect<0, 0, 4, 1> {
    // CHECK-NEXT: wavelet.param gpr 5 = #[[MAP]]
    wavelet.param gpr 5 = affine_map<(x, y) -> (x * 64)>
    // CHECK-NEXT: wavelet.route color 1 from [west] to [east, ramp]
    wavelet.route color 1 from [west] to [east, ramp]
    wavelet.route color 2 from [west, ramp] to [east]
    // CHECK: wavelet.segment @w at 4096 per_pe = dense_resource<weights> : tensor<1x4x64xf32>
    wavelet.segment @w at 4096 per_pe = dense_resource<weights> : tensor<1x4x64xf32>
    wavelet.segment @stride2 at 1024 = dense<2> : tensor<1xi16>
    // CHECK: wavelet.dsd @xin at 1028 fabin {color = 1 : i64, length = 64 : i64, term}
    wavelet.dsd @xin at 1028 fabin {length = 64, color = 1, term}
    wavelet.dsd @wv at 1032 mem1d {length = 64, base = 4096}
    wavelet.dsd @acc at 1036 mem1d {length = 64, base = 4224, stride = 1}
    // A sliced vector: lane masks and packed non-zero lanes.
    // CHECK: wavelet.dsd @ws at 1056 mem1d {base = 4480 : i64, ix, length = 64 : i64, sl}
    wavelet.dsd @ws at 1056 mem1d {length = 64, base = 4480, ix, sl}
    wavelet.dsd @out at 1040 fabout {length = 64, color = 2, format = "dense32", ac = 33, utid = 1}
    wavelet.dsd @q at 1044 fifo {length = 16, base = 4352, push_ac = 34}
    wavelet.dsd @m4 at 1048 mem4d {base = 4400, xdsr = 0, ix}
    // CHECK: wavelet.xdsd @win at 1052 {len = array<i64: 3, 3, 1, 1>, stride_sel = array<i64: 6, 0, 7, 7>}
    wavelet.xdsd @win at 1052 {len = array<i64: 3, 3, 1, 1>, stride_sel = array<i64: 6, 0, 7, 7>}

    // CHECK: wavelet.task @start local 32 active {
    wavelet.task @start local 32 active {
      // CHECK-NEXT: wavelet.dsr load s0dsr 1, @xin
      wavelet.dsr load s0dsr 1, @xin
      wavelet.dsr load s1dsr 1, @wv
      wavelet.dsr load ddsr 1, @acc
      wavelet.dsr load xdsr 0, @win
      wavelet.dsr load stride 0, @stride2
      wavelet.dsr store ddsr 1, @acc
      // CHECK: wavelet.inst movi gpr 3, -5
      wavelet.inst movi gpr 3, -5
      wavelet.inst movh gpr 3, 255
      // CHECK: wavelet.label "loop"
      wavelet.label "loop"
      // CHECK-NEXT: wavelet.inst fmac dsr 1, s1dsr 1
      // GENERIC: "wavelet.inst"() <{args = [#wavelet.operand<dsr, 1>, #wavelet.operand<s1dsr, 1>], opcode = #wavelet<opcode fmac>}>
      wavelet.inst fmac dsr 1, s1dsr 1
      // CHECK-NEXT: wavelet.inst fmax dsr 1, imm zero
      wavelet.inst fmax dsr 1, imm zero
      wavelet.inst fsum gpr 6, s0dsr 1
      wavelet.inst add16 gpr 3, imm one
      // CHECK: wavelet.inst clt16 gpr 3, gpr 5
      wavelet.inst clt16 gpr 3, gpr 5
      // CHECK-NEXT: wavelet.jump "loop" if_true
      wavelet.jump "loop" if_true
      // CHECK-NEXT: wavelet.inst block all
      wavelet.inst block all
      wavelet.inst unblock gpr 3
      // CHECK: wavelet.inst activate 33 term
      wavelet.inst activate 33 term
    }
    // CHECK: wavelet.task @recv data 1 blocked {
    wavelet.task @recv data 1 blocked {
      wavelet.inst fmac dsr 1, gpr 0 term
    }
    // CHECK: wavelet.task @close control 5 {
    wavelet.task @close control 5 {
      wavelet.jump "end"
      wavelet.label "end"
      // CHECK: wavelet.inst nop term
      wavelet.inst nop term
    }
  }
  // CHECK: wavelet.pe @pe_4_0 at (4, 0) {
  wavelet.pe @pe_4_0 at (4, 0) {
    wavelet.route color 2 from [west] to [east]
  }
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B8410000C0410000C8410000D0410000D8410000E0410000E8410000F0410000F84100000042000004420000084200000C4200001042000014420000184200001C4200002042000024420000284200002C4200003042000034420000384200003C4200004042000044420000484200004C4200005042000054420000584200005C4200006042000064420000684200006C4200007042000074420000784200007C42000080420000824200008442000086420000884200008A4200008C4200008E42000090420000924200009442000096420000984200009A4200009C4200009E420000A0420000A2420000A4420000A6420000A8420000AA420000AC420000AE420000B0420000B2420000B4420000B6420000B8420000BA420000BC420000BE420000C0420000C2420000C4420000C6420000C8420000CA420000CC420000CE420000D0420000D2420000D4420000D6420000D8420000DA420000DC420000DE420000E0420000E2420000E4420000E6420000E8420000EA420000EC420000EE420000F0420000F2420000F4420000F6420000F8420000FA420000FC420000FE420000004300000143000002430000034300000443000005430000064300000743000008430000094300000A4300000B4300000C4300000D4300000E4300000F430000104300001143000012430000134300001443000015430000164300001743000018430000194300001A4300001B4300001C4300001D4300001E4300001F430000204300002143000022430000234300002443000025430000264300002743000028430000294300002A4300002B4300002C4300002D4300002E4300002F430000304300003143000032430000334300003443000035430000364300003743000038430000394300003A4300003B4300003C4300003D4300003E4300003F430000404300004143000042430000434300004443000045430000464300004743000048430000494300004A4300004B4300004C4300004D4300004E4300004F430000504300005143000052430000534300005443000055430000564300005743000058430000594300005A4300005B4300005C4300005D4300005E4300005F430000604300006143000062430000634300006443000065430000664300006743000068430000694300006A4300006B4300006C4300006D4300006E4300006F430000704300007143000072430000734300007443000075430000764300007743000078430000794300007A4300007B4300007C4300007D4300007E4300007F43"
    }
  }
#-}
