#!/usr/bin/env python3
"""Writes a seeded .npy tensor (no numpy needed) for the MPI tests.

  make-input.py OUT.npy DTYPE SHAPE SEED     DTYPE f32 or f16; SHAPE e.g. 3,64
Values are in [-1, 1], never closer to zero than 0.1 (like gen_dense.py).
"""
import random
import struct
import sys

out, dtype, shape, seed = sys.argv[1:5]
dims = [int(d) for d in shape.split(",")]
n = 1
for d in dims:
    n *= d
rng = random.Random(int(seed))
vals = [rng.choice((-1, 1)) * rng.uniform(0.1, 1.0) for _ in range(n)]
if dtype == "f32":
    descr, body = "<f4", struct.pack("<%df" % n, *vals)
elif dtype == "f16":
    descr, body = "<f2", struct.pack("<%de" % n, *vals)
else:
    sys.exit("dtype must be f32 or f16")
shape_txt = "(%s)" % (",".join(str(d) for d in dims) + ("," if len(dims) == 1 else ""))
header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_txt)
pad = 16 - (10 + len(header) + 1) % 16
header += " " * pad + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(body)
