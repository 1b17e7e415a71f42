"""PyTorch twin of the task `conv_bn_silu_efficientnet_b0_stem`.

EfficientNet-B0, features.0: torchvision Conv2dNormActivation(3, 32, stride=2,
activation_layer=nn.SiLU) (torchvision.models.efficientnet_b0).
The stem of EfficientNet-B0: 3x3 stride-2 convolution, batch norm, SiLU, on a 224x224 image:
3x224x224 -> 32x112x112.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 32, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(32)
        self.act = nn.SiLU(inplace=True)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 3, 224, 224).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
