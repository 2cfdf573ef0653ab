#!/usr/bin/python3
# ===- gen_pool.py - Models with pooling for the e2e tests -----------------===#
#
# Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
#
# ===-----------------------------------------------------------------------===#
#
#   gen_pool.py model NAME OUT.onnx   the model NAME (below; --batch B for
#                                     B samples instead)
#   gen_pool.py input NAME OUT.npy    a seeded N(0, 1) input for it (--seed S,
#                                     --batch B)
#   gen_pool.py torch NAME X.npy Y.npy
#                                     Y matches torch.nn.functional on the
#                                     same graph (independent of weft)
#
# Models (batch 2 unless said otherwise):
#   lenet-like  x[2,3,12,12] -> Conv 3->8 3x3 pad 1 + Relu -> MaxPool 2 ->
#               Conv 8->8 3x3 + Relu -> GlobalAveragePool -> Flatten ->
#               Gemm 8->10
#   maxpool-ceil  x[2,4,9,9] -> MaxPool 3x3 stride 2 pads 1 ceil_mode ->
#               Relu
#   avgpool-pad0 / avgpool-pad1  x[2,4,9,10] -> AveragePool 3x3 stride 2
#               pads 1 count_include_pad 0 / 1 -> GlobalMaxPool
#   avgpool-ceil  x[2,2,8,8] -> AveragePool 3x3 stride 2 pads 1 ceil_mode
#               count_include_pad 1 (a window past the explicit pad)
#   lenet5      x[1,1,28,28] -> Conv 1->6 5x5 pad 2 + Relu -> MaxPool 2 ->
#               Conv 6->16 5x5 + Relu -> AveragePool 2 -> Flatten ->
#               Gemm 400->120 + Relu -> Gemm 120->84 + Relu -> Gemm 84->10
#   maxpool-wide  x[2,16,16,16] -> MaxPool 3x3 stride 2 pads 1 (sends of
#               more wavelets than the program leaves free cycles)
#   conv-maxpool  x[2,16,16,16] -> Conv 16->16 3x3 pad 1 + Relu -> the same
#               MaxPool (a slower producer in front)
#   conv-gap    x[2,32,4,4] -> Conv 32->128 3x3 stride 2 pad 1 + Relu ->
#               GlobalAveragePool
# ===-----------------------------------------------------------------------===#
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

SHAPES = {
    "lenet-like": ([2, 3, 12, 12], [2, 10]),
    "maxpool-ceil": ([2, 4, 9, 9], [2, 4, 5, 5]),
    "avgpool-pad0": ([2, 4, 9, 10], [2, 4, 1, 1]),
    "avgpool-pad1": ([2, 4, 9, 10], [2, 4, 1, 1]),
    "avgpool-ceil": ([2, 2, 8, 8], [2, 2, 5, 5]),
    "lenet5": ([1, 1, 28, 28], [1, 10]),
    "maxpool-wide": ([2, 16, 16, 16], [2, 16, 8, 8]),
    "conv-maxpool": ([2, 16, 16, 16], [2, 16, 8, 8]),
    "conv-gap": ([2, 32, 4, 4], [2, 128, 1, 1]),
}


def rand(rng, *shape, fan_in=1):
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def params(name):
    rng = np.random.default_rng(7)
    if name == "lenet-like":
        return {"w1": rand(rng, 8, 3, 3, 3, fan_in=27), "b1": rand(rng, 8),
                "w2": rand(rng, 8, 8, 3, 3, fan_in=72), "b2": rand(rng, 8),
                "w3": rand(rng, 8, 10, fan_in=8), "b3": rand(rng, 10)}
    if name == "lenet5":
        return {"w1": rand(rng, 6, 1, 5, 5, fan_in=25), "b1": rand(rng, 6),
                "w2": rand(rng, 16, 6, 5, 5, fan_in=150), "b2": rand(rng, 16),
                "w3": rand(rng, 400, 120, fan_in=400), "b3": rand(rng, 120),
                "w4": rand(rng, 120, 84, fan_in=120), "b4": rand(rng, 84),
                "w5": rand(rng, 84, 10, fan_in=84), "b5": rand(rng, 10)}
    if name == "conv-maxpool":
        return {"w1": rand(rng, 16, 16, 3, 3, fan_in=144),
                "b1": rand(rng, 16)}
    if name == "conv-gap":
        return {"w1": rand(rng, 128, 32, 3, 3, fan_in=288),
                "b1": rand(rng, 128)}
    return {}


