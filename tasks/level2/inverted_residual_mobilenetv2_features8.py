"""PyTorch twin of the task `inverted_residual_mobilenetv2_features8`.

MobileNetV2, features.8: torchvision InvertedResidual(64, 64, stride=1, expand_ratio=6)
(torchvision.models.mobilenet_v2).
An inverted residual of MobileNetV2's 64-channel stage at 14x14 (224x224 image): expansion 64 ->
384, 3x3 depthwise, projection 384 -> 64, and the residual add.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu6 = nn.ReLU6(inplace=True)
        self.expand_conv = nn.Conv2d(64, 384, 1, bias=False)
        self.expand_bn = nn.BatchNorm2d(384)
        self.dw_conv = nn.Conv2d(384, 384, 3, padding=1, groups=384, bias=False)
        self.dw_bn = nn.BatchNorm2d(384)
        self.project_conv = nn.Conv2d(384, 64, 1, bias=False)
        self.project_bn = nn.BatchNorm2d(64)

    def forward(self, x):
        out = self.relu6(self.expand_bn(self.expand_conv(x)))
        out = self.relu6(self.dw_bn(self.dw_conv(out)))
        out = self.project_bn(self.project_conv(out))
        return x + out


def get_inputs():
    return [
        torch.empty(1, 64, 14, 14).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
