"""Training throughput against inference on the same fabric (docs/performance.md,
"Training").

    /usr/bin/python3 bench/train_throughput.py [--build build] [--grid 16x16]
                     [--samples 16] [--models 20-16-12-5:relu,relu,none ...]

For each MLP (made by test/models/gen_dense.py with seed 2, samples by
test/e2e/Inputs/train_torch.py with seed 3) runs `weftc run` (inference) and
`weftc train` with sgd, mbgd (batch 4) and cpgd on the same samples, and
prints a markdown table: T = the mean interval between the samples'
outputs (`sample_done` of the statistics) over the middle half of the
samples, the whole run's cycles, training
samples per million cycles (steady state, 10^6 / T), training / inference
throughput, and the fullest PE's memory high-water mark.
"""
import argparse
import json
import os
import re
import tempfile

from trainbench import ROOT, make_mlp, run


def figures(stats_path):
    s = json.load(open(stats_path))
    done = s["sample_done"]
    # The steady state: the mean interval over the middle half of the
    # samples (a pipelined schedule may deliver its outputs unevenly, e.g.
    # in pairs, so no single interval is the period; the first quarter
    # fills the pipeline, the last drains it).
    n = len(done)
    a, b = n // 4, (3 * n) // 4
    return {"T": (done[b] - done[a]) / (b - a) if b > a else float("nan"),
            "cycles": s["cycles"],
            "memory": s["memory_high_water_bytes"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--grid", default="16x16")
    ap.add_argument("--samples", type=int, default=32)
    ap.add_argument("--models", nargs="*", default=[
        "20-16-12-5:relu,relu,none", "64-32-10:relu,none",
        "256-128-64-10:tanh,relu,none", "784-256-128-10:relu,relu,none"])
    args = ap.parse_args()
    weftc = os.path.join(args.build, "bin", "weftc")
    n = args.samples
    print("| MLP | inference T | SGD T | MBGD (B = 4) T | CPGD T | CPGD cycles "
          "(%d samples) |" % n + " CPGD samples / Mcycle | CPGD / inference | SGD / "
          "inference | CPGD utilization | memory: inference, SGD, CPGD (bytes) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for spec in args.models:
            sizes, acts = spec.split(":")
            m, x, l = (os.path.join(d, f) for f in ("m.onnx", "x.npy", "l.npy"))
            make_mlp(m, x, l, sizes, acts, n)
            st = os.path.join(d, "s.json")
            run([weftc, "run", m, "--input", "x=" + x, "--samples", str(n),
                 "--grid", args.grid, "--stats", st])
            inf = figures(st)
            res = {}
            for opt, extra in (("sgd", ["--steps", str(n)]),
                               ("mbgd", ["--batch", "4", "--steps",
                                         str(n // 4)]),
                               ("cpgd", ["--steps", str(n)]),
                               # MBGD one sample at a time (what weftc runs
                               # with reverse checkpoints): "gated".
                               ("gated", ["--batch", "4", "--steps",
                                          str(n // 4), "--checkpoints",
                                          "auto"])):
                text = run([weftc, "train", m, "--input", "x=" + x, "--labels", l,
                     "--optimizer", "mbgd" if opt == "gated" else opt,
                     "--lr", "0.01", "--grid", args.grid,
                     "-o", os.path.join(d, "t.onnx"), "--stats", st] + extra)
                res[opt] = figures(st)
                u = re.search(r"training step: .* utilization ([0-9.]+)%", text)
                res[opt]["U"] = float(u.group(1)) if u else float("nan")
            c = res["cpgd"]
            print("| %s, %s | %.0f | %.0f | %.0f (gated %.0f) | %.0f | %d | %.0f | "
                  "%.2f | %.3f | %.2f %% | %d, %d, %d |" % (
                      sizes, acts.replace(",none", ""), inf["T"],
                      res["sgd"]["T"], res["mbgd"]["T"], res["gated"]["T"],
                      c["T"], c["cycles"],
                      1e6 / c["T"], inf["T"] / c["T"],
                      inf["T"] / res["sgd"]["T"], c["U"], inf["memory"],
                      res["sgd"]["memory"], c["memory"]))


if __name__ == "__main__":
    main()
