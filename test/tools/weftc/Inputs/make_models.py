#!/usr/bin/env python3
# ===- make_models.py - Small ONNX models with numpy-computed outputs -------===#
#
# Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
#
# ===-----------------------------------------------------------------------===#
#
# Writes into OUTDIR, for the weftc reference tests:
#   mlp.onnx       x[2,4] -> y = relu(x @ W + b), "act/sig:0" = sigmoid(x)
#   conv.onnx      x[1,2,5,5] -> y = maxpool2x2(conv3x3(x, W, B, pad 1))
#   sub.onnx       a[3], b[3] -> d = a - b
# with their inputs (<model>.<input>.npy and .pb) and the expected outputs
# computed with numpy (<model>.expected.<output>.npy).
#
# ===-----------------------------------------------------------------------===#
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def save(name, graph, inputs, expected):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))
    for key, value in inputs.items():
        np.save(os.path.join(out, "%s.%s.npy" % (name, key)), value)
        tensor = numpy_helper.from_array(value, key)
        with open(os.path.join(out, "%s.%s.pb" % (name, key)), "wb") as f:
            f.write(tensor.SerializeToString())
    for key, value in expected.items():
        safe = "".join(c if c.isalnum() or c in "_-." else "_" for c in key)
        np.save(os.path.join(out, "%s.expected.%s.npy" % (name, safe)), value)


def value_info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


# mlp: Gemm with initializers, Relu, and a second output whose name is not a
# valid file name.
x = f32(2, 4)
W = f32(4, 3)
b = f32(3)
graph = helper.make_graph(
    [
        helper.make_node("Gemm", ["x", "W", "b"], ["h"], name="fc"),
        helper.make_node("Relu", ["h"], ["y"], name="relu"),
        helper.make_node("Sigmoid", ["x"], ["act/sig:0"], name="sig"),
    ],
    "mlp",
    [value_info("x", [2, 4])],
    [value_info("y", [2, 3]), value_info("act/sig:0", [2, 4])],
    initializer=[numpy_helper.from_array(W, "W"), numpy_helper.from_array(b, "b")],
)
save("mlp", graph, {"x": x},
     {"y": np.maximum(x @ W + b, 0), "act/sig:0": 1 / (1 + np.exp(-x))})

# conv: a padded 3x3 convolution with bias, then 2x2 max pooling.
x = f32(1, 2, 5, 5)
W = f32(3, 2, 3, 3)
B = f32(3)
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
conv = np.zeros((1, 3, 5, 5), np.float64)
for k in range(3):
    for i in range(5):
        for j in range(5):
            conv[0, k, i, j] = np.sum(xp[0, :, i:i + 3, j:j + 3] * W[k]) + B[k]
pool = conv[:, :, :4, :4].reshape(1, 3, 2, 2, 2, 2).max(axis=(3, 5))
graph = helper.make_graph(
    [
        helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["c"], ["y"], name="pool",
                         kernel_shape=[2, 2], strides=[2, 2]),
    ],
    "conv",
    [value_info("x", [1, 2, 5, 5])],
    [value_info("y", [1, 3, 2, 2])],
    initializer=[numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")],
)
save("conv", graph, {"x": x}, {"y": pool.astype(np.float32)})

# sub: two inputs, so that names and positions both matter.
a = np.array([1.5, -2.0, 4.0], np.float32)
b = np.array([0.5, 3.0, -1.0], np.float32)
graph = helper.make_graph(
    [helper.make_node("Sub", ["a", "b"], ["d"], name="sub")],
    "sub",
    [value_info("a", [3]), value_info("b", [3])],
    [value_info("d", [3])],
)
save("sub", graph, {"a": a, "b": b}, {"d": a - b})
# A tensor of the wrong shape for the error tests.
np.save(os.path.join(out, "wrong_shape.npy"), np.zeros((4,), np.float32))
np.save(os.path.join(out, "wrong_dtype.npy"), np.zeros((3,), np.int64))
with open(os.path.join(out, "garbage.npy"), "wb") as f:
    f.write(b"this is not a tensor")
with open(os.path.join(out, "garbage.onnx"), "wb") as f:
    f.write(b"\x08\x07\x12\xff\xff\xff")
