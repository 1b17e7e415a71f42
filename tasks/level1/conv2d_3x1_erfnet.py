"""PyTorch twin of the task `conv2d_3x1_erfnet`.

ERFNet, encoder.layers.1.conv3x1_1: torch.nn.Conv2d(64, 64, (3, 1), padding=(1, 0))
(Eromera/erfnet_pytorch train/erfnet.py).
The vertical half of a factorised 3x3 convolution (3x1, with bias) in the first non-
bottleneck-1D block: 64 channels at 32x64 for a 128x256 road-scene crop.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv3x1_1 = nn.Conv2d(channels, channels, (3, 1), stride=1, padding=(1, 0), bias=True)

    def forward(self, x):
        return self.conv3x1_1(x)


def get_inputs():
    return [
        torch.empty(1, 64, 32, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [64]
