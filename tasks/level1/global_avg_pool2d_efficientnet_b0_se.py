"""PyTorch twin of the task `global_avg_pool2d_efficientnet_b0_se`.

EfficientNet-B0, features.2.0.block.2.avgpool: torch.nn.AdaptiveAvgPool2d(1)
(torchvision.models.efficientnet_b0).
The squeeze of a squeeze-and-excitation block: the spatial mean of 96 channels at 56x56.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 96, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
