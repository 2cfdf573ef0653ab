// RUN: weft-opt %s --split-input-file --verify-diagnostics --weft-allocate-colors

// Three streams meet at PE (1, 1) but the target routes only two colors.
// expected-error @below {{needs more colors than the fabric has: no color is left for stream '@c': it meets '@a' at PE (1, 1), and the streams need 3 colors}}
fabric.program @p attributes {target = #weft.target<4x4, colors = 2>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @a @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.stream @b @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.stream @c @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  fabric.route @a {
    fabric.switch (1, 1) from [ramp] to [east]
    fabric.switch (2, 1) from [west] to [ramp]
  }
  fabric.route @b {
    fabric.switch (1, 0) from [ramp] to [south]
    fabric.switch (1, 1) from [north] to [ramp]
  }
  fabric.route @c {
    fabric.switch (1, 1) from [ramp] to [south]
    fabric.switch (1, 2) from [north] to [ramp]
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @a @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
  // expected-error @below {{is logical (no switches): run --weft-route-streams first}}
  fabric.route @a {
  }
}

// -----

fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  // expected-error @below {{has no route: run --weft-route-streams first}}
  fabric.stream @a @x[0] -> @y[0] : !fabric.wavelets<f32, 4>
}
