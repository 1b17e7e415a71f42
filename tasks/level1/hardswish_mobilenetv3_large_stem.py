"""PyTorch twin of the task `hardswish_mobilenetv3_large_stem`.

MobileNetV3-Large, features.0.2: torch.nn.Hardswish (torchvision.models.mobilenet_v3_large).
Hardswish of the stem (3x3 stride-2 conv to 16 channels) on a 224x224 image; inputs span the
three pieces of the function (x <= -3, between, x >= 3).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Hardswish()

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 16, 112, 112).uniform_(-5, 5),
    ]


def get_init_inputs():
    return []
