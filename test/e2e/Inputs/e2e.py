#!/usr/bin/python3
# ===- e2e.py - Checks for the end-to-end weftc tests -----------------------===#
#
# Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
#
# ===-----------------------------------------------------------------------===#
#
#   e2e.py differ A.npy B.npy          outputs of two inputs must differ
#   e2e.py numpy MODEL.onnx X.npy Y.npy [--rtol R --atol A]
#                                      Y matches numpy on the ONNX graph
#                                      (Gemm/MatMul/Add/Sub/Mul/Div/Max/Min/Erf/Relu/
#                                      Sigmoid/Tanh/Softmax/LogSoftmax/Flatten),
#                                      independently of weft's importer and host
#                                      reference; a NaN anywhere is a mismatch
#   e2e.py graph MODEL.onnx NAME=X.npy ... -- NAME=Y.npy ... [--rtol R --atol A]
#                                      the same for a graph of several inputs and
#                                      outputs
#   e2e.py macs STATS.json MIN         the simulator counted >= MIN MACs
#   e2e.py close GOT.npy WANT.npy [--rtol R --atol A]
#                                      GOT matches WANT (e.g. torch's outputs)
#
# ===-----------------------------------------------------------------------===#
import json
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def numpy_model(model, x):
    m = onnx.load(model)
    return numpy_graph(model, {m.graph.input[0].name: x})[m.graph.output[0].name]


def numpy_graph(model, inputs):
    m = onnx.load(model)
    env = {t.name: numpy_helper.to_array(t).astype(np.float32) for t in m.graph.initializer}
    env.update(inputs)
    for n in m.graph.node:
        a = {at.name: onnx.helper.get_attribute_value(at) for at in n.attribute}
        ins = [env[i] for i in n.input]
        if n.op_type == "Gemm":
            A, B = ins[0], ins[1]
            if a.get("transA", 0):
                A = A.T
            if a.get("transB", 0):
                B = B.T
            y = a.get("alpha", 1.0) * (A.astype(np.float64) @ B.astype(np.float64))
            if len(ins) > 2:
                y = y + a.get("beta", 1.0) * ins[2]
        elif n.op_type == "MatMul":
            y = ins[0].astype(np.float64) @ ins[1].astype(np.float64)
        elif n.op_type == "Add":
            y = ins[0] + ins[1]
        elif n.op_type == "Sub":
            y = ins[0] - ins[1]
        elif n.op_type == "Max":
            y = np.maximum(ins[0], ins[1])
        elif n.op_type == "Min":
            y = np.minimum(ins[0], ins[1])
        elif n.op_type == "Relu":
            y = np.maximum(ins[0], 0)
        elif n.op_type == "Sigmoid":
            y = 1.0 / (1.0 + np.exp(-ins[0].astype(np.float64)))
        elif n.op_type == "Tanh":
            y = np.tanh(ins[0].astype(np.float64))
        elif n.op_type in ("Softmax", "LogSoftmax"):
            v = ins[0].astype(np.float64)
            d = v - v.max(axis=-1, keepdims=True)
            lse = np.log(np.exp(d).sum(axis=-1, keepdims=True))
            y = np.exp(d - lse) if n.op_type == "Softmax" else d - lse
        elif n.op_type == "Mul":
            y = ins[0] * ins[1]
        elif n.op_type == "Div":
            y = ins[0] / ins[1]
        elif n.op_type == "Erf":
            from math import erf
            y = np.vectorize(erf)(ins[0].astype(np.float64))
        elif n.op_type == "Concat":
            y = np.concatenate(ins, axis=a["axis"])
        elif n.op_type == "Flatten":
            y = ins[0].reshape(ins[0].shape[0], -1)
        else:
            sys.exit("e2e.py: no numpy model of " + n.op_type)
        env[n.output[0]] = y
    return {o.name: env[o.name] for o in m.graph.output}


def compare(got, want, rtol, atol):
    """Exits unless got matches want; a NaN in either is a mismatch."""
    if got.shape != want.shape:
        sys.exit("e2e.py: shape %s, numpy says %s" % (got.shape, want.shape))
    if np.isnan(got).any() or np.isnan(want).any():
        sys.exit("e2e.py: %d NaN outputs (numpy: %d)"
                 % (np.isnan(got).sum(), np.isnan(want).sum()))
    ok = np.abs(got - want) <= atol + rtol * np.abs(want)
    if not ok.all():
        i = np.unravel_index(np.argmax(np.abs(got - want)), got.shape)
        sys.exit("e2e.py: %d elements differ from numpy; worst at %s: %r vs %r"
                 % ((~ok).sum(), i, got[i], want[i]))


