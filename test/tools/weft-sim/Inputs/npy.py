#!/usr/bin/python3
"""Small numpy helper for the weft-sim lit tests.

  npy.py arange OUT N [--dtype float32|float16] [--start S] [--step T]
  npy.py random OUT N [--dtype ...] [--seed K]
  npy.py print FILE                 values on one line
  npy.py expect FILE EXPR NAME=FILE...   exact (bitwise) comparison with a
                                    numpy expression over the named arrays
"""
import sys
import numpy as np


def main(argv):
    cmd = argv[1]
    if cmd in ("arange", "random"):
        out, n = argv[2], int(argv[3])
        opts = dict(zip(argv[4::2], argv[5::2]))
        dtype = np.dtype(opts.get("--dtype", "float32"))
        if cmd == "arange":
            a = float(opts.get("--start", 0)) + float(opts.get("--step", 1)) * np.arange(n)
        else:
            a = np.random.default_rng(int(opts.get("--seed", 0))).standard_normal(n)
        np.save(out, a.astype(dtype))
        return 0
    if cmd == "print":
        a = np.load(argv[2])
        print(" ".join("%g" % v for v in a.reshape(-1)))
        return 0
    if cmd == "expect":
        got = np.load(argv[2])
        env = {"np": np}
        for kv in argv[4:]:
            k, v = kv.split("=", 1)
            env[k] = np.load(v)
        want = np.asarray(eval(argv[3], env)).astype(got.dtype)
        if got.shape != want.shape:
            print("MISMATCH shape %s vs %s" % (got.shape, want.shape))
            return 1
        bad = np.flatnonzero(got.view(np.uint8 if got.itemsize == 1 else
                                      "u%d" % got.itemsize).reshape(-1) !=
                             want.view("u%d" % want.itemsize).reshape(-1))
        if bad.size:
            i = bad[0]
            print("MISMATCH at %d: got %r want %r" % (i, got.reshape(-1)[i], want.reshape(-1)[i]))
            return 1
        print("EXACT %d elements" % got.size)
        return 0
    print("unknown command " + cmd)
    return 2


sys.exit(main(sys.argv))
