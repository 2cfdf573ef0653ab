#!/usr/bin/python3
# Writes one-dense-layer ONNX models, and random inputs for them, for the
# weftc end-to-end tests. Everything is seeded, so a run writes the same
# bytes every time.
#
#   gen_dense.py model OUT.onnx --k K --m M [--form gemm|gemm-transb|matmul|
#                matmul-add] [--no-bias] [--relu] [--batch N|dynamic]
#                [--seed S]
#   gen_dense.py two-layers OUT.onnx      (two Gemms: not one layer)
#   gen_dense.py softmax OUT.onnx         (Gemm then Softmax)
#   gen_dense.py input OUT.npy --shape N,K [--seed S]
#   gen_dense.py mlp OUT.onnx --sizes 784,256,128,10 --acts relu,relu,softmax
#                [--form gemm|gemm-transb|matmul|matmul-add] [--no-bias]
#                [--batch N|dynamic] [--flatten C,H,W] [--seed S]
#       A multi-layer perceptron: one dense layer per pair of sizes, each
#       followed by the activations named for it in --acts (none, silu,
#       gelu (written out as torch exports them), relu,
#       sigmoid, tanh, softmax, logsoftmax; several joined with '+', e.g.
#       relu+softmax). --flatten takes a [N, C, H, W] input and flattens it
#       first (C*H*W must be the first size).
#
# Weights are N(0, 1/K) so outputs stay O(1) at every fan-in; inputs are
# N(0, 1) (never exactly zero, so no MAC is skippable).
import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def save(nodes, inputs, outputs, inits, path):
    g = helper.make_graph(nodes, "dense", inputs, outputs, inits)
    m = helper.make_model(g, producer_name="weft-test",
                          opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def weights(rng, k, m, transposed):
    w = (rng.standard_normal((k, m)) / np.sqrt(k)).astype(np.float32)
    return np.ascontiguousarray(w.T) if transposed else w


def dense(args):
    rng = np.random.default_rng(args.seed)
    k, m = args.k, args.m
    batch = args.batch if args.batch == "dynamic" else int(args.batch)
    bias = not args.no_bias
    w = weights(rng, k, m, args.form == "gemm-transb")
    b = rng.standard_normal(m).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w")]
    if bias:
        inits.append(numpy_helper.from_array(b, "b"))
    nodes = []
    out = "y" if not args.relu else "h"
    if args.form in ("gemm", "gemm-transb"):
        ins = ["x", "w"] + (["b"] if bias else [])
        nodes.append(helper.make_node("Gemm", ins, [out], name="fc",
                                      transB=1 if args.form == "gemm-transb" else 0))
    elif args.form == "matmul" or not bias:
        nodes.append(helper.make_node("MatMul", ["x", "w"], [out], name="fc"))
    else:
        nodes.append(helper.make_node("MatMul", ["x", "w"], ["p"], name="fc"))
        nodes.append(helper.make_node("Add", ["p", "b"], [out], name="fc_bias"))
    if args.relu:
        nodes.append(helper.make_node("Relu", ["h"], ["y"], name="act"))
    save(nodes, [vi("x", [batch, k])], [vi("y", [batch, m])], inits, args.out)


def two_layers(path):
    rng = np.random.default_rng(5)
    save([helper.make_node("Gemm", ["x", "w1"], ["h"], name="fc1"),
          helper.make_node("Gemm", ["h", "w2"], ["y"], name="fc2")],
         [vi("x", [1, 8])], [vi("y", [1, 4])],
         [numpy_helper.from_array(weights(rng, 8, 6, False), "w1"),
          numpy_helper.from_array(weights(rng, 6, 4, False), "w2")], path)


def softmax(path):
    rng = np.random.default_rng(6)
    save([helper.make_node("Gemm", ["x", "w"], ["h"], name="fc"),
          helper.make_node("Softmax", ["h"], ["y"], name="probs")],
         [vi("x", [1, 8])], [vi("y", [1, 4])],
         [numpy_helper.from_array(weights(rng, 8, 4, False), "w")], path)


ACTS = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh",
        "softmax": "Softmax", "logsoftmax": "LogSoftmax"}


