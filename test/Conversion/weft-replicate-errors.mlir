// RUN: weft-opt %s --weft-replicate --split-input-file --verify-diagnostics

// Two copies of a two-row program do not fit three rows.
// expected-error @below {{'wavelet.program' op cannot hold its copies on the 1x3 fabric: 2 copies of 2 rows need 4 rows, but the fabric has 3}}
wavelet.program @tall attributes {target = #weft.target<1x3>, weft.replicas = 2 : i64} {
  wavelet.io @a input west rows 0 to 2 color 1 "dense32" : tensor<64xf32>
}

// -----

// expected-error @below {{'wavelet.program' op cannot hold its copies on the 1x3 fabric: the number of copies must be at least 1, not 0}}
wavelet.program @zero attributes {target = #weft.target<1x3>, weft.replicas = 0 : i64} {
  wavelet.io @a input west rows 0 to 1 color 1 "dense32" : tensor<64xf32>
}

// -----

// expected-error @below {{'wavelet.program' op 'weft.replicas' must be an integer}}
wavelet.program @text attributes {target = #weft.target<1x3>, weft.replicas = "3"} {
  wavelet.io @a input west rows 0 to 1 color 1 "dense32" : tensor<64xf32>
}

// -----

// expected-error @below {{'wavelet.program' op is replicated already (weft.replica_rows)}}
wavelet.program @twice attributes {target = #weft.target<1x3>, weft.replicas = 3 : i64, weft.replica_rows = 1 : i64} {
  wavelet.io @a input west rows 0 to 1 color 1 "dense32" : tensor<64xf32>
}

// -----

// expected-error @below {{'wavelet.program' op 'weft.replica_columns' must be a positive integer that divides 'weft.replicas'}}
wavelet.program @odd attributes {target = #weft.target<2x3>, weft.replicas = 3 : i64, weft.replica_columns = 2 : i64} {
  wavelet.io @a input west rows 0 to 1 color 1 "dense32" : tensor<64xf32> {weft.replica = 0 : i64}
}

// -----

wavelet.program @unmarked attributes {target = #weft.target<2x3>, weft.replicas = 4 : i64, weft.replica_columns = 2 : i64} {
  // expected-error @below {{'wavelet.io' op needs 'weft.replica' in a program of copies side by side}}
  wavelet.io @a input west rows 0 to 1 color 1 "dense32" : tensor<64xf32>
}

// -----

wavelet.program @badmark attributes {target = #weft.target<2x3>, weft.replicas = 4 : i64, weft.replica_columns = 2 : i64} {
  // expected-error @below {{'wavelet.io' op 'weft.replica' must be an integer from 0 to 1 (the copies side by side)}}
  wavelet.io @a input west rows 0 to 1 color 1 "dense32" : tensor<64xf32> {weft.replica = "0"}
}
