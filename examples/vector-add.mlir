// A vector add on one PE, the bundled example until the ONNX path exists.
// Two 64-element fp32 vectors stream in from the west host port on colors 1
// and 2; the PE adds them element by element and sends the sum to the east
// host port on color 3.

wavelet.program @vadd attributes {target = #weft.target<1x1>} {
  wavelet.io @a input west rows 0 to 1 color 1 "dense32" : tensor<64xf32>
  wavelet.io @b input west rows 0 to 1 color 2 "dense32" : tensor<64xf32>
  wavelet.io @sum output east rows 0 to 1 color 3 "dense32" : tensor<64xf32>

  wavelet.pe @pe_0_0 at (0, 0) {
    wavelet.route color 1 from [west] to [ramp]
    wavelet.route color 2 from [west] to [ramp]
    wavelet.route color 3 from [ramp] to [east]

    wavelet.dsd @a_in at 1024 fabin {length = 64, color = 1}
    wavelet.dsd @b_in at 1028 fabin {length = 64, color = 2}
    wavelet.dsd @a_mem at 1032 mem1d {length = 64, base = 2048}
    wavelet.dsd @sum_out at 1036 fabout {length = 64, color = 3}

    // Activated at load time, so it runs as soon as the program starts.
    wavelet.task @main local 32 active {
      // Buffer a into memory, then stream b against it straight to the east.
      wavelet.dsr load s0dsr 0, @a_in
      wavelet.dsr load ddsr 0, @a_mem
      wavelet.inst mov32 ddsr 0, s0dsr 0
      wavelet.dsr load s0dsr 1, @a_mem
      wavelet.dsr load s1dsr 1, @b_in
      wavelet.dsr load ddsr 1, @sum_out
      wavelet.inst fadd dsr 1, s1dsr 1 term
    }
  }
}
