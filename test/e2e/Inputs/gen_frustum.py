#!/usr/bin/python3
# ===- gen_frustum.py - Conv stacks for the frustum e2e tests --------------===#
#
# Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
#
# ===-----------------------------------------------------------------------===#
#
#   gen_frustum.py KIND DIR
#
# Writes DIR/m.onnx (a torch model with seeded random weights, exported to
# ONNX), two seeded inputs DIR/x1.npy and DIR/x2.npy and torch's outputs for
# them, DIR/t1.npy and DIR/t2.npy, and three samples at once, DIR/x3.npy
# and DIR/t3.npy (docs/frustum.md, "The lowering").
#
#   vgg      a VGG-style stack: conv 3->8 3x3 pad 1 + BN + ReLU, conv 8->8
#            3x3 pad 1 + BN + ReLU, conv 8->16 3x3 pad 1 + ReLU     (16x16)
#   vgg-pool conv 3->8, 8->8 3x3 pad 1 + ReLU, MaxPool 2, conv 8->16 3x3
#            pad 1 + ReLU, MaxPool 3 stride 2 (overlapping windows)  (16x16)
#   strided  conv 4->8 3x3 pad 1 + ReLU, conv 8->8 3x3 stride 2 pad 1 +
#            ReLU, conv 8->8 1x1 (7 output rows: the program unrolls two
#            samples)                                             (13x14)
#   stem-pool  a ResNet-style stem: conv 3->8 5x5 stride 2 pad 2 (no ReLU:
#            negative values reach the pool's pads), MaxPool 3 stride 2
#            pad 1, conv 8->8 3x3 pad 1 + ReLU                    (20x18)
#   block    a stem conv 3->8 3x3 pad 1 + ReLU, then an identity residual
#            block: conv 8->8 3x3 pad 1 + ReLU, conv 8->8 3x3 pad 1, the
#            add of the block's input, ReLU                      (12x12)
#
# ===-----------------------------------------------------------------------===#

import sys

import numpy as np
import torch
from torch import nn


def model(kind):
    if kind == "vgg":
        return nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU()), (1, 3, 16, 16)
    if kind == "strided":
        return nn.Sequential(
            nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(),
            nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(8, 8, 1)), (1, 4, 13, 14)
    if kind == "vgg-pool":
        return nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
            nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(3, stride=2)), (1, 3, 16, 16)
    if kind == "stem-pool":
        return nn.Sequential(
            nn.Conv2d(3, 8, 5, stride=2, padding=2),
            nn.MaxPool2d(3, stride=2, padding=1),
            nn.Conv2d(8, 8, 3, padding=1), nn.ReLU()), (1, 3, 20, 18)
    if kind == "block":
        return Block(), (1, 3, 12, 12)
    raise SystemExit(f"unknown model kind '{kind}'")


class Block(nn.Module):
    """A stem convolution and a basic residual block (identity skip)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        return torch.relu(self.conv2(torch.relu(self.conv1(x))) + x)


def main():
    kind, out = sys.argv[1], sys.argv[2]
    torch.manual_seed(7)
    m, shape = model(kind)
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 2.0)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.2, 0.2)
    m.eval()
    torch.onnx.export(m, torch.zeros(shape), out + "/m.onnx", opset_version=13,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    for i in (1, 2):
        x = np.random.default_rng(i).standard_normal(shape).astype(np.float32)
        np.save(f"{out}/x{i}.npy", x)
        with torch.no_grad():
            np.save(f"{out}/t{i}.npy", m(torch.from_numpy(x)).numpy())
    x = np.random.default_rng(3).standard_normal((3,) + shape[1:])
    x = x.astype(np.float32)
    np.save(f"{out}/x3.npy", x)
    with torch.no_grad():
        np.save(f"{out}/t3.npy", m(torch.from_numpy(x)).numpy())


if __name__ == "__main__":
    main()
