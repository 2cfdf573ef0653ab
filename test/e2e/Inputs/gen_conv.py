#!/usr/bin/python3
# ===- gen_conv.py - Convolutional networks for the e2e tests --------------===#
#
# Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
#
# ===-----------------------------------------------------------------------===#
#
#   gen_conv.py KIND DIR
#
# Writes DIR/m.onnx (a torch model with seeded random weights, exported to
# ONNX), two seeded inputs DIR/x1.npy and DIR/x2.npy, and what torch
# computes for them, DIR/t1.npy and DIR/t2.npy, so that the fabric's outputs
# are checked against torch as well as against weft's host reference.
#
#   two-convs   conv 3->8 3x3 pad 1, ReLU, conv 8->16 3x3 stride 2 pad 1,
#               Flatten, Linear 10                                   (8x8)
#   dilated     conv 4->8 3x3 stride 2 dilation 2 pad 2, no bias, ReLU (9x11)
#   asym-pad    ZeroPad2d (left 1, right 0, top 2, bottom 1) then conv 3->4
#               2x3 stride (1, 2), ReLU                               (7x9)
#   conv1d      Conv1d 4->6 k3 pad 1, ReLU, Conv1d 6->4 k5 stride 2, Flatten,
#               Linear 5                                              (L 16)
#   pointwise   conv 8->16 1x1, ReLU, conv 16->8 1x1                  (5x5)
#   basic-block a ResNet basic block: conv 8->8 3x3 + BN + ReLU, conv 8->8
#               3x3 + BN, + x, ReLU                                   (6x6)
#   bottleneck  a ResNet-50 bottleneck block with a projection shortcut:
#               conv 8->4 1x1 + BN + ReLU, conv 4->4 3x3 stride 2 pad 1 +
#               BN + ReLU, conv 4->16 1x1 + BN; shortcut conv 8->16 1x1
#               stride 2 + BN; + , ReLU                               (8x8)
#   two-blocks  two basic blocks in a row; also writes DIR/h1.npy and
#               DIR/h2.npy, the first block's outputs (what the second one
#               reads)                                               (6x6)
#   inverted-residual
#               a MobileNetV2 inverted residual: conv 8->48 1x1 + BN +
#               ReLU6, depthwise 3x3 pad 1 + BN + ReLU6, conv 48->8 1x1 + BN,
#               + x                                                   (6x6)
#   dw-strided  depthwise 3x3 stride 2 pad 1, channel multiplier 2 (6->12),
#               no bias                                               (9x9)
#   dw-dilated  grouped conv 4->8 3x3 pad 1 in 2 groups + ReLU, then
#               ZeroPad2d (left 1, right 0, top 2, bottom 1) and depthwise
#               3x3 dilation 2 + ReLU                                 (9x10)
#   inception   GoogLeNet's block: 1x1 8->4; 1x1 8->4, 3x3 4->4; 1x1 8->2,
#               5x5 2->4; maxpool 3x3 stride 1 pad 1, 1x1 8->4 (each conv
#               + ReLU); Concat along the channels, conv 16->8 1x1      (8x8)
#   dw-bands    conv 3->4 3x3 + ReLU, depthwise 3x3 pad 1 + ReLU6, conv 4->8
#               1x1                                                (24x30)
#   fire        SqueezeNet's Fire module: squeeze 8->4 1x1, expand 4->16 1x1
#               and 3x3 (each + ReLU), Concat, conv 32->4 1x1        (15x15)
#   lenet       LeNet-5: conv 1->6 5x5 pad 2, ReLU, maxpool 2, conv 6->16
#               5x5, ReLU, maxpool 2, Flatten, Linear 400->120, ReLU,
#               Linear 120->84, ReLU, Linear 84->10 (4 samples)       (28x28)
#   train-convs conv 3->4 3x3 pad 1, ReLU, conv 4->8 3x3 pad 1, ReLU,
#               Flatten, Linear 5, any batch (weftc train)            (6x6)
#   train-block conv 3->4 3x3 pad 1 + ReLU, then a basic block without
#               batch norms (conv 4->4 3x3 + ReLU, conv 4->4 3x3, + its
#               input, ReLU), Flatten, Linear 5, any batch             (6x6)
#   train-block-wide
#               the same with 2 channels on 12x12 (the Add takes its
#               inputs row by row)                                  (12x12)
#   train-pool-ties
#               conv 1->2 1x1 pad 2 with a positive bias + ReLU, maxpool 2,
#               Flatten, Linear 3: ties in the pool's windows          (4x4)
#   train-pool-block
#               conv 1->4 3x3 pad 1 + ReLU, maxpool 2, a basic block on
#               its output, Flatten, Linear 3, any batch              (8x8)
#   train-down  conv 3->4 3x3 pad 1 + ReLU, then a downsampling basic
#               block without batch norms (conv 4->8 3x3 stride 2 + ReLU,
#               conv 8->8 3x3; shortcut conv 4->8 1x1 stride 2; +, ReLU),
#               Flatten, Linear 5, any batch                          (8x8)
#   train-strided
#               conv 2->4 3x3 stride 2 dilation (1, 2) pad (1, 2) no
#               bias, ReLU, conv 4->4 2x3 pad (0, 1), ReLU, Flatten,
#               Linear 3, any batch                                   (9x8)
#   shuffle     ShuffleNetV2 units (torchvision's): stride 2 8->16, then
#               two of stride 1 16->16 (channel split, Concat, channel
#               shuffle), conv 16->8 1x1                              (12x12)
# ===-----------------------------------------------------------------------===#
import sys

