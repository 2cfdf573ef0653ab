"""Inputs for the sparse-activation tests and measurements.

  gen_sparse.py zero IN OUT FRACTION SEED
      IN with FRACTION of its elements (chosen at random, seeded) set to 0.
  gen_sparse.py mnist OUT N SEED
      N synthetic MNIST-like samples of 784 values in [0, 1]: a few random
      strokes (thick line segments) on a 28 x 28 black background, about
      80 % zeros like the real digits.
  gen_sparse.py prune IN OUT FRACTION [--first]
      The ONNX model IN with every weight matrix (initializer of rank 2), or
      with --first only the first one, magnitude-pruned: its FRACTION
      smallest |w| set to 0 (ties broken by position, so exactly
      round(FRACTION * size) zeros); biases untouched.
"""
import sys

import numpy as np


def zero(src, dst, fraction, seed):
    x = np.load(src)
    rng = np.random.default_rng(seed)
    flat = x.reshape(-1).copy()
    k = int(round(fraction * flat.size))
    flat[rng.choice(flat.size, size=k, replace=False)] = 0
    np.save(dst, flat.reshape(x.shape).astype(x.dtype))


def mnist(dst, n, seed):
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 28, 28), dtype=np.float32)
    yy, xx = np.mgrid[0:28, 0:28]
    for s in range(n):
        img = out[s]
        for _ in range(rng.integers(2, 5)):
            (x0, y0), (x1, y1) = rng.uniform(6, 22, size=(2, 2))
            t = np.clip(((xx - x0) * (x1 - x0) + (yy - y0) * (y1 - y0)) /
                        max(1e-6, (x1 - x0) ** 2 + (y1 - y0) ** 2), 0, 1)
            d = np.hypot(xx - (x0 + t * (x1 - x0)), yy - (y0 + t * (y1 - y0)))
            img[:] = np.maximum(img, np.clip(2.0 - d, 0, 1))
    np.save(dst, out.reshape(n, 784))


def prune(src, dst, fraction, first=False):
    import onnx
    from onnx import numpy_helper
    model = onnx.load(src)
    for i, init in enumerate(model.graph.initializer):
        w = numpy_helper.to_array(init)
        if w.ndim != 2:
            continue
        flat = w.reshape(-1).copy()
        k = int(round(fraction * flat.size))
        flat[np.argsort(np.abs(flat), kind="stable")[:k]] = 0
        model.graph.initializer[i].CopyFrom(
            numpy_helper.from_array(flat.reshape(w.shape), init.name))
        if first:
            break
    onnx.save(model, dst)


def main():
    what, args = sys.argv[1], sys.argv[2:]
    if what == "zero":
        zero(args[0], args[1], float(args[2]), int(args[3]))
    elif what == "prune":
        prune(args[0], args[1], float(args[2]), "--first" in args[3:])
    elif what == "mnist":
        mnist(args[0], int(args[1]), int(args[2]))
    else:
        sys.exit("gen_sparse.py: unknown command " + what)


if __name__ == "__main__":
    main()
