"""PyTorch twin of the task `dwsep_mobilenetv1_blocks0`.

MobileNetV1 1.0, blocks.0.0: timm DepthwiseSeparableConv: conv_dw 3x3 + BatchNormAct2d(ReLU6) +
conv_pw 1x1 + BatchNormAct2d(ReLU6) (timm mobilenetv1_100).
First depthwise-separable block of MobileNetV1 on a 224x224 image: 3x3 depthwise convolution of
32 channels at 112x112, then pointwise 32 -> 64, each followed by batch norm and ReLU6. The
input is the stem's ReLU6 output, drawn from [0, 6].
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_dw = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.act1 = nn.ReLU6(inplace=True)
        self.conv_pw = nn.Conv2d(32, 64, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(64)
        self.act2 = nn.ReLU6(inplace=True)

    def forward(self, x):
        x = self.conv_dw(x)
        x = self.act1(self.bn1(x))
        x = self.conv_pw(x)
        x = self.act2(self.bn2(x))
        return x


def get_inputs():
    return [
        torch.empty(1, 32, 112, 112).uniform_(0, 6),
    ]


def get_init_inputs():
    return []
