// The bundled vector add, translated to a binary and run by weft-sim in both
// modes: the sum is exact, the cycle count is pinned, and the reference and
// fast modes write identical statistics.

// RUN: rm -rf %t && mkdir -p %t
// RUN: weft-translate --wavelet-to-wfb %S/../../../examples/vector-add.mlir -o %t/vadd.wfb
// RUN: %python %S/Inputs/npy.py arange %t/a.npy 64 --start 1 --step 0.5
// RUN: %python %S/Inputs/npy.py random %t/b.npy 64 --seed 7
// RUN: weft-sim %t/vadd.wfb --input a=%t/a.npy --input b=%t/b.npy --output-dir %t/ref --mode reference --stats %t/ref.json | FileCheck %s
// RUN: weft-sim %t/vadd.wfb --input a=%t/a.npy --input b=%t/b.npy --output-dir %t/fast --mode fast --threads 2 --stats %t/fast.json --trace %t/trace.json | FileCheck %s
// RUN: cmp %t/ref.json %t/fast.json
// RUN: cmp %t/ref/sum.npy %t/fast/sum.npy
// RUN: %python %S/Inputs/npy.py expect %t/ref/sum.npy "a + b" a=%t/a.npy b=%t/b.npy | FileCheck %s --check-prefix=SUM
// RUN: FileCheck %s --check-prefix=STATS < %t/ref.json
// RUN: FileCheck %s --check-prefix=TRACE < %t/trace.json

// The host alternates a and b on the one west port; a is buffered first
// (64 elements), then b streams against it at one element per cycle.
// CHECK: weft-sim: done in 145 cycles, latency 145 cycles, 145 busy PE-cycles, 0 MACs, 192 wavelet hops
// A buffers into memory (64 fp32 writes at 3.6 pJ), the add reads it back
// (64 reads at 3.0 pJ): 422.4 pJ.
// CHECK-NEXT: weft-sim: memory: 64 reads (256 bytes), 64 writes (256 bytes), 0.422 nJ access energy
// SUM: EXACT 64 elements

// STATS: "status": "done",
// STATS: "cycles": 145,
// STATS: "flops": 64,
// STATS: "memory_reads": 64,
// STATS: "memory_writes": 64,
// STATS: "memory_read_bytes": 256,
// STATS: "memory_write_bytes": 256,
// STATS: "memory_energy_pj": 422.400,
// STATS: "host_wavelets_in": 128,
// STATS: "host_wavelets_out": 64,
// STATS: "memory_words_used":

// TRACE: "traceEvents"
// TRACE: "name": "PE (0, 0)"
// TRACE: "name": "task 32"
