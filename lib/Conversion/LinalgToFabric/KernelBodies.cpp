//===- KernelBodies.cpp - The bodies of matched kernels -------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The linalg bodies --weft-convert-to-fabric gives the kernels it matched
// (KernelBodies.h).
//
//===----------------------------------------------------------------------===//

#include "KernelBodies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace weft;

namespace weft::conversion {

/// Builds the body of the kernel for `layer` on one sample:
/// y = relu?(x W + b) with x : tensor<1xKxf32>, W and b the constants the
/// kernel's scheme holds.
Value buildLayerBody(OpBuilder &b, Location loc, Value x,
                            const DenseLayer &layer,
                            ElementsAttr weights, ElementsAttr biasAttr) {
  Type f32 = b.getF32Type();
  auto outType = RankedTensorType::get({1, layer.M}, f32);
  Value w = arith::ConstantOp::create(b, loc, weights);
  Value init = tensor::EmptyOp::create(b, loc, outType.getShape(), f32);
  if (biasAttr) {
    Value bias = arith::ConstantOp::create(b, loc, biasAttr);
    init = linalg::BroadcastOp::create(b, loc, bias, init, ArrayRef<int64_t>{0})
               .getResult()[0];
  } else {
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    init = linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{init})
               .getResult(0);
  }
  Value y = linalg::MatmulOp::create(b, loc, TypeRange{outType},
                                     ValueRange{x, w}, ValueRange{init})
                .getResult(0);
  if (!layer.relu)
    return y;
  Value empty = tensor::EmptyOp::create(b, loc, outType.getShape(), f32);
  AffineMap id = b.getMultiDimIdentityMap(2);
  SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{outType}, ValueRange{y}, ValueRange{empty},
             ArrayRef<AffineMap>{id, id}, iters,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value zero =
                   arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0));
               Value r = arith::MaximumFOp::create(nb, l, args[0], zero);
               linalg::YieldOp::create(nb, l, r);
             })
      .getResult(0);
}

/// max(y, 0), or min(max(y, 0), reluMax), elementwise.
static Value buildRelu(OpBuilder &b, Location loc, Value y,
                       std::optional<float> reluMax) {
  auto type = cast<RankedTensorType>(y.getType());
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  unsigned rank = unsigned(type.getRank());
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{y}, ValueRange{empty},
             ArrayRef<AffineMap>{id, id}, iters,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value z =
                   arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0));
               Value r = arith::MaximumFOp::create(nb, l, args[0], z);
               if (reluMax) {
                 Value hi = arith::ConstantOp::create(
                     nb, l, nb.getF32FloatAttr(*reluMax));
                 r = arith::MinimumFOp::create(nb, l, r, hi);
               }
               linalg::YieldOp::create(nb, l, r);
             })
      .getResult(0);
}

/// The grouped convolution of the padded sample `x` with the OIHW weights
/// `w` (I = cin / groups) in the importer's general form: x reshaped to
/// [1, G, C/G, H, W], linalg.conv_2d_ngchw_gfchw with the weights as
/// [G, M/G, C/G, kh, kw] into the bias broadcast (or zeros), the result
/// reshaped back to `outType`, then the ReLU.
static Value buildGroupedConvBody(OpBuilder &b, Location loc, Value x, Value w,
                                  RankedTensorType outType,
                                  const ConvShape &s,
                                  ElementsAttr biasAttr) {
  Type f32 = b.getF32Type();
  int64_t g = s.groups, cg = s.groupIn(), mg = s.groupOut();
  ArrayRef<int64_t> xs = cast<RankedTensorType>(x.getType()).getShape();
  using Re = SmallVector<ReassociationIndices>;
  x = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({1, g, cg, xs[2], xs[3]}, f32), x,
      Re{{0}, {1, 2}, {3}, {4}});
  w = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({g, mg, cg, s.kh, s.kw}, f32), w,
      Re{{0, 1}, {2}, {3}, {4}});
  auto gType = RankedTensorType::get({1, g, mg, s.hout(), s.wout()}, f32);
  Value init = tensor::EmptyOp::create(b, loc, gType.getShape(), f32);
  if (biasAttr) {
    Value bias = arith::ConstantOp::create(b, loc, biasAttr);
    bias = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({g, mg}, f32), bias, Re{{0, 1}});
    init = linalg::BroadcastOp::create(b, loc, bias, init,
                                       ArrayRef<int64_t>{0, 3, 4})
               .getResult()[0];
  } else {
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    init = linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{init})
               .getResult(0);
  }
  Value y =
      linalg::Conv2DNgchwGfchwOp::create(
          b, loc, TypeRange{gType}, ValueRange{x, w}, ValueRange{init},
          b.getI64TensorAttr({s.sh, s.sw}), b.getI64TensorAttr({s.dh, s.dw}))
          .getResult(0);
  y = tensor::CollapseShapeOp::create(b, loc, outType, y,
                                      Re{{0}, {1, 2}, {3}, {4}});
  return s.relu ? buildRelu(b, loc, y, s.reluMax) : y;
}

