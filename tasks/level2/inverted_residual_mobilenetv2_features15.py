"""PyTorch twin of the task `inverted_residual_mobilenetv2_features15`.

MobileNetV2, features.15: torchvision InvertedResidual(160, 160, stride=1, expand_ratio=6)
(torchvision.models.mobilenet_v2).
An inverted residual of MobileNetV2's last 160-channel stage at 7x7 (224x224 image): expansion
160 -> 960, 3x3 depthwise, projection 960 -> 160, and the residual add; weight-dominated.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu6 = nn.ReLU6(inplace=True)
        self.expand_conv = nn.Conv2d(160, 960, 1, bias=False)
        self.expand_bn = nn.BatchNorm2d(960)
        self.dw_conv = nn.Conv2d(960, 960, 3, padding=1, groups=960, bias=False)
        self.dw_bn = nn.BatchNorm2d(960)
        self.project_conv = nn.Conv2d(960, 160, 1, bias=False)
        self.project_bn = nn.BatchNorm2d(160)

    def forward(self, x):
        out = self.relu6(self.expand_bn(self.expand_conv(x)))
        out = self.relu6(self.dw_bn(self.dw_conv(out)))
        out = self.project_bn(self.project_conv(out))
        return x + out


def get_inputs():
    return [
        torch.empty(1, 160, 7, 7).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
