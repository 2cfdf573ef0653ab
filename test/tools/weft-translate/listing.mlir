// RUN: weft-translate --wavelet-to-listing %s | FileCheck %s
// RUN: weft-translate --wavelet-to-listing %S/../../../examples/vector-add.mlir | FileCheck %s --check-prefix=VADD

// Every instruction is encoded with the machine model and decoded back; the
// words below pin the documented bit layouts (docs/architecture.md).

wavelet.program @enc attributes {target = #weft.target<2x2>} {
  // CHECK-LABEL: pe g
  wavelet.pe_group @g at #weft.rect<0, 0, 2, 1> {
    wavelet.dsd @acc at 1024 mem1d {length = 8, base = 2048}
    // CHECK: task t local 33
    wavelet.task @t local 33 {
      // fmac: 10 00011 0 00 0100 00 0010
      // CHECK-NEXT: 0: 86102  fmac dsr 4, s1dsr 2
      wavelet.inst fmac dsr 4, s1dsr 2
      // fmachs with an immediate source: 10 01101 0 00 0001 10 0001
      // CHECK-NEXT: 1: 9a061  fmachs dsr 1, imm 1
      wavelet.inst fmachs dsr 1, imm one
      // mov32 gpr 2 <- s0dsr 1: 110 00000 0 1 0010 00 0001
      // CHECK-NEXT: 2: c0481  mov32 gpr 2, s0dsr 1
      wavelet.inst mov32 gpr 2, s0dsr 1
      // clt16 gpr 3, imm -1: 1110 0000 0 0 0011 10 0010
      // CHECK-NEXT: 3: e00e2  clt16 gpr 3, imm -1
      wavelet.inst clt16 gpr 3, imm minus_one
      // movi gpr 3, -5: 0 1010 0011 11111111011
      // CHECK-NEXT: 4: 51ffb  movi 3, 2043
      wavelet.inst movi gpr 3, -5
      // CHECK-NEXT: 5: (address resolved at emission) wavelet.dsr
      wavelet.dsr load ddsr 4, @acc
      // CHECK-NEXT: loop:
      wavelet.label "loop"
      // block all: 1111 0001 0 10 000 000000
      // CHECK-NEXT: 6: f1400  block all
      wavelet.inst block all
      // activate 33 with terminate: 1111 0011 1 00 000 100001
      // CHECK-NEXT: 7: f3821  activate 33 term
      wavelet.inst activate 33 term
    }
  }
}

// VADD: pe pe_0_0
// VADD: task main local 32
// VADD: mov32 ddsr 0, s0dsr 0
// VADD: fadd dsr 1, s1dsr 1 term
