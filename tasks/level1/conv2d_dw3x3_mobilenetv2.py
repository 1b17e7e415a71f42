"""PyTorch twin of the task `conv2d_dw3x3_mobilenetv2`.

MobileNetV2, features.1.conv.0.0: torch.nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
(torchvision.models.mobilenet_v2).
Depthwise 3x3 convolution of the first inverted residual (32 channels at 112x112, 224x224
image).
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
        torch.empty(1, 32, 112, 112).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [32, 32, 3, 1, 1, 1, 32, False]
