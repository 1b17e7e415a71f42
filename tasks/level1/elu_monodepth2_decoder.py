"""PyTorch twin of the task `elu_monodepth2_decoder`.

Monodepth2 (ResNet-18 encoder), decoder.convs[("upconv", 0, 1)].nonlin: torch.nn.ELU
(nianticlabs/monodepth2 networks/depth_decoder.py).
ELU of the last decoder ConvBlock (16 channels) at the full 640x192 KITTI input resolution.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ELU()

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 16, 192, 640).uniform_(-3, 3),
    ]


def get_init_inputs():
    return []
