#!/usr/bin/python3
# Imports every model.onnx of the ONNX backend test data with
# `weft-translate --import-onnx` and sorts the outcomes: imported, rejected
# with a clean diagnostic (exit 1, an "error:" line), or crashed (signal,
# LLVM ERROR, stack dump, timeout). Exits non-zero on any crash.
#
#   import_survey.py BUILD/bin/weft-translate [DATA_DIR] [--verbose]
import collections
import os
import re
import subprocess
import sys

tool = sys.argv[1]
root = "/usr/share/libonnx-testdata/data"
verbose = "--verbose" in sys.argv
args = [a for a in sys.argv[2:] if not a.startswith("--")]
if args:
    root = args[0]
sets = ["node", "pytorch-converted", "pytorch-operator"]

totals = collections.Counter()
reasons = collections.Counter()
crashes = []
for s in sets:
    base = os.path.join(root, s)
    if not os.path.isdir(base):
        continue
    for test in sorted(os.listdir(base)):
        model = os.path.join(base, test, "model.onnx")
        if not os.path.exists(model):
            continue
        try:
            p = subprocess.run([tool, "--import-onnx", model, "-o", os.devnull],
                               capture_output=True, text=True, timeout=60)
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            rc, err = -1, "timeout"
        if rc == 0:
            outcome = "imported"
        elif rc == 1 and "error:" in err and "Stack dump" not in err \
                and "LLVM ERROR" not in err:
            outcome = "rejected"
            m = re.search(r"\): (.*)", err) or re.search(r"error: (.*)", err)
            reason = m.group(1) if m else err.strip()
            op = re.search(r"\((\w+)\): ", err)
            key = (op.group(1) + ": " if op else "") + re.sub(r"'[^']*'", "'…'", reason)
            reasons[key[:110]] += 1
        else:
            outcome = "crashed"
            crashes.append((s, test, err.strip().splitlines()[:3]))
        totals[(s, outcome)] += 1
        totals[outcome] += 1
        if verbose:
            print(f"{outcome:9} {s}/{test}")

for s in sets:
    n = sum(totals[(s, o)] for o in ("imported", "rejected", "crashed"))
    print(f"{s}: {n} models, {totals[(s, 'imported')]} imported, "
          f"{totals[(s, 'rejected')]} rejected cleanly, {totals[(s, 'crashed')]} crashed")
print(f"total: {totals['imported']} imported, {totals['rejected']} rejected, "
      f"{totals['crashed']} crashed")
if verbose:
    print("\nrejection reasons:")
    for r, n in reasons.most_common():
        print(f"{n:5}  {r}")
for s, t, e in crashes:
    print(f"CRASH {s}/{t}: {e}")
sys.exit(1 if crashes else 0)
