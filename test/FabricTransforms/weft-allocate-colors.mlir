// --weft-allocate-colors: routes that share a PE get different colors
// (DSATUR, deterministic: @b meets two routes and is colored first), each
// stream its route's color; a color already set is kept.
// RUN: weft-opt %s --weft-allocate-colors | FileCheck %s
// RUN: weft-opt %s --weft-allocate-colors=reserved=0,1 | FileCheck %s --check-prefix=RESERVED
// Reserved colors are never chosen.
// RESERVED: fabric.route @a color <3> {
// RESERVED: fabric.route @b color <2> {

// CHECK-LABEL: fabric.program @p
fabric.program @p attributes {target = #weft.target<4x4>} {
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.kernel @k : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Copy"> at #weft.rect<0, 0, 1, 1> {
  ^bb0(%v: tensor<1x4xf32>):
    fabric.yield %v : tensor<1x4xf32>
  }
  // CHECK: fabric.stream @a {{.*}} {color = #fabric.color<1>}
  fabric.stream @a @x[0] -> @k[0] : !fabric.wavelets<f32, 4>
  // CHECK: fabric.stream @b {{.*}} {color = #fabric.color<0>}
  fabric.stream @b @k[0] -> @y[0] : !fabric.wavelets<f32, 4>
  // CHECK: fabric.stream @c {{.*}} {color = #fabric.color<9>}
  fabric.stream @c @k[0] -> @y[0] : !fabric.wavelets<f32, 4> {color = #fabric.color<9>}
  // CHECK: fabric.route @a color <1> {
  fabric.route @a {
    fabric.switch (0, 0) from [west] to [ramp]
  }
  // CHECK: fabric.route @b color <0> {
  fabric.route @b {
    fabric.switch (0, 0) from [ramp] to [east]
    fabric.switch (1, 0) from [west] to [ramp]
  }
  // Meets neither @a nor @b: reuses color 0.
  // CHECK: fabric.route @k channel "inner" color <0> {
  fabric.route @k channel "inner" {
    fabric.switch (2, 2) from [ramp] to [north]
    fabric.switch (2, 1) from [south] to [ramp]
  }
  // A color set on a stream whose route has none stays too.
  // CHECK: fabric.route @c color <9> {
  fabric.route @c {
    fabric.switch (3, 3) from [ramp] to [east]
  }
  // A fixed color stays.
  // CHECK: fabric.route @k channel "fixed" color <7> {
  fabric.route @k channel "fixed" color #fabric.color<7> {
    fabric.switch (1, 0) from [south] to [ramp]
    fabric.switch (1, 1) from [ramp] to [north]
  }
}
