// A pooling kernel (#fabric.pool) lowers to one column of PEs, each running
// the line-buffer program of docs/execution-model.md ("Pooling"): the
// feature-map chunk in from the west, a ring of input rows, one 4-D fmax or
// fadd per window row into one of two output buffers, an average's scaling
// by its factor vector, the row out to the east on microthread 3.
// RUN: weft-opt %s --split-input-file --weft-route-streams --weft-allocate-colors --weft-lower-fabric-to-wavelet | FileCheck %s

// MaxPool 2x2 stride 2 on 2 channels of 5x5, one channel per row: the line
// buffer's pad column and the reset value are -inf from load time.
// CHECK-LABEL: wavelet.program @maxpool
// CHECK: wavelet.io @x input west rows 0 to 2 color {{[0-9]+}} "dense32" fmap : tensor<1x2x5x5xf32>
// CHECK: wavelet.io @y output east rows 0 to 2 color {{[0-9]+}} "dense32" fmap : tensor<1x2x3x3xf32>
// CHECK: wavelet.pe_group @pool_r0_1 at <0, 0, 1, 2> attributes {layer = "pool"}
// CHECK: wavelet.segment @ring_init at [[RING:[0-9]+]] = dense<0xFF800000> : tensor<12xf32>
// CHECK: wavelet.segment @ninf_data at [[NINF:[0-9]+]] = dense<0xFF800000> : tensor<1xf32>
// CHECK: wavelet.dsd @recv0 at {{[0-9]+}} mem1d {base = [[RING]] : i64, length = 5 : i64}
// CHECK: wavelet.dsd @send0 at {{[0-9]+}} fabout {color = {{[0-9]+}} : i64, length = 3 : i64, utid = 3 : i64}
// CHECK: wavelet.dsd @ninf at {{[0-9]+}} mem1d {base = [[NINF]] : i64, length = 3 : i64, stride = 0 : i64}
// CHECK: wavelet.xdsd @x_acc at {{[0-9]+}} {len = array<i64: 1, 3, 2, 1>, stride_sel = array<i64: 6, 0, 7, 7>}
// CHECK: wavelet.xdsd @x_win at {{[0-9]+}} {len = array<i64: 1, 3, 2, 1>, stride_sel = array<i64: 6, 1, 2, 7>}
// CHECK-NOT: x_factor
// CHECK: wavelet.task @main local 32 active
// CHECK: wavelet.label "sample"
// CHECK: wavelet.dsr load ddsr 2, @recv0
// CHECK-NEXT: wavelet.inst mov32 ddsr 2, s0dsr 2
// CHECK: wavelet.inst mov32 ddsr 3, s0dsr 3
// CHECK-NEXT: wavelet.dsr load s1dsr 0, @win0
// CHECK-NEXT: wavelet.inst fmax dsr 0, s1dsr 0
// CHECK-NEXT: wavelet.dsr load s1dsr 0, @win1
// CHECK-NEXT: wavelet.inst fmax dsr 0, s1dsr 0
// CHECK-NEXT: wavelet.inst mov32 ddsr 7, s0dsr 7
// CHECK: wavelet.inst fmax dsr 1, s1dsr 1
// CHECK: wavelet.inst mov32 ddsr 8, s0dsr 8
// CHECK: wavelet.jump "sample"

fabric.program @maxpool attributes {target = #weft.target<4x3, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 2 : i64} {
  fabric.io @x  input  west rows 0 to 2 : tensor<1x2x5x5xf32> {pixels = 25 : i64}
  fabric.io @y  output  east rows 0 to 2 : tensor<1x2x3x3xf32> {pixels = 9 : i64}
  fabric.kernel @pool : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> scheme #fabric.pool<kind = max, channels = 2, in_height = 5, in_width = 5, kernel = [2, 2], strides = [2, 2], dilations = [1, 1], pads = [0, 0, 1, 1]> at <0, 0, 1, 2> attributes {precision = #fabric<precision fp32>, predicted_cycles = 91 : i64} {
  ^bb0(%arg0: tensor<1x2x5x5xf32>):
    %cst = arith.constant 0xFF800000 : f32
    %padded = tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 1, 1] {
    ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
      tensor.yield %cst : f32
    } : tensor<1x2x5x5xf32> to tensor<1x2x6x6xf32>
    %0 = tensor.empty() : tensor<1x2x3x3xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    %2 = tensor.empty() : tensor<2x2xf32>
    %3 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%padded, %2 : tensor<1x2x6x6xf32>, tensor<2x2xf32>) outs(%1 : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    fabric.yield %3 : tensor<1x2x3x3xf32>
  }
  fabric.stream @x_to_pool @x[0] -> @pool[0] : !fabric.wavelets<f32, 50> {pixels = 25 : i64}
  fabric.stream @pool_to_y @pool[0] -> @y[0] : !fabric.wavelets<f32, 18> {pixels = 9 : i64}
}

