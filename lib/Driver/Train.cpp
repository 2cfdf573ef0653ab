//===- Train.cpp - What `weftc train` does around the simulator ----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Driver/Train.h"

#include "onnx/onnx_pb.h"

#include <cstring>
#include <map>

namespace weft::driver {

std::vector<int16_t> checkLabels(const tensorio::HostTensor &labels,
                                 int64_t samples, int64_t classes,
                                 std::string &error) {
  using tensorio::DType;
  if (labels.dtype != DType::I64 && labels.dtype != DType::I32) {
    error = std::string("the labels must be int64 (or int32) classes, not ") +
            tensorio::dtypeName(labels.dtype);
    return {};
  }
  std::optional<uint64_t> n = labels.numElements();
  if (!n || int64_t(*n) != samples) {
    error = "the labels hold " + std::to_string(n ? *n : 0) +
            " values, but training takes " + std::to_string(samples) +
            " samples (--steps x --batch)";
    return {};
  }
  std::vector<int16_t> out;
  for (int64_t i = 0; i < samples; ++i) {
    int64_t v;
    if (labels.dtype == DType::I64) {
      std::memcpy(&v, labels.bytes.data() + 8 * i, 8);
    } else {
      int32_t v32;
      std::memcpy(&v32, labels.bytes.data() + 4 * i, 4);
      v = v32;
    }
    if (v < 0 || v >= classes) {
      error = "label " + std::to_string(i) + " is " + std::to_string(v) +
              ", outside the model's " + std::to_string(classes) +
              " classes [0, " + std::to_string(classes) + ")";
      return {};
    }
    out.push_back(int16_t(v));
  }
  return out;
}

namespace {

/// Replaces initializer `name` by `values` (row-major in its own shape).
bool setInitializer(onnx::GraphProto &g, const std::string &name,
                    const std::vector<float> &values, const std::string &kernel,
                    std::string &error) {
  for (onnx::TensorProto &t : *g.mutable_initializer()) {
    if (t.name() != name)
      continue;
    if (t.data_type() != onnx::TensorProto::FLOAT) {
      error = "initializer '" + name + "' of kernel '" + kernel +
              "' is not float32";
      return false;
    }
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      error = "initializer '" + name + "' of kernel '" + kernel +
              "' is stored outside the model; weftc train writes only "
              "initializers stored in it";
      return false;
    }
    int64_t n = 1;
    for (int64_t d : t.dims())
      n *= d;
    if (n != int64_t(values.size())) {
      error = "initializer '" + name + "' of kernel '" + kernel + "' has " +
              std::to_string(n) + " elements, the trained kernel " +
              std::to_string(values.size());
      return false;
    }
    t.clear_float_data();
    std::string raw(values.size() * 4, '\0');
    std::memcpy(raw.data(), values.data(), raw.size());
    t.set_raw_data(raw);
    return true;
  }
  error = "kernel '" + kernel + "' was made from '" + name +
          "', which is no initializer of the model";
  return false;
}

} // namespace

bool replaceInitializers(const std::string &modelBytes,
                         const std::vector<TrainedValues> &trained,
                         std::string &outBytes, std::string &error) {
  onnx::ModelProto model;
  if (!model.ParseFromString(modelBytes)) {
    error = "the model is not a valid ONNX ModelProto";
    return false;
  }
  onnx::GraphProto &g = *model.mutable_graph();
  for (const TrainedValues &tv : trained) {
    if (tv.weightsSource.empty() || (!tv.b.empty() && tv.biasSource.empty())) {
      error = "kernel '" + tv.kernel +
              "' records no initializer for its weights or bias";
      return false;
    }
    std::vector<float> w = tv.w;
    if (tv.transposed && !tv.conv) {
      // The initializer is M x K.
      for (int64_t k = 0; k < tv.K; ++k)
        for (int64_t n = 0; n < tv.M; ++n)
          w[size_t(n * tv.K + k)] = tv.w[size_t(k * tv.M + n)];
    }
    if (!setInitializer(g, tv.weightsSource, w, tv.kernel, error))
      return false;
    if (!tv.b.empty() &&
        !setInitializer(g, tv.biasSource, tv.b, tv.kernel, error))
      return false;
  }
  if (!model.SerializeToString(&outBytes)) {
    error = "cannot serialize the trained model";
    return false;
  }
  return true;
}

} // namespace weft::driver
