"""PyTorch twin of the task `ghost_bottleneck_ghostnet_blocks2`.

GhostNet 1.0, blocks.2.0: timm GhostBottleneck(24, 72, 24, dw_kernel_size=3, stride=1,
se_ratio=0) (timm ghostnet_100).
A stride-1 ghost bottleneck at 56x56 (224x224 image): ghost module 24 -> 72 with ReLU, ghost
module 72 -> 24 without activation, and the identity shortcut.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ghost1_primary_conv = nn.Conv2d(24, 36, 1, bias=False)
        self.ghost1_primary_bn = nn.BatchNorm2d(36)
        self.ghost1_primary_act = nn.ReLU(inplace=True)
        self.ghost1_cheap_conv = nn.Conv2d(36, 36, 3, padding=1, groups=36, bias=False)
        self.ghost1_cheap_bn = nn.BatchNorm2d(36)
        self.ghost1_cheap_act = nn.ReLU(inplace=True)
        self.ghost2_primary_conv = nn.Conv2d(72, 12, 1, bias=False)
        self.ghost2_primary_bn = nn.BatchNorm2d(12)
        self.ghost2_cheap_conv = nn.Conv2d(12, 12, 3, padding=1, groups=12, bias=False)
        self.ghost2_cheap_bn = nn.BatchNorm2d(12)

    def forward(self, x):
        x1 = self.ghost1_primary_act(self.ghost1_primary_bn(self.ghost1_primary_conv(x)))
        x1b = self.ghost1_cheap_act(self.ghost1_cheap_bn(self.ghost1_cheap_conv(x1)))
        x1 = torch.cat([x1, x1b], dim=1)[:, :72, :, :]
        x2 = self.ghost2_primary_bn(self.ghost2_primary_conv(x1))
        x2b = self.ghost2_cheap_bn(self.ghost2_cheap_conv(x2))
        x2 = torch.cat([x2, x2b], dim=1)[:, :24, :, :]
        return x2 + x


def get_inputs():
    return [
        torch.empty(1, 24, 56, 56).uniform_(-1, 2),
    ]


def get_init_inputs():
    return []
