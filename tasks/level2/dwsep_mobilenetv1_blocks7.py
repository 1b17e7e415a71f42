"""PyTorch twin of the task `dwsep_mobilenetv1_blocks7`.

MobileNetV1 1.0, blocks.7.0: timm DepthwiseSeparableConv: conv_dw 3x3 + BatchNormAct2d(ReLU6) +
conv_pw 1x1 + BatchNormAct2d(ReLU6) (timm mobilenetv1_100).
A depthwise separable block of MobileNetV1's 512-channel stage on a 224x224 image: 3x3 depthwise
convolution, batch norm, ReLU6, 1x1 convolution 512 -> 512, batch norm, ReLU6, at 14x14. Inputs
are non-negative (after ReLU6).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_dw = nn.Conv2d(512, 512, 3, padding=1, groups=512, bias=False)
        self.bn1 = nn.BatchNorm2d(512)
        self.conv_pw = nn.Conv2d(512, 512, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(512)

    def forward(self, x):
        conv_dw = self.conv_dw(x)
        bn1 = self.bn1(conv_dw)
        dw_act = F.relu6(bn1)
        conv_pw = self.conv_pw(dw_act)
        bn2 = self.bn2(conv_pw)
        pw_act = F.relu6(bn2)
        return pw_act


def get_inputs():
    return [
        torch.empty(1, 512, 14, 14).uniform_(0, 6),
    ]


def get_init_inputs():
    return []
