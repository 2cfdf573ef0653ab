"""Checks a `weftc train --checkpoints auto --pe-memory B` run against the
same training with every input stored (docs/training.md, "Reverse
checkpoints"): every PE's simulated memory high-water within B, and the
recompute cycles (the CE busy cycles the run adds, summed over the PEs)
within 2% of what --weft-select-checkpoints predicted (weftc's report:
"... N in all)"). Prints one line per check; exits 1 on a failure."""

import argparse
import json
import re
import sys


def busy(stats):
    return sum(p["ce_busy_cycles"] for p in stats["pes"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stored", help="stats of the run that stores everything")
    ap.add_argument("auto", help="stats of the run under the budget")
    ap.add_argument("report", help="weftc train's output of that run")
    ap.add_argument("--budget", type=int, required=True)
    args = ap.parse_args()
    stored = json.load(open(args.stored))
    auto = json.load(open(args.auto))
    report = open(args.report).read()
    ok = True

    high = max(p["memory_high_water_bytes"] for p in auto["pes"])
    before = max(p["memory_high_water_bytes"] for p in stored["pes"])
    if high <= args.budget < before:
        print(f"HIGH-WATER OK: {high} <= {args.budget} < {before} bytes")
    else:
        print(f"HIGH-WATER BAD: {high} with the budget {args.budget}, "
              f"{before} storing everything")
        ok = False

    m = re.search(r"predicted \d+ recompute cycles per sample, (\d+) in all",
                  report)
    if not m:
        print("no prediction in the report")
        return 1
    predicted = int(m.group(1))
    measured = busy(auto) - busy(stored)
    err = abs(measured - predicted) / max(predicted, 1)
    if predicted > 0 and err <= 0.02:
        print(f"RECOMPUTE OK: measured {measured}, predicted {predicted} "
              f"({100 * err:.2f}%)")
    else:
        print(f"RECOMPUTE BAD: measured {measured}, predicted {predicted} "
              f"({100 * err:.2f}%)")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
