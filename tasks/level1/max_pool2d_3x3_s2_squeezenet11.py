"""PyTorch twin of the task `max_pool2d_3x3_s2_squeezenet11`.

SqueezeNet 1.1, features.2: torch.nn.MaxPool2d(3, stride=2, ceil_mode=True)
(torchvision.models.squeezenet1_1).
3x3 stride-2 max pooling without padding after the stem: 64 channels, 111x111 -> 55x55 (ceil
mode gives the same size here).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True)

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 64, 111, 111).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
