// RUN: echo 'module {}' | not weft-opt --weft-select-sparse-streams=sparse-activations=maybe 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: echo 'module {}' | not weft-opt '--weft-select-sparse-streams=sparse-activations=auto density=1.5' 2>&1 | FileCheck %s --check-prefix=DENSITY
// RUN: echo 'module {}' | not weft-opt '--weft-select-sparse-streams=sparse-activations=auto densities=relu_1=2' 2>&1 | FileCheck %s --check-prefix=MEASURED
// RUN: echo 'module {}' | not weft-opt '--weft-select-sparse-streams=sparse-activations=auto densities=0.5' 2>&1 | FileCheck %s --check-prefix=NONODE
// RUN: echo 'module {}' | not weft-opt '--weft-select-sparse-streams=sparse-activations=auto densities=relu_1=0.5:1:1.5' 2>&1 | FileCheck %s --check-prefix=PROFILE
// RUN: echo 'module {}' | not weft-opt '--weft-select-sparse-streams=sparse-activations=auto input-densities=x=0.5:' 2>&1 | FileCheck %s --check-prefix=INPUT
// RUN: not weft-opt %s --split-input-file 2>&1 | FileCheck %s
// RUN: sed 's/-> @fc2\[0\] : !fabric.wavelets<f32, 32>$/& {sparse = #fabric.sparse<density = 0.5>}/' %S/weft-select-sparse-streams.mlir | not weft-opt --weft-partition-dense --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet 2>&1 | FileCheck %s --check-prefix=LOWER

// MODE: sparse-activations must be off, auto or on, not 'maybe'
// DENSITY: density must be between 0 and 1, not 1.5
// MEASURED: densities entry 'relu_1=2' is not NAME=D or NAME=D:P0:...:Pn-1 with every D and P between 0 and 1
// NONODE: densities entry '0.5' is not NAME=D or NAME=D:P0:...:Pn-1
// PROFILE: densities entry 'relu_1=0.5:1:1.5' is not NAME=D
// INPUT: input-densities entry 'x=0.5:' is not NAME=D

// A mark the verifier accepts (a ReLU layer into a dense layer) but the
// placement cannot honour (the consumer computes in fp32): the lowering
// refuses it rather than decide anew.
// LOWER: error: 'fabric.stream' op is sparse but read by an fp32 layer (sparse values are fp16: --precision mixed)

// A sparse mark on a stream whose source has no ReLU.
fabric.program @no_relu attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  fabric.kernel @fc1 : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 4, neurons = 4, weights = dense<0.25> : tensor<4x4xf32>> {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
  fabric.kernel @fc2 : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 4, neurons = 4, weights = dense<0.25> : tensor<4x4xf32>> {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @x_to_fc1 @x[0] -> @fc1[0] : !fabric.wavelets<f32, 4>
  // CHECK: error: 'fabric.stream' op is sparse but its source has no relu (docs/execution-model.md, "Sparse activations")
  fabric.stream @h @fc1[0] -> @fc2[0] : !fabric.wavelets<f32, 4> {sparse = #fabric.sparse<density = 0.5>}
  fabric.stream @fc2_to_y @fc2[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

// A sparse mark on the results of an elementwise kernel (a host input or a
// dense layer's ReLU may be sparse).
fabric.program @host attributes {target = #weft.target<16x16>, weft.batch = 1 : i64} {
  fabric.kernel @act : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.elementwise<op = "Relu"> {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
  fabric.kernel @fc1 : (tensor<1x4xf32>) -> tensor<1x4xf32> scheme #fabric.dense<fan_in = 4, neurons = 4, weights = dense<0.25> : tensor<4x4xf32>> {
  ^bb0(%x: tensor<1x4xf32>):
    fabric.yield %x : tensor<1x4xf32>
  }
  fabric.io @x input west rows 0 to 1 : tensor<1x4xf32>
  fabric.io @y output east rows 0 to 1 : tensor<1x4xf32>
  fabric.stream @x_to_act @x[0] -> @act[0] : !fabric.wavelets<f32, 4>
  // CHECK: error: 'fabric.stream' op is sparse but its source is neither a dense kernel nor a host input
  fabric.stream @act_to_fc1 @act[0] -> @fc1[0] : !fabric.wavelets<f32, 4> {sparse = #fabric.sparse<density = 0.5>}
  fabric.stream @fc1_to_y @fc1[0] -> @y[0] : !fabric.wavelets<f32, 4>
}

// -----

// CHECK: error: sparse density must be between 0 and 1, not 2
#bad = #fabric.sparse<density = 2.0>