/// Builds the body of a convolution kernel on one sample: the zero pad,
/// linalg.conv_2d_nchw_fchw (or conv_1d_ncw_fcw for a 3-D input) into the
/// bias broadcast (or zeros), and the ReLU, from the scheme's constants.
Value buildConvBody(OpBuilder &b, Location loc, Value x,
                           RankedTensorType outType,
                           const ConvShape &s,
                           ElementsAttr weights, ElementsAttr biasAttr) {
  Type f32 = b.getF32Type();
  auto inType = cast<RankedTensorType>(x.getType());
  bool is1d = inType.getRank() == 3;
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  if (s.pt || s.pl || s.pb || s.pr) {
    SmallVector<int64_t> low(size_t(inType.getRank()), 0), high = low;
    SmallVector<int64_t> shape(inType.getShape());
    if (is1d) {
      low[2] = s.pl, high[2] = s.pr;
    } else {
      low[2] = s.pt, low[3] = s.pl, high[2] = s.pb, high[3] = s.pr;
    }
    for (size_t i = 0; i < shape.size(); ++i)
      shape[i] += low[i] + high[i];
    SmallVector<OpFoldResult> lo, hi;
    for (size_t i = 0; i < shape.size(); ++i) {
      lo.push_back(b.getIndexAttr(low[i]));
      hi.push_back(b.getIndexAttr(high[i]));
    }
    x = tensor::PadOp::create(b, loc, RankedTensorType::get(shape, f32), x, lo,
                              hi, zero);
  }
  Value w = arith::ConstantOp::create(b, loc, weights);
  if (is1d)
    w = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({s.cout, s.cin, s.kw}, f32), w,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  if (s.grouped())
    return buildGroupedConvBody(b, loc, x, w, outType, s, biasAttr);
  Value init = tensor::EmptyOp::create(b, loc, outType.getShape(), f32);
  if (biasAttr) {
    Value bias = arith::ConstantOp::create(b, loc, biasAttr);
    SmallVector<int64_t> dims = {0};
    for (int64_t d = 2; d < outType.getRank(); ++d)
      dims.push_back(d);
    init = linalg::BroadcastOp::create(b, loc, bias, init, dims).getResult()[0];
  } else {
    init = linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{init})
               .getResult(0);
  }
  Value y;
  if (is1d)
    y = linalg::Conv1DNcwFcwOp::create(
            b, loc, TypeRange{outType}, ValueRange{x, w}, ValueRange{init},
            b.getI64TensorAttr({s.sw}), b.getI64TensorAttr({s.dw}))
            .getResult(0);
  else
    y = linalg::Conv2DNchwFchwOp::create(
            b, loc, TypeRange{outType}, ValueRange{x, w}, ValueRange{init},
            b.getI64TensorAttr({s.sh, s.sw}), b.getI64TensorAttr({s.dh, s.dw}))
            .getResult(0);
  return s.relu ? buildRelu(b, loc, y, s.reluMax) : y;
}

