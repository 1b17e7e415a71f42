"""PyTorch twin of the task `conv2d_3x3_s2_mobilenetv2_stem`.

MobileNetV2, features.0.0: torch.nn.Conv2d(3, 32, 3, stride=2, padding=1, bias=False)
(torchvision.models.mobilenet_v2).
The stem convolution: 3 -> 32 channels, 3x3, stride 2, on a 224x224 image.
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
    return [3, 32, 3, 2, 1, 1, 1, False]
