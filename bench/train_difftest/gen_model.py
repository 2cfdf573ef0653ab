#!/usr/bin/python3
# ===- gen_model.py - Random small CNNs for driver.py ----------------------===#
#
# Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
#
# ===-----------------------------------------------------------------------===#
"""Random small conv nets for differential testing of `weftc train`.

    gen_model.py SEED DIR            random spec from SEED -> DIR/spec.json, DIR/m.onnx
    gen_model.py --spec JSON DIR     build the given spec (a JSON file or string)

Spec: {"in": [C, H, W], "layers": [...], "wseed": int}
  layer kinds:
    {"t":"conv","cout":c,"k":[kh,kw],"s":[sh,sw],"d":[dh,dw],"p":[ph,pw],"bias":b,"relu":r}
    {"t":"pool"}                      MaxPool2d(2)
    {"t":"res","k1":[..],"d1":[..],"k2":[..],"d2":[..],"bias":b}
                                      conv c->c relu conv c->c (same pad) + skip, relu
    {"t":"flat"}
    {"t":"fc","out":n,"relu":r}
"""
import json
import os
import random
import sys

import torch
import torch.nn as nn


def out_dim(n, k, s, d, p):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


class Res(nn.Module):
    def __init__(self, c, L):
        super().__init__()
        p1 = [L["d1"][i] * (L["k1"][i] - 1) // 2 for i in range(2)]
        p2 = [L["d2"][i] * (L["k2"][i] - 1) // 2 for i in range(2)]
        self.c1 = nn.Conv2d(c, c, L["k1"], padding=p1, dilation=L["d1"], bias=L["bias"])
        self.c2 = nn.Conv2d(c, c, L["k2"], padding=p2, dilation=L["d2"], bias=L["bias"])

    def forward(self, x):
        return torch.relu(self.c2(torch.relu(self.c1(x))) + x)


def build(spec):
    C, H, W = spec["in"]
    mods = []
    flat = None
    for L in spec["layers"]:
        t = L["t"]
        if t == "conv":
            mods.append(nn.Conv2d(C, L["cout"], L["k"], stride=L["s"], dilation=L["d"],
                                  padding=L["p"], bias=L["bias"]))
            C = L["cout"]
            H = out_dim(H, L["k"][0], L["s"][0], L["d"][0], L["p"][0])
            W = out_dim(W, L["k"][1], L["s"][1], L["d"][1], L["p"][1])
            assert H >= 1 and W >= 1
            if L["relu"]:
                mods.append(nn.ReLU())
        elif t == "pool":
            mods.append(nn.MaxPool2d(2))
            H //= 2
            W //= 2
        elif t == "res":
            mods.append(Res(C, L))
        elif t == "flat":
            mods.append(nn.Flatten())
            flat = C * H * W
        elif t == "fc":
            mods.append(nn.Linear(flat, L["out"]))
            flat = L["out"]
            if L["relu"]:
                mods.append(nn.ReLU())
    return nn.Sequential(*mods)


def describe(spec):
    C, H, W = spec["in"]
    out = ["in %dx%dx%d" % (C, H, W)]
    for L in spec["layers"]:
        t = L["t"]
        if t == "conv":
            s = "conv %d->%d k%dx%d" % (C, L["cout"], *L["k"])
            if L["s"] != [1, 1]: s += " s%s" % L["s"]
            if L["d"] != [1, 1]: s += " d%s" % L["d"]
            if L["p"] != [0, 0]: s += " p%s" % L["p"]
            if not L["bias"]: s += " nobias"
            if L["relu"]: s += " relu"
            C = L["cout"]
            H = out_dim(H, L["k"][0], L["s"][0], L["d"][0], L["p"][0])
            W = out_dim(W, L["k"][1], L["s"][1], L["d"][1], L["p"][1])
            s += " ->%dx%dx%d" % (C, H, W)
        elif t == "pool":
            H //= 2; W //= 2
            s = "pool2 ->%dx%dx%d" % (C, H, W)
        elif t == "res":
            s = "res[k%s d%s, k%s d%s%s]" % (L["k1"], L["d1"], L["k2"], L["d2"],
                                             "" if L["bias"] else " nobias")
        elif t == "flat":
            s = "flat %d" % (C * H * W)
        elif t == "fc":
            s = "fc %d%s" % (L["out"], " relu" if L["relu"] else "")
        out.append(s)
    return " | ".join(out).replace(" ", " ").replace("[", "(").replace("]", ")")


def random_spec(seed):
    r = random.Random(seed)
    while True:
        C, H, W = r.randint(1, 6), r.randint(4, 12), r.randint(4, 12)
        spec = {"in": [C, H, W], "layers": [], "wseed": seed}
        nconv = r.randint(1, 3)
        c, h, w = C, H, W
        ok = True
        used_res = used_pool = 0
        for i in range(nconv):
            while True:
                if r.random() < 0.25:
                    k = [r.randint(1, 5), r.randint(1, 5)]
                else:
                    kk = r.randint(1, 5); k = [kk, kk]
                s = [r.choice([1, 1, 2])] * 2 if r.random() < 0.8 else [r.randint(1, 2), r.randint(1, 2)]
                d = [r.choice([1, 1, 1, 2])] * 2 if r.random() < 0.8 else [r.randint(1, 2), r.randint(1, 2)]
                p = [r.randint(0, 2)] * 2 if r.random() < 0.7 else [r.randint(0, 2), r.randint(0, 2)]
                nh, nw = out_dim(h, k[0], s[0], d[0], p[0]), out_dim(w, k[1], s[1], d[1], p[1])
                if nh >= 1 and nw >= 1:
                    break
            cout = r.randint(1, 8)
            last = i == nconv - 1
            relu = True if not last else r.random() < 0.75
            spec["layers"].append({"t": "conv", "cout": cout, "k": k, "s": s, "d": d,
                                   "p": p, "bias": r.random() < 0.75, "relu": relu})
            c, h, w = cout, nh, nw
            if relu and not used_pool and h % 2 == 0 and w % 2 == 0 and r.random() < 0.35:
                spec["layers"].append({"t": "pool"})
                used_pool = 1
                h //= 2; w //= 2
                # a residual right after a pool: fork producer not a conv
                if not used_res and r.random() < 0.1:
                    spec["layers"].append(res_layer(r))
                    used_res = 1
            elif relu and not used_res and r.random() < 0.35:
                spec["layers"].append(res_layer(r))
                used_res = 1
        spec["layers"].append({"t": "flat"})
        if c * h * w > 400:
            continue
        if r.random() < 0.4:
            spec["layers"].append({"t": "fc", "out": r.randint(3, 12), "relu": True})
        spec["layers"].append({"t": "fc", "out": r.randint(2, 6), "relu": False})
        return spec


def res_layer(r):
    def k():
        if r.random() < 0.2:
            return [r.choice([1, 3, 5]), r.choice([1, 3, 5])]
        kk = r.choice([1, 3, 3, 3, 5]); return [kk, kk]
    def d():
        return [2, 2] if r.random() < 0.15 else [1, 1]
    return {"t": "res", "k1": k(), "d1": d(), "k2": k(), "d2": d(), "bias": r.random() < 0.8}


def export(spec, out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(spec["wseed"])
    m = build(spec)
    m.eval()
    shape = [1] + spec["in"]
    torch.onnx.export(m, torch.zeros(shape), out + "/m.onnx", opset_version=13,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    with open(out + "/spec.json", "w") as f:
        json.dump(spec, f)
    with open(out + "/desc.txt", "w") as f:
        f.write(describe(spec) + "\n")


def main():
    if sys.argv[1] == "--spec":
        a = sys.argv[2]
        spec = json.load(open(a)) if os.path.exists(a) else json.loads(a)
        export(spec, sys.argv[3])
    else:
        export(random_spec(int(sys.argv[1])), sys.argv[2])


if __name__ == "__main__":
    main()
