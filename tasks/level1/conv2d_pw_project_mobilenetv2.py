"""PyTorch twin of the task `conv2d_pw_project_mobilenetv2`.

MobileNetV2, features.3.conv.2: torch.nn.Conv2d(144, 24, 1, bias=False)
(torchvision.models.mobilenet_v2).
Pointwise linear projection (144 -> 24 channels) at 56x56.
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
        torch.empty(1, 144, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [144, 24, 1, 1, 0, 1, 1, False]
