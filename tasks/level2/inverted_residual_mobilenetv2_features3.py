"""PyTorch twin of the task `inverted_residual_mobilenetv2_features3`.

MobileNetV2, features.3: torchvision InvertedResidual(24, 24, stride=1, expand_ratio=6)
(torchvision.models.mobilenet_v2).
An inverted residual with its skip connection (224x224 image): expansion 24 -> 144, 3x3
depthwise and projection 144 -> 24 at 56x56, the input added to the projection.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu6 = nn.ReLU6(inplace=True)
        self.expand_conv = nn.Conv2d(24, 144, 1, bias=False)
        self.expand_bn = nn.BatchNorm2d(144)
        self.dw_conv = nn.Conv2d(144, 144, 3, padding=1, groups=144, bias=False)
        self.dw_bn = nn.BatchNorm2d(144)
        self.project_conv = nn.Conv2d(144, 24, 1, bias=False)
        self.project_bn = nn.BatchNorm2d(24)

    def forward(self, x):
        out = self.relu6(self.expand_bn(self.expand_conv(x)))
        out = self.relu6(self.dw_bn(self.dw_conv(out)))
        out = self.project_bn(self.project_conv(out))
        return x + out


def get_inputs():
    return [
        torch.empty(1, 24, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
