"""PyTorch twin of the task `avg_pool2d_2x2_densenet121_transition`.

DenseNet-121, features.transition1.pool: torch.nn.AvgPool2d(2, stride=2)
(torchvision.models.densenet121).
The first transition's 2x2 stride-2 average pooling: 128 channels, 56x56 -> 28x28.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.AvgPool2d(kernel_size=2, stride=2)

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 128, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
