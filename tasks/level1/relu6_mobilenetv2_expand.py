"""PyTorch twin of the task `relu6_mobilenetv2_expand`.

MobileNetV2, features.2.conv.0.2: torch.nn.ReLU6 (torchvision.models.mobilenet_v2).
ReLU6 after the 1x1 expansion (16 -> 96 channels, factor 6) of the first stride-2 inverted
residual, at 112x112 for a 224x224 image.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU6()

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 96, 112, 112).uniform_(-2, 8),
    ]


def get_init_inputs():
    return []
