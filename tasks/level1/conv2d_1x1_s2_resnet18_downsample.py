"""PyTorch twin of the task `conv2d_1x1_s2_resnet18_downsample`.

ResNet-18, layer2.0.downsample.0: torch.nn.Conv2d(64, 128, 1, stride=2, bias=False)
(torchvision.models.resnet18).
The strided 1x1 shortcut projection of the first stage-2 block: 64 -> 128 channels, 56x56 ->
28x28.
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
        torch.empty(1, 64, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [64, 128, 1, 2, 0, 1, 1, False]
