"""PyTorch twin of the task `dwsep_s2_mobilenetv1_blocks1`.

MobileNetV1 1.0, blocks.1.0: timm DepthwiseSeparableConv: conv_dw 3x3 + BatchNormAct2d(ReLU6) +
conv_pw 1x1 + BatchNormAct2d(ReLU6) (timm mobilenetv1_100).
Downsampling depthwise-separable block of MobileNetV1: stride-2 3x3 depthwise convolution of 64
channels, 112x112 -> 56x56, then pointwise 64 -> 128, each with batch norm and ReLU6 (224x224
image).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_dw = nn.Conv2d(64, 64, 3, stride=2, padding=1, groups=64, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.act1 = nn.ReLU6(inplace=True)
        self.conv_pw = nn.Conv2d(64, 128, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(128)
        self.act2 = nn.ReLU6(inplace=True)

    def forward(self, x):
        x = self.conv_dw(x)
        x = self.act1(self.bn1(x))
        x = self.conv_pw(x)
        x = self.act2(self.bn2(x))
        return x


def get_inputs():
    return [
        torch.empty(1, 64, 112, 112).uniform_(0, 6),
    ]


def get_init_inputs():
    return []
