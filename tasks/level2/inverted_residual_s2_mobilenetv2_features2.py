"""PyTorch twin of the task `inverted_residual_s2_mobilenetv2_features2`.

MobileNetV2, features.2: torchvision InvertedResidual(16, 24, stride=2, expand_ratio=6)
(torchvision.models.mobilenet_v2).
The first downsampling inverted residual of MobileNetV2 (224x224 image): pointwise expansion 16
-> 96 at 112x112, stride-2 3x3 depthwise (-> 56x56), each with batch norm and ReLU6, then the
linear projection 96 -> 24 with batch norm; no residual.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu6 = nn.ReLU6(inplace=True)
        self.expand_conv = nn.Conv2d(16, 96, 1, bias=False)
        self.expand_bn = nn.BatchNorm2d(96)
        self.dw_conv = nn.Conv2d(96, 96, 3, stride=2, padding=1, groups=96, bias=False)
        self.dw_bn = nn.BatchNorm2d(96)
        self.project_conv = nn.Conv2d(96, 24, 1, bias=False)
        self.project_bn = nn.BatchNorm2d(24)

    def forward(self, x):
        out = self.relu6(self.expand_bn(self.expand_conv(x)))
        out = self.relu6(self.dw_bn(self.dw_conv(out)))
        out = self.project_bn(self.project_conv(out))
        return out


def get_inputs():
    return [
        torch.empty(1, 16, 112, 112).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
