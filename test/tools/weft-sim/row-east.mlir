// A vector passed east along a row of PEs by their routers alone: one
// wavelet per cycle, one cycle per hop. 32 wavelets through 6 routers: the
// last leaves the east PE in cycle 31 + 6 and arrives in cycle 38.

// RUN: rm -rf %t && mkdir -p %t
// RUN: weft-translate --wavelet-to-wfb %s -o %t/row.wfb
// RUN: %python %S/Inputs/npy.py random %t/x.npy 32 --seed 3
// RUN: weft-sim %t/row.wfb --input x=%t/x.npy --output-dir %t/out --stats %t/stats.json | FileCheck %s
// RUN: %python %S/Inputs/npy.py expect %t/out/y.npy "x" x=%t/x.npy | FileCheck %s --check-prefix=OUT
// RUN: FileCheck %s --check-prefix=STATS < %t/stats.json

// Three samples back to back: the pipeline stays full.
// RUN: %python -c "import numpy as np; np.save('%t/x3.npy', np.concatenate([np.load('%t/x.npy')] * 3).reshape(3, 32))"
// RUN: weft-sim %t/row.wfb --samples 3 --input x=%t/x3.npy --output-dir %t/out3 | FileCheck %s --check-prefix=SAMPLES

// ONNX TensorProto files work as inputs and outputs too.
// RUN: %python -c "import numpy as np, onnx.numpy_helper as h; open('%t/x.pb', 'wb').write(h.from_array(np.load('%t/x.npy'), 'x').SerializeToString())"
// RUN: weft-sim %t/row.wfb --input x=%t/x.pb --output-dir %t/pb --output-format pb --quiet
// RUN: %python -c "import numpy as np, onnx, onnx.numpy_helper as h; t = onnx.TensorProto(); t.ParseFromString(open('%t/pb/y.pb', 'rb').read()); assert (h.to_array(t) == np.load('%t/x.npy')).all(); print('PB', t.name, list(t.dims))" | FileCheck %s --check-prefix=PB
// PB: PB y [32]

// A wrong dtype or shape is rejected with the stream's expectation.
// RUN: %python -c "import numpy as np; np.save('%t/bad.npy', np.zeros(31, np.float32)); np.save('%t/i.npy', np.zeros(32, np.int32))"
// RUN: not weft-sim %t/row.wfb --input x=%t/bad.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not weft-sim %t/row.wfb --input x=%t/i.npy 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not weft-sim %t/row.wfb 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not weft-sim %t/row.wfb --input z=%t/x.npy 2>&1 | FileCheck %s --check-prefix=NAME
// SHAPE: error: input 'x' has shape [32] but {{.*}}bad.npy holds [31]
// DTYPE: error: input 'x' is f32 but {{.*}}i.npy holds i32
// MISSING: error: input 'x' is not given (use --input x=FILE)
// NAME: error: the program has no input 'z'; its inputs are: 'x'

// CHECK: weft-sim: done in 38 cycles, latency 38 cycles, 192 busy PE-cycles, 0 MACs, 192 wavelet hops
// OUT: EXACT 32 elements
// STATS: "hops_per_color": {"1": 192}
// STATS: "router_queue_high": 1
// SAMPLES: weft-sim: done in 102 cycles

wavelet.program @row attributes {target = #weft.target<6x1>} {
  wavelet.io @x input west rows 0 to 1 color 1 "dense32" : tensor<32xf32>
  wavelet.io @y output east rows 0 to 1 color 1 "dense32" : tensor<32xf32>
  wavelet.pe_group @relay at #weft.rect<0, 0, 6, 1> {
    wavelet.route color 1 from [west] to [east]
  }
}
