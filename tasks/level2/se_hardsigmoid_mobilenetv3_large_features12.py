"""PyTorch twin of the task `se_hardsigmoid_mobilenetv3_large_features12`.

MobileNetV3-Large, features.12.block.2: torchvision SqueezeExcitation(672, 168,
scale_activation=nn.Hardsigmoid) (torchvision.models.mobilenet_v3_large).
Squeeze-and-excitation of a 672-channel block at 14x14: global average, 1x1 convolutions 672 ->
168 (ReLU) -> 672 (hard sigmoid), and the per-channel rescaling (224x224 image; the input is a
hardswish output).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(672, 168, 1)
        self.fc2 = nn.Conv2d(168, 672, 1)
        self.activation = nn.ReLU()
        self.scale_activation = nn.Hardsigmoid()

    def forward(self, x):
        scale = self.avgpool(x)
        scale = self.fc1(scale)
        scale = self.activation(scale)
        scale = self.fc2(scale)
        scale = self.scale_activation(scale)
        return scale * x


def get_inputs():
    return [
        torch.empty(1, 672, 14, 14).uniform_(-0.375, 3),
    ]


def get_init_inputs():
    return []
