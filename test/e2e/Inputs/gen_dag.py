#!/usr/bin/python3
# ===- gen_dag.py - Networks that are DAGs, for the e2e tests -------------===#
#
# Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
#
# ===-----------------------------------------------------------------------===#
#
#   gen_dag.py model KIND OUT.onnx [--batch B]
#     residual   x -> fc1 -> Relu -> fc2 -> + x -> Relu -> fc3        (a fork, a join)
#     two-heads  x -> fc1 -> Relu -> {fc_a -> y1, fc_b -> Softmax -> y2}
#     gated      x -> {fc_u, fc_g -> Sigmoid} -> u * sigmoid(g) -> fc_out
#     two-inputs a, b -> fc_a(a) - fc_b(b), max with b -> y         (two streamed inputs)
#     towers     x -> {fc_a1 -> Relu -> fc_a2 -> Relu, fc_b -> Relu} -> Concat -> fc_out
#   gen_dag.py input OUT.npy --shape B,K [--seed S]   a seeded N(0, 1) input
#
# Weights are seeded N(0, 1/K); every model has a batch of B samples.
# ===-----------------------------------------------------------------------===#
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []

    def dense(self, x, k, m, name):
        w = (self.rng.standard_normal((k, m)) / np.sqrt(k)).astype(np.float32)
        b = (0.1 * self.rng.standard_normal(m)).astype(np.float32)
        self.inits += [numpy_helper.from_array(w, name + "_w"),
                       numpy_helper.from_array(b, name + "_b")]
        self.nodes.append(helper.make_node("Gemm", [x, name + "_w", name + "_b"],
                                           [name], name=name))
        return name

    def op(self, kind, ins, name):
        self.nodes.append(helper.make_node(kind, ins, [name], name=name))
        return name


def model(kind, path, batch):
    b = Builder(7)
    f = TensorProto.FLOAT
    if kind == "residual":
        h = b.op("Relu", [b.dense("x", 32, 32, "fc1")], "act1")
        s = b.op("Add", [b.dense(h, 32, 32, "fc2"), "x"], "res")
        b.dense(b.op("Relu", [s], "act2"), 32, 10, "y")
        ins, outs = [("x", 32)], [("y", 10)]
    elif kind == "two-heads":
        h = b.op("Relu", [b.dense("x", 24, 16, "fc1")], "act")
        b.dense(h, 16, 6, "y1")
        b.op("Softmax", [b.dense(h, 16, 5, "fc_b")], "y2")
        ins, outs = [("x", 24)], [("y1", 6), ("y2", 5)]
    elif kind == "gated":
        u = b.dense("x", 20, 16, "fc_u")
        g = b.op("Sigmoid", [b.dense("x", 20, 16, "fc_g")], "gate")
        b.dense(b.op("Mul", [u, g], "gated"), 16, 8, "y")
        ins, outs = [("x", 20)], [("y", 8)]
    elif kind == "two-inputs":
        d = b.op("Sub", [b.dense("a", 12, 12, "fc_a"), b.dense("b", 12, 12, "fc_b")],
                 "diff")
        b.op("Max", [d, "b"], "y")
        ins, outs = [("a", 12), ("b", 12)], [("y", 12)]
    elif kind == "towers":
        a = b.op("Relu", [b.dense("x", 24, 16, "fc_a1")], "act_a1")
        a = b.op("Relu", [b.dense(a, 16, 12, "fc_a2")], "act_a2")
        c = b.op("Relu", [b.dense("x", 24, 8, "fc_b")], "act_b")
        b.nodes.append(helper.make_node("Concat", [a, c], ["cat"], name="cat",
                                        axis=1))
        b.dense("cat", 20, 6, "y")
        ins, outs = [("x", 24)], [("y", 6)]
    else:
        sys.exit("gen_dag.py: unknown model " + kind)
    g = helper.make_graph(
        b.nodes, kind,
        [helper.make_tensor_value_info(n, f, [batch, k]) for n, k in ins],
        [helper.make_tensor_value_info(n, f, [batch, k]) for n, k in outs],
        b.inits)
    m = helper.make_model(g, producer_name="weft-test",
                          opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def main():
    args = sys.argv[1:]
    opt = {}
    while len(args) >= 2 and args[-2].startswith("--"):
        opt[args[-2]] = args[-1]
        args = args[:-2]
    if args[0] == "model":
        model(args[1], args[2], int(opt.get("--batch", 4)))
    elif args[0] == "input":
        shape = [int(s) for s in opt["--shape"].split(",")]
        rng = np.random.default_rng(int(opt.get("--seed", 1)))
        np.save(args[1], rng.standard_normal(shape).astype(np.float32))
    else:
        sys.exit("gen_dag.py: unknown command " + args[0])


if __name__ == "__main__":
    main()
