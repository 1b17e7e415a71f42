"""PyTorch twin of the task `ghost_module_ghostnet_blocks1`.

GhostNet 1.0, blocks.1.0.ghost1: timm GhostModule(16, 48, relu=True) (ratio 2, dw_size 3) (timm
ghostnet_100).
A ghost module at 112x112 (224x224 image): a 1x1 primary convolution 16 -> 24 with batch norm
and ReLU, a cheap 3x3 depthwise convolution of its output with batch norm and ReLU, and the
concatenation of both, cut to 48 channels.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ghost_primary_conv = nn.Conv2d(16, 24, 1, bias=False)
        self.ghost_primary_bn = nn.BatchNorm2d(24)
        self.ghost_primary_act = nn.ReLU(inplace=True)
        self.ghost_cheap_conv = nn.Conv2d(24, 24, 3, padding=1, groups=24, bias=False)
        self.ghost_cheap_bn = nn.BatchNorm2d(24)
        self.ghost_cheap_act = nn.ReLU(inplace=True)

    def forward(self, x):
        x1 = self.ghost_primary_act(self.ghost_primary_bn(self.ghost_primary_conv(x)))
        x2 = self.ghost_cheap_act(self.ghost_cheap_bn(self.ghost_cheap_conv(x1)))
        x1 = torch.cat([x1, x2], dim=1)[:, :48, :, :]
        return x1


def get_inputs():
    return [
        torch.empty(1, 16, 112, 112).uniform_(-1, 2),
    ]


def get_init_inputs():
    return []
