// Feature-map host streams (docs/architecture.md §5.2) through weft-sim: the
// host sends x = [1, C = 4, 2 x 3] on two rows pixel-major, whole channels
// per row; the routers pass each row east unchanged. The fmap output y comes
// back in row-major order (equal to x). The same tensor, sent as w, comes out
// of the row-major output z in stream order: row r carries channels 2r and
// 2r + 1 pixel by pixel, z[r*12 + p*2 + cc] = x[2r + cc, p].

// RUN: rm -rf %t && mkdir -p %t
// RUN: weft-translate --wavelet-to-wfb %s -o %t/fmap.wfb
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.arange(24, dtype=np.float32).reshape(1, 4, 2, 3))"
// RUN: weft-sim %t/fmap.wfb --input x=%t/x.npy --input w=%t/x.npy --output-dir %t/out | FileCheck %s
// RUN: %python -c "import numpy as np; x = np.load('%t/x.npy'); y = np.load('%t/out/y.npy'); z = np.load('%t/out/z.npy'); assert (y == x).all(), y; want = x.reshape(2, 2, 6).transpose(0, 2, 1).reshape(1, 4, 2, 3); assert (z == want).all(), z; print('Z', z.reshape(-1)[:4].tolist())" | FileCheck %s --check-prefix=OUT

// CHECK: weft-sim: done in
// OUT: Z [0.0, 6.0, 1.0, 7.0]

wavelet.program @fmap attributes {target = #weft.target<2x2>} {
  wavelet.io @x input west rows 0 to 2 color 1 "dense32" fmap : tensor<1x4x2x3xf32>
  wavelet.io @y output east rows 0 to 2 color 1 "dense32" fmap : tensor<1x4x2x3xf32>
  wavelet.io @w input west rows 0 to 2 color 2 "dense32" fmap : tensor<1x4x2x3xf32>
  wavelet.io @z output east rows 0 to 2 color 2 "dense32" : tensor<1x4x2x3xf32>
  wavelet.pe_group @rows at #weft.rect<0, 0, 2, 2> {
    wavelet.route color 1 from [west] to [east]
    wavelet.route color 2 from [west] to [east]
  }
}
