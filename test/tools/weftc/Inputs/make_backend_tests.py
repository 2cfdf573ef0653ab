#!/usr/bin/env python3
# ===- make_backend_tests.py - A tiny ONNX backend-test directory ------------===#
#
# Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
#
# ===-----------------------------------------------------------------------===#
#
# Writes OUTDIR/fake/<test>/{model.onnx, test_data_set_N/{input,output}_N.pb}
# in the layout of ONNX's backend test data, with one test of each outcome:
#   test_add         correct outputs, two data sets          -> PASS
#   test_add_wrong   one expected element off by 0.5         -> FAIL
#   test_custom_op   an op of an unknown domain              -> SKIP
#   test_no_data     no test_data_set_* directory            -> SKIP
# and OUTDIR/slow/test_matmul_chain, 40 chained 512x512 matrix products
# (seconds of work), for the time limit.
#
# ===-----------------------------------------------------------------------===#
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

root = os.path.join(sys.argv[1], "fake")


def add_model():
    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Add", ["x", "y"], ["z"])],
                              "add", [vi("x"), vi("y")], [vi("z")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def write_test(name, model, data_sets):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for n, (inputs, outputs) in enumerate(data_sets):
        ds = os.path.join(d, "test_data_set_%d" % n)
        os.makedirs(ds, exist_ok=True)
        for kind, tensors in (("input", inputs), ("output", outputs)):
            for i, t in enumerate(tensors):
                with open(os.path.join(ds, "%s_%d.pb" % (kind, i)), "wb") as f:
                    f.write(numpy_helper.from_array(t).SerializeToString())


rng = np.random.default_rng(3)
sets = []
for _ in range(2):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    y = rng.standard_normal((2, 3)).astype(np.float32)
    sets.append(([x, y], [x + y]))
write_test("test_add", add_model(), sets)

x, y = sets[0][0]
wrong = x + y
wrong[1, 2] += 0.5
write_test("test_add_wrong", add_model(), [([x, y], [wrong])])

vi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
vo = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
graph = helper.make_graph(
    [helper.make_node("Frobnicate", ["x"], ["y"], name="frob", domain="com.example")],
    "custom", [vi], [vo])
custom = helper.make_model(graph, opset_imports=[
    helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
write_test("test_custom_op", custom, [([np.ones(2, np.float32)], [np.ones(2, np.float32)])])

write_test("test_no_data", add_model(), [])

# 40 chained products of 512x512 matrices: about 5 G multiply-adds.
root = os.path.join(sys.argv[1], "slow")
n, depth = 512, 40
w = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
nodes = [helper.make_node("MatMul", ["x" if i == 0 else "h%d" % (i - 1), "w"],
                          ["h%d" % i if i < depth - 1 else "y"]) for i in range(depth)]
vi = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [n, n])
graph = helper.make_graph(nodes, "chain", [vi("x")], [vi("y")],
                          initializer=[numpy_helper.from_array(w, "w")])
chain = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
x = rng.standard_normal((n, n)).astype(np.float32)
write_test("test_matmul_chain", chain, [([x], [x])])
