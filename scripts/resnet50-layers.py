#!/usr/bin/python3
# Simulates ResNet-50 (224 x 224, compiled for the full 750 x 994 fabric)
# slice by slice and compares every kernel's simulated cycles per sample
# with the cost model's prediction (docs/performance.md, "Real
# architectures: ResNet-18 and ResNet-50").
#
# The whole network does not fit the simulator on a small machine, so each
# slice (the stem with its max pool, every bottleneck block, the head) is
# compiled with `weftc run --only-kernels FIRST..LAST`: partitioning decides
# the layout of the whole network on 750 x 994 and --weft-extract-kernels
# keeps the slice's kernels exactly as decided, fed by the host
# (docs/weftc.md, "Slices").
#
#   /usr/bin/python3 scripts/resnet50-layers.py [--build build]
#       [--work /tmp/resnet50-layers] [--merge-lanes] [--samples 2]
#       [--slices stem,layer1.0,...] [--markdown FILE]
#
# Prints one line per kernel (layout, predicted, simulated, error), one per
# slice (seconds and peak RSS of its `weftc run`), and the summary: the
# largest and median errors and the whole network's predicted interval
# against the largest simulated per-kernel cycles. Needs torch, torchvision
# and onnx (/usr/bin/python3).

import argparse
import os
import re
import statistics
import subprocess
import sys


def export(path):
    import warnings

    import torch
    import torchvision

    warnings.filterwarnings("ignore")
    torch.manual_seed(11)
    m = torchvision.models.resnet50(weights=None).eval()
    torch.onnx.export(m, torch.zeros(1, 3, 224, 224), path, opset_version=13,
                      input_names=["x"], output_names=["y"])


def time_figures(text):
    """(seconds, peak RSS in MB) from the report of /usr/bin/time -v."""
    secs = rss = 0.0
    m = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)",
                  text)
    if m:
        secs = (int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 +
                float(m.group(3)))
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if m:
        rss = int(m.group(1)) / 1024
    return secs, rss


def timed(cmd):
    """Runs cmd under /usr/bin/time -v: (stdout, seconds, peak RSS in MB);
    stdout is None when it fails."""
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True,
                       text=True)
    secs, rss = time_figures(p.stderr)
    if p.returncode != 0:
        print("failed (%d): %s\n%s%s" % (p.returncode, " ".join(cmd),
                                          p.stdout, p.stderr[-2000:]),
              flush=True)
        return None, secs, rss
    return p.stdout, secs, rss


KERNEL = re.compile(r'fabric\.kernel @"?([^" ]+)"? : .*? scheme #fabric\.(\w+)'
                    r'.* at <(\d+), (\d+), (\d+), (\d+)> attributes \{([^}]*)\}')


def kernels_of(mlir):
    """The partitioned kernels in the order partitioning laid them out."""
    ks = []
    for line in open(mlir):
        m = KERNEL.search(line)
        if not m:
            continue
        attrs = dict(re.findall(r"(\w+) = (\d+) : i64", m.group(7)))
        ks.append({"name": m.group(1), "kind": m.group(2),
                   "x": int(m.group(3)), "w": int(m.group(5)),
                   "h": int(m.group(6)),
                   "smear": int(attrs.get("smear", 1)),
                   "tiles": int(attrs.get("tiles", 1)),
                   "merge": int(attrs.get("merge", 1)),
                   "predicted": int(attrs.get("predicted_cycles", 0))})
    ks.sort(key=lambda k: k["x"])
    return ks


def signatures(mlir):
    """Per kernel name, its line of IR without its name, its weights' blob
    name and its first column: kernels of two slices whose signatures agree
    one by one are the same program but for the weights."""
    sig = {}
    for line in open(mlir):
        m = KERNEL.search(line)
        if m:
            text = line.replace(m.group(1), "")
            text = re.sub(r"dense_resource<[^>]*>", "", text)
            sig[m.group(1)] = re.sub(r" at <\d+, ", " at <", text)
    return sig


def slice_name(kernel):
    m = re.match(r"/layer\d+/(layer\d+\.\d+)/", kernel)
    if m:
        return m.group(1)
    return "stem" if kernel.startswith(("/conv1/", "/maxpool/")) else "head"


