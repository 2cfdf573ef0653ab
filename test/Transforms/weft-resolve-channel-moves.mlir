// RUN: weft-opt %s --split-input-file --weft-resolve-channel-moves | FileCheck %s

// A shuffle of two groups of two channels (a0 b0 a1 b1), then a split:
// %x1 = (a0, b0) feeds a convolution, %x2 = (a1, b1) a pad, a depthwise
// convolution and a ReLU, whose result a convolution reads. Each convolution
// of %x computes the one channel that is read where it is read (its weight
// row); the pad, the depthwise convolution (its weight row) and the ReLU run
// once per channel; the convolutions read the concats of the pieces.
// CHECK-LABEL: func.func @shuffle_split
// CHECK-NOT: linalg.transpose
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[WA1:.+]] = arith.constant dense<{{\[}}[{{\[}}[4.000000e+00]], {{\[}}[5.000000e+00]], {{\[}}[6.000000e+00]]]]> : tensor<1x3x1x1xf32>
// CHECK: %[[A1:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %[[WA1]] : {{.*}}) -> tensor<1x1x4x4xf32>
// CHECK: %[[WA0:.+]] = arith.constant dense<{{\[}}[{{\[}}[1.000000e+00]], {{\[}}[2.000000e+00]], {{\[}}[3.000000e+00]]]]> : tensor<1x3x1x1xf32>
// CHECK: %[[A0:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %[[WA0]] : {{.*}}) -> tensor<1x1x4x4xf32>
// CHECK: %[[WB1:.+]] = arith.constant dense<{{\[}}[{{\[}}[1.000000e+01]], {{\[}}[1.100000e+01]], {{\[}}[1.200000e+01]]]]> : tensor<1x3x1x1xf32>
// CHECK: %[[B1:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %[[WB1]] : {{.*}}) -> tensor<1x1x4x4xf32>
// CHECK: %[[WB0:.+]] = arith.constant dense<{{\[}}[{{\[}}[7.000000e+00]], {{\[}}[8.000000e+00]], {{\[}}[9.000000e+00]]]]> : tensor<1x3x1x1xf32>
// CHECK: %[[B0:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %[[WB0]] : {{.*}}) -> tensor<1x1x4x4xf32>
// CHECK: %[[X1:.+]] = tensor.concat dim(1) %[[A0]], %[[B0]]
// CHECK: %[[Y1:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X1]], %{{.+}} : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>)
// CHECK: %[[PA:.+]] = tensor.pad %[[A1]]
// CHECK: %[[PB:.+]] = tensor.pad %[[B1]]
// CHECK: %[[DA:.+]] = linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%[[PA]], %{{.+}} : tensor<1x1x6x6xf32>, tensor<1x3x3xf32>)
// CHECK: %[[DB:.+]] = linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%[[PB]], %{{.+}} : tensor<1x1x6x6xf32>, tensor<1x3x3xf32>)
// CHECK: %[[RA:.+]] = linalg.generic {{.*}} ins(%[[DA]] :
// CHECK: %[[RB:.+]] = linalg.generic {{.*}} ins(%[[DB]] :
// CHECK: %[[X2:.+]] = tensor.concat dim(1) %[[RA]], %[[RB]]
// CHECK: %[[Y2:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X2]], %{{.+}} :
// CHECK: return %[[Y1]], %[[Y2]]
func.func @shuffle_split(%x: tensor<1x3x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %wa = arith.constant dense<[[[[1.0]], [[2.0]], [[3.0]]], [[[4.0]], [[5.0]], [[6.0]]]]> : tensor<2x3x1x1xf32>
  %wb = arith.constant dense<[[[[7.0]], [[8.0]], [[9.0]]], [[[10.0]], [[11.0]], [[12.0]]]]> : tensor<2x3x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %wa : tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) outs(%acc : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %b = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %wb : tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) outs(%acc : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %c = tensor.concat dim(1) %a, %b : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32>
  %ex = tensor.expand_shape %c [[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 4, 4] : tensor<1x4x4x4xf32> into tensor<1x2x2x4x4xf32>
  %te = tensor.empty() : tensor<1x2x2x4x4xf32>
  %t = linalg.transpose ins(%ex : tensor<1x2x2x4x4xf32>) outs(%te : tensor<1x2x2x4x4xf32>) permutation = [0, 2, 1, 3, 4]
  %s = tensor.collapse_shape %t [[0], [1, 2], [3], [4]] : tensor<1x2x2x4x4xf32> into tensor<1x4x4x4xf32>
  %x1 = tensor.extract_slice %s[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x4x4x4xf32> to tensor<1x2x4x4xf32>
  %x2 = tensor.extract_slice %s[0, 2, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x4x4x4xf32> to tensor<1x2x4x4xf32>
  %w1 = arith.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x1, %w1 : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) outs(%acc : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = tensor.pad %x2 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x2x4x4xf32> to tensor<1x2x6x6xf32>
  %wd = arith.constant dense<[[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]]> : tensor<2x3x3xf32>
  %dinit = tensor.empty() : tensor<1x2x4x4xf32>
  %d = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %wd : tensor<1x2x6x6xf32>, tensor<2x3x3xf32>) outs(%acc : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%d : tensor<1x2x4x4xf32>) outs(%dinit : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x4xf32>
  %w2 = arith.constant dense<[[[[5.0]], [[6.0]]], [[[7.0]], [[8.0]]]]> : tensor<2x2x1x1xf32>
  %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r, %w2 : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) outs(%acc : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y1, %y2 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// A convolution of the whole shuffle (a0 b0 a1 b1) reads %a and %b whole,
// in the canonical order (a0 a1 b0 b1): its weights' input channels are
// permuted to match, columns (0, 2, 1, 3).
// CHECK-LABEL: func.func @permute
// CHECK-DAG: %[[W:.+]] = arith.constant dense<{{\[}}[{{\[}}[0.000000e+00]], {{\[}}[2.000000e+00]], {{\[}}[1.000000e+00]], {{\[}}[3.000000e+00]]]]> : tensor<1x4x1x1xf32>
// CHECK: %[[C:.+]] = tensor.concat dim(1) %arg0, %arg1
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[C]], %[[W]] :
// CHECK-NOT: linalg.transpose
func.func @permute(%a: tensor<1x2x4x4xf32>, %b: tensor<1x2x4x4xf32>, %acc: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32>
  %ex = tensor.expand_shape %c [[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 4, 4] : tensor<1x4x4x4xf32> into tensor<1x2x2x4x4xf32>
  %te = tensor.empty() : tensor<1x2x2x4x4xf32>
  %t = linalg.transpose ins(%ex : tensor<1x2x2x4x4xf32>) outs(%te : tensor<1x2x2x4x4xf32>) permutation = [0, 2, 1, 3, 4]
  %s = tensor.collapse_shape %t [[0], [1, 2], [3], [4]] : tensor<1x2x2x4x4xf32> into tensor<1x4x4x4xf32>
  %w = arith.constant dense<[[[[0.0]], [[1.0]], [[2.0]], [[3.0]]]]> : tensor<1x4x1x1xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%s, %w : tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>) outs(%acc : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %y : tensor<1x1x4x4xf32>
}

// -----

// A plain concat of whole maps is --weft-split-concat-products': untouched.
// CHECK-LABEL: func.func @plain_concat
// CHECK: %[[C:.+]] = tensor.concat dim(1) %arg0, %arg1
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[C]], %cst :
func.func @plain_concat(%a: tensor<1x2x4x4xf32>, %b: tensor<1x2x4x4xf32>, %acc: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32>
  %w = arith.constant dense<[[[[0.0]], [[1.0]], [[2.0]], [[3.0]]]]> : tensor<1x4x1x1xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c, %w : tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>) outs(%acc : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %y : tensor<1x1x4x4xf32>
}

// -----

// A split of a map that something else reads whole: that reader reads the
// concat of the cut ranges, so each channel is computed once.
// CHECK-LABEL: func.func @split_and_whole
// CHECK: %[[P0:.+]] = linalg.conv_2d_nchw_fchw {{.*}} -> tensor<1x1x4x4xf32>
// CHECK: %[[P1:.+]] = linalg.conv_2d_nchw_fchw {{.*}} -> tensor<1x1x4x4xf32>
// CHECK-NOT: -> tensor<1x2x4x4xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P1]],
// CHECK: %[[ALL:.+]] = tensor.concat dim(1) %[[P0]], %[[P1]]
// CHECK: linalg.generic {{.*}} ins(%[[ALL]] :
func.func @split_and_whole(%x: tensor<1x3x4x4xf32>, %acc1: tensor<1x1x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = arith.constant dense<[[[[1.0]], [[2.0]], [[3.0]]], [[[4.0]], [[5.0]], [[6.0]]]]> : tensor<2x3x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) outs(%acc : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %h = tensor.extract_slice %a[0, 1, 0, 0] [1, 1, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> to tensor<1x1x4x4xf32>
  %w1 = arith.constant dense<2.0> : tensor<1x1x1x1xf32>
  %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%h, %w1 : tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) outs(%acc1 : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x4xf32>
  return %y1, %r : tensor<1x1x4x4xf32>, tensor<1x2x4x4xf32>
}
