#!/usr/bin/python3
# Writes small ONNX models for the importer's lit tests with onnx.helper.
#
#   gen_models.py NAME OUTPUT.onnx
#
# Weights are random (seeded) so every run writes the same bytes. Some
# models are deliberately broken (truncated, lying about sizes, external data
# outside the model directory) for the error tests.
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def init(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, producer_name="weft-test",
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def conv():
    # A grouped conv (pads, strides, dilations, bias) feeding a depthwise one.
    return model(
        [helper.make_node("Conv", ["x", "w1", "b1"], ["y1"], name="conv_grouped",
                          group=2, pads=[1, 2, 1, 2], strides=[2, 1], dilations=[1, 2]),
         helper.make_node("Conv", ["y1", "w2"], ["y2"], name="conv_depthwise",
                          group=8, kernel_shape=[3, 3], auto_pad="SAME_UPPER"),
         helper.make_node("Conv", ["y2", "w3"], ["y"], name="conv_plain")],
        [vi("x", [1, 4, 9, 9])], [vi("y", None)],
        [init("w1", 8, 2, 3, 3), init("b1", 8), init("w2", 8, 1, 3, 3),
         init("w3", 4, 8, 1, 1)])


def gemm():
    return model(
        [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1),
         helper.make_node("Relu", ["h"], ["r"], name="relu"),
         helper.make_node("Gemm", ["r", "w2", "c2"], ["y"], name="fc2",
                          alpha=0.5, beta=2.0)],
        [vi("x", [2, 16])], [vi("y", [2, 4])],
        [init("w1", 32, 16), init("b1", 32), init("w2", 32, 4), init("c2", 2, 4)])


