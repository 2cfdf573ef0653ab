// RUN: weft-opt %s --split-input-file --verify-diagnostics

// Every message of the positioned-route verifier (docs/architecture.md
// §4.4).

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{'wavelet.route' op color 3: positions must be (inputs, outputs, count) triples, got 4 values}}
    "wavelet.route"() <{color = 3 : i64, inputs = 8 : i32, outputs = 2 : i32, positions = array<i64: 8, 2, 12, 8>}> : () -> ()
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{color 3 has 1 position; a positioned route has 2 to 4}}
    wavelet.route color 3 from [west] to [east] positions [from [west] to [east] x 12]
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{color 3 has 5 positions; a positioned route has 2 to 4}}
    wavelet.route color 3 from [west] to [east] positions [from [west] to [east] x 1, from [west] to [east] x 2, from [west] to [east] x 3, from [west] to [east] x 4, from [west] to [east] x 5]
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{color 3: position 2 of 2 has port masks (inputs 32, outputs 2) beyond the 5 ports}}
    "wavelet.route"() <{color = 3 : i64, inputs = 8 : i32, outputs = 2 : i32, positions = array<i64: 8, 2, 12, 32, 2, 4>}> : () -> ()
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{color 3: position 1 of 2 needs at least one input and one output port}}
    wavelet.route color 3 from [west] to [east] positions [from [] to [east] x 12, from [west] to [east] x 4]
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{color 3: position 2 of 2 needs at least one input and one output port}}
    wavelet.route color 3 from [west] to [east] positions [from [west] to [east] x 12, from [west] to [] x 4]
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{color 3: position 2 of 2 has count 0; counts are 1 to 16777216}}
    wavelet.route color 3 from [west] to [east] positions [from [west] to [east] x 12, from [west] to [east] x 0]
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{color 3: position 1 of 2 has count 16777217; counts are 1 to 16777216}}
    wavelet.route color 3 from [west] to [east] positions [from [west] to [east] x 16777217, from [west] to [east] x 1]
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{color 3: position 2 of 2 has count -4; counts are 1 to 16777216}}
    wavelet.route color 3 from [west] to [east] positions [from [west] to [east] x 12, from [west] to [east] x -4]
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{color 3: position 2 of 2 takes from [north, ramp], which the route's inputs [west, ramp] do not include}}
    wavelet.route color 3 from [west, ramp] to [east] positions [from [west] to [east] x 12, from [north, ramp] to [east] x 4]
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{color 3: position 1 of 3 sends to [east, ramp], which the route's outputs [east] do not include}}
    wavelet.route color 3 from [west] to [east] positions [from [west] to [east, ramp] x 10, from [west] to [east] x 6, from [west] to [east] x 20]
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{color 3: the positions take from [west] but the route's inputs are [west, ramp]; they must be the positions' union}}
    wavelet.route color 3 from [west, ramp] to [east] positions [from [west] to [east] x 12, from [west] to [east] x 4]
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{color 3: the positions send to [east] but the route's outputs are [east, ramp]; they must be the positions' union}}
    wavelet.route color 3 from [west] to [east, ramp] positions [from [west] to [east] x 12, from [west] to [east] x 4]
  }
}

// -----

// The link checks of the PE body apply to the union: a position cannot use
// a port the route does not list, so the north port of row 0 is caught.
wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 0) {
    // expected-error @below {{color 3 uses the north port of PE (1, 0), which has no north neighbour}}
    wavelet.route color 3 from [west, north] to [east] positions [from [west] to [east] x 12, from [north] to [east] x 4]
  }
}

// -----

wavelet.program @p attributes {target = #weft.target<4x4>} {
  wavelet.pe @a at (1, 1) {
    // expected-error @below {{expected 'x'}}
    wavelet.route color 3 from [west] to [east] positions [from [west] to [east] 12, from [west] to [east] x 4]
  }
}
