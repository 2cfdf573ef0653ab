"""A host model of weft's CPGD and a comparison with weftc train's result.

    cpgd_model.py MODEL X.npy LABELS.npy TRAINED WEFTC_OUTPUT --lr LR
                  [--rtol R --atol A]

replays continuous propagation exactly as docs/training.md ("CPGD") defines
it, in float32 numpy, and prints CPGD MATCH when every initializer of TRAINED
is within rtol/atol of the model's, else the worst difference and exits 1.

The semantics: a trained layer with lag j runs, in round i, the forward of
sample i and then the backward of sample i - j, and updates its weights at
the end of each backward. So the forward of sample s sees the layer's
weights after the updates of samples 0 .. s - j - 1 (the version
max(0, s - j)); the backward of sample s computes the gradient of its input
with the weights after the updates of samples 0 .. s - 1 (version s), from
the input and output the forward of s stored, and then applies sample s's
update. Each layer's lag is read from weftc's "weftc: cpgd:" line (the lag
the compiler recorded in the IR).

To show the test can tell CPGD from plain SGD, the same replay with every lag
0 (SGD) is compared too, and "SGD DIFFERS" is printed when it does not match
TRAINED.

The graph must be a chain of Gemm, MatMul, Add, Relu, Tanh and Flatten
nodes (what weftc train trains).
"""
import argparse
import re
import sys

import numpy as np
import onnx
from onnx import numpy_helper

F32 = np.float32


def parse_lags(path):
    text = open(path).read()
    line = [l for l in text.splitlines() if l.startswith("weftc: cpgd:")]
    if not line:
        sys.exit("cpgd_model.py: no 'weftc: cpgd:' line in %s" % path)
    lags = {}
    for kernel, lag, names in re.findall(r"@(\S+) lag (\d+) \(([^)]*)\)",
                                         line[0]):
        for n in names.split(","):
            if n.strip():
                lags[n.strip()] = int(lag)
    return lags


def replay(graph, inits, xs, labels, lr, lags):
    """Trains `inits` (a dict of float32 arrays) as CPGD with `lags`
    (initializer -> lag; every trained initializer must have one)."""
    hist = {n: [inits[n].astype(F32)] for n in lags}
    lr = F32(lr)
    inp = graph.input[0].name
    for s in range(xs.shape[0]):
        def fwd_param(name):
            if name in hist:
                return hist[name][max(0, s - lags[name])]
            return inits[name]

        # Forward with the weights each layer had at its forward of s.
        env = {inp: xs[s:s + 1].astype(F32)}
        tape = []
        for n in graph.node:
            a = {at.name: onnx.helper.get_attribute_value(at)
                 for at in n.attribute}
            get = lambda i: fwd_param(i) if i in inits else env[i]
            ins = [get(i) for i in n.input]
            if n.op_type == "Gemm":
                assert not a.get("transA", 0)
                w = ins[1].T if a.get("transB", 0) else ins[1]
                y = (ins[0] @ w).astype(F32)
                if len(ins) > 2:
                    y = (y + ins[2]).astype(F32)
            elif n.op_type == "MatMul":
                y = (ins[0] @ ins[1]).astype(F32)
            elif n.op_type == "Add":
                y = (ins[0] + ins[1]).astype(F32)
            elif n.op_type == "Relu":
                y = np.maximum(ins[0], F32(0))
            elif n.op_type == "Tanh":
                y = np.tanh(ins[0]).astype(F32)
            elif n.op_type == "Flatten":
                y = ins[0].reshape(ins[0].shape[0], -1)
            else:
                sys.exit("cpgd_model.py: op %s is not supported" % n.op_type)
            tape.append((n, a, [env.get(i) for i in n.input], y))
            env[n.output[0]] = y
        z = env[graph.output[0].name][0].astype(np.float64)
        p = np.exp(z - z.max())
        p = (p / p.sum()).astype(F32)
        onehot = np.zeros_like(p)
        onehot[labels[s]] = 1
        grads = {graph.output[0].name: (p - onehot)[None, :]}

        # Backward with the current weights (version s), then the updates.
        updates = {}
        for n, a, ins, y in reversed(tape):
            dy = grads.get(n.output[0])
            if dy is None:
                continue
            cur = lambda i: hist[i][s] if i in hist else inits[i]
            x = ins[0]
            if n.op_type == "Gemm":
                wname = n.input[1]
                tb = a.get("transB", 0)
                w = cur(wname).T if tb else cur(wname)
                grads[n.input[0]] = (dy @ w.T).astype(F32)
                gw = (x.T @ dy).astype(F32)
                updates[wname] = gw.T if tb else gw
                if len(n.input) > 2:
                    updates[n.input[2]] = dy[0]
            elif n.op_type == "MatMul":
                w = cur(n.input[1])
                grads[n.input[0]] = (dy @ w.T).astype(F32)
                updates[n.input[1]] = (x.T @ dy).astype(F32)
            elif n.op_type == "Add":
                if n.input[1] in inits:
                    grads[n.input[0]] = dy
                    updates[n.input[1]] = dy.reshape(inits[n.input[1]].shape)
                else:
                    grads[n.input[0]] = dy
                    grads[n.input[1]] = dy
            elif n.op_type == "Relu":
                grads[n.input[0]] = np.where(y > 0, dy, F32(0)).astype(F32)
            elif n.op_type == "Tanh":
                grads[n.input[0]] = (dy * (F32(1) - y * y)).astype(F32)
            elif n.op_type == "Flatten":
                grads[n.input[0]] = dy.reshape(x.shape)
        for name in hist:
            g = updates.get(name)
            if g is None:
                sys.exit("cpgd_model.py: no gradient for %s" % name)
            hist[name].append((hist[name][s] - lr * g).astype(F32))
    return {n: h[-1] for n, h in hist.items()}


def compare(want, got, rtol, atol):
    worst, ok = (0.0, None), True
    for name, w in want.items():
        have = got[name]
        diff = np.abs(have.astype(np.float64) - w)
        if float(np.max(diff - (atol + rtol * np.abs(w)))) > 0:
            ok = False
        rel = float(np.max(diff / np.maximum(np.abs(w), 1e-30)))
        if rel > worst[0]:
            worst = (rel, name)
    return ok, worst


def main():
    ap = argparse.ArgumentParser()
    for a in ("model", "x", "labels", "trained", "weftc_output"):
        ap.add_argument(a)
    ap.add_argument("--lr", type=float, required=True)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-6)
    args = ap.parse_args()
    m = onnx.load(args.model)
    inits = {t.name: numpy_helper.to_array(t).copy()
             for t in m.graph.initializer}
    got = {t.name: numpy_helper.to_array(t)
           for t in onnx.load(args.trained).graph.initializer}
    xs, labels = np.load(args.x), np.load(args.labels)
    lags = parse_lags(args.weftc_output)
    want = replay(m.graph, inits, xs, labels, args.lr, lags)
    sgd = replay(m.graph, inits, xs, labels, args.lr, {n: 0 for n in lags})
    if not any(not np.array_equal(w, inits[n]) for n, w in want.items()):
        print("the model did not change the weights: the test would not see "
              "anything")
        sys.exit(1)
    if not compare(sgd, got, args.rtol, args.atol)[0]:
        print("SGD DIFFERS")
    ok, worst = compare(want, got, args.rtol, args.atol)
    if ok:
        print("CPGD MATCH")
    else:
        print("CPGD MISMATCH (worst relative difference %g in %s)" % worst)
        sys.exit(1)


if __name__ == "__main__":
    main()
