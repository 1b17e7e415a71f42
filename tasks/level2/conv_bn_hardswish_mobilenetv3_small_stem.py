"""PyTorch twin of the task `conv_bn_hardswish_mobilenetv3_small_stem`.

MobileNetV3-Small, features.0: torchvision Conv2dNormActivation(3, 16, stride=2,
norm_layer=BatchNorm2d(eps=0.001), activation_layer=nn.Hardswish)
(torchvision.models.mobilenet_v3_small).
The stem of MobileNetV3-Small: 3x3 stride-2 convolution, batch norm (eps 0.001), Hardswish, on a
224x224 image: 3x224x224 -> 16x112x112.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(16, eps=0.001)

    def forward(self, x):
        conv = self.conv(x)
        bn = self.bn(conv)
        act = F.hardswish(bn)
        return act


def get_inputs():
    return [
        torch.empty(1, 3, 224, 224).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