def tolerances(rest, rtol, atol):
    """--rtol R and --atol A in `rest`, else the defaults."""
    for i in range(0, len(rest), 2):
        if rest[i] == "--rtol":
            rtol = float(rest[i + 1])
        elif rest[i] == "--atol":
            atol = float(rest[i + 1])
    return rtol, atol


def main():
    what = sys.argv[1]
    if what == "differ":
        a, b = np.load(sys.argv[2]), np.load(sys.argv[3])
        d = float(np.max(np.abs(a.astype(np.float64) - b)))
        if d == 0:
            sys.exit("e2e.py: the two outputs are identical")
        print("DIFFER by up to %.3g" % d)
    elif what == "numpy":
        rtol, atol = tolerances(sys.argv[5:], 1e-3, 1e-4)
        want = numpy_model(sys.argv[2], np.load(sys.argv[3]))
        got = np.load(sys.argv[4])
        compare(got, want, rtol, atol)
        print("NUMPY MATCH %s" % (got.shape,))
    elif what == "graph":
        args = sys.argv[3:]
        rtol, atol = 1e-3, 1e-4
        if "--rtol" in args:
            i = args.index("--rtol")
            rtol = float(args[i + 1])
            del args[i:i + 2]
        if "--atol" in args:
            i = args.index("--atol")
            atol = float(args[i + 1])
            del args[i:i + 2]
        sep = args.index("--")
        ins = dict(a.split("=", 1) for a in args[:sep])
        outs = dict(a.split("=", 1) for a in args[sep + 1:])
        want = numpy_graph(sys.argv[2], {k: np.load(v) for k, v in ins.items()})
        for name, path in outs.items():
            compare(np.load(path), want[name], rtol, atol)
        print("NUMPY MATCH %d outputs" % len(outs))
    elif what == "close":
        rtol, atol = tolerances(sys.argv[4:], 1e-3, 1e-3)
        got, want = np.load(sys.argv[2]), np.load(sys.argv[3])
        compare(got, want.reshape(got.shape), rtol, atol)
        print("CLOSE %s" % (got.shape,))
    elif what == "distinct":
        # Every sample's output differs from every other's (so that a
        # sample dealt to the wrong copy or gathered out of order shows).
        y = np.load(sys.argv[2])
        rows = y.reshape(y.shape[0], -1)
        for i in range(rows.shape[0]):
            for j in range(i):
                if np.array_equal(rows[i], rows[j]):
                    sys.exit("e2e.py: samples %d and %d have the same output" % (j, i))
        print("DISTINCT %d samples" % rows.shape[0])
    elif what == "replicas":
        # The figures weftc run adds to the statistics with --replicas.
        s = json.load(open(sys.argv[2]))
        for key in ("samples_per_million_cycles", "utilization"):
            if not s[key] > 0:
                sys.exit("e2e.py: %s is %r" % (key, s[key]))
        if not (0 < s["replica"]["utilization"] <= 1 and s["utilization"] <= 1):
            sys.exit("e2e.py: a utilization out of (0, 1]")
        if sum(s["replica_samples"]) != s["samples_dealt"]:
            sys.exit("e2e.py: the copies' samples do not add up")
        print("REPLICAS %d copies, samples %s per copy, %d samples streamed per port, "
              "%d PEs per copy" % (s["replicas"], s["replica_samples"], s["samples"],
                                   s["replica"]["pes"]))
    elif what == "macs":
        s = json.load(open(sys.argv[2]))
        need = int(sys.argv[3])
        if s["macs"] < need:
            sys.exit("e2e.py: the simulator counted %d MACs, the layer needs %d" % (s["macs"], need))
        print("MACS %d >= %d" % (s["macs"], need))
    elif what == "faster":
        # The second run's median interval between samples is at most the
        # first's divided by a factor.
        def interval(path):
            done = json.load(open(path))["sample_done"]
            gaps = sorted(b - a for a, b in zip(done, done[1:]))
            if not gaps:
                sys.exit("e2e.py: %s has fewer than two samples" % path)
            return gaps[len(gaps) // 2]
        a, b = interval(sys.argv[2]), interval(sys.argv[3])
        factor = float(sys.argv[4])
        if b * factor > a:
            sys.exit("e2e.py: %d cycles a sample against %d: not %gx faster"
                     % (b, a, factor))
        print("FASTER %d -> %d cycles a sample (>= %gx)" % (a, b, factor))
    else:
        sys.exit("e2e.py: unknown check " + what)


if __name__ == "__main__":
    main()
