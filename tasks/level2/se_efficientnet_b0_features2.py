"""PyTorch twin of the task `se_efficientnet_b0_features2`.

EfficientNet-B0, features.2.0.block.2: torchvision SqueezeExcitation(96, 4, activation=nn.SiLU)
(torchvision.models.efficientnet_b0).
Squeeze-and-excitation of the first downsampling MBConv: global average of 96 channels at 56x56,
1x1 convolutions 96 -> 4 (SiLU) -> 96 (sigmoid), and the per-channel rescaling of the input
(224x224 image; the input is a SiLU output).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(96, 4, 1)
        self.fc2 = nn.Conv2d(4, 96, 1)
        self.activation = nn.SiLU(inplace=True)
        self.scale_activation = nn.Sigmoid()

    def forward(self, x):
        scale = self.avgpool(x)
        scale = self.fc1(scale)
        scale = self.activation(scale)
        scale = self.fc2(scale)
        scale = self.scale_activation(scale)
        return scale * x


def get_inputs():
    return [
        torch.empty(1, 96, 56, 56).uniform_(-0.25, 3),
    ]


def get_init_inputs():
    return []
