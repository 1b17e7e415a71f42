"""PyTorch twin of the task `conv2d_7x7_s2_resnet18_stem`.

ResNet-18, conv1: torch.nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
(torchvision.models.resnet18).
The 7x7 stride-2 stem convolution (3 -> 64 channels) of a 224x224 image.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                              dilation=dilation, groups=groups, bias=bias)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [
        torch.empty(1, 3, 224, 224).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [3, 64, 7, 2, 3, 1, 1, False]
