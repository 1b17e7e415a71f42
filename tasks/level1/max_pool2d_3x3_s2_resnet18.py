"""PyTorch twin of the task `max_pool2d_3x3_s2_resnet18`.

ResNet-18, maxpool: torch.nn.MaxPool2d(3, stride=2, padding=1) (torchvision.models.resnet18).
The stem's 3x3 stride-2 max pooling with padding 1: 64 channels, 112x112 -> 56x56.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 64, 112, 112).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
