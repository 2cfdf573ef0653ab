#!/usr/bin/python3
# ===- gen_torchvision.py - torchvision architectures for the e2e tests ----===#
#
# Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
#
# ===-----------------------------------------------------------------------===#
#
#   gen_torchvision.py ARCH SIZE DIR [GAMMA_LO GAMMA_HI]
#
# Exports torchvision's ARCH (resnet18, mobilenet_v2, ...) with seeded random
# weights and batch-norm statistics at SIZE x SIZE to DIR/m.onnx (input `x`,
# output `y`), with two seeded inputs DIR/x1.npy, DIR/x2.npy and what torch
# computes for them, DIR/t1.npy, DIR/t2.npy. Nothing large is committed: the
# models are made when the tests run. The batch norms' scales are drawn from
# [GAMMA_LO, GAMMA_HI] (default 0.5 to 1): networks without a residual path
# on every block (MobileNetV2) need larger ones, or their activations fade
# and two inputs give nearly the same outputs.
# ===-----------------------------------------------------------------------===#
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision


def main():
    arch, size, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    lo, hi = (float(sys.argv[4]), float(sys.argv[5])) if len(sys.argv) > 5 else (0.5, 1.0)
    torch.manual_seed(11)
    m = getattr(torchvision.models, arch)(weights=None)
    # Batch norms with non-trivial statistics, so folding them matters.
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.2, 0.2)
            mod.running_var.uniform_(0.5, 1.5)
            mod.weight.data.uniform_(lo, hi)
            mod.bias.data.uniform_(-0.1, 0.1)
    m.eval()
    shape = (1, 3, size, size)
    torch.onnx.export(m, torch.zeros(shape), out + "/m.onnx", opset_version=13,
                      input_names=["x"], output_names=["y"])
    for i in (1, 2):
        x = np.random.default_rng(i).standard_normal(shape).astype(np.float32)
        np.save(f"{out}/x{i}.npy", x)
        with torch.no_grad():
            np.save(f"{out}/t{i}.npy", m(torch.from_numpy(x)).numpy())


if __name__ == "__main__":
    main()
