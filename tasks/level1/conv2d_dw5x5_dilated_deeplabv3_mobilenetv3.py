"""PyTorch twin of the task `conv2d_dw5x5_dilated_deeplabv3_mobilenetv3`.

DeepLabV3 MobileNetV3-Large, backbone.13.block.1.0: torch.nn.Conv2d(672, 672, 5, padding=4,
dilation=2, groups=672, bias=False)
(torchvision.models.segmentation.deeplabv3_mobilenet_v3_large).
Dilated depthwise 5x5 convolution of the first C5 block, which the dilated backbone runs at
stride 1, dilation 2: 672 channels at 32x32 (output stride 16 of a 512x512 image).
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
        torch.empty(1, 672, 32, 32).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [672, 672, 5, 1, 4, 2, 672, False]