import numpy as np
import torch
import torch.nn as nn


class Basic(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        return torch.relu(self.b2(self.c2(y)) + x)


class Bottleneck(nn.Module):
    """ResNet-50's block where it downsamples: 1x1, 3x3 stride 2, 1x1, and a
    strided 1x1 projection on the shortcut."""

    def __init__(self, c, mid, out):
        super().__init__()

        def conv_bn(i, o, k, stride=1):
            return nn.Sequential(nn.Conv2d(i, o, k, stride=stride,
                                           padding=k // 2, bias=False),
                                 nn.BatchNorm2d(o))
        self.reduce = nn.Sequential(conv_bn(c, mid, 1), nn.ReLU())
        self.conv = nn.Sequential(conv_bn(mid, mid, 3, 2), nn.ReLU())
        self.expand = conv_bn(mid, out, 1)
        self.shortcut = conv_bn(c, out, 1, 2)

    def forward(self, x):
        y = self.expand(self.conv(self.reduce(x)))
        return torch.relu(y + self.shortcut(x))


class InvertedResidual(nn.Module):
    """MobileNetV2's block with stride 1 and as many channels out as in."""

    def __init__(self, c, expand):
        super().__init__()
        h = c * expand
        self.expand = nn.Sequential(nn.Conv2d(c, h, 1, bias=False),
                                    nn.BatchNorm2d(h), nn.ReLU6())
        self.dw = nn.Sequential(nn.Conv2d(h, h, 3, padding=1, groups=h,
                                          bias=False),
                                nn.BatchNorm2d(h), nn.ReLU6())
        self.project = nn.Sequential(nn.Conv2d(h, c, 1, bias=False),
                                     nn.BatchNorm2d(c))

    def forward(self, x):
        return x + self.project(self.dw(self.expand(x)))


class Inception(nn.Module):
    """GoogLeNet's block: four branches concatenated along the channels."""

    def __init__(self, c):
        super().__init__()

        def conv(i, o, k):
            return nn.Sequential(nn.Conv2d(i, o, k, padding=k // 2),
                                 nn.ReLU())
        self.b1 = conv(c, 4, 1)
        self.b2 = nn.Sequential(conv(c, 4, 1), conv(4, 4, 3))
        self.b3 = nn.Sequential(conv(c, 2, 1), conv(2, 4, 5))
        self.b4 = nn.Sequential(nn.MaxPool2d(3, stride=1, padding=1),
                                conv(c, 4, 1))
        self.out = nn.Conv2d(16, 8, 1)

    def forward(self, x):
        return self.out(torch.cat([self.b1(x), self.b2(x), self.b3(x),
                                   self.b4(x)], 1))


class Fire(nn.Module):
    """SqueezeNet's Fire module, then a 1x1 convolution of its concat."""

    def __init__(self, c, squeeze, expand):
        super().__init__()
        self.squeeze = nn.Sequential(nn.Conv2d(c, squeeze, 1), nn.ReLU())
        self.e1 = nn.Sequential(nn.Conv2d(squeeze, expand, 1), nn.ReLU())
        self.e3 = nn.Sequential(nn.Conv2d(squeeze, expand, 3, padding=1),
                                nn.ReLU())
        self.out = nn.Conv2d(2 * expand, 4, 1)

    def forward(self, x):
        s = self.squeeze(x)
        return self.out(torch.cat([self.e1(s), self.e3(s)], 1))


class SqueezeExcite(nn.Module):
    """A convolution, then two squeeze-and-excitation blocks: x * s with a
    Sigmoid scale (EfficientNet's), then s * x with a Hardsigmoid one
    (MobileNetV3's), s = act(conv1x1(relu(conv1x1(GlobalAveragePool(x)))))."""

    def __init__(self, c, squeeze):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(4, c, 3, padding=1), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.se1 = nn.Sequential(nn.Conv2d(c, squeeze, 1), nn.ReLU(),
                                 nn.Conv2d(squeeze, c, 1), nn.Sigmoid())
        self.se2 = nn.Sequential(nn.Conv2d(c, squeeze, 1), nn.ReLU(),
                                 nn.Conv2d(squeeze, c, 1), nn.Hardsigmoid())

    def forward(self, x):
        x = self.conv(x)
        x = x * self.se1(self.pool(x))
        return self.se2(self.pool(x)) * x


class Merge(nn.Module):
    """A convolution of 16 output channels, read by a 16 -> 16 convolution
    and by the join after it: on a fabric narrower than 16 columns the
    second convolution merges the first one's lanes into fewer columns,
    and the join's copy of them passes its merge PEs."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x):
        h = torch.relu(self.conv1(x))
        return torch.relu(self.conv2(h) + h)


class TrainBlock(nn.Module):
    """A stem convolution (3 -> c), a basic block without batch norms on
    c channels, Linear 5."""

    def __init__(self, c=4, side=6):
        super().__init__()
        self.stem = nn.Conv2d(3 if c == 4 else c, c, 3, padding=1)
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.fc = nn.Linear(c * side * side, 5)

    def forward(self, x):
        h = torch.relu(self.stem(x))
        y = torch.relu(self.conv2(torch.relu(self.conv1(h))) + h)
        return self.fc(torch.flatten(y, 1))


class TrainPoolBlock(nn.Module):
    """conv 1->4 3x3 + ReLU, maxpool 2, a basic block on its output,
    Linear 3."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 4, 3, padding=1)
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        h = nn.functional.max_pool2d(torch.relu(self.stem(x)), 2)
        y = torch.relu(self.conv2(torch.relu(self.conv1(h))) + h)
        return self.fc(torch.flatten(y, 1))


class TrainDown(nn.Module):
    """A stem and a downsampling basic block without batch norms."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.conv1 = nn.Conv2d(4, 8, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.proj = nn.Conv2d(4, 8, 1, stride=2)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        h = torch.relu(self.stem(x))
        y = torch.relu(self.conv2(torch.relu(self.conv1(h))) + self.proj(h))
        return self.fc(torch.flatten(y, 1))


class Shuffle(nn.Module):
    """ShuffleNetV2's units: one of stride 2, two of stride 1 (each ends in
    a channel shuffle; the stride-1 ones split the channels first), then a
    1x1 convolution that reads all channels."""

    def __init__(self):
        super().__init__()
        from torchvision.models.shufflenetv2 import InvertedResidual as Unit
        self.units = nn.Sequential(Unit(8, 16, 2), Unit(16, 16, 1),
                                   Unit(16, 16, 1))
        self.out = nn.Conv2d(16, 8, 1)

    def forward(self, x):
        return self.out(self.units(x))


def model(kind):
    if kind == "two-convs":
        return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                             nn.Conv2d(8, 16, 3, stride=2, padding=1),
                             nn.Flatten(), nn.Linear(16 * 4 * 4, 10)), (2, 3, 8, 8)
    if kind == "dilated":
        return nn.Sequential(nn.Conv2d(4, 8, 3, stride=2, dilation=2, padding=2,
                                       bias=False), nn.ReLU()), (2, 4, 9, 11)
    if kind == "asym-pad":
        return nn.Sequential(nn.ZeroPad2d((1, 0, 2, 1)),
                             nn.Conv2d(3, 4, (2, 3), stride=(1, 2)),
                             nn.ReLU()), (2, 3, 7, 9)
    if kind == "conv1d":
        return nn.Sequential(nn.Conv1d(4, 6, 3, padding=1), nn.ReLU(),
                             nn.Conv1d(6, 4, 5, stride=2), nn.Flatten(),
                             nn.Linear(4 * 6, 5)), (3, 4, 16)
    if kind == "pointwise":
        return nn.Sequential(nn.Conv2d(8, 16, 1), nn.ReLU(),
                             nn.Conv2d(16, 8, 1)), (2, 8, 5, 5)
    if kind == "basic-block":
        return Basic(8), (2, 8, 6, 6)
    if kind == "bottleneck":
        return Bottleneck(8, 4, 16), (2, 8, 8, 8)
    if kind == "two-blocks":
        return nn.Sequential(Basic(8), Basic(8)), (2, 8, 6, 6)
    if kind == "inverted-residual":
        return InvertedResidual(8, 6), (2, 8, 6, 6)
    if kind == "dw-strided":
        return nn.Sequential(nn.Conv2d(6, 12, 3, stride=2, padding=1,
                                       groups=6, bias=False)), (2, 6, 9, 9)
    if kind == "dw-dilated":
        return nn.Sequential(nn.Conv2d(4, 8, 3, padding=1, groups=2),
                             nn.ReLU(), nn.ZeroPad2d((1, 0, 2, 1)),
                             nn.Conv2d(8, 8, 3, dilation=2, groups=8),
                             nn.ReLU()), (2, 4, 9, 10)
    if kind == "inception":
        return Inception(8), (2, 8, 8, 8)
    if kind == "fire":
        return Fire(8, 4, 16), (2, 8, 15, 15)
    if kind == "shuffle":
        return Shuffle(), (2, 8, 12, 12)
    if kind == "lenet":
        return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(400, 120), nn.ReLU(),
                             nn.Linear(120, 84), nn.ReLU(),
                             nn.Linear(84, 10)), (4, 1, 28, 28)
    if kind == "train-convs":
        # weftc train: two trained convolutions (the second sends the
        # gradient of its input) and a dense layer after the Flatten.
        return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(),
                             nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(),
                             nn.Flatten(), nn.Linear(8 * 6 * 6, 5)), \
            (1, 3, 6, 6)
    if kind == "train-block":
        # weftc train: a stem convolution, a ResNet basic block without
        # batch norms (conv, ReLU, conv, + the block's input, ReLU) and a
        # dense layer.
        return TrainBlock(), (1, 3, 6, 6)
    if kind == "train-block-wide":
        # weftc train: a basic block on a map large enough that the path's
        # queues cannot hold the rows the skip runs ahead: the Add must
        # take the two inputs row by row.
        return TrainBlock(c=2, side=12), (1, 2, 12, 12)
    if kind == "train-pool-ties":
        # weftc train: a 1x1 convolution with zero padding and a positive
        # bias, so its output's border is a constant above 0 and the 2x2
        # max pool's windows there hold exact ties (torch gives the
        # gradient to the first maximum).
        conv = nn.Conv2d(1, 2, 1, padding=2)
        with torch.no_grad():
            conv.bias.uniform_(0.1, 0.5)
        return nn.Sequential(conv, nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(2 * 4 * 4, 3)), (1, 1, 4, 4)
    if kind == "train-pool-block":
        # weftc train: a max pool feeding a residual block (it adds the
        # gradients of the block's two paths).
        return TrainPoolBlock(), (1, 1, 8, 8)
    if kind == "train-down":
        # weftc train: a stem and a downsampling basic block without batch
        # norms (conv 4->8 3x3 stride 2 + ReLU, conv 8->8 3x3; shortcut
        # conv 4->8 1x1 stride 2; +, ReLU), Linear 5.
        return TrainDown(), (1, 3, 8, 8)
    if kind == "train-strided":
        # weftc train: a strided, dilated first convolution without a bias
        # (it sends no input gradient), a second one of stride 1 with a 2x3
        # window, then a dense layer.
        return nn.Sequential(nn.Conv2d(2, 4, 3, stride=2, dilation=(1, 2),
                                       padding=(1, 2), bias=False), nn.ReLU(),
                             nn.Conv2d(4, 4, (2, 3), padding=(0, 1)),
                             nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 3)), \
            (1, 2, 9, 8)
    if kind == "squeeze-excite":
        return SqueezeExcite(8, 4), (2, 4, 6, 6)
    if kind == "dw-bands":
        # A depthwise convolution of 4 channels on a 24x30 map: one column
        # of at most 4 PEs unless its output columns are cut into bands.
        return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(),
                             nn.Conv2d(4, 4, 3, padding=1, groups=4),
                             nn.ReLU6(), nn.Conv2d(4, 8, 1)), (2, 3, 24, 30)
    if kind == "stem":
        # A ResNet-like stem whose 3 input channels leave a 16x16 fabric
        # idle unless its output columns are cut into bands, then a strided
        # 1x1 convolution that reads every other input column.
        return nn.Sequential(nn.Conv2d(3, 16, 7, stride=2, padding=3),
                             nn.ReLU(), nn.Conv2d(16, 8, 1, stride=2)), \
            (2, 3, 32, 34)
    if kind == "pool-bands":
        # A 3x3 stride-2 max pool (pad 1) that sets the pace on a map whose
        # width is odd, then a 1x1 convolution: the pool's output columns
        # are cut into bands, each band reading its columns and a halo.
        return nn.Sequential(nn.MaxPool2d(3, 2, 1), nn.Conv2d(16, 8, 1)), \
            (2, 16, 32, 35)
    if kind == "merge":
        return Merge(), (2, 4, 6, 7)
    if kind == "merge-short":
        # 16 lanes into a convolution of 2 output channels: its columns'
        # turn PEs (rows 0, 4, 8, 12 with 4 lanes a column) lie below its
        # 2 rows and only turn their input north.
        return nn.Sequential(nn.Conv2d(4, 16, 3, padding=1), nn.ReLU(),
                             nn.Conv2d(16, 2, 3, padding=1)), (2, 4, 6, 7)
    if kind == "fused-act":
        # Activations other than ReLU fused into the convolutions that
        # produce them: SiLU after a 3x3 convolution (with a batch norm),
        # HardSwish after a depthwise one, Sigmoid after a 1x1 one.
        return nn.Sequential(nn.Conv2d(4, 8, 3, padding=1, bias=False),
                             nn.BatchNorm2d(8), nn.SiLU(),
                             nn.Conv2d(8, 8, 3, padding=1, groups=8),
                             nn.Hardswish(), nn.Conv2d(8, 6, 1),
                             nn.Sigmoid()), (2, 4, 7, 8)
    if kind == "fused-act-more":
        # More activations fused as epilogues: LeakyRelu after a 3x3
        # convolution, Softplus after a depthwise one, Hardtanh (a Clip)
        # and Softsign after 1x1 ones, Tanh after a last 3x3.
        return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1),
                             nn.LeakyReLU(0.1),
                             nn.Conv2d(8, 8, 3, padding=1, groups=8),
                             nn.Softplus(), nn.Conv2d(8, 6, 1),
                             nn.Hardtanh(-0.5, 0.5), nn.Conv2d(6, 6, 1),
                             nn.Softsign(), nn.Conv2d(6, 4, 3, padding=1),
                             nn.Tanh()), (2, 3, 6, 7)
    raise SystemExit("unknown model " + kind)


def main():
    kind, out = sys.argv[1], sys.argv[2]
    torch.manual_seed(7)
    m, shape = model(kind)
    # Batch norms with non-trivial statistics, so folding them matters.
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 2.0)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.2, 0.2)
    m.eval()
    # The training models take any number of samples (weftc train).
    dynamic = {"x": {0: "n"}, "y": {0: "n"}} if kind.startswith("train-") \
        else None
    torch.onnx.export(m, torch.zeros(shape), out + "/m.onnx", opset_version=13,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes=dynamic)
    for i in (1, 2):
        x = np.random.default_rng(i).standard_normal(shape).astype(np.float32)
        np.save(f"{out}/x{i}.npy", x)
        with torch.no_grad():
            np.save(f"{out}/t{i}.npy", m(torch.from_numpy(x)).numpy())
            if kind == "two-blocks":
                np.save(f"{out}/h{i}.npy", m[0](torch.from_numpy(x)).numpy())


if __name__ == "__main__":
    main()
