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
                    const std::vector<float> &values, const std::string &node,
                    std::string &error) {
  for (onnx::TensorProto &t : *g.mutable_initializer()) {
    if (t.name() != name)
      continue;
    if (t.data_type() != onnx::TensorProto::FLOAT) {
      error = "initializer '" + name + "' of node '" + node +
              "' is not float32";
      return false;
    }
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      error = "initializer '" + name + "' of node '" + node +
              "' is stored outside the model; weftc train writes only "
              "initializers stored in it";
      return false;
    }
    int64_t n = 1;
    for (int64_t d : t.dims())
      n *= d;
    if (n != int64_t(values.size())) {
      error = "initializer '" + name + "' of node '" + node + "' has " +
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
  error = "input '" + name + "' of node '" + node +
          "' is not an initializer of the model: weftc train trains "
          "initializers only";
  return false;
}

const onnx::AttributeProto *attribute(const onnx::NodeProto &n,
                                      const std::string &name) {
  for (const onnx::AttributeProto &a : n.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
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
    const onnx::NodeProto *node = nullptr;
    for (const onnx::NodeProto &n : g.node())
      if (n.name() == tv.kernel)
        node = &n;
    if (!node || (node->op_type() != "Gemm" && node->op_type() != "MatMul") ||
        node->input_size() < 2) {
      error = "kernel '" + tv.kernel +
              "' is no Gemm or MatMul node of the model: weftc train cannot "
              "tell which initializers it trained";
      return false;
    }
    std::string opName = node->name(), wName = node->input(1), bName;
    bool transposed = false;
    if (node->op_type() == "Gemm") {
      for (const char *a : {"alpha", "beta"})
        if (const onnx::AttributeProto *at = attribute(*node, a);
            at && at->f() != 1.0f) {
          error = "node '" + opName + "' (Gemm) has " + a +
                  " = " + std::to_string(at->f()) +
                  "; weftc train trains Gemm with alpha = beta = 1";
          return false;
        }
      if (const onnx::AttributeProto *ta = attribute(*node, "transA");
          ta && ta->i()) {
        error = "node '" + opName + "' (Gemm) has transA = 1";
        return false;
      }
      if (const onnx::AttributeProto *tb = attribute(*node, "transB"))
        transposed = tb->i() != 0;
      if (node->input_size() > 2)
        bName = node->input(2);
    } else {
      // The bias of `Add(MatMul(x, W), b)`.
      for (const onnx::NodeProto &n : g.node())
        if (n.op_type() == "Add" && n.input_size() == 2 &&
            (n.input(0) == node->output(0) || n.input(1) == node->output(0)))
          bName = n.input(0) == node->output(0) ? n.input(1) : n.input(0);
    }
    std::vector<float> w = tv.w;
    if (transposed) {
      // The initializer is M x K.
      for (int64_t k = 0; k < tv.K; ++k)
        for (int64_t n = 0; n < tv.M; ++n)
          w[size_t(n * tv.K + k)] = tv.w[size_t(k * tv.M + n)];
    }
    if (!setInitializer(g, wName, w, opName, error))
      return false;
    if (!tv.b.empty()) {
      if (bName.empty()) {
        error = "kernel '" + tv.kernel + "' has a bias but node '" + opName +
                "' none that weftc train can find";
        return false;
      }
      if (!setInitializer(g, bName, tv.b, opName, error))
        return false;
    }
  }
  if (!model.SerializeToString(&outBytes)) {
    error = "cannot serialize the trained model";
    return false;
  }
  return true;
}

} // namespace weft::driver
