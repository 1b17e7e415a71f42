"""PyTorch twin of the task `inverted_residual_mobilenetv2_features11`.

MobileNetV2, features.11: torchvision InvertedResidual(64, 96, stride=1, expand_ratio=6)
(torchvision.models.mobilenet_v2).
An inverted residual of MobileNetV2 on a 224x224 image: 1x1 expansion 64 -> 384 with batch norm
and ReLU6, 3x3 depthwise convolution (stride 1) with batch norm and ReLU6, 1x1 projection 384 ->
96 with batch norm, no shortcut: 64x14x14 -> 96x14x14. Inputs are the previous block's linear
output, uniform(-1, 1).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_0_0 = nn.Conv2d(64, 384, 1, bias=False)
        self.conv_0_1 = nn.BatchNorm2d(384)
        self.conv_1_0 = nn.Conv2d(384, 384, 3, padding=1, groups=384, bias=False)
        self.conv_1_1 = nn.BatchNorm2d(384)
        self.conv_2 = nn.Conv2d(384, 96, 1, bias=False)
        self.conv_3 = nn.BatchNorm2d(96)

    def forward(self, x):
        conv_0_0 = self.conv_0_0(x)
        conv_0_1 = self.conv_0_1(conv_0_0)
        expand_act = F.relu6(conv_0_1)
        conv_1_0 = self.conv_1_0(expand_act)
        conv_1_1 = self.conv_1_1(conv_1_0)
        dw_act = F.relu6(conv_1_1)
        conv_2 = self.conv_2(dw_act)
        conv_3 = self.conv_3(conv_2)
        return conv_3


def get_inputs():
    return [
        torch.empty(1, 64, 14, 14).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
