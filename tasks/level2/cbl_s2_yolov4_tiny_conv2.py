"""PyTorch twin of the task `cbl_s2_yolov4_tiny_conv2`.

YOLOv4-tiny, backbone.conv2 (BasicConv): BasicConv(32, 64, 3, stride=2): Conv2d(bias=False) +
BatchNorm2d + LeakyReLU(0.1) (bubbliiiing/yolov4-tiny-pytorch nets/CSPdarknet53_tiny.py).
The second stride-2 CBL (convolution, batch norm, leaky ReLU with slope 0.1) of the
CSPDarknet53-tiny backbone on a 320x320 input: 32x160x160 -> 64x80x80.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(32, 64, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(64)
        self.act = nn.LeakyReLU(0.1)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 32, 160, 160).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
