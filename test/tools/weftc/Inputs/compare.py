#!/usr/bin/env python3
# ===- compare.py - Compare tensor files with weft's rule -------------------===#
#
# Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
#
# ===-----------------------------------------------------------------------===#
#
# compare.py GOT WANT [--rtol R] [--atol A]: loads two .npy or .pb tensors and
# checks |got - want| <= atol + rtol * |want| elementwise (NaN equals NaN,
# integers exact). Prints "match <shape> <dtype>" or the first mismatch and
# exits 1.
#
# ===-----------------------------------------------------------------------===#
import argparse
import sys

import numpy as np
from onnx import TensorProto, numpy_helper


def load(path):
    if path.endswith(".pb"):
        t = TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t)
    return np.load(path)


p = argparse.ArgumentParser()
p.add_argument("got")
p.add_argument("want")
p.add_argument("--rtol", type=float, default=1e-5)
p.add_argument("--atol", type=float, default=1e-6)
args = p.parse_args()
got, want = load(args.got), load(args.want)
if got.dtype != want.dtype or got.shape != want.shape:
    print("MISMATCH %s%s vs %s%s" % (got.dtype, got.shape, want.dtype, want.shape))
    sys.exit(1)
if np.issubdtype(want.dtype, np.floating):
    ok = np.isclose(got, want, rtol=args.rtol, atol=args.atol, equal_nan=True)
else:
    ok = got == want
if not ok.all():
    i = np.unravel_index(np.argmin(ok), ok.shape)
    print("MISMATCH at %s: got %r, want %r" % (i, got[i], want[i]))
    sys.exit(1)
print("match %s %s" % (list(want.shape), want.dtype))
