"""PyTorch twin of the task `conv2d_3x3_resnet18_layer1`.

ResNet-18, layer1.0.conv1: torch.nn.Conv2d(64, 64, 3, padding=1, bias=False)
(torchvision.models.resnet18).
A 3x3 convolution of the first stage (64 -> 64 channels, 32x32) for a 128x128 input, a low-
resolution robot-camera crop.
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
        torch.empty(1, 64, 32, 32).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [64, 64, 3, 1, 1, 1, 1, False]
