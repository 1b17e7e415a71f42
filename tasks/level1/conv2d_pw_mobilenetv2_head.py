"""PyTorch twin of the task `conv2d_pw_mobilenetv2_head`.

MobileNetV2, features.18.0: torch.nn.Conv2d(320, 1280, 1, bias=False)
(torchvision.models.mobilenet_v2).
The last pointwise convolution (320 -> 1280 channels) at 7x7: weight-heavy, little spatial
reuse.
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
        torch.empty(1, 320, 7, 7).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [320, 1280, 1, 1, 0, 1, 1, False]
