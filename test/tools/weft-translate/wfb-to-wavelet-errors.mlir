// Corrupt and hostile binaries are rejected with the reader's message.
// RUN: weft-translate --wavelet-to-wfb %S/../../../examples/vector-add.mlir -o %t.wfb
// RUN: %python -c "import sys; d=open(sys.argv[1],'rb').read(); open(sys.argv[2],'wb').write(d[:-5])" %t.wfb %t.short.wfb
// RUN: not weft-translate --wfb-to-wavelet %t.short.wfb 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: invalid .wfb binary: at byte 40: header gives a total size of {{[0-9]+}} bytes but the file has {{[0-9]+}} (truncated?)
// RUN: %python -c "import sys; d=bytearray(open(sys.argv[1],'rb').read()); d[100]^=1; open(sys.argv[2],'wb').write(d)" %t.wfb %t.flip.wfb
// RUN: not weft-translate --wfb-to-wavelet %t.flip.wfb 2>&1 | FileCheck %s --check-prefix=FLIP
// FLIP: invalid .wfb binary: at byte {{[0-9]+}}: checksum 0x{{[0-9a-f]+}} does not match the contents
// RUN: echo "hello" > %t.txt
// RUN: not weft-translate --wfb-to-wavelet %t.txt 2>&1 | FileCheck %s --check-prefix=MAGIC
// MAGIC: invalid .wfb binary: file of 6 bytes is shorter than the 56-byte header and checksum
