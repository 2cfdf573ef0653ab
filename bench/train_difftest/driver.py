#!/usr/bin/python3
# ===- driver.py - weftc train against torch on random CNNs ----------------===#
#
# Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
#
# ===-----------------------------------------------------------------------===#
"""driver.py FIRST_SEED COUNT DIR: a differential test of `weftc train`.

For each seed, gen_model.py builds a random small CNN (convolutions with
ReLU, 2x2 max pools, residual blocks, Flatten, dense layers); the driver
writes samples and labels (test/e2e/Inputs/train_torch.py data), trains it
with build/bin/weftc (SGD or MBGD, 16x16 or 32x32, chosen from the seed),
checks the trained initializers against torch (train_torch.py check: rtol
1e-4, atol 1e-6) and appends one JSON record a model to DIR/results.jsonl:
MATCH, REFUSAL (an error naming a node), MISMATCH, DEADLOCK, TIMEOUT or
CRASH, with the commands that reproduce it. docs/training.md ("Testing
against torch") has the figures of the last run. Not part of ctest: 104
models take about ten minutes on two cores.
"""
import json
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PY = "/usr/bin/python3"
WEFTC = os.path.join(REPO, "build", "bin", "weftc")
TT = os.path.join(REPO, "test", "e2e", "Inputs", "train_torch.py")
GEN = os.path.join(HERE, "gen_model.py")
ROOT = None  # DIR/runs


def sh(cmd, timeout=None):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return "timeout", (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""), ""


def run(seed):
    r = random.Random(seed * 7919 + 1)
    d = "%s/%d" % (ROOT, seed)
    rc, _, err = sh([PY, GEN, str(seed), d])
    if rc != 0:
        return {"seed": seed, "cls": "GENFAIL", "err": err[-800:]}
    desc = open(d + "/desc.txt").read().strip()
    samples = r.randint(4, 8)
    opt = r.choice(["sgd", "mbgd"])
    if opt == "sgd":
        batch, steps, lr = 1, samples, 0.05
    else:
        batch = r.choice([b for b in range(1, samples + 1) if samples % b == 0 and b > 1] or [1])
        steps, lr = samples // batch, 0.1
    grid = r.choice(["16x16", "16x16", "32x32"])
    sh([PY, TT, "data", d + "/m.onnx", d + "/x.npy", d + "/l.npy", "--samples", str(samples),
        "--seed", str(seed)])
    tcmd = ["timeout", "120", WEFTC, "train", d + "/m.onnx", "--input", "x=" + d + "/x.npy",
            "--labels", d + "/l.npy", "--optimizer", opt, "--lr", str(lr), "--steps", str(steps),
            "--grid", grid, "-o", d + "/t.onnx", "--no-progress"]
    if opt == "mbgd":
        tcmd[tcmd.index("--steps"):tcmd.index("--steps")] = ["--batch", str(batch)]
    ccmd = [PY, TT, "check", d + "/m.onnx", d + "/x.npy", d + "/l.npy", d + "/t.onnx",
            "--optimizer", opt, "--lr", str(lr), "--batch", str(batch), "--steps", str(steps)]
    rc, out, err = sh(tcmd, timeout=150)
    rec = {"seed": seed, "desc": desc, "opt": opt, "batch": batch, "steps": steps,
           "samples": samples, "grid": grid, "rc": rc, "stderr": err[-2000:],
           "stdout_tail": out[-600:], "train_cmd": " ".join(tcmd), "check_cmd": " ".join(ccmd)}
    if rc == 124 or rc == "timeout":
        rec["cls"] = "TIMEOUT"
    elif rc != 0:
        low = err.lower()
        if rc < 0 or rc >= 128 or "assert" in low or "stack dump" in low or "llvm error" in low:
            rec["cls"] = "CRASH"
        elif "deadlock" in low or "stall" in low or "cycles" in low and "simulat" in low:
            rec["cls"] = "DEADLOCK"
        elif "error:" in low:
            rec["cls"] = "REFUSAL"
        else:
            rec["cls"] = "CRASH"
    else:
        crc, cout, cerr = sh(ccmd, timeout=300)
        rec["check"] = (cout + cerr).strip()[-800:]
        if "TORCH MATCH" in cout:
            rec["cls"] = "MATCH"
        elif "did not change" in cout:
            rec["cls"] = "NOCHANGE"
        elif "MISMATCH" in cout:
            rec["cls"] = "MISMATCH"
        else:
            rec["cls"] = "CHECKERR"
    return rec


def main():
    global ROOT
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    first, count, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    ROOT = os.path.join(out, "runs")
    os.makedirs(ROOT, exist_ok=True)
    outp = os.path.join(out, "results.jsonl")
    with ThreadPoolExecutor(2) as ex, open(outp, "a") as f:
        for rec in ex.map(run, range(first, first + count)):
            f.write(json.dumps(rec) + "\n")
            f.flush()
            print(rec["seed"], rec["cls"], rec.get("desc", ""), rec.get("opt"),
                  rec.get("batch"), rec.get("grid"),
                  (rec.get("check") or rec.get("stderr") or "")[-200:].replace("\n", " / "),
                  flush=True)


if __name__ == "__main__":
    main()
