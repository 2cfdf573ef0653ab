"""Reverse checkpoints: per-PE memory and recompute overhead of each policy
(docs/performance.md, "Reverse checkpoints").

    /usr/bin/python3 bench/train_checkpoints.py [--build build]
                     [--models 96-64-48-32-10:8x8 ...]

For each MLP (ReLU after every layer but the last; made by
test/models/gen_dense.py with seed 2, 8 samples by
test/e2e/Inputs/train_torch.py with seed 3) trains with SGD under
`--checkpoints none`, `every-2`, `every-4` and `auto`, the last with
`--pe-memory` set to the smallest budget any schedule fits (the high-water of
`every-1000`, where every layer that can recompute does), and prints a
markdown table: the layers that recompute, the fullest PE's memory
high-water, the recompute cycles `--weft-select-checkpoints` predicted (CE
cycles per sample over the PEs) against the measured ones (the sum over the
PEs of `ce_busy_cycles` minus the same in the `none` run, per sample), T (the
median interval between the samples' outputs) and whether the trained
weights are byte-identical to `none`'s.
"""
import argparse
import filecmp
import json
import os
import re
import statistics
import tempfile

from trainbench import ROOT, make_mlp, run
SAMPLES = 8


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", nargs="*", default=[
        "96-64-48-32-10:8x8", "64-128-96-64-10:8x8",
        "128-96-96-64-32-10:10x10", "32-64-96-64-10:8x8"])
    args = ap.parse_args()
    weftc = os.path.join(args.build, "bin", "weftc")
    print("| MLP (grid) | policy | recomputing | memory (bytes) | recompute "
          "predicted | measured | error | T | weights = none |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for spec in args.models:
            sizes, grid = spec.split(":")
            layers = sizes.count("-")
            acts = ",".join(["relu"] * (layers - 1) + ["none"])
            m, x, l = (os.path.join(d, f) for f in ("m.onnx", "x.npy", "l.npy"))
            make_mlp(m, x, l, sizes, acts, SAMPLES)

            def train(policy, budget=None):
                st = os.path.join(d, policy + ".json")
                out = os.path.join(d, policy + ".onnx")
                cmd = [weftc, "train", m, "--input", "x=" + x, "--labels", l,
                       "--optimizer", "sgd", "--lr", "0.02", "--steps",
                       str(SAMPLES), "--grid", grid.replace(" ", ""), "-o",
                       out, "--stats", st, "--checkpoints", policy]
                if budget:
                    cmd += ["--pe-memory", str(budget)]
                text = run(cmd)
                s = json.load(open(st))
                g = re.search(r"checkpoints \S+: (.*?) \(predicted (\d+) "
                              r"recompute cycles per sample", text)
                who = g.group(1)
                recomputing = ("—" if who.startswith("every layer") else
                               who.replace(" recompute their input", "")
                               .replace("@", ""))
                done = s["sample_done"]
                return {"who": recomputing, "predicted": int(g.group(2)),
                        "memory": s["memory_high_water_bytes"],
                        "busy": sum(p["ce_busy_cycles"] for p in s["pes"]),
                        "T": statistics.median(
                            b - a for a, b in zip(done, done[1:])),
                        "out": out}

            none = train("none")
            floor = train("every-1000")["memory"]
            rows = [("none", none), ("every-2", train("every-2")),
                    ("every-4", train("every-4")),
                    ("auto (%s)" % format(floor, ","), train("auto", floor))]
            for i, (name, r) in enumerate(rows):
                measured = (r["busy"] - none["busy"]) / SAMPLES
                err = ("—" if not measured else "%.2f %%" %
                       (100 * abs(r["predicted"] - measured) / measured))
                same = ("—" if i == 0 else "bit-identical"
                        if filecmp.cmp(r["out"], none["out"], shallow=False)
                        else "DIFFERENT")
                print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    "%s (%s)" % (sizes, grid.replace("x", " × ")) if i == 0
                    else "", name, r["who"], format(r["memory"], ","),
                    format(r["predicted"], ","), format(round(measured), ","),
                    err, format(round(r["T"]), ","), same))


if __name__ == "__main__":
    main()