// -----

// AveragePool 3x3 stride 2 pads 1 (count_include_pad 0) on 4x4: the factor
// vectors 1/(2 x 2), 1/(2 x 3) for output row 0 and 1/(3 x 2), 1/(3 x 3)
// for row 1.
// CHECK-LABEL: wavelet.program @avgpool
// CHECK: wavelet.pe @pool_r0 at (0, 0)
// CHECK: wavelet.segment @factor_data at [[F:[0-9]+]] = dense<[2.500000e-01, 0.166666672, 0.166666672, 0.111111112]> : tensor<4xf32>
// CHECK: wavelet.dsd @factor0 at {{[0-9]+}} mem4d {base = [[F]] : i64, xdsr = 2 : i64}
// CHECK: wavelet.xdsd @x_factor at {{[0-9]+}} {len = array<i64: 1, 2, 1, 1>, stride_sel = array<i64: 7, 6, 7, 7>}
// CHECK: wavelet.inst mov32 ddsr 3, imm zero
// CHECK: wavelet.inst fadd dsr 0, s1dsr 0
// CHECK: wavelet.dsr load s1dsr 5, @factor0
// CHECK-NEXT: wavelet.inst fmul dsr 5, s1dsr 5
// CHECK-NEXT: wavelet.inst mov32 ddsr 7, s0dsr 7
// CHECK: wavelet.dsr load s1dsr 6, @factor1
// CHECK-NEXT: wavelet.inst fmul dsr 6, s1dsr 6

fabric.program @avgpool attributes {target = #weft.target<4x3, mem = 49152, colors = 24, rq = 2, cq = 8>, weft.batch = 1 : i64} {
  fabric.io @x  input  west rows 0 to 1 : tensor<1x1x4x4xf32> {pixels = 16 : i64}
  fabric.io @y  output  east rows 0 to 1 : tensor<1x1x2x2xf32> {pixels = 4 : i64}
  fabric.kernel @pool : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> scheme #fabric.pool<kind = avg, channels = 1, in_height = 4, in_width = 4, kernel = [3, 3], strides = [2, 2], dilations = [1, 1], pads = [1, 1, 1, 1]> at <0, 0, 1, 1> attributes {precision = #fabric<precision fp32>, predicted_cycles = 81 : i64} {
  ^bb0(%arg0: tensor<1x1x4x4xf32>):
    %cst = arith.constant 0.000000e+00 : f32
    %padded = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
      tensor.yield %cst : f32
    } : tensor<1x1x4x4xf32> to tensor<1x1x6x6xf32>
    %0 = tensor.empty() : tensor<1x1x2x2xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
    %2 = tensor.empty() : tensor<3x3xf32>
    %3 = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%padded, %2 : tensor<1x1x6x6xf32>, tensor<3x3xf32>) outs(%1 : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
    %cst_0 = arith.constant dense<[[4.000000e+00, 6.000000e+00], [6.000000e+00, 9.000000e+00]]> : tensor<2x2xf32>
    %4 = tensor.empty() : tensor<1x1x2x2xf32>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%3, %cst_0 : tensor<1x1x2x2xf32>, tensor<2x2xf32>) outs(%4 : tensor<1x1x2x2xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %6 = arith.divf %in, %in_1 : f32
      linalg.yield %6 : f32
    } -> tensor<1x1x2x2xf32>
    fabric.yield %5 : tensor<1x1x2x2xf32>
  }
  fabric.stream @x_to_pool @x[0] -> @pool[0] : !fabric.wavelets<f32, 16> {pixels = 16 : i64}
  fabric.stream @pool_to_y @pool[0] -> @y[0] : !fabric.wavelets<f32, 4> {pixels = 4 : i64}
}
