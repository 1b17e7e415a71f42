"""PyTorch twin of the task `conv_bn_hardswish_mobilenetv3_large_stem`.

MobileNetV3-Large, features.0: torchvision Conv2dNormActivation(3, 16, stride=2,
norm_layer=BatchNorm2d(eps=0.001, momentum=0.01), activation_layer=nn.Hardswish)
(torchvision.models.mobilenet_v3_large).
The stem of MobileNetV3-Large: 3x3 stride-2 convolution, batch norm (eps 1e-3), hardswish, on a
224x224 image: 3x224x224 -> 16x112x112.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(16, eps=0.001, momentum=0.01)
        self.act = nn.Hardswish()

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 3, 224, 224).uniform_(-2.5, 2.5),
    ]


def get_init_inputs():
    return []
