//===- ImportNN.cpp - Convolution, matmul, pooling, norms, reductions -----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// NCHW convolutions map to linalg.conv_2d_nchw_fchw (groups: the ngchw_gfchw
// form; depthwise: depthwise_conv_2d_nchw_chw) on an explicitly padded input,
// accumulating into the bias broadcast over the output (or zeros). Gemm and
// MatMul map to linalg.matmul / batch_matmul; transposed Gemm operands are
// expressed through matmul's indexing maps so weights are never copied.
// BatchNormalization becomes a linalg.generic tagged `weft.batchnorm_epsilon`
// that --weft-fold-batchnorm folds into the producing convolution or matmul.
// Reductions (Reduce*, the global pools, the normalizations' statistics) are
// linalg.generic ops with reduction iterators.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace weft::import::detail;

/// Input `i` reshaped to `shape`: known tensors are reshaped before they are
/// materialized (no copy, one constant), run-time values in the IR.
static Value operandAs(GraphImporter &imp, unsigned i,
                       ArrayRef<int64_t> shape) {
  ImportedValue *v = imp.input(i);
  if (v->isConstant() && v->shape != shape) {
    ImportedValue reshaped = *v;
    reshaped.constant->shape.assign(shape.begin(), shape.end());
    reshaped.shape.assign(shape.begin(), shape.end());
    reshaped.value = nullptr;
    OpBuilder::InsertionGuard guard(imp.builder());
    imp.builder().setInsertionPointToStart(
        imp.builder().getInsertionBlock());
    return imp.materialize(*reshaped.constant, imp.inputName(i));
  }
  return imp.reshape(imp.operand(i), shape);
}

namespace {
/// Kernel geometry of one convolution or pooling window.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, lo, hi, out;
};
} // namespace

/// Reads kernel_shape/strides/dilations/pads/auto_pad and computes output
/// sizes (floor or ceil mode). `kernel` is given for convolutions.
static FailureOr<Window> readWindow(GraphImporter &imp,
                                    ArrayRef<int64_t> inSpatial,
                                    ArrayRef<int64_t> kernelFromWeight,
                                    bool ceilMode, bool allowDilations = true) {
  Window w;
  int64_t n = inSpatial.size();
  bool given;
  FailureOr<SmallVector<int64_t>> ks = imp.intsAttr("kernel_shape", &given);
  if (failed(ks))
    return failure();
  if (!kernelFromWeight.empty()) {
    if (given && ArrayRef<int64_t>(*ks) != kernelFromWeight)
      return imp.fail("kernel_shape disagrees with the weight's shape");
    w.kernel.assign(kernelFromWeight.begin(), kernelFromWeight.end());
  } else {
    if (!given)
      return imp.fail("needs kernel_shape");
    w.kernel = *ks;
  }
  if (int64_t(w.kernel.size()) != n)
    return imp.fail("kernel has " + Twine(w.kernel.size()) +
                    " dimensions, input has " + Twine(n) + " spatial ones");
  FailureOr<SmallVector<int64_t>> st = imp.intsAttr("strides");
  FailureOr<SmallVector<int64_t>> dl =
      allowDilations ? imp.intsAttr("dilations") : SmallVector<int64_t>();
  FailureOr<SmallVector<int64_t>> pads = imp.intsAttr("pads");
  FailureOr<std::string> autoPad = imp.stringAttr("auto_pad", "NOTSET");
  if (failed(st) || failed(dl) || failed(pads) || failed(autoPad))
    return failure();
  w.strides = st->empty() ? SmallVector<int64_t>(n, 1) : *st;
  w.dilations = dl->empty() ? SmallVector<int64_t>(n, 1) : *dl;
  if (int64_t(w.strides.size()) != n || int64_t(w.dilations.size()) != n)
    return imp.fail("strides or dilations do not match the spatial rank");
  for (int64_t i = 0; i < n; ++i)
    if (w.strides[i] < 1 || w.dilations[i] < 1 || w.kernel[i] < 1)
      return imp.fail("strides, dilations and kernel sizes must be positive");
  if (*autoPad == "NOTSET") {
    if (pads->empty())
      pads->assign(2 * n, 0);
    if (int64_t(pads->size()) != 2 * n)
      return imp.fail("pads has " + Twine(pads->size()) + " entries for " +
                      Twine(n) + " spatial dimensions");
    w.lo.assign(pads->begin(), pads->begin() + n);
    w.hi.assign(pads->begin() + n, pads->end());
    for (int64_t p : *pads)
      if (p < 0)
        return imp.fail("negative pads are not supported");
  } else if (*autoPad == "VALID") {
    w.lo.assign(n, 0);
    w.hi.assign(n, 0);
  } else if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
    for (int64_t i = 0; i < n; ++i) {
      int64_t out = (inSpatial[i] + w.strides[i] - 1) / w.strides[i];
      int64_t extent = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[i] + extent - inSpatial[i]);
      int64_t small = total / 2, big = total - small;
      w.lo.push_back(*autoPad == "SAME_UPPER" ? small : big);
      w.hi.push_back(*autoPad == "SAME_UPPER" ? big : small);
    }
  } else {
    return imp.fail("auto_pad '" + *autoPad + "' is not supported");
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t extent = (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t span = inSpatial[i] + w.lo[i] + w.hi[i] - extent;
    if (span < 0)
      return imp.fail("window of extent " + Twine(extent) +
                      " does not fit the padded input of size " +
                      Twine(inSpatial[i] + w.lo[i] + w.hi[i]));
    int64_t out = (ceilMode ? (span + w.strides[i] - 1) / w.strides[i]
                            : span / w.strides[i]) +
                  1;
    // A window may not start inside the end padding only.
    if (ceilMode && (out - 1) * w.strides[i] >= inSpatial[i] + w.lo[i])
      --out;
    w.out.push_back(out);
  }
  return w;
}

/// The bias broadcast over the output, or zeros: the accumulator of a
/// convolution or matmul. `channelDim` is where the bias vector goes.
static Value accumulatorInit(GraphImporter &imp, Value bias,
                             ArrayRef<int64_t> outShape, int64_t channelDim,
                             Type et) {
  if (!bias)
    return imp.filled(outShape, et, 0);
  Value init = imp.empty(outShape, et);
  SmallVector<int64_t> dims;
  for (int64_t i = 0, e = outShape.size(); i < e; ++i)
    if (i != channelDim)
      dims.push_back(i);
  return linalg::BroadcastOp::create(imp.builder(), bias, init, dims)
      .getResult()[0];
}