def layout(k):
    s = "%dx%d" % (k["w"], k["h"])
    if k["tiles"] > 1:
        s += ", %d bands" % k["tiles"]
    if k["merge"] > 1:
        s += ", merge %d" % k["merge"]
    return s


INTERVAL = re.compile(r"weftc: cycles per sample: predicted (\d+), simulated "
                      r"([\d.]+)")
RUN = re.compile(r"weftc: @(\S+): .* cycles per sample predicted (\d+), "
                 r"simulated ([\d.]+) \(busiest PE; error ([\d.]+)%; "
                 r"CE-busy ([\d.]+)\)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default="/tmp/resnet50-layers")
    ap.add_argument("--merge-lanes", action="store_true")
    ap.add_argument("--samples", type=int, default=2)
    ap.add_argument("--slices", default="",
                    help="comma-separated slice names (default: all)")
    ap.add_argument("--markdown", default="")
    ap.add_argument("--all", action="store_true",
                    help="simulate every slice, also those that repeat an "
                    "earlier slice's kernels and layouts")
    a = ap.parse_args()
    weftc = os.path.abspath(os.path.join(a.build, "bin", "weftc"))
    os.makedirs(a.work, exist_ok=True)
    model = os.path.join(a.work, "resnet50.onnx")
    if not os.path.exists(model):
        export(model)
    fabric = ["--grid", "750x994"] + (["--merge-lanes"] if a.merge_lanes else [])
    placed = os.path.join(a.work, "placed%s.mlir" %
                          ("-merged" if a.merge_lanes else ""))
    out, secs, rss = timed([weftc, "compile", model,
                            "--until-after=partition", "-o", placed] + fabric)
    if out is None:
        sys.exit(1)
    print("compile (until partition): %.1f s, %.0f MB" % (secs, rss))
    ks = kernels_of(placed)
    whole = max(k["predicted"] for k in ks)
    print("%d kernels; the whole network's predicted interval: %d cycles"
          % (len(ks), whole))
    slices = []
    for i, k in enumerate(ks):
        n = slice_name(k["name"])
        if not slices or slices[-1][0] != n:
            slices.append([n, i, i])
        slices[-1][2] = i
    # weft-sim under /usr/bin/time of its own: weftc's peak RSS is its
    # compile's.
    simTime = os.path.join(a.work, "weft-sim.time")
    wrapper = os.path.join(a.work, "weft-sim")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec /usr/bin/time -v -o %s %s \"$@\"\n" %
                (simTime, os.path.join(os.path.dirname(weftc), "weft-sim")))
    os.chmod(wrapper, 0o755)
    # A block that repeats an earlier one (same kernels, layouts and
    # predictions; only the weights and the columns differ) compiles to the
    # same program once moved to column 0, and the simulator's timing does
    # not depend on values: it is reported with the earlier block's figures
    # (checked: layer1.1 and layer1.2 simulate alike to the cycle).
    sig = signatures(placed)
    firstOf, sameAs = {}, {}
    for n, first, last in slices:
        key = tuple(sig[k["name"]] for k in ks[first:last + 1])
        if key in firstOf and not a.all:
            sameAs[n] = firstOf[key]
        else:
            firstOf.setdefault(key, n)
    measured, copied = {}, []
    wanted = set(filter(None, a.slices.split(",")))
    rows, runs, failed, intervals = [], [], [], []
    for n, first, last in slices:
        if wanted and n not in wanted:
            continue
        if n in sameAs:
            rep = sameAs[n]
            if rep not in measured:
                continue
            print("slice %s (kernels %d..%d): as %s" % (n, first, last, rep),
                  flush=True)
            copied.append(n)
            for k, s in zip(ks[first:last + 1], measured[rep]):
                err = 100 * abs(k["predicted"] - s) / s if s else float("nan")
                rows.append((k, s, err, rep))
            continue
        out, secs, rss = timed([weftc, "run", model, "--only-kernels",
                                "%d..%d" % (first, last), "--samples",
                                str(a.samples), "--weft-sim", wrapper] +
                               fabric)
        simSecs, simRss = (time_figures(open(simTime).read())
                           if os.path.exists(simTime) else (0.0, 0.0))
        if os.path.exists(simTime):
            os.remove(simTime)
        runs.append((n, first, last, secs, rss, simSecs, simRss))
        if out is None:
            failed.append(n)
            continue
        sim = {m.group(1): (float(m.group(3)), float(m.group(4)))
               for m in RUN.finditer(out)}
        # The slice's own interval: its slowest kernel's pace plus any
        # waiting between its kernels.
        m = INTERVAL.search(out)
        if m:
            intervals.append((n, int(m.group(1)), float(m.group(2))))
            print("slice %s: interval predicted %s, simulated %s" %
                  (n, m.group(1), m.group(2)), flush=True)
        print("slice %s (kernels %d..%d): weftc run %.1f s, %.0f MB; "
              "weft-sim %.1f s, %.0f MB" %
              (n, first, last, secs, rss, simSecs, simRss), flush=True)
        measured[n] = []
        for k in ks[first:last + 1]:
            s, _ = sim.get(k["name"], (0.0, 0.0))
            measured[n].append(s)
            err = 100 * abs(k["predicted"] - s) / s if s else float("nan")
            rows.append((k, s, err, ""))
            print("  %-50s %-8s %-22s %9d %11.1f %6.1f%%" %
                  (k["name"], k["kind"], layout(k), k["predicted"], s, err),
                  flush=True)
    errs = sorted(r[2] for r in rows if r[2] == r[2])
    if not errs:
        return
    worst = sorted(rows, key=lambda r: -r[2] if r[2] == r[2] else 0)[:5]
    slowest = max(r[1] for r in rows)
    summary = [
        "kernels simulated: %d; error max %.1f%%, median %.1f%%" %
        (len(errs), errs[-1], statistics.median(errs)),
        "worst: " + ", ".join("%s %.1f%%" % (r[0]["name"], r[2])
                              for r in worst),
        "simulated: %d slices; %d more repeat one of them (same kernels, "
        "layouts and predictions) and take its figures" %
        (len(runs), len(copied)),
        "whole network: predicted interval %d, largest simulated per-kernel "
        "cycles %.1f (%s)" % (whole, slowest,
                              "%.1f%% apart" % (100 * abs(whole - slowest) /
                                                slowest)),
        "slices: %d; weftc run (compile and simulate) %.0f s in all, largest "
        "%.0f s, peak RSS up to %.0f MB; weft-sim %.0f s in all, largest "
        "%.0f s, peak RSS up to %.0f MB" %
        (len(runs), sum(r[3] for r in runs), max(r[3] for r in runs),
         max(r[4] for r in runs), sum(r[5] for r in runs),
         max(r[5] for r in runs), max(r[6] for r in runs)),
    ]
    if failed:
        summary.append("slices that failed: " + ", ".join(failed))
    for line in summary:
        print(line)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("| Kernel | Scheme | Layout | Predicted | Simulated | "
                    "Error |\n|---|---|---|--:|--:|--:|\n")
            for k, s, e, rep in rows:
                f.write("| `%s` | %s | %s | %d | %.1f%s | %.1f%% |\n" %
                        (k["name"], k["kind"], layout(k), k["predicted"], s,
                         " (as %s)" % rep if rep else "", e))
            f.write("\n| Slice | Kernels | weftc run s | weftc MB | "
                    "weft-sim s | weft-sim MB |\n|---|---|--:|--:|--:|--:|\n")
            for n, first, last, secs, rss, simSecs, simRss in runs:
                f.write("| %s | %d..%d | %.0f | %.0f | %.0f | %.0f |\n" %
                        (n, first, last, secs, rss, simSecs, simRss))
            f.write("\n| Slice | Interval predicted | Simulated | Above |\n"
                    "|---|--:|--:|--:|\n")
            for n, p, sv in intervals:
                f.write("| %s | %d | %.0f | %.1f%% |\n" %
                        (n, p, sv, 100 * (sv - p) / p))
            f.write("\n" + "\n".join("- " + s for s in summary) + "\n")


if __name__ == "__main__":
    main()
