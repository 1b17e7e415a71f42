"""PyTorch twin of the task `inverted_residual_mobilenetv2_features17`.

MobileNetV2, features.17: torchvision InvertedResidual(160, 320, stride=1, expand_ratio=6)
(torchvision.models.mobilenet_v2).
An inverted residual of MobileNetV2 on a 224x224 image: 1x1 expansion 160 -> 960 with batch norm
and ReLU6, 3x3 depthwise convolution (stride 1) with batch norm and ReLU6, 1x1 projection 960 ->
320 with batch norm, no shortcut: 160x7x7 -> 320x7x7. Inputs are the previous block's linear
output, uniform(-1, 1).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_0_0 = nn.Conv2d(160, 960, 1, bias=False)
        self.conv_0_1 = nn.BatchNorm2d(960)
        self.conv_1_0 = nn.Conv2d(960, 960, 3, padding=1, groups=960, bias=False)
        self.conv_1_1 = nn.BatchNorm2d(960)
        self.conv_2 = nn.Conv2d(960, 320, 1, bias=False)
        self.conv_3 = nn.BatchNorm2d(320)

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
        torch.empty(1, 160, 7, 7).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