LogicalResult GraphImporter::importConv() {
  FailureOr<ImportedValue *> x = required(0), w = required(1);
  FailureOr<int64_t> group = intAttr("group", 1);
  if (failed(x) || failed(w) || failed(group))
    return failure();
  ArrayRef<int64_t> xs = (*x)->shape, ws = (*w)->shape;
  int64_t rank = xs.size();
  if (rank < 3 || rank > 5 || int64_t(ws.size()) != rank)
    return fail("input rank " + Twine(rank) + " and weight rank " +
                Twine(ws.size()) + " are not a 1-3D convolution");
  if (!isFloatDtype((*x)->dtype) || (*w)->dtype != (*x)->dtype)
    return fail("needs floating-point input and weight of one type");
  int64_t g = *group, n = xs[0], c = xs[1], m = ws[0];
  if (g < 1 || c % g || m % g || ws[1] != c / g)
    return fail("group " + Twine(g) + " does not fit " + Twine(c) +
                " input and " + Twine(m) + " output channels with weight " +
                "shape [" + Twine(ws[0]) + ", " + Twine(ws[1]) + ", ...]");
  FailureOr<Window> win =
      readWindow(*this, xs.drop_front(2), ws.drop_front(2), false);
  if (failed(win))
    return failure();
  Value bias;
  if (input(2)) {
    if (input(2)->shape != SmallVector<int64_t>{m})
      return fail("bias must have shape [" + Twine(m) + "]");
    bias = operand(2);
  }
  Type et = cast<RankedTensorType>(operand(0).getType()).getElementType();
  SmallVector<int64_t> lo = {0, 0}, hi = {0, 0};
  llvm::append_range(lo, win->lo);
  llvm::append_range(hi, win->hi);
  Value in = padConstant(operand(0), lo, hi, 0);
  SmallVector<int64_t> outShape = {n, m};
  llvm::append_range(outShape, win->out);
  auto strides = b.getI64TensorAttr(win->strides);
  auto dilations = b.getI64TensorAttr(win->dilations);
  int64_t spatial = rank - 2;
  Value result;
  if (g == 1) {
    Value init = accumulatorInit(*this, bias, outShape, 1, et);
    Value weight = operand(1);
    Type types = init.getType();
    if (spatial == 2)
      result = linalg::Conv2DNchwFchwOp::create(b, types, ValueRange{in, weight},
                                                init, strides, dilations)
                   .getResult(0);
    else if (spatial == 1)
      result = linalg::Conv1DNcwFcwOp::create(b, types, ValueRange{in, weight},
                                              init, strides, dilations)
                   .getResult(0);
    else
      result = linalg::Conv3DNcdhwFcdhwOp::create(
                   b, types, ValueRange{in, weight}, init, strides, dilations)
                   .getResult(0);
  } else if (spatial != 2) {
    return fail("grouped convolution is only supported in 2D");
  } else if (g == c && m == c) {
    // Depthwise, one filter per channel.
    Value init = accumulatorInit(*this, bias, outShape, 1, et);
    Value weight = operandAs(*this, 1, {c, ws[2], ws[3]});
    result = linalg::DepthwiseConv2DNchwChwOp::create(
                 b, init.getType(), ValueRange{in, weight}, init, strides,
                 dilations)
                 .getResult(0);
  } else {
    SmallVector<int64_t> gShape = {n, g, m / g, win->out[0], win->out[1]};
    Value gBias = bias ? reshape(bias, {g, m / g}) : Value();
    Value init;
    if (gBias) {
      init = linalg::BroadcastOp::create(b, gBias, empty(gShape, et),
                                         ArrayRef<int64_t>{0, 3, 4})
                 .getResult()[0];
    } else {
      init = filled(gShape, et, 0);
    }
    ArrayRef<int64_t> ps = shapeOf(in);
    Value gin = reshape(in, {n, g, c / g, ps[2], ps[3]});
    Value weight = operandAs(*this, 1, {g, m / g, c / g, ws[2], ws[3]});
    Value r = linalg::Conv2DNgchwGfchwOp::create(b, init.getType(),
                                                 ValueRange{gin, weight}, init,
                                                 strides, dilations)
                  .getResult(0);
    result = reshape(r, outShape);
  }
  setOutput(0, result, (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importConvTranspose() {
  FailureOr<ImportedValue *> x = required(0), w = required(1);
  FailureOr<int64_t> group = intAttr("group", 1);
  bool haveOutShape;
  FailureOr<SmallVector<int64_t>> outputShape =
      intsAttr("output_shape", &haveOutShape);
  FailureOr<SmallVector<int64_t>> outputPadding = intsAttr("output_padding");
  FailureOr<std::string> autoPad = stringAttr("auto_pad", "NOTSET");
  FailureOr<SmallVector<int64_t>> st = intsAttr("strides"),
                                  dl = intsAttr("dilations"),
                                  pads = intsAttr("pads");
  bool haveKs;
  FailureOr<SmallVector<int64_t>> ks = intsAttr("kernel_shape", &haveKs);
  if (failed(x) || failed(w) || failed(group) || failed(outputShape) ||
      failed(outputPadding) || failed(autoPad) || failed(st) || failed(dl) ||
      failed(pads) || failed(ks))
    return failure();
  ArrayRef<int64_t> xs = (*x)->shape, ws = (*w)->shape;
  int64_t rank = xs.size(), sp = rank - 2;
  if (rank != 4 || ws.size() != 4)
    return fail("only 2D transposed convolution is supported");
  if (!isFloatDtype((*x)->dtype) || (*w)->dtype != (*x)->dtype)
    return fail("needs floating-point input and weight of one type");
  if (!(*w)->isConstant())
    return fail("the weight must be known at import time");
  int64_t g = *group, n = xs[0], c = xs[1], mg = ws[1], m = mg * g;
  if (g < 1 || ws[0] != c || c % g)
    return fail("group " + Twine(g) + " does not fit weight shape [" +
                Twine(ws[0]) + ", " + Twine(ws[1]) + ", ...] and " + Twine(c) +
                " input channels");
  SmallVector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (haveKs && ArrayRef<int64_t>(*ks) != ArrayRef<int64_t>(kernel))
    return fail("kernel_shape disagrees with the weight's shape");
  SmallVector<int64_t> strides = st->empty() ? SmallVector<int64_t>(sp, 1) : *st;
  SmallVector<int64_t> dil = dl->empty() ? SmallVector<int64_t>(sp, 1) : *dl;
  SmallVector<int64_t> outPad =
      outputPadding->empty() ? SmallVector<int64_t>(sp, 0) : *outputPadding;
  if (int64_t(strides.size()) != sp || int64_t(dil.size()) != sp ||
      int64_t(outPad.size()) != sp)
    return fail("strides, dilations or output_padding do not match rank");
  SmallVector<int64_t> lo(sp, 0), hi(sp, 0), out(sp);
  for (int64_t i = 0; i < sp; ++i) {
    if (strides[i] < 1 || dil[i] < 1)
      return fail("strides and dilations must be positive");
    int64_t extent = (kernel[i] - 1) * dil[i] + 1;
    int64_t full = strides[i] * (xs[2 + i] - 1) + outPad[i] + extent;
    if (haveOutShape || *autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
      int64_t target = haveOutShape
                           ? (*outputShape)[outputShape->size() - sp + i]
                           : xs[2 + i] * strides[i];
      int64_t total = std::max<int64_t>(0, full - target);
      if (*autoPad == "SAME_UPPER") {
        lo[i] = total / 2;
        hi[i] = total - total / 2;
      } else {
        lo[i] = total - total / 2;
        hi[i] = total / 2;
      }
    } else if (*autoPad == "NOTSET" && !pads->empty()) {
      if (int64_t(pads->size()) != 2 * sp)
        return fail("pads does not match rank");
      lo[i] = (*pads)[i];
      hi[i] = (*pads)[sp + i];
    } else if (*autoPad != "NOTSET" && *autoPad != "VALID") {
      return fail("auto_pad '" + *autoPad + "' is not supported");
    }
    out[i] = full - lo[i] - hi[i];
    if (out[i] < 1)
      return fail("output size " + Twine(out[i]) + " is not positive");
  }
  // The equivalent direct convolution reads the input dilated by the stride,
  // padded by extent-1-pad, with the kernel flipped and its channel axes
  // swapped: W'[g][mo][ci][i][j] = W[g*C/g + ci][mo][kh-1-i][kw-1-j].
  const TensorData &wt = *(*w)->constant;
  int64_t cg = c / g, kh = kernel[0], kw = kernel[1];
  SmallVector<int64_t> wShape = {g, mg, cg, kh, kw};
  TensorData flipped = makeTensor(wShape, wt.dtype);
  unsigned es = elementByteSize(wt.dtype);
  char *dst = const_cast<char *>(flipped.bytes.data());
  int64_t idx = 0;
  for (int64_t gi = 0; gi < g; ++gi)
    for (int64_t mo = 0; mo < mg; ++mo)
      for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j, ++idx) {
            int64_t src = (((gi * cg + ci) * mg + mo) * kh + (kh - 1 - i)) * kw +
                          (kw - 1 - j);
            std::memcpy(dst + idx * es, wt.bytes.data() + src * es, es);
          }
  Type et = cast<RankedTensorType>(operand(0).getType()).getElementType();
  // Dilate and pad the input in one insert_slice into zeros; negative
  // paddings (pads larger than the kernel extent) crop the result after.
  SmallVector<int64_t> padLo(sp), padHi(sp), crop(sp, 0), dilShape = {n, c};
  for (int64_t i = 0; i < sp; ++i) {
    int64_t extent = (kernel[i] - 1) * dil[i] + 1;
    padLo[i] = extent - 1 - lo[i];
    padHi[i] = extent - 1 - hi[i] + outPad[i];
    if (padLo[i] < 0) {
      crop[i] = -padLo[i];
      padLo[i] = 0;
    }
    padHi[i] = std::max<int64_t>(padHi[i], 0);
    dilShape.push_back((xs[2 + i] - 1) * strides[i] + 1 + padLo[i] + padHi[i]);
  }
  Value zeros = filled(dilShape, et, 0);
  SmallVector<int64_t> offs = {0, 0}, sizes(xs), sliceStrides = {1, 1};
  for (int64_t i = 0; i < sp; ++i) {
    offs.push_back(padLo[i]);
    sliceStrides.push_back(strides[i]);
  }
  Value in = tensor::InsertSliceOp::create(b, operand(0), zeros, ValueRange{},
                                           ValueRange{}, ValueRange{}, offs,
                                           sizes, sliceStrides);
  SmallVector<int64_t> convOut = {n, g, mg};
  for (int64_t i = 0; i < sp; ++i) {
    int64_t extent = (kernel[i] - 1) * dil[i] + 1;
    convOut.push_back(dilShape[2 + i] - extent + 1);
  }
  Value bias;
  if (input(2)) {
    if (input(2)->shape != SmallVector<int64_t>{m})
      return fail("bias must have shape [" + Twine(m) + "]");
    bias = reshape(operand(2), {g, mg});
  }
  Value init =
      bias ? linalg::BroadcastOp::create(b, bias, empty(convOut, et),
                                         ArrayRef<int64_t>{0, 3, 4})
                 .getResult()[0]
           : filled(convOut, et, 0);
  Value weight;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(b.getInsertionBlock());
    weight = materialize(flipped, node->input(1) + "_flipped");
  }
  Value gin = reshape(in, {n, g, cg, dilShape[2], dilShape[3]});
  Value r = linalg::Conv2DNgchwGfchwOp::create(
                b, init.getType(), ValueRange{gin, weight}, init,
                b.getI64TensorAttr({1, 1}), b.getI64TensorAttr(dil))
                .getResult(0);
  SmallVector<int64_t> merged = {n, m, convOut[3], convOut[4]};
  r = reshape(r, merged);
  SmallVector<int64_t> finalShape = {n, m, out[0], out[1]};
  if (ArrayRef<int64_t>(merged) != ArrayRef<int64_t>(finalShape)) {
    SmallVector<int64_t> o = {0, 0, crop[0], crop[1]}, one(4, 1);
    r = tensor::ExtractSliceOp::create(b, tensorType(finalShape, et), r,
                                       ValueRange{}, ValueRange{}, ValueRange{},
                                       o, finalShape, one);
  }
  setOutput(0, r, (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importGemm() {
  FailureOr<ImportedValue *> a = required(0), bv = required(1);
  FailureOr<double> alpha = floatAttr("alpha", 1.0), beta = floatAttr("beta", 1.0);
  FailureOr<int64_t> transA = intAttr("transA", 0), transB = intAttr("transB", 0);
  ignoreAttrs({"broadcast"});
  if (failed(a) || failed(bv) || failed(alpha) || failed(beta) ||
      failed(transA) || failed(transB))
    return failure();
  ArrayRef<int64_t> as = (*a)->shape, bs = (*bv)->shape;
  if (as.size() != 2 || bs.size() != 2)
    return fail("A and B must be matrices");
  int64_t m = *transA ? as[1] : as[0], k = *transA ? as[0] : as[1];
  int64_t kb = *transB ? bs[1] : bs[0], nn = *transB ? bs[0] : bs[1];
  if (k != kb)
    return fail("inner dimensions " + Twine(k) + " and " + Twine(kb) +
                " differ");
  Value av = operand(0), bval = operand(1);
  Type et = cast<RankedTensorType>(av.getType()).getElementType();
  if (cast<RankedTensorType>(bval.getType()).getElementType() != et)
    return fail("A and B element types differ");
  bool isFloat = isa<FloatType>(et);
  if (!isFloat && (*alpha != 1.0 || *beta != 1.0))
    return fail("alpha and beta must be 1 for integer Gemm");
  SmallVector<int64_t> outShape = {m, nn};
  Value c = input(2) ? operand(2) : Value();
  Value init;
  bool cInInit = false;
  if (c && *alpha == 1.0 && *beta == 1.0) {
    ArrayRef<int64_t> cs = shapeOf(c);
    if ((cs.size() == 1 && cs[0] == nn) ||
        (cs.size() == 2 && cs[0] == 1 && cs[1] == nn)) {
      // The bias row's reshape and broadcast carry C's name, so a constant
      // folded from them still names the initializer (docs/training.md).
      Location nodeLoc = b.getLoc();
      b.setLoc(NameLoc::get(b.getStringAttr(node->input(2)), nodeLoc));
      init = accumulatorInit(*this, reshape(c, {nn}), outShape, 1, et);
      b.setLoc(nodeLoc);
      cInInit = true;
    } else if (succeeded(broadcastShape({cs, ArrayRef<int64_t>(outShape)})) &&
               *broadcastShape({cs, ArrayRef<int64_t>(outShape)}) ==
                   ArrayRef<int64_t>(outShape)) {
      init = broadcastTo(c, outShape);
      cInInit = true;
    } else {
      return fail("C does not broadcast to [" + Twine(m) + ", " + Twine(nn) +
                  "]");
    }
  }
  if (!init)
    init = filled(outShape, et, 0);
  auto mm = linalg::MatmulOp::create(b, TypeRange{init.getType()},
                                     ValueRange{av, bval}, ValueRange{init});
  if (*transA || *transB) {
    AffineExpr dm = b.getAffineDimExpr(0), dn = b.getAffineDimExpr(1),
               dk = b.getAffineDimExpr(2);
    SmallVector<AffineMap> maps = {
        AffineMap::get(3, 0, *transA ? ArrayRef<AffineExpr>{dk, dm}
                                     : ArrayRef<AffineExpr>{dm, dk}, &ctx),
        AffineMap::get(3, 0, *transB ? ArrayRef<AffineExpr>{dn, dk}
                                     : ArrayRef<AffineExpr>{dk, dn}, &ctx),
        AffineMap::get(3, 0, {dm, dn}, &ctx)};
    mm.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
  }
  Value y = mm.getResult(0);
  if (!cInInit && (c || *alpha != 1.0)) {
    SmallVector<Value> ins = {y};
    if (c)
      ins.push_back(c);
    double al = *alpha, be = *beta;
    FailureOr<Value> r = elementwise(
        ins, et, [&](ImplicitLocOpBuilder &ib, ValueRange v) -> Value {
          Value acc = v[0];
          if (al != 1.0)
            acc = arith::MulFOp::create(ib, acc, fconst(ib, et, al));
          if (v.size() > 1) {
            Value cc = v[1];
            if (be != 1.0)
              cc = arith::MulFOp::create(ib, cc, fconst(ib, et, be));
            acc = arith::AddFOp::create(ib, acc, cc);
          }
          return acc;
        });
    if (failed(r))
      return failure();
    if (shapeOf(*r) != ArrayRef<int64_t>(outShape))
      return fail("C does not broadcast to the output");
    y = *r;
  }
  setOutput(0, y, (*a)->dtype);
  return success();
}

LogicalResult GraphImporter::importMatMul() {
  FailureOr<ImportedValue *> a = required(0), bv = required(1);
  if (failed(a) || failed(bv))
    return failure();
  SmallVector<int64_t> as((*a)->shape), bs((*bv)->shape);
  if (as.empty() || bs.empty())
    return fail("operands must have rank >= 1");
  Value av = operand(0), bval = operand(1);
  Type et = cast<RankedTensorType>(av.getType()).getElementType();
  if (cast<RankedTensorType>(bval.getType()).getElementType() != et)
    return fail("operand element types differ");
  bool vecA = as.size() == 1, vecB = bs.size() == 1;
  if (vecA) {
    as.insert(as.begin(), 1);
    av = reshape(av, as);
  }
  if (vecB) {
    bs.push_back(1);
    bval = reshape(bval, bs);
  }
  int64_t m = as[as.size() - 2], k = as.back(), kb = bs[bs.size() - 2],
          n = bs.back();
  if (k != kb)
    return fail("inner dimensions " + Twine(k) + " and " + Twine(kb) +
                " differ");
  ArrayRef<int64_t> batchA = ArrayRef<int64_t>(as).drop_back(2),
                    batchB = ArrayRef<int64_t>(bs).drop_back(2);
  FailureOr<SmallVector<int64_t>> batch = broadcastShape({batchA, batchB});
  if (failed(batch))
    return failure();
  int64_t nb = 1;
  for (int64_t d : *batch)
    nb *= d;
  SmallVector<int64_t> outShape(*batch);
  outShape.append({m, n});
  Value y;
  if (batchB.empty() || (nb == 1 && batchA.size() >= batchB.size())) {
    // [..., M, K] x [K, N]: fold the batch into the rows.
    Value a2 = reshape(av, {nb * m, k});
    Value b2 = reshape(bval, {k, n});
    Value init = filled({nb * m, n}, et, 0);
    y = linalg::MatmulOp::create(b, TypeRange{init.getType()},
                                 ValueRange{a2, b2}, ValueRange{init})
            .getResult(0);
  } else {
    SmallVector<int64_t> fullA(*batch), fullB(*batch);
    fullA.append({m, k});
    fullB.append({k, n});
    Value a3 = reshape(broadcastTo(av, fullA), {nb, m, k});
    Value b3 = reshape(broadcastTo(bval, fullB), {nb, k, n});
    Value init = filled({nb, m, n}, et, 0);
    y = linalg::BatchMatmulOp::create(b, TypeRange{init.getType()},
                                      ValueRange{a3, b3}, ValueRange{init})
            .getResult(0);
  }
  SmallVector<int64_t> finalShape(*batch);
  if (!vecA)
    finalShape.push_back(m);
  if (!vecB)
    finalShape.push_back(n);
  y = reshape(y, finalShape);
  setOutput(0, y, (*a)->dtype);
  return success();
}

LogicalResult GraphImporter::importPool(PoolKind kind) {
  FailureOr<ImportedValue *> x = required(0);
  FailureOr<int64_t> ceilMode = intAttr("ceil_mode", 0);
  FailureOr<int64_t> storage = intAttr("storage_order", 0);
  FailureOr<int64_t> includePad = intAttr("count_include_pad", 0);
  if (failed(x) || failed(ceilMode) || failed(storage) || failed(includePad))
    return failure();
  if (hasOutput(1))
    return fail("the Indices output is not supported");
  bool isMax = kind == PoolKind::Max;
  ArrayRef<int64_t> xs = (*x)->shape;
  int64_t rank = xs.size();
  if (rank != 3 && rank != 4)
    return fail("only 1D and 2D pooling (NCW, NCHW) is supported");
  if (!isFloatDtype((*x)->dtype))
    return fail("needs a floating-point input");
  FailureOr<Window> w =
      readWindow(*this, xs.drop_front(2), {}, *ceilMode != 0, isMax);
  if (failed(w))
    return failure();
  int64_t sp = rank - 2;
  SmallVector<int64_t> lo = {0, 0}, hi = {0, 0};
  for (int64_t i = 0; i < sp; ++i) {
    int64_t extent = (w->kernel[i] - 1) * w->dilations[i] + 1;
    int64_t needed = (w->out[i] - 1) * w->strides[i] + extent;
    lo.push_back(w->lo[i]);
    // Ceil mode may need the last window to run past the end padding.
    hi.push_back(std::max<int64_t>(w->hi[i],
                                   needed - xs[2 + i] - w->lo[i]));
  }
  Value v = operand(0);
  Type et = cast<RankedTensorType>(v.getType()).getElementType();
  Value padded = padConstant(v, lo, hi, isMax ? -INFINITY : 0.0);
  SmallVector<int64_t> outShape = {xs[0], xs[1]};
  llvm::append_range(outShape, w->out);
  Value init = filled(outShape, et, isMax ? -INFINITY : 0.0);
  Value window = empty(w->kernel, et);
  auto strides = b.getI64TensorAttr(w->strides);
  auto dilations = b.getI64TensorAttr(w->dilations);
  Type types = init.getType();
  SmallVector<Value> ins = {padded, window};
  Value r;
  if (isMax)
    r = sp == 2 ? linalg::PoolingNchwMaxOp::create(b, types, ins, init, strides,
                                                   dilations)
                      .getResult(0)
                : linalg::PoolingNcwMaxOp::create(b, types, ins, init, strides,
                                                  dilations)
                      .getResult(0);
  else
    r = sp == 2 ? linalg::PoolingNchwSumOp::create(b, types, ins, init, strides,
                                                   dilations)
                      .getResult(0)
                : linalg::PoolingNcwSumOp::create(b, types, ins, init, strides,
                                                  dilations)
                      .getResult(0);
  if (!isMax) {
    // Divisors: window positions inside the input (or inside the explicitly
    // padded input with count_include_pad), per axis, multiplied.
    SmallVector<SmallVector<int64_t>> counts(sp);
    bool uniform = true;
    int64_t first = -1;
    for (int64_t i = 0; i < sp; ++i) {
      int64_t lower = *includePad ? -w->lo[i] : 0,
              upper = xs[2 + i] + (*includePad ? w->hi[i] : 0);
      for (int64_t o = 0; o < w->out[i]; ++o) {
        int64_t cnt = 0;
        for (int64_t kk = 0; kk < w->kernel[i]; ++kk) {
          int64_t p = o * w->strides[i] - w->lo[i] + kk * w->dilations[i];
          cnt += p >= lower && p < upper;
        }
        counts[i].push_back(std::max<int64_t>(cnt, 1));
      }
    }
    int64_t positions = checkedNumElements(w->out);
    if (positions < 0 || positions > kFoldElements * 256)
      return fail("pooled output of " + Twine(positions) +
                  " positions is too large");
    TensorData div = makeTensor(w->out, (*x)->dtype);
    int64_t total = div.numElements();
    for (int64_t lin = 0; lin < total; ++lin) {
      int64_t rem = lin, prod = 1;
      for (int64_t i = sp - 1; i >= 0; --i) {
        prod *= counts[i][rem % w->out[i]];
        rem /= w->out[i];
      }
      if (first < 0)
        first = prod;
      uniform &= prod == first;
      if ((*x)->dtype == onnx::TensorProto::FLOAT) {
        float fv = float(prod);
        std::memcpy(const_cast<char *>(div.bytes.data()) + lin * 4, &fv, 4);
      } else if ((*x)->dtype == onnx::TensorProto::DOUBLE) {
        double dv = double(prod);
        std::memcpy(const_cast<char *>(div.bytes.data()) + lin * 8, &dv, 8);
      }
    }
    bool narrow = (*x)->dtype != onnx::TensorProto::FLOAT &&
                  (*x)->dtype != onnx::TensorProto::DOUBLE;
    if (!uniform && narrow)
      return fail("non-uniform average divisors need f32 or f64");
    Value divisor;
    if (uniform) {
      double d = double(first);
      r = *elementwise(r, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
        return arith::DivFOp::create(ib, a[0], fconst(ib, et, d));
      });
    } else {
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(b.getInsertionBlock());
        divisor = materialize(div, "pool_divisor");
      }
      r = *elementwise(ValueRange{r, divisor}, et,
                       [&](ImplicitLocOpBuilder &ib, ValueRange a) {
                         return arith::DivFOp::create(ib, a[0], a[1]);
                       });
    }
  }
  setOutput(0, r, (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importGlobalPool(PoolKind kind) {
  FailureOr<ImportedValue *> x = required(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = (*x)->shape;
  if (xs.size() < 3 || !isFloatDtype((*x)->dtype))
    return fail("needs a floating-point input of rank >= 3");
  SmallVector<int64_t> axes;
  int64_t count = 1;
  for (int64_t i = 2, e = xs.size(); i < e; ++i) {
    axes.push_back(i);
    count *= xs[i];
  }
  bool isMax = kind == PoolKind::Max;
  Value r = reduce(operand(0), axes, true,
                   isMax ? ReduceKind::Max : ReduceKind::Sum);
  if (!isMax) {
    Type et = cast<RankedTensorType>(r.getType()).getElementType();
    r = *elementwise(r, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
      return arith::DivFOp::create(ib, a[0], fconst(ib, et, double(count)));
    });
  }
  setOutput(0, r, (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importBatchNorm() {
  FailureOr<double> eps = floatAttr("epsilon", 1e-5);
  FailureOr<int64_t> spatial = intAttr("spatial", 1),
                     training = intAttr("training_mode", 0);
  ignoreAttrs({"momentum", "is_test", "consumed_inputs"});
  if (failed(eps) || failed(spatial) || failed(training))
    return failure();
  if (*training)
    return fail("training_mode=1 is not supported (inference only)");
  if (*spatial != 1)
    return fail("spatial=0 is not supported");
  for (unsigned i = 0; i < 5; ++i)
    if (failed(required(i)))
      return failure();
  if (hasOutput(3) || hasOutput(4))
    return fail("the saved mean/variance outputs are training-only");
  ImportedValue &x = *input(0);
  if (x.shape.size() < 2 || !isFloatDtype(x.dtype))
    return fail("needs a floating-point input of rank >= 2");
  int64_t c = x.shape[1], rank = x.shape.size();
  for (unsigned i = 1; i < 5; ++i)
    if (input(i)->shape != SmallVector<int64_t>{c})
      return fail("scale, bias, mean and variance must have shape [" +
                  Twine(c) + "]");
  Value xv = operand(0);
  Type et = cast<RankedTensorType>(xv.getType()).getElementType();
  SmallVector<Value> ins = {xv};
  for (unsigned i = 1; i < 5; ++i) {
    if (cast<RankedTensorType>(operand(i).getType()).getElementType() != et)
      return fail("parameters must have the input's element type");
    ins.push_back(operand(i));
  }
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, &ctx);
  AffineMap ch = AffineMap::get(rank, 0, b.getAffineDimExpr(1), &ctx);
  SmallVector<AffineMap> maps = {id, ch, ch, ch, ch, id};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value init = empty(x.shape, et);
  double epsilon = *eps;
  auto op = linalg::GenericOp::create(
      b, TypeRange{init.getType()}, ins, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location loc, ValueRange a) {
        ImplicitLocOpBuilder ib(loc, nb);
        // (x - mean) / sqrt(var + eps) * scale + bias, in ONNX's order.
        Value d = arith::SubFOp::create(ib, a[0], a[3]);
        Value s = math::SqrtOp::create(
            ib, arith::AddFOp::create(ib, a[4], fconst(ib, et, epsilon)));
        Value y = arith::AddFOp::create(
            ib, arith::MulFOp::create(ib, arith::DivFOp::create(ib, d, s), a[1]),
            a[2]);
        linalg::YieldOp::create(ib, y);
      });
  op->setAttr("weft.batchnorm_epsilon", b.getF64FloatAttr(epsilon));
  setOutput(0, op.getResult(0), x.dtype);
  // Inference leaves the running statistics unchanged.
  if (hasOutput(1))
    forwardOutput(1, *input(3));
  if (hasOutput(2))
    forwardOutput(2, *input(4));
  return success();
}

LogicalResult GraphImporter::importInstanceNorm() {
  FailureOr<double> eps = floatAttr("epsilon", 1e-5);
  if (failed(eps))
    return failure();
  for (unsigned i = 0; i < 3; ++i)
    if (failed(required(i)))
      return failure();
  ImportedValue &x = *input(0);
  int64_t rank = x.shape.size();
  if (rank < 3 || !isFloatDtype(x.dtype))
    return fail("needs a floating-point input of rank >= 3");
  int64_t c = x.shape[1], count = 1;
  SmallVector<int64_t> axes, paramShape = {c};
  for (int64_t i = 2; i < rank; ++i) {
    axes.push_back(i);
    count *= x.shape[i];
    paramShape.push_back(1);
  }
  if (input(1)->shape != SmallVector<int64_t>{c} ||
      input(2)->shape != SmallVector<int64_t>{c})
    return fail("scale and bias must have shape [" + Twine(c) + "]");
  Value xv = operand(0);
  Type et = cast<RankedTensorType>(xv.getType()).getElementType();
  Value scale = reshape(operand(1), paramShape),
        bias = reshape(operand(2), paramShape);
  auto divCount = [&](Value v) {
    return *elementwise(v, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
      return arith::DivFOp::create(ib, a[0], fconst(ib, et, double(count)));
    });
  };
  Value mean = divCount(reduce(xv, axes, true, ReduceKind::Sum));
  Value centered =
      *elementwise(ValueRange{xv, mean}, et,
                   [&](ImplicitLocOpBuilder &ib, ValueRange a) {
                     return arith::SubFOp::create(ib, a[0], a[1]);
                   });
  Value sq = *elementwise(centered, et,
                          [&](ImplicitLocOpBuilder &ib, ValueRange a) {
                            return arith::MulFOp::create(ib, a[0], a[0]);
                          });
  Value var = divCount(reduce(sq, axes, true, ReduceKind::Sum));
  double epsilon = *eps;
  Value y = *elementwise(
      ValueRange{centered, var, scale, bias}, et,
      [&](ImplicitLocOpBuilder &ib, ValueRange a) -> Value {
        Value s = math::SqrtOp::create(
            ib, arith::AddFOp::create(ib, a[1], fconst(ib, et, epsilon)));
        return arith::AddFOp::create(
            ib, arith::MulFOp::create(ib, arith::DivFOp::create(ib, a[0], s),
                                      a[2]),
            a[3]);
      });
  setOutput(0, y, x.dtype);
  return success();
}

LogicalResult GraphImporter::importLayerNorm() {
  FailureOr<double> eps = floatAttr("epsilon", 1e-5);
  FailureOr<int64_t> axisAttr = intAttr("axis", -1);
  ignoreAttrs({"stash_type"});
  FailureOr<ImportedValue *> x = required(0), scale = required(1);
  if (failed(eps) || failed(axisAttr) || failed(x) || failed(scale))
    return failure();
  int64_t rank = (*x)->shape.size();
  FailureOr<int64_t> axis = normalizeAxis(*axisAttr, rank);
  if (failed(axis))
    return failure();
  if (!isFloatDtype((*x)->dtype))
    return fail("needs a floating-point input");
  SmallVector<int64_t> axes;
  int64_t count = 1;
  for (int64_t i = *axis; i < rank; ++i) {
    axes.push_back(i);
    count *= (*x)->shape[i];
  }
  Value xv = operand(0);
  Type et = cast<RankedTensorType>(xv.getType()).getElementType();
  auto divCount = [&](Value v) {
    return *elementwise(v, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
      return arith::DivFOp::create(ib, a[0], fconst(ib, et, double(count)));
    });
  };
  Value mean = divCount(reduce(xv, axes, true, ReduceKind::Sum));
  FailureOr<Value> centered =
      elementwise(ValueRange{xv, mean}, et,
                  [&](ImplicitLocOpBuilder &ib, ValueRange a) {
                    return arith::SubFOp::create(ib, a[0], a[1]);
                  });
  Value sq = *elementwise(*centered, et,
                          [&](ImplicitLocOpBuilder &ib, ValueRange a) {
                            return arith::MulFOp::create(ib, a[0], a[0]);
                          });
  Value var = divCount(reduce(sq, axes, true, ReduceKind::Sum));
  double epsilon = *eps;
  Value invStd = *elementwise(
      var, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) -> Value {
        return arith::DivFOp::create(
            ib, fconst(ib, et, 1.0),
            math::SqrtOp::create(
                ib, arith::AddFOp::create(ib, a[0], fconst(ib, et, epsilon))));
      });
  SmallVector<Value> ins = {*centered, invStd, operand(1)};
  if (input(2))
    ins.push_back(operand(2));
  FailureOr<Value> y = elementwise(
      ins, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) -> Value {
        Value v = arith::MulFOp::create(
            ib, arith::MulFOp::create(ib, a[0], a[1]), a[2]);
        return a.size() > 3 ? Value(arith::AddFOp::create(ib, v, a[3])) : v;
      });
  if (failed(y))
    return failure();
  if (shapeOf(*y) != ArrayRef<int64_t>((*x)->shape))
    return fail("scale or bias does not broadcast to the input");
  setOutput(0, *y, (*x)->dtype);
  if (hasOutput(1))
    setOutput(1, mean, (*x)->dtype);
  if (hasOutput(2))
    setOutput(2, invStd, (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importLRN() {
  FailureOr<double> alpha = floatAttr("alpha", 1e-4),
                    beta = floatAttr("beta", 0.75), bias = floatAttr("bias", 1);
  FailureOr<int64_t> size = intAttr("size", 0);
  FailureOr<ImportedValue *> x = required(0);
  if (failed(alpha) || failed(beta) || failed(bias) || failed(size) ||
      failed(x))
    return failure();
  if (*size < 1)
    return fail("size must be positive");
  int64_t rank = (*x)->shape.size();
  if (rank < 3 || !isFloatDtype((*x)->dtype))
    return fail("needs a floating-point input of rank >= 3");
  Value xv = operand(0);
  Type et = cast<RankedTensorType>(xv.getType()).getElementType();
  Value sq = *elementwise(xv, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
    return arith::MulFOp::create(ib, a[0], a[0]);
  });
  int64_t before = (*size - 1) / 2, after = *size - 1 - before;
  SmallVector<int64_t> lo(rank, 0), hi(rank, 0);
  lo[1] = before;
  hi[1] = after;
  Value padded = padConstant(sq, lo, hi, 0);
  // Sum over the channel window: loops (d0..d{r-1}, k) read padded[d1 + k].
  SmallVector<AffineExpr> inExprs, outExprs;
  for (int64_t i = 0; i < rank; ++i) {
    AffineExpr d = b.getAffineDimExpr(i);
    inExprs.push_back(i == 1 ? d + b.getAffineDimExpr(rank) : d);
    outExprs.push_back(d);
  }
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank + 1, 0, inExprs, &ctx),
      AffineMap::get(rank + 1, 0, b.getAffineDimExpr(rank), &ctx),
      AffineMap::get(rank + 1, 0, outExprs, &ctx)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  Value init = filled((*x)->shape, et, 0);
  Value window = empty({*size}, et);
  Value sum = linalg::GenericOp::create(
                  b, TypeRange{init.getType()}, ValueRange{padded, window},
                  ValueRange{init}, maps, iters,
                  [&](OpBuilder &nb, Location loc, ValueRange a) {
                    ImplicitLocOpBuilder ib(loc, nb);
                    linalg::YieldOp::create(
                        ib, Value(arith::AddFOp::create(ib, a[2], a[0])));
                  })
                  .getResult(0);
  double scale = *alpha / double(*size), bt = *beta, bs = *bias;
  Value y = *elementwise(
      ValueRange{xv, sum}, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
        Value base = arith::AddFOp::create(
            ib, fconst(ib, et, bs),
            arith::MulFOp::create(ib, fconst(ib, et, scale), a[1]));
        return arith::DivFOp::create(
            ib, a[0], math::PowFOp::create(ib, base, fconst(ib, et, bt)));
      });
  setOutput(0, y, (*x)->dtype);
  return success();
}

LogicalResult GraphImporter::importSoftmax(SoftmaxKind kind, SoftmaxAxes form) {
  FailureOr<ImportedValue *> x = required(0);
  FailureOr<int64_t> axisAttr =
      intAttr("axis", form == SoftmaxAxes::Coerced2D ? 1 : -1);
  if (failed(x) || failed(axisAttr))
    return failure();
  int64_t rank = (*x)->shape.size();
  FailureOr<int64_t> axis = normalizeAxis(*axisAttr, rank);
  if (failed(axis))
    return failure();
  if (!isFloatDtype((*x)->dtype))
    return fail("needs a floating-point input");
  // Coerced to 2D at `axis`: normalize over every dimension from `axis` on.
  SmallVector<int64_t> axes = {*axis};
  if (form == SoftmaxAxes::Coerced2D)
    for (int64_t i = *axis + 1; i < rank; ++i)
      axes.push_back(i);
  Value xv = operand(0);
  Type et = cast<RankedTensorType>(xv.getType()).getElementType();
  Value mx = reduce(xv, axes, true, ReduceKind::Max);
  Value shifted = *elementwise(ValueRange{xv, mx}, et,
                               [&](ImplicitLocOpBuilder &ib, ValueRange a) {
                                 return arith::SubFOp::create(ib, a[0], a[1]);
                               });
  Value e = *elementwise(shifted, et, [&](ImplicitLocOpBuilder &ib,
                                          ValueRange a) {
    return math::ExpOp::create(ib, a[0]);
  });
  Value s = reduce(e, axes, true, ReduceKind::Sum);
  Value y;
  if (kind == SoftmaxKind::Softmax)
    y = *elementwise(ValueRange{e, s}, et,
                     [&](ImplicitLocOpBuilder &ib, ValueRange a) {
                       return arith::DivFOp::create(ib, a[0], a[1]);
                     });
  else
    y = *elementwise(ValueRange{shifted, s}, et,
                     [&](ImplicitLocOpBuilder &ib, ValueRange a) {
                       return arith::SubFOp::create(
                           ib, a[0], math::LogOp::create(ib, a[1]));
                     });
  setOutput(0, y, (*x)->dtype);
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

LogicalResult GraphImporter::importReduce(Reduction kind, ParamFrom form) {
  FailureOr<ImportedValue *> x = required(0);
  FailureOr<int64_t> keep = intAttr("keepdims", 1);
  // noop_with_empty_axes came with the axes input.
  FailureOr<int64_t> noop = form == ParamFrom::Input
                                ? intAttr("noop_with_empty_axes", 0)
                                : FailureOr<int64_t>(0);
  FailureOr<SmallVector<int64_t>> axesAttr =
      form == ParamFrom::Attribute
          ? intsAttr("axes")
          : FailureOr<SmallVector<int64_t>>(SmallVector<int64_t>());
  if (failed(x) || failed(keep) || failed(noop) || failed(axesAttr))
    return failure();
  int64_t rank = (*x)->shape.size();
  SmallVector<int64_t> axes = *axesAttr;
  if (form == ParamFrom::Attribute && failed(attributeNotInput(1, "axes")))
    return failure();
  if (form == ParamFrom::Input && failed(inputNotAttribute(1, "axes")))
    return failure();
  if (form == ParamFrom::Input && input(1)) {
    FailureOr<const TensorData *> a = constantInput(1, "axes");
    if (failed(a))
      return failure();
    axes = intsOf(**a);
  }
  Value v = operand(0);
  if (axes.empty() && *noop) {
    setOutput(0, v, (*x)->dtype);
    return success();
  }
  if (axes.empty())
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  for (int64_t &a : axes) {
    FailureOr<int64_t> n = normalizeAxis(a, rank);
    if (failed(n))
      return failure();
    a = *n;
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  Type et = cast<RankedTensorType>(v.getType()).getElementType();
  bool isFloat = isa<FloatType>(et);
  bool isMinMax = kind == Reduction::Max || kind == Reduction::Min;
  if (!isFloat && !isMinMax && kind != Reduction::Sum &&
      kind != Reduction::Prod)
    return fail("needs a floating-point input");
  if (!isFloat && isUnsignedDtype((*x)->dtype) && isMinMax)
    return fail("unsigned inputs are not supported");
  auto unary = [&](auto makeOp) {
    return *elementwise(v, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
      return makeOp(ib, a[0]);
    });
  };
  // What is combined: the input, its square, absolute value or exponential.
  ReduceKind combine = ReduceKind::Sum;
  switch (kind) {
  case Reduction::Max:
    combine = ReduceKind::Max;
    break;
  case Reduction::Min:
    combine = ReduceKind::Min;
    break;
  case Reduction::Prod:
    combine = ReduceKind::Prod;
    break;
  case Reduction::SumSquare:
  case Reduction::L2:
    v = unary([](ImplicitLocOpBuilder &ib, Value a) -> Value {
      return arith::MulFOp::create(ib, a, a);
    });
    break;
  case Reduction::L1:
    v = unary([](ImplicitLocOpBuilder &ib, Value a) -> Value {
      return math::AbsFOp::create(ib, a);
    });
    break;
  case Reduction::LogSumExp:
    v = unary([](ImplicitLocOpBuilder &ib, Value a) -> Value {
      return math::ExpOp::create(ib, a);
    });
    break;
  case Reduction::Sum:
  case Reduction::Mean:
  case Reduction::LogSum:
    break;
  }
  Value r = reduce(v, axes, *keep, combine);
  int64_t count = 1;
  for (int64_t a : axes)
    count *= (*x)->shape[a];
  auto post = [&](auto makeOp) {
    r = *elementwise(r, et, [&](ImplicitLocOpBuilder &ib, ValueRange a) {
      return makeOp(ib, a[0]);
    });
  };
  // What is done with the sum: mean, square root or logarithm.
  switch (kind) {
  case Reduction::Mean:
    post([&](ImplicitLocOpBuilder &ib, Value a) -> Value {
      return arith::DivFOp::create(ib, a, fconst(ib, et, double(count)));
    });
    break;
  case Reduction::L2:
    post([](ImplicitLocOpBuilder &ib, Value a) -> Value {
      return math::SqrtOp::create(ib, a);
    });
    break;
  case Reduction::LogSum:
  case Reduction::LogSumExp:
    post([](ImplicitLocOpBuilder &ib, Value a) -> Value {
      return math::LogOp::create(ib, a);
    });
    break;
  default:
    break;
  }
  setOutput(0, r, (*x)->dtype);
  return success();
}