def pool():
    return model(
        [helper.make_node("MaxPool", ["x"], ["m"], name="maxpool_ceil",
                          kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
         helper.make_node("AveragePool", ["m"], ["y"], name="avgpool_pads",
                          kernel_shape=[2, 2], pads=[1, 1, 0, 0],
                          count_include_pad=0),
         helper.make_node("GlobalAveragePool", ["y"], ["z"], name="gap")],
        [vi("x", [1, 3, 8, 8])], [vi("z", None)])


def reshape_chain():
    # The flatten pattern exporters emit: Shape -> Gather -> Unsqueeze ->
    # Concat -> Reshape, on an input with a symbolic batch dimension.
    return model(
        [helper.make_node("Shape", ["x"], ["s"], name="shape"),
         helper.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
         helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsqueeze"),
         helper.make_node("Concat", ["n1", "minus1"], ["target"], name="concat", axis=0),
         helper.make_node("Reshape", ["x", "target"], ["flat"], name="reshape"),
         helper.make_node("Identity", ["flat"], ["y"], name="identity")],
        [vi("x", ["N", 2, 3, 4])], [vi("y", None)],
        [ints("zero", 0), ints("axes", [0]), ints("minus1", [-1])])


def batchnorm():
    # Conv -> BN -> Relu and Gemm -> BN, for --weft-fold-batchnorm.
    c = 6
    bn = lambda p: [numpy_helper.from_array(rng.uniform(0.5, 1.5, c).astype(np.float32), p + "_s"),
                    init(p + "_b", c), init(p + "_m", c),
                    numpy_helper.from_array(rng.uniform(0.5, 2, c).astype(np.float32), p + "_v")]
    return model(
        [helper.make_node("Conv", ["x", "w", "cb"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("BatchNormalization", ["c", "bn1_s", "bn1_b", "bn1_m", "bn1_v"],
                          ["n"], name="bn1", epsilon=1e-3),
         helper.make_node("Relu", ["n"], ["r"], name="relu"),
         helper.make_node("Dropout", ["r"], ["d"], name="dropout"),
         helper.make_node("GlobalAveragePool", ["d"], ["p"], name="gap"),
         helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
         helper.make_node("Gemm", ["f", "fw"], ["g"], name="fc", transB=1),
         helper.make_node("BatchNormalization", ["g", "bn2_s", "bn2_b", "bn2_m", "bn2_v"],
                          ["y"], name="bn2")],
        [vi("x", [1, 3, 5, 5])], [vi("y", [1, c])],
        [init("w", c, 3, 3, 3), init("cb", c), init("fw", c, c)] + bn("bn1") + bn("bn2"))


def misc():
    # Elementwise broadcasting, softmax, transpose, slice, concat, pad, resize.
    return model(
        [helper.make_node("Add", ["x", "bias"], ["a"], name="add"),
         helper.make_node("Sigmoid", ["a"], ["s"], name="sigmoid"),
         helper.make_node("Softmax", ["s"], ["sm"], name="softmax", axis=1),
         helper.make_node("Transpose", ["sm"], ["t"], name="transpose", perm=[0, 2, 1]),
         helper.make_node("Slice", ["t", "st", "en", "ax"], ["sl"], name="slice"),
         helper.make_node("Concat", ["sl", "sl"], ["cc"], name="concat", axis=1),
         helper.make_node("Pad", ["cc", "pads"], ["pd"], name="pad", mode="reflect"),
         helper.make_node("Unsqueeze", ["pd", "uax"], ["u"], name="unsq"),
         helper.make_node("Resize", ["u", "", "scales"], ["y"], name="resize",
                          mode="nearest")],
        [vi("x", [1, 3, 4])], [vi("y", None)],
        [init("bias", 4), ints("st", [1]), ints("en", [4]), ints("ax", [1]),
         ints("pads", [0, 1, 0, 0, 1, 0]), ints("uax", [0]),
         numpy_helper.from_array(np.array([1, 1, 2, 1], np.float32), "scales")])


def external():
    # Weights in a file next to the model.
    m = gemm()
    onnx.save_model(m, OUT, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=os.path.basename(OUT) + ".data", size_threshold=0)
    return None


# --- broken models -----------------------------------------------------------

def unsupported_op():
    return model([helper.make_node("NonZero", ["x"], ["y"], name="nz")],
                 [vi("x", [4])], [vi("y", None, TensorProto.INT64)])


def unsupported_attr():
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu_odd", flavour=3)],
                 [vi("x", [4])], [vi("y", None)])


def dynamic_dim():
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [vi("x", [1, "width"])], [vi("y", None)])


def bad_dtype():
    return model([helper.make_node("Identity", ["x"], ["y"], name="id")],
                 [vi("x", [2], TensorProto.COMPLEX64)], [vi("y", None)])


def bad_autopad():
    return model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv_weird",
                                   auto_pad="SIDEWAYS")],
                 [vi("x", [1, 1, 4, 4])], [vi("y", None)], [init("w", 1, 1, 3, 3)])


def short_raw_data():
    t = init("w", 4, 4)
    t.raw_data = t.raw_data[:20]  # dims say 64 bytes
    return model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                 [vi("x", [1, 4])], [vi("y", None)], [t])


def huge_dims():
    t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 30, 1 << 30],
                    raw_data=b"\0" * 16)
    return model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                 [vi("x", [1, 4])], [vi("y", None)], [t])


def escaping_external():
    t = init("w", 4, 4)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "../../etc/passwd"), ("offset", "0"), ("length", "64")):
        e = t.external_data.add()
        e.key, e.value = k, v
    return model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                 [vi("x", [1, 4])], [vi("y", None)], [t])


def absolute_external():
    m = escaping_external()
    m.graph.initializer[0].external_data[0].value = "/etc/passwd"
    return m


def shape_mismatch():
    return model([helper.make_node("Add", ["x", "z"], ["y"], name="add_bad")],
                 [vi("x", [2, 3]), vi("z", [4])], [vi("y", None)])


def truncated():
    data = conv().SerializeToString()
    with open(OUT, "wb") as f:
        f.write(data[: len(data) // 2])
    return None


def not_onnx():
    with open(OUT, "wb") as f:
        f.write(b"\xff\xff\xff\xff this is not a protobuf")
    return None


if __name__ == "__main__":
    name, OUT = sys.argv[1], sys.argv[2]
    m = globals()[name]()
    if m is not None:
        onnx.save_model(m, OUT)
