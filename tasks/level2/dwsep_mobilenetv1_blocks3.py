"""PyTorch twin of the task `dwsep_mobilenetv1_blocks3`.

MobileNetV1 1.0, blocks.3.1: timm DepthwiseSeparableConv: conv_dw 3x3 + BatchNormAct2d(ReLU6) +
conv_pw 1x1 + BatchNormAct2d(ReLU6) (timm mobilenetv1_100).
One of the five 512-channel depthwise-separable blocks of MobileNetV1 at 14x14 (224x224 image):
depthwise 3x3 then pointwise 512 -> 512, each with batch norm and ReLU6; the pointwise
convolution dominates.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_dw = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.bn1 = nn.BatchNorm2d(512)
        self.act1 = nn.ReLU6(inplace=True)
        self.conv_pw = nn.Conv2d(512, 512, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(512)
        self.act2 = nn.ReLU6(inplace=True)

    def forward(self, x):
        x = self.conv_dw(x)
        x = self.act1(self.bn1(x))
        x = self.conv_pw(x)
        x = self.act2(self.bn2(x))
        return x


def get_inputs():
    return [
        torch.empty(1, 512, 14, 14).uniform_(0, 6),
    ]


def get_init_inputs():
    return []
