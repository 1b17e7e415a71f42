"""PyTorch twin of the task `conv2d_patch16_deit_tiny`.

DeiT-Tiny, patch_embed.proj: torch.nn.Conv2d(3, 192, 16, stride=16) (timm
deit_tiny_patch16_224).
Patch embedding: a 16x16 stride-16 convolution (3 -> 192 channels, with bias) of a 224x224
image.
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
    return [3, 192, 16, 16, 0, 1, 1, True]
