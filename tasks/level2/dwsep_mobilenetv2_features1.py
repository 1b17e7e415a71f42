"""PyTorch twin of the task `dwsep_mobilenetv2_features1`.

MobileNetV2, features.1: torchvision InvertedResidual(32, 16, stride=1, expand_ratio=1)
(torchvision.models.mobilenet_v2).
The first inverted residual of MobileNetV2 has no expansion, so it is a depthwise-separable
block: 3x3 depthwise convolution of 32 channels at 112x112 with batch norm and ReLU6, then a
linear pointwise projection 32 -> 16 with batch norm (224x224 image).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu6 = nn.ReLU6(inplace=True)
        self.dw_conv = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
        self.dw_bn = nn.BatchNorm2d(32)
        self.project_conv = nn.Conv2d(32, 16, 1, bias=False)
        self.project_bn = nn.BatchNorm2d(16)

    def forward(self, x):
        x = self.relu6(self.dw_bn(self.dw_conv(x)))
        return self.project_bn(self.project_conv(x))


def get_inputs():
    return [
        torch.empty(1, 32, 112, 112).uniform_(0, 6),
    ]


def get_init_inputs():
    return []
