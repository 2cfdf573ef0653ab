#!/usr/bin/python3
# ===- gen_axis_softmax.py - Softmax over an axis, end to end ---------------===#
#
# Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
#
# ===-----------------------------------------------------------------------===#
#
# A Gemm (60 -> 48) on a batch of 4, the sample reshaped to [2, 4, 6], then
# Softmax over axis 2 (groups of 4 elements 6 apart) and LogSoftmax over
# the last axis (groups of 6 consecutive elements): two AxisSoftmax column
# kernels after a dense layer (docs/execution-model.md, "Softmax over an
# axis"). Seeded, so a run writes the same bytes every time.
#
#   gen_axis_softmax.py model OUT.onnx
#   gen_axis_softmax.py input OUT.npy --seed S
#   gen_axis_softmax.py numpy X.npy Y.npy    Y matches numpy (float64)
#
# ===-----------------------------------------------------------------------===#
import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BATCH, K, SHAPE = 4, 60, (2, 4, 6)
M = int(np.prod(SHAPE))


def weights():
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((K, M)) / np.sqrt(K)).astype(np.float32)
    b = (rng.standard_normal(M) * 0.5).astype(np.float32)
    return w, b


def model(path):
    w, b = weights()
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array((BATCH,) + SHAPE, np.int64),
                                     "shape")]
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["h"], name="fc"),
        helper.make_node("Reshape", ["h", "shape"], ["r"], name="reshape"),
        helper.make_node("Softmax", ["r"], ["s"], name="softmax", axis=2),
        helper.make_node("LogSoftmax", ["s"], ["y"], name="logsoftmax",
                         axis=-1),
    ]
    g = helper.make_graph(
        nodes, "axis_softmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       [BATCH] + list(SHAPE))], inits)
    m = helper.make_model(g, producer_name="weft-test",
                          opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def log_softmax(v, axis):
    d = v - v.max(axis=axis, keepdims=True)
    return d - np.log(np.exp(d).sum(axis=axis, keepdims=True))


def reference(x):
    w, b = weights()
    h = (x.astype(np.float64) @ w.astype(np.float64) + b).reshape(
        (BATCH,) + SHAPE)
    return log_softmax(np.exp(log_softmax(h, 2)), 3)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["model", "input", "numpy"])
    p.add_argument("paths", nargs="+")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    if args.what == "model":
        model(args.paths[0])
    elif args.what == "input":
        rng = np.random.default_rng(args.seed)
        np.save(args.paths[0],
                (rng.standard_normal((BATCH, K)) * 2).astype(np.float32))
    else:
        want = reference(np.load(args.paths[0]))
        got = np.load(args.paths[1]).astype(np.float64)
        err = np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want)))
        if got.shape != want.shape or not err <= 1e-5:
            sys.exit("gen_axis_softmax.py: shape %s vs %s, error %.3g" %
                     (got.shape, want.shape, err))
        print("NUMPY MATCH (error %.2g)" % err)


if __name__ == "__main__":
    sys.exit(main())