def mlp(args):
    rng = np.random.default_rng(args.seed)
    sizes = [int(s) for s in args.sizes.split(",")]
    acts = args.acts.split(",") if args.acts else []
    layers = len(sizes) - 1
    if layers < 1 or len(acts) > layers:
        sys.exit("gen_dense.py: --sizes needs two or more sizes and --acts "
                 "at most one entry per layer")
    acts += ["none"] * (layers - len(acts))
    batch = args.batch if args.batch == "dynamic" else int(args.batch)
    bias = not args.no_bias
    nodes, inits = [], []
    cur = "x"
    if args.flatten:
        chw = [int(s) for s in args.flatten.split(",")]
        if int(np.prod(chw)) != sizes[0]:
            sys.exit("gen_dense.py: --flatten %s is not %d elements" % (args.flatten, sizes[0]))
        x = vi("x", [batch] + chw)
        nodes.append(helper.make_node("Flatten", ["x"], ["flat"], name="flatten", axis=1))
        cur = "flat"
    else:
        x = vi("x", [batch, sizes[0]])
    n = 0

    def fresh(base):
        nonlocal n
        n += 1
        return "%s%d" % (base, n)

    for i in range(layers):
        k, m = sizes[i], sizes[i + 1]
        w = weights(rng, k, m, args.form == "gemm-transb")
        b = rng.standard_normal(m).astype(np.float32)
        wn, bn, out = "w%d" % (i + 1), "b%d" % (i + 1), fresh("t")
        inits.append(numpy_helper.from_array(w, wn))
        name = "fc%d" % (i + 1)
        if args.form in ("gemm", "gemm-transb"):
            if bias:
                inits.append(numpy_helper.from_array(b, bn))
            nodes.append(helper.make_node(
                "Gemm", [cur, wn] + ([bn] if bias else []), [out], name=name,
                transB=1 if args.form == "gemm-transb" else 0))
        else:
            nodes.append(helper.make_node("MatMul", [cur, wn], [out], name=name))
            if bias and args.form == "matmul-add":
                inits.append(numpy_helper.from_array(b, bn))
                added = fresh("t")
                nodes.append(helper.make_node("Add", [out, bn], [added],
                                              name=name + "_bias"))
                out = added
        cur = out
        for j, a in enumerate(acts[i].split("+")):
            if a == "none":
                continue
            if a == "silu":
                # x * sigmoid(x), as torch exports nn.SiLU.
                s, out = fresh("t"), fresh("t")
                nodes.append(helper.make_node("Sigmoid", [cur], [s], name="silu_sig_%d" % (i + 1)))
                nodes.append(helper.make_node("Mul", [cur, s], [out], name="silu_%d" % (i + 1)))
                cur = out
                continue
            if a == "gelu":
                # 0.5 x (1 + erf(x / sqrt 2)), as torch exports nn.GELU.
                for cn, cv in (("gelu_sqrt2", np.sqrt(2.0)), ("gelu_one", 1.0), ("gelu_half", 0.5)):
                    if not any(t.name == cn for t in inits):
                        inits.append(numpy_helper.from_array(np.array(cv, np.float32), cn))
                d, e, p1, m1, out = (fresh("t") for _ in range(5))
                nodes.append(helper.make_node("Div", [cur, "gelu_sqrt2"], [d], name="gelu_div_%d" % (i + 1)))
                nodes.append(helper.make_node("Erf", [d], [e], name="gelu_erf_%d" % (i + 1)))
                nodes.append(helper.make_node("Add", [e, "gelu_one"], [p1], name="gelu_add_%d" % (i + 1)))
                nodes.append(helper.make_node("Mul", [cur, p1], [m1], name="gelu_mul_%d" % (i + 1)))
                nodes.append(helper.make_node("Mul", [m1, "gelu_half"], [out], name="gelu_%d" % (i + 1)))
                cur = out
                continue
            if a not in ACTS:
                sys.exit("gen_dense.py: unknown activation " + a)
            out = fresh("t")
            attrs = {"axis": -1} if a in ("softmax", "logsoftmax") else {}
            nodes.append(helper.make_node(ACTS[a], [cur], [out],
                                          name="%s_%s" % (a, i + 1), **attrs))
            cur = out
    nodes[-1].output[0] = "y"
    save(nodes, [x], [vi("y", [batch, sizes[-1]])], inits, args.out)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["model", "two-layers", "softmax", "input", "mlp"])
    p.add_argument("out")
    p.add_argument("--k", type=int, default=64)
    p.add_argument("--m", type=int, default=32)
    p.add_argument("--form", default="gemm",
                   choices=["gemm", "gemm-transb", "matmul", "matmul-add"])
    p.add_argument("--no-bias", action="store_true")
    p.add_argument("--relu", action="store_true")
    p.add_argument("--batch", default="1")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--shape", default="1,64")
    p.add_argument("--sizes", default="64,32,10")
    p.add_argument("--acts", default="")
    p.add_argument("--flatten", default="")
    p.add_argument("--nonzero", action="store_true",
                   help="input: values bounded away from zero (|x| >= 0.1)")
    args = p.parse_args()
    if args.what == "model":
        dense(args)
    elif args.what == "two-layers":
        two_layers(args.out)
    elif args.what == "softmax":
        softmax(args.out)
    elif args.what == "mlp":
        mlp(args)
    else:
        shape = [int(s) for s in args.shape.split(",")]
        rng = np.random.default_rng(args.seed)
        x = rng.standard_normal(shape).astype(np.float32)
        if args.nonzero:
            x = np.where(np.abs(x) < 0.1, np.copysign(0.1, x), x).astype(np.float32)
        np.save(args.out, x)


if __name__ == "__main__":
    sys.exit(main())
