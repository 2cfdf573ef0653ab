"""Trains an ONNX MLP with torch and compares with weftc train's result.

    train_torch.py data MODEL X.npy LABELS.npy --samples N --seed S
        writes N random samples for MODEL's input and N labels in its classes
    train_torch.py check MODEL X.npy LABELS.npy TRAINED --optimizer sgd|mbgd
                   --lr LR --batch B --steps N [--rtol R --atol A]
        trains MODEL's initializers with torch (torch.optim.SGD on the mean
        softmax cross-entropy of each mini-batch, the same samples in the
        same order) and prints TORCH MATCH when every initializer of TRAINED
        is within rtol/atol of torch's, else the worst difference and exits 1.

The graph must be a chain of Gemm, MatMul, Add, Relu, Tanh, Flatten, Conv,
Pad and MaxPool nodes (what weftc train trains).
"""
import argparse
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper


def load(path):
    m = onnx.load(path)
    inits = {t.name: numpy_helper.to_array(t).copy() for t in m.graph.initializer}
    return m, inits


def forward(graph, params, x):
    env = {graph.input[0].name: x}
    for n in graph.node:
        get = lambda i: params[i] if i in params else env[i]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        if n.op_type == "Gemm":
            a, b = get(n.input[0]), get(n.input[1])
            if attrs.get("transA", 0):
                a = a.t()
            if attrs.get("transB", 0):
                b = b.t()
            y = a @ b
            if len(n.input) > 2:
                y = y + get(n.input[2])
        elif n.op_type == "MatMul":
            y = get(n.input[0]) @ get(n.input[1])
        elif n.op_type == "Add":
            y = get(n.input[0]) + get(n.input[1])
        elif n.op_type == "Relu":
            y = torch.relu(get(n.input[0]))
        elif n.op_type == "Tanh":
            y = torch.tanh(get(n.input[0]))
        elif n.op_type == "Flatten":
            y = torch.flatten(get(n.input[0]), 1)
        elif n.op_type == "Conv":
            x = get(n.input[0])
            k = len(attrs.get("kernel_shape", [1, 1]))
            pads = attrs.get("pads", [0] * (2 * k))
            # ONNX pads (top, left, bottom, right); F.pad takes the last
            # dimension first.
            x = torch.nn.functional.pad(x, [pads[1], pads[3], pads[0], pads[2]])
            y = torch.nn.functional.conv2d(
                x, get(n.input[1]),
                get(n.input[2]) if len(n.input) > 2 else None,
                stride=attrs.get("strides", [1, 1]),
                dilation=attrs.get("dilations", [1, 1]),
                groups=attrs.get("group", 1))
        elif n.op_type == "Pad":
            x = get(n.input[0])
            p = [int(v) for v in get(n.input[1])]
            r = len(p) // 2
            spec = []
            for d in reversed(range(r)):
                spec += [p[d], p[d + r]]
            y = torch.nn.functional.pad(x, spec)
        elif n.op_type == "MaxPool":
            y = torch.nn.functional.max_pool2d(
                get(n.input[0]), attrs["kernel_shape"],
                attrs.get("strides", attrs["kernel_shape"]))
        elif n.op_type == "Constant":
            y = torch.tensor(numpy_helper.to_array(attrs["value"]))
        else:
            sys.exit("train_torch.py: op %s is not supported" % n.op_type)
        env[n.output[0]] = y
    return env[graph.output[0].name]


def data(args):
    m, _ = load(args.model)
    dims = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim][1:]
    out = [d.dim_value for d in m.graph.output[0].type.tensor_type.shape.dim]
    classes = out[-1]
    rng = np.random.default_rng(args.seed)
    np.save(args.x, rng.standard_normal([args.samples] + dims).astype(np.float32))
    np.save(args.labels, rng.integers(0, classes, args.samples).astype(np.int64))


def check(args):
    m, inits = load(args.model)
    params = {k: torch.tensor(v, requires_grad=v.dtype == np.float32)
              for k, v in inits.items()}
    x = torch.tensor(np.load(args.x))
    labels = torch.tensor(np.load(args.labels))
    trainable = [p for p in params.values() if p.requires_grad]
    opt = torch.optim.SGD(trainable, lr=args.lr)
    loss_fn = torch.nn.CrossEntropyLoss()
    for s in range(args.steps):
        xb = x[s * args.batch:(s + 1) * args.batch]
        lb = labels[s * args.batch:(s + 1) * args.batch]
        opt.zero_grad()
        loss = loss_fn(forward(m.graph, params, xb), lb)
        loss.backward()
        opt.step()
    _, got = load(args.trained)
    worst = (0.0, None)
    ok = True
    changed = False
    for name, p in params.items():
        want = p.detach().numpy()
        have = got[name]
        if have.shape != want.shape or have.dtype != want.dtype:
            print("initializer %s: %s %s, torch %s %s" %
                  (name, have.shape, have.dtype, want.shape, want.dtype))
            ok = False
            continue
        if not np.array_equal(want, inits[name]):
            changed = True
        diff = np.abs(have.astype(np.float64) - want)
        bound = args.atol + args.rtol * np.abs(want)
        excess = float(np.max(diff - bound)) if diff.size else 0.0
        if excess > 0:
            ok = False
        rel = float(np.max(diff / np.maximum(np.abs(want), 1e-30)))
        if rel > worst[0]:
            worst = (rel, name)
    if not changed:
        print("torch did not change the weights: the test would not see "
              "anything")
        ok = False
    if ok:
        print("TORCH MATCH")
    else:
        print("TORCH MISMATCH (worst relative difference %g in %s)" % worst)
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("data")
    d.add_argument("model"); d.add_argument("x"); d.add_argument("labels")
    d.add_argument("--samples", type=int, required=True)
    d.add_argument("--seed", type=int, default=0)
    c = sub.add_parser("check")
    for a in ("model", "x", "labels", "trained"):
        c.add_argument(a)
    c.add_argument("--optimizer", default="sgd")
    c.add_argument("--lr", type=float, required=True)
    c.add_argument("--batch", type=int, default=1)
    c.add_argument("--steps", type=int, required=True)
    c.add_argument("--rtol", type=float, default=1e-4)
    c.add_argument("--atol", type=float, default=1e-6)
    args = ap.parse_args()
    data(args) if args.cmd == "data" else check(args)


if __name__ == "__main__":
    main()
