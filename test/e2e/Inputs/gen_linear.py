#!/usr/bin/python3
# ===- gen_linear.py - Models with linear sample ops for the e2e tests ---===#
#
# Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
#
# ===-----------------------------------------------------------------------===#
#
#   gen_linear.py model OUT.onnx     x[4,2,3,5] -> Pad(0.5) -> Transpose ->
#                                    ReduceMean -> Flatten -> Gemm -> Relu
#   gen_linear.py input OUT.npy      a seeded N(0, 1) input for it (--seed S)
#   gen_linear.py numpy X.npy Y.npy  Y matches numpy on that graph
#
# The pad, transpose and mean are affine maps of one sample, which
# --weft-linear-to-matmul turns into one dense layer in front of the Gemm.
# ===-----------------------------------------------------------------------===#
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PADS = [0, 0, 1, 0, 0, 0, 0, 2]  # begin then end, per axis


def params():
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((14, 6)) / np.sqrt(14)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    return w, b


def model(path):
    w, b = params()
    nodes = [
        helper.make_node("Pad", ["x", "pads", "value"], ["p"], name="pad",
                         mode="constant"),
        helper.make_node("Transpose", ["p"], ["t"], name="swap",
                         perm=[0, 1, 3, 2]),
        helper.make_node("ReduceMean", ["t"], ["m"], name="mean", axes=[3],
                         keepdims=0),
        helper.make_node("Flatten", ["m"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "w", "b"], ["h"], name="fc"),
        helper.make_node("Relu", ["h"], ["y"], name="act"),
    ]
    inits = [numpy_helper.from_array(np.array(PADS, np.int64), "pads"),
             numpy_helper.from_array(np.array(0.5, np.float32), "value"),
             numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    g = helper.make_graph(
        nodes, "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 2, 3, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6])], inits)
    m = helper.make_model(g, producer_name="weft-test",
                          opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def reference(x):
    w, b = params()
    p = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (1, 0), (0, 2)],
               constant_values=0.5)
    t = p.transpose(0, 1, 3, 2)
    f = t.mean(axis=3).reshape(x.shape[0], -1)
    return np.maximum(f @ w + b, 0)


def main():
    what = sys.argv[1]
    if what == "model":
        model(sys.argv[2])
    elif what == "input":
        seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
        rng = np.random.default_rng(seed)
        np.save(sys.argv[2], rng.standard_normal((4, 2, 3, 5)).astype(np.float32))
    elif what == "numpy":
        want = reference(np.load(sys.argv[2]))
        got = np.load(sys.argv[3]).astype(np.float64)
        err = np.abs(got - want)
        if got.shape != want.shape or np.any(err > 1e-4 + 1e-3 * np.abs(want)):
            sys.exit("gen_linear.py: MISMATCH, max error %g" % float(err.max()))
        if np.count_nonzero(want) == 0:
            sys.exit("gen_linear.py: the reference output is all zeros")
        print("NUMPY MATCH (max error %.3g)" % float(err.max()))
    else:
        sys.exit("gen_linear.py: unknown command " + what)


if __name__ == "__main__":
    main()
