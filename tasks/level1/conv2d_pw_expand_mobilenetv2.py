"""PyTorch twin of the task `conv2d_pw_expand_mobilenetv2`.

MobileNetV2, features.2.conv.0.0: torch.nn.Conv2d(16, 96, 1, bias=False)
(torchvision.models.mobilenet_v2).
Pointwise expansion (16 -> 96 channels, factor 6) at 112x112.
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
        torch.empty(1, 16, 112, 112).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [16, 96, 1, 1, 0, 1, 1, False]
