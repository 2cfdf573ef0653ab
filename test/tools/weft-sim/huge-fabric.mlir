// Nothing in weft-sim is dense in the fabric's size: one programmed PE in
// the corner of the largest fabric the binary format allows loads and runs
// in both modes with the state of one PE, and a program whose PEs cannot
// all get state is refused with a message, not an abort.

// RUN: rm -rf %t && mkdir -p %t
// RUN: weft-translate --wavelet-to-wfb %s -o %t/corner.wfb
// RUN: %python %S/Inputs/npy.py random %t/x.npy 32 --seed 3
// RUN: weft-sim %t/corner.wfb --input x=%t/x.npy --output-dir %t/ref --mode reference --stats %t/ref.json | FileCheck %s
// RUN: weft-sim %t/corner.wfb --input x=%t/x.npy --output-dir %t/fast --stats %t/fast.json | FileCheck %s
// RUN: cmp %t/ref.json %t/fast.json
// RUN: %python %S/Inputs/npy.py expect %t/fast/y.npy "x" x=%t/x.npy | FileCheck %s --check-prefix=OUT
// CHECK: weft-sim: done in 33 cycles, latency 33 cycles, 32 busy PE-cycles, 0 MACs, 32 wavelet hops
// CHECK: 1 PEs with state
// OUT: EXACT 32 elements

// Every PE of the 65535x65535 fabric programmed: refused.
// RUN: sed -e 's/rect<65534, 65534, 1, 1>/rect<0, 0, 65535, 65535>/' %s > %t/all.mlir
// RUN: weft-translate --wavelet-to-wfb %t/all.mlir -o %t/all.wfb
// RUN: not weft-sim %t/all.wfb --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=ALL
// ALL: error: {{.*}}all.wfb: the program places code on 4294836225 PEs; the simulator handles at most 2147483647

// 20000x20000 programmed PEs: more state than this machine can hold.
// RUN: sed -e 's/rect<65534, 65534, 1, 1>/rect<45535, 45535, 20000, 20000>/' %s > %t/many.mlir
// RUN: weft-translate --wavelet-to-wfb %t/many.mlir -o %t/many.wfb
// RUN: not weft-sim %t/many.wfb --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=MANY
// MANY: error: {{.*}}many.wfb: the program places code on 400000000 PEs, whose state needs {{[0-9]+}} GiB; this machine has {{[0-9]+}} GiB

// A host tensor the host cannot hold (a valid binary may declare 2^48
// elements a stream): refused when loading, before anything is allocated.
// RUN: sed -e 's/@y output east rows 65534 to 65535 color 1 "dense32" : tensor<32xf32>/@y output east rows 65534 to 65535 color 1 "dense32" : tensor<4294967360xf32>/' %s > %t/huge-y.mlir
// RUN: weft-translate --wavelet-to-wfb %t/huge-y.mlir -o %t/huge-y.wfb
// RUN: not weft-sim %t/huge-y.wfb --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=HOST
// HOST: error: {{.*}}huge-y.wfb: output stream @y holds 17179869440 bytes a sample; 1 samples of it exceed the simulator's 4 GiB for a host tensor

wavelet.program @corner attributes {target = #weft.target<65535x65535>} {
  wavelet.io @x input east rows 65534 to 65535 color 1 "dense32" : tensor<32xf32>
  wavelet.io @y output east rows 65534 to 65535 color 1 "dense32" : tensor<32xf32>
  wavelet.pe_group @bounce at #weft.rect<65534, 65534, 1, 1> {
    wavelet.route color 1 from [east] to [east]
  }
}