/// Builds the body of a pooling kernel on one sample in the importer's form:
/// the -inf or 0 pad the windows read, linalg.pooling_nchw_max or _sum
/// (pooling_ncw_* for a 3-D input) into a -inf or 0 fill, an average's
/// division by its divisor per output pixel, reshaped to `outType`.
Value buildPoolBody(OpBuilder &b, Location loc, Value x,
                           RankedTensorType outType,
                           const PoolShape &s) {
  Type f32 = b.getF32Type();
  auto inType = cast<RankedTensorType>(x.getType());
  bool is1d = inType.getRank() == 3;
  Value init = arith::ConstantOp::create(
      b, loc,
      b.getF32FloatAttr(s.max ? -std::numeric_limits<float>::infinity() : 0));
  int64_t pb = s.padBottom(), pr = s.padRight();
  if (s.pt || s.pl || pb || pr) {
    SmallVector<int64_t> low(size_t(inType.getRank()), 0), high = low;
    SmallVector<int64_t> shape(inType.getShape());
    if (is1d) {
      low[2] = s.pl, high[2] = pr;
    } else {
      low[2] = s.pt, low[3] = s.pl, high[2] = pb, high[3] = pr;
    }
    SmallVector<OpFoldResult> lo, hi;
    for (size_t i = 0; i < shape.size(); ++i) {
      shape[i] += low[i] + high[i];
      lo.push_back(b.getIndexAttr(low[i]));
      hi.push_back(b.getIndexAttr(high[i]));
    }
    x = tensor::PadOp::create(b, loc, RankedTensorType::get(shape, f32), x, lo,
                              hi, init);
  }
  SmallVector<int64_t> pooled = {1, s.c};
  if (!is1d)
    pooled.push_back(s.hout());
  pooled.push_back(s.wout());
  auto pooledType = RankedTensorType::get(pooled, f32);
  Value acc = tensor::EmptyOp::create(b, loc, pooled, f32);
  acc = linalg::FillOp::create(b, loc, ValueRange{init}, ValueRange{acc})
            .getResult(0);
  Value window =
      is1d ? tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{s.kw}, f32)
           : tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{s.kh, s.kw},
                                     f32);
  Value y;
  auto strides = is1d ? b.getI64TensorAttr({s.sw})
                      : b.getI64TensorAttr({s.sh, s.sw});
  auto dilations = is1d ? b.getI64TensorAttr({s.dw})
                        : b.getI64TensorAttr({s.dh, s.dw});
  SmallVector<Value> in = {x, window};
  if (s.max && is1d)
    y = linalg::PoolingNcwMaxOp::create(b, loc, TypeRange{pooledType}, in,
                                        ValueRange{acc}, strides, dilations)
            .getResult(0);
  else if (s.max)
    y = linalg::PoolingNchwMaxOp::create(b, loc, TypeRange{pooledType}, in,
                                         ValueRange{acc}, strides, dilations)
            .getResult(0);
  else if (is1d)
    y = linalg::PoolingNcwSumOp::create(b, loc, TypeRange{pooledType}, in,
                                        ValueRange{acc}, strides, dilations)
            .getResult(0);
  else
    y = linalg::PoolingNchwSumOp::create(b, loc, TypeRange{pooledType}, in,
                                         ValueRange{acc}, strides, dilations)
            .getResult(0);
  if (!s.max) {
    SmallVector<float> divisors;
    for (int64_t oh = 0; oh < s.hout(); ++oh)
      for (int64_t ow = 0; ow < s.wout(); ++ow)
        divisors.push_back(float(s.rowCount(oh) * s.colCount(ow)));
    SmallVector<int64_t> spatial(pooled.begin() + 2, pooled.end());
    Value d = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(RankedTensorType::get(spatial, f32),
                               ArrayRef<float>(divisors)));
    unsigned rank = unsigned(pooled.size());
    AffineMap id = b.getMultiDimIdentityMap(rank);
    SmallVector<AffineExpr> trailing;
    for (unsigned i = 2; i < rank; ++i)
      trailing.push_back(b.getAffineDimExpr(i));
    AffineMap px = AffineMap::get(rank, 0, trailing, b.getContext());
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value empty = tensor::EmptyOp::create(b, loc, pooled, f32);
    y = linalg::GenericOp::create(
            b, loc, TypeRange{pooledType}, ValueRange{y, d}, ValueRange{empty},
            ArrayRef<AffineMap>{id, px, id}, iters,
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value r = arith::DivFOp::create(nb, l, args[0], args[1]);
              linalg::YieldOp::create(nb, l, r);
            })
            .getResult(0);
  }
  if (pooledType != outType)
    y = tensor::ReshapeOp::create(
        b, loc, outType, y,
        arith::ConstantOp::create(
            b, loc,
            DenseIntElementsAttr::get(
                RankedTensorType::get({outType.getRank()}, b.getI64Type()),
                outType.getShape())));
  return y;
}


} // namespace weft::conversion
