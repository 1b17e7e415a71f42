"""PyTorch twin of the task `conv2d_dw5x5_s2_efficientnet_b0`.

EfficientNet-B0, features.3.0.block.1.0: torch.nn.Conv2d(144, 144, 5, stride=2, padding=2,
groups=144, bias=False) (torchvision.models.efficientnet_b0).
Depthwise 5x5 stride-2 convolution of the first MBConv of stage 3: 144 expanded channels, 56x56
-> 28x28.
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
    return [144, 144, 5, 2, 2, 1, 144, False]