def nodes(name):
    n = helper.make_node
    if name == "lenet-like":
        return [n("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                  kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                n("Relu", ["c1"], ["r1"], name="relu1"),
                n("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                  strides=[2, 2]),
                n("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2",
                  kernel_shape=[3, 3]),
                n("Relu", ["c2"], ["r2"], name="relu2"),
                n("GlobalAveragePool", ["r2"], ["g"], name="gap"),
                n("Flatten", ["g"], ["f"], name="flatten", axis=1),
                n("Gemm", ["f", "w3", "b3"], ["y"], name="fc")]
    if name == "maxpool-ceil":
        return [n("MaxPool", ["x"], ["p"], name="pool", kernel_shape=[3, 3],
                  strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
                n("Relu", ["p"], ["y"], name="relu")]
    if name in ("avgpool-pad0", "avgpool-pad1"):
        return [n("AveragePool", ["x"], ["p"], name="pool",
                  kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                  count_include_pad=int(name[-1])),
                n("GlobalMaxPool", ["p"], ["y"], name="gmp")]
    if name == "avgpool-ceil":
        return [n("AveragePool", ["x"], ["y"], name="pool",
                  kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                  ceil_mode=1, count_include_pad=1)]
    if name == "lenet5":
        return [n("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                  kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
                n("Relu", ["c1"], ["r1"], name="relu1"),
                n("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                  strides=[2, 2]),
                n("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2",
                  kernel_shape=[5, 5]),
                n("Relu", ["c2"], ["r2"], name="relu2"),
                n("AveragePool", ["r2"], ["p2"], name="pool2",
                  kernel_shape=[2, 2], strides=[2, 2]),
                n("Flatten", ["p2"], ["f"], name="flatten", axis=1),
                n("Gemm", ["f", "w3", "b3"], ["h3"], name="fc1"),
                n("Relu", ["h3"], ["r3"], name="relu3"),
                n("Gemm", ["r3", "w4", "b4"], ["h4"], name="fc2"),
                n("Relu", ["h4"], ["r4"], name="relu4"),
                n("Gemm", ["r4", "w5", "b5"], ["y"], name="fc3")]
    if name == "maxpool-wide":
        return [n("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[3, 3],
                  strides=[2, 2], pads=[1, 1, 1, 1])]
    if name == "conv-maxpool":
        return [n("Conv", ["x", "w1", "b1"], ["c1"], name="conv",
                  kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                n("Relu", ["c1"], ["r1"], name="relu"),
                n("MaxPool", ["r1"], ["y"], name="pool", kernel_shape=[3, 3],
                  strides=[2, 2], pads=[1, 1, 1, 1])]
    if name == "conv-gap":
        return [n("Conv", ["x", "w1", "b1"], ["c1"], name="conv",
                  kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
                n("Relu", ["c1"], ["r1"], name="relu"),
                n("GlobalAveragePool", ["r1"], ["y"], name="gap")]
    raise SystemExit("unknown model " + name)


def batched(shape, batch):
    return [batch] + shape[1:] if batch else shape


def model(name, path, batch=0):
    xs, ys = (batched(s, batch) for s in SHAPES[name])
    inits = [numpy_helper.from_array(v, k) for k, v in params(name).items()]
    g = helper.make_graph(
        nodes(name), name.replace("-", "_"),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, xs)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ys)], inits)
    m = helper.make_model(g, producer_name="weft-test",
                          opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def reference(name, x):
    """The graph in torch.nn.functional, in float64."""
    p = {k: torch.tensor(v, dtype=torch.float64) for k, v in params(name).items()}
    t = torch.tensor(x, dtype=torch.float64)
    if name == "lenet-like":
        t = F.relu(F.conv2d(t, p["w1"], p["b1"], padding=1))
        t = F.max_pool2d(t, 2)
        t = F.relu(F.conv2d(t, p["w2"], p["b2"]))
        t = t.mean(dim=(2, 3))
        return (t @ p["w3"] + p["b3"]).numpy()
    if name == "maxpool-ceil":
        return F.relu(F.max_pool2d(t, 3, 2, 1, ceil_mode=True)).numpy()
    if name in ("avgpool-pad0", "avgpool-pad1"):
        t = F.avg_pool2d(t, 3, 2, 1, count_include_pad=name[-1] == "1")
        return t.amax(dim=(2, 3), keepdim=True).numpy()
    if name == "avgpool-ceil":
        return F.avg_pool2d(t, 3, 2, 1, ceil_mode=True,
                            count_include_pad=True).numpy()
    if name == "lenet5":
        t = F.relu(F.conv2d(t, p["w1"], p["b1"], padding=2))
        t = F.max_pool2d(t, 2)
        t = F.relu(F.conv2d(t, p["w2"], p["b2"]))
        t = F.avg_pool2d(t, 2).flatten(1)
        t = F.relu(t @ p["w3"] + p["b3"])
        t = F.relu(t @ p["w4"] + p["b4"])
        return (t @ p["w5"] + p["b5"]).numpy()
    if name == "maxpool-wide":
        return F.max_pool2d(t, 3, 2, 1).numpy()
    if name == "conv-maxpool":
        t = F.relu(F.conv2d(t, p["w1"], p["b1"], padding=1))
        return F.max_pool2d(t, 3, 2, 1).numpy()
    if name == "conv-gap":
        t = F.relu(F.conv2d(t, p["w1"], p["b1"], stride=2, padding=1))
        return t.mean(dim=(2, 3), keepdim=True).numpy()
    raise SystemExit("unknown model " + name)


def main():
    cmd, name = sys.argv[1], sys.argv[2]
    batch = 0
    if "--batch" in sys.argv:
        batch = int(sys.argv[sys.argv.index("--batch") + 1])
    if cmd == "model":
        model(name, sys.argv[3], batch)
    elif cmd == "input":
        seed = int(sys.argv[sys.argv.index("--seed") + 1])
        rng = np.random.default_rng(seed)
        np.save(sys.argv[3], rng.standard_normal(
            batched(SHAPES[name][0], batch)).astype(np.float32))
    elif cmd == "torch":
        x, y = np.load(sys.argv[3]), np.load(sys.argv[4])
        want = reference(name, x)
        ok = want.shape == y.shape and np.allclose(y, want, rtol=1e-4,
                                                   atol=1e-4)
        print("TORCH MATCH" if ok else "TORCH MISMATCH: max |diff| %g" %
              float(np.max(np.abs(y.astype(np.float64) - want))))
    else:
        raise SystemExit("usage: gen_pool.py model|input|torch NAME ...")


if __name__ == "__main__":
    main()
