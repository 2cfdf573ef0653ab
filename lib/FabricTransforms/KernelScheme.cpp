//===- KernelScheme.cpp - Kernel schemes to and from the IR ---------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/FabricTransforms/KernelScheme.h"

#include "weft/Kernels/FrustumChain.h"
#include "weft/Transforms/ConstantData.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
namespace fab = weft::fabric;

namespace weft::conversion {

fab::DenseSchemeAttr denseScheme(MLIRContext *ctx, int64_t K, int64_t M,
                                 bool relu, bool synthetic,
                                 ElementsAttr weights, ElementsAttr bias,
                                 StringRef weightsSource,
                                 bool weightsTransposed,
                                 StringRef biasSource) {
  auto name = [&](StringRef s) {
    return s.empty() ? StringAttr() : StringAttr::get(ctx, s);
  };
  return fab::DenseSchemeAttr::get(ctx, K, M, relu, synthetic, weights, bias,
                                   name(weightsSource), weightsTransposed,
                                   name(biasSource));
}

// An Expression's program is four floats a node, {kind, a, b, v}
// (ColumnKernels.cpp, "Expressions"): Select keeps its false arm in v,
// Unary its column op in b and the op's constant in v. The IR spells the
// same nodes out as #fabric.node attributes.
static constexpr size_t kExprFields = 4;

static FailureOr<fab::KernelSchemeAttrInterface>
expressionScheme(MLIRContext *ctx, const std::vector<float> &p,
                 std::string &why) {
  if (p.empty() || p.size() % kExprFields) {
    why = "an expression program has four numbers a node";
    return failure();
  }
  SmallVector<Attribute> nodes;
  Type f32 = Float32Type::get(ctx);
  for (size_t i = 0; i < p.size(); i += kExprFields) {
    std::optional<fab::ExprKind> kind = fab::symbolizeExprKind(int32_t(p[i]));
    if (!kind) {
      why = "unknown expression node kind " + std::to_string(p[i]);
      return failure();
    }
    int64_t a = int64_t(p[i + 1]), b = int64_t(p[i + 2]), c = 0;
    FloatAttr value;
    StringRef fn;
    switch (*kind) {
    case fab::ExprKind::constant:
      value = FloatAttr::get(f32, p[i + 3]);
      break;
    case fab::ExprKind::select:
      c = int64_t(p[i + 3]);
      break;
    case fab::ExprKind::unary:
      if (b < 0 || b > int64_t(ColumnOp::Expression)) {
        why = "unknown unary op in an expression";
        return failure();
      }
      fn = columnOpName(ColumnOp(b));
      b = 0;
      if (p[i + 3] != 0)
        value = FloatAttr::get(f32, p[i + 3]);
      break;
    default:
      break;
    }
    nodes.push_back(fab::ExprNodeAttr::get(ctx, *kind, a, b, c, value, fn));
  }
  return cast<fab::KernelSchemeAttrInterface>(
      fab::ExpressionSchemeAttr::get(ctx, ArrayAttr::get(ctx, nodes)));
}

/// The float program of an Expression scheme.
static FailureOr<std::vector<float>>
expressionParams(fab::ExpressionSchemeAttr e, std::string &why) {
  return fab::expressionProgram(e.getNodes(), why);
}

FailureOr<fab::KernelSchemeAttrInterface>
columnScheme(MLIRContext *ctx, ColumnOp op, const std::vector<float> &params,
             RankedTensorType sampleType, StringRef name, std::string &why) {
  auto done = [](Attribute a) {
    return FailureOr<fab::KernelSchemeAttrInterface>(
        cast<fab::KernelSchemeAttrInterface>(a));
  };
  switch (op) {
  case ColumnOp::Softmax:
  case ColumnOp::LogSoftmax:
    return done(fab::SoftmaxSchemeAttr::get(ctx, op == ColumnOp::LogSoftmax,
                                            0, 1, /*loss=*/false));
  case ColumnOp::AxisSoftmax:
  case ColumnOp::AxisLogSoftmax:
    if (params.size() != 2) {
      why = "a softmax over an axis has a group size and a stride";
      return failure();
    }
    return done(fab::SoftmaxSchemeAttr::get(
        ctx, op == ColumnOp::AxisLogSoftmax, int64_t(params[0]),
        int64_t(params[1]), /*loss=*/false));
  case ColumnOp::Expression:
    return expressionScheme(ctx, params, why);
  default:
    break;
  }
  StringRef opName = columnOpName(op);
  if (columnTakesTensor(op)) {
    if (!sampleType || int64_t(params.size()) != sampleType.getNumElements()) {
      why = "the constant tensor does not have the sample's elements";
      return failure();
    }
    auto type = RankedTensorType::get(sampleType.getShape(),
                                      Float32Type::get(ctx));
    ElementsAttr c = weft::makeF32(type, params, name);
    return done(fab::ElementwiseSchemeAttr::get(ctx, opName, nullptr, c));
  }
  if (int64_t(params.size()) != columnParamCount(op)) {
    why = (opName + " takes " + Twine(columnParamCount(op)) +
           " constants, not " + Twine(params.size()))
              .str();
    return failure();
  }
  DenseF32ArrayAttr p =
      params.empty() ? nullptr : DenseF32ArrayAttr::get(ctx, params);
  return done(fab::ElementwiseSchemeAttr::get(ctx, opName, p, nullptr));
}

JoinKernel joinKernelOf(fab::JoinKind kind, bool relu) {
  JoinKernel k;
  k.relu = relu;
  switch (kind) {
  case fab::JoinKind::add:
    k.op = JoinOp::Add;
    break;
  case fab::JoinKind::sub:
    k.op = JoinOp::Sub;
    break;
  case fab::JoinKind::mul:
    k.op = JoinOp::Mul;
    break;
  case fab::JoinKind::div:
    k.op = JoinOp::Div;
    break;
  case fab::JoinKind::max:
    k.op = JoinOp::Max;
    break;
  case fab::JoinKind::min:
    k.op = JoinOp::Min;
    break;
  }
  return k;
}

Precision precisionOf(fab::KernelOp kernel) {
  std::optional<fab::Precision> p = kernel.getPrecision();
  return p && *p == fab::Precision::mixed ? Precision::Mixed : Precision::FP32;
}

DenseTraining denseTrainingOf(fab::KernelOp kernel) {
  DenseTraining t;
  auto program = kernel->getParentOfType<fab::ProgramOp>();
  fab::TrainingAttr training =
      program ? program.getTrainingAttr() : fab::TrainingAttr();
  if (!training)
    return t;
  t.mbgd = training.getOptimizer() == fab::Optimizer::mbgd;
  t.batch = training.getBatch();
  t.lr = float(training.getLr().getValueAsDouble());
  t.inputGradient = kernel.getInputGradient();
  t.storesInput = kernel.getCheckpoint() != fab::CheckpointPolicy::recompute;
  t.lag = kernel.getLag().value_or(0);
  t.samples = training.getSamples();
  return t;
}

fab::Precision toFabric(Precision p) {
  return p == Precision::Mixed ? fab::Precision::mixed : fab::Precision::fp32;
}

/// The f32 values of `attr` into `out`, or an error on `kernel`.
static LogicalResult readValues(fab::KernelOp kernel, ElementsAttr attr,
                                StringRef what, std::vector<float> &out) {
  std::string why;
  FailureOr<SmallVector<float>> v = weft::readF32(attr, why);
  if (failed(v))
    return kernel.emitOpError() << "cannot read its " << what << ": " << why;
  out.assign(v->begin(), v->end());
  return success();
}

std::optional<std::vector<ConvShape>> frustumLevels(ArrayRef<Attribute> schemes,
                                                    std::string &why) {
  std::vector<ConvShape> levels;
  for (auto [i, a] : llvm::enumerate(schemes)) {
    const std::string member = "member " + std::to_string(i) + " ";
    if (auto p = dyn_cast<fab::PoolSchemeAttr>(a)) {
      std::optional<ConvShape> w = frustumPoolLevel(p.getShape(), why);
      if (!w) {
        why = member + "is " + why;
        return std::nullopt;
      }
      levels.push_back(*w);
    } else if (auto c = dyn_cast<fab::ConvSchemeAttr>(a)) {
      levels.push_back(c.getShape());
    } else if (auto j = dyn_cast<fab::JoinSchemeAttr>(a)) {
      // An identity residual block's add, last: the top level adds the
      // skip (docs/frustum.md, "Residual blocks in bands").
      if (levels.empty() || i + 1 != schemes.size() ||
          j.getOp() != fab::JoinKind::add || j.getBroadcast() >= 0) {
        why = member + "is a join but no plain add closing the group";
        return std::nullopt;
      }
      why = frustumSkipLevel(levels.back(), j.getRelu());
      if (!why.empty()) {
        why = member + "adds the skip, but " + why;
        return std::nullopt;
      }
    } else {
      why = member + "is no convolution, max pool or residual add";
      return std::nullopt;
    }
  }
  return levels;
}

/// The kernel info of a fused frustum group: to the partitioner and the
/// routing its envelope convolution, run in the bands its recorded tile
/// width gives (docs/frustum.md, "The lowering").
static FailureOr<KernelInfo> frustumInfo(fab::KernelOp kernel, ArrayAttr chain,
                                         KernelInfo info, bool withData) {
  auto record = kernel->getAttrOfType<DictionaryAttr>("frustum");
  auto tile = record ? record.getAs<DenseI64ArrayAttr>("tile") : nullptr;
  if (!tile || tile.size() != 2)
    return kernel.emitOpError()
           << "fuses a frustum group but has no frustum = {tile = [th, tw]}";
  std::string why;
  std::optional<std::vector<ConvShape>> levels =
      frustumLevels(chain.getValue(), why);
  if (!levels)
    return kernel.emitOpError() << "fuses a frustum group whose " << why;
  std::vector<ConvShape> shapes = std::move(*levels);
  // Every level's weights and biases (none for a max pool), and the
  // convolutions' MACs.
  DenseLayer &l = info.dense;
  info.modelMacs = info.executedMacs = 0;
  for (Attribute a : chain) {
    if (isa<fab::JoinSchemeAttr>(a))
      continue;
    std::vector<float> w, bias;
    if (auto c = dyn_cast<fab::ConvSchemeAttr>(a)) {
      info.modelMacs += c.getModelMacs();
      info.executedMacs += c.getExecutedMacs();
      if (withData &&
          (failed(readValues(kernel, c.getWeights(), "weights", w)) ||
           (c.getBias() &&
            failed(readValues(kernel, c.getBias(), "bias", bias)))))
        return failure();
    }
    l.frustumWeights.push_back(std::move(w));
    l.frustumBias.push_back(std::move(bias));
  }
  why = frustumChainProblem(shapes);
  if (!why.empty())
    return kernel.emitOpError() << "fuses a frustum group that cannot run "
                                   "fused: "
                                << why;
  ConvShape envelope = frustumEnvelope(shapes);
  if (envelope.inElements() != info.inN || envelope.outElements() != info.outN)
    return kernel.emitOpError()
           << "fuses a frustum group of " << envelope.inElements() << " -> "
           << envelope.outElements() << " elements but takes " << info.inN
           << " and gives " << info.outN << " elements per sample";
  info.layer = ChainLayer::convolution(envelope);
  info.layer.frustum = shapes;
  info.layer.frustumTiles = frustumBandsForTile(shapes, tile[1]);
  l.K = envelope.inElements();
  l.M = envelope.outElements();
  l.relu = envelope.relu;
  l.conv = envelope;
  l.frustum = std::move(shapes);
  return info;
}

FailureOr<KernelInfo> kernelInfo(fab::KernelOp kernel, bool withData) {
  KernelInfo info;
  info.op = kernel;
  FunctionType type = kernel.getFunctionType();
  for (Type t : type.getInputs()) {
    auto tt = dyn_cast<RankedTensorType>(t);
    if (!tt || !tt.hasStaticShape())
      return kernel.emitOpError() << "input type " << t << " is not static";
  }
  auto outType = dyn_cast<RankedTensorType>(type.getResult(0));
  if (!outType || !outType.hasStaticShape())
    return kernel.emitOpError() << "result type " << type.getResult(0)
                                << " is not static";
  info.inN = cast<RankedTensorType>(type.getInput(0)).getNumElements();
  info.outN = outType.getNumElements();
  info.precision = precisionOf(kernel);
  fab::KernelSchemeAttrInterface scheme = kernel.getScheme();
  info.modelMacs = scheme.getModelMacs();
  info.executedMacs = scheme.getExecutedMacs();

  if (auto d = dyn_cast<fab::DenseSchemeAttr>(scheme)) {
    if (d.getFanIn() != info.inN || d.getNeurons() != info.outN)
      return kernel.emitOpError()
             << "is a dense layer " << d.getFanIn() << " -> " << d.getNeurons()
             << " but takes " << info.inN << " and gives " << info.outN
             << " elements per sample";
    info.layer = ChainLayer::dense(d.getFanIn(), d.getNeurons(),
                                   bool(d.getBias()));
    info.layer.synthetic = d.getSynthetic();
    info.layer.relu = d.getRelu();
    // A trained kernel's mappings must hold its training memory.
    auto program = kernel->getParentOfType<fab::ProgramOp>();
    if (fab::TrainingAttr training =
            program ? program.getTrainingAttr() : fab::TrainingAttr();
        training && kernel.getTrained())
      info.layer.training = denseTrainingOf(kernel);
    DenseLayer &l = info.dense;
    l.K = d.getFanIn();
    l.M = d.getNeurons();
    l.relu = d.getRelu();
    if (StringAttr w = d.getWeightsSource())
      l.weightsSource = w.str();
    l.weightsTransposed = d.getWeightsTransposed();
    if (StringAttr b = d.getBiasSource())
      l.biasSource = b.str();
    if (withData &&
        (failed(readValues(kernel, d.getWeights(), "weights", l.weights)) ||
         (d.getBias() &&
          failed(readValues(kernel, d.getBias(), "bias", l.bias)))))
      return failure();
    return info;
  }

  // A fused frustum group (--weft-frustum-fuse): its layers' schemes in
  // `frustum_chain`, the tile recorded in `frustum`.
  if (auto chain = kernel->getAttrOfType<ArrayAttr>(kFrustumChainAttr))
    return frustumInfo(kernel, chain, std::move(info), withData);

  if (auto c = dyn_cast<fab::ConvSchemeAttr>(scheme)) {
    ConvShape shape = c.getShape();
    if (shape.inElements() != info.inN || shape.outElements() != info.outN)
      return kernel.emitOpError()
             << "is a " << c.getSummary() << " (" << shape.inElements()
             << " -> " << shape.outElements() << " elements) but takes "
             << info.inN << " and gives " << info.outN
             << " elements per sample";
    info.layer = ChainLayer::convolution(shape);
    DenseLayer &l = info.dense;
    l.K = shape.inElements();
    l.M = shape.outElements();
    l.relu = shape.relu;
    l.conv = shape;
    if (StringAttr w = c.getWeightsSource())
      l.weightsSource = w.str();
    if (StringAttr b = c.getBiasSource())
      l.biasSource = b.str();
    // A trained kernel's mappings must hold its training memory.
    auto program = kernel->getParentOfType<fab::ProgramOp>();
    if (fab::TrainingAttr training =
            program ? program.getTrainingAttr() : fab::TrainingAttr();
        training && kernel.getTrained())
      info.layer.training = denseTrainingOf(kernel);
    if (withData &&
        (failed(readValues(kernel, c.getWeights(), "weights", l.weights)) ||
         (c.getBias() &&
          failed(readValues(kernel, c.getBias(), "bias", l.bias)))))
      return failure();
    return info;
  }

  if (auto p = dyn_cast<fab::PoolSchemeAttr>(scheme)) {
    PoolShape shape = p.getShape();
    if (shape.inElements() != info.inN || shape.outElements() != info.outN)
      return kernel.emitOpError()
             << "is a " << p.getSummary() << " (" << shape.inElements()
             << " -> " << shape.outElements() << " elements) but takes "
             << info.inN << " and gives " << info.outN
             << " elements per sample";
    info.layer = ChainLayer::pooling(shape);
    // A trained max pool's mappings must hold its stored rows.
    auto program = kernel->getParentOfType<fab::ProgramOp>();
    if (fab::TrainingAttr training =
            program ? program.getTrainingAttr() : fab::TrainingAttr();
        training && kernel.getTrained())
      info.layer.training = denseTrainingOf(kernel);
    return info;
  }

  std::string why;
  ColumnOp op = ColumnOp::Copy;
  std::vector<float> params;
  if (auto e = dyn_cast<fab::ElementwiseSchemeAttr>(scheme)) {
    std::optional<ColumnOp> parsed = parseColumnOp(std::string_view(e.getOp()));
    if (!parsed || *parsed == ColumnOp::Expression ||
        *parsed == ColumnOp::Softmax || *parsed == ColumnOp::LogSoftmax ||
        isAxisSoftmax(*parsed))
      return kernel.emitOpError() << "has elementwise op '" << e.getOp()
                                  << "', which is no elementwise column op";
    op = *parsed;
    if (columnTakesTensor(op)) {
      if (!e.getConstant())
        return kernel.emitOpError() << "is " << e.getOp()
                                    << ", which needs a constant tensor";
      auto ct = cast<RankedTensorType>(e.getConstant().getType());
      if (ct.getNumElements() != info.outN)
        return kernel.emitOpError()
               << "has a constant of " << ct.getNumElements()
               << " elements for a sample of " << info.outN;
      if (failed(readValues(kernel, e.getConstant(), "constant", params)))
        return failure();
    } else {
      if (e.getParams())
        params.assign(e.getParams().asArrayRef().begin(),
                      e.getParams().asArrayRef().end());
      if (int64_t(params.size()) != columnParamCount(op))
        return kernel.emitOpError()
               << "is " << e.getOp() << ", which takes "
               << columnParamCount(op) << " constants, not " << params.size();
    }
  } else if (auto s = dyn_cast<fab::SoftmaxSchemeAttr>(scheme)) {
    if (!s.getGroup()) {
      op = s.getLog() ? ColumnOp::LogSoftmax : ColumnOp::Softmax;
    } else {
      op = s.getLog() ? ColumnOp::AxisLogSoftmax : ColumnOp::AxisSoftmax;
      params = {float(s.getGroup()), float(s.getStride())};
      if (info.outN % (s.getGroup() * s.getStride()))
        return kernel.emitOpError()
               << "has softmax groups of " << s.getGroup() << " elements "
               << s.getStride() << " apart, which do not tile its "
               << info.outN << " elements";
    }
  } else if (auto e = dyn_cast<fab::ExpressionSchemeAttr>(scheme)) {
    op = ColumnOp::Expression;
    FailureOr<std::vector<float>> p = expressionParams(e, why);
    if (failed(p))
      return kernel.emitOpError() << why;
    params = std::move(*p);
    if (!checkExpression(params, why))
      return kernel.emitOpError() << "has an expression a PE cannot run: "
                                  << why;
  } else if (auto j = dyn_cast<fab::JoinSchemeAttr>(scheme)) {
    const bool broadcast = j.getBroadcast() == 1;
    for (auto [port, t] : llvm::enumerate(type.getInputs())) {
      int64_t n = cast<RankedTensorType>(t).getNumElements();
      if (broadcast && port == 1) {
        // Per channel: one value per channel of a's feature map.
        if (n < 1 || info.outN % n)
          return kernel.emitOpError()
                 << "multiplies a feature map of " << info.outN
                 << " elements by a per-channel input of " << n
                 << ", which is no whole number of pixels per channel";
        info.broadcastN = n;
        continue;
      }
      if (n != info.outN)
        return kernel.emitOpError()
               << "joins streams of " << info.inN << " and " << n
               << " elements into " << info.outN
               << "; both must have the result's elements";
    }
    info.layer = ChainLayer::join(info.outN, j.getRelu());
    // ([1, C, H, W]: H rows; a 1-D map [1, C, L] is one row.)
    if (auto out = dyn_cast<RankedTensorType>(
            kernel.getFunctionType().getResult(0));
        out && out.getRank() >= 4)
      info.layer.mapRows = out.getDimSize(2);
    info.join = joinKernelOf(j.getOp(), j.getRelu());
    info.join.buffered = int(j.getBuffered());
    info.join.fifoSamples = j.getFifo();
    info.join.fifoPixels = j.getFifoPixels();
    // A trained Add's mappings must hold its training memory.
    auto program = kernel->getParentOfType<fab::ProgramOp>();
    if (fab::TrainingAttr training =
            program ? program.getTrainingAttr() : fab::TrainingAttr();
        training && kernel.getTrained())
      info.layer.training = denseTrainingOf(kernel);
    if (broadcast) {
      info.join.broadcast = 1;
      info.join.pixels = info.outN / info.broadcastN;
      info.layer.broadcast = true;
      info.layer.pixels = info.join.pixels;
    }
    return info;
  } else {
    return kernel.emitOpError() << "has scheme " << scheme.getSummary()
                                << ", which the fabric cannot run yet";
  }
  if (info.inN != info.outN)
    return kernel.emitOpError() << "is " << scheme.getSummary()
                                << " but takes " << info.inN << " and gives "
                                << info.outN << " elements per sample";
  info.layer = ChainLayer::column(op, info.outN, params);
  info.column.op = op;
  info.column.params = std::move(params);
  return info;
}

bool isLossKernel(fab::KernelOp kernel) {
  auto s = dyn_cast<fab::SoftmaxSchemeAttr>(kernel.getScheme());
  return s && s.getLoss();
}

} // namespace weft::conversion
