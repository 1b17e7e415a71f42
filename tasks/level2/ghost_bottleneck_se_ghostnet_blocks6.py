"""PyTorch twin of the task `ghost_bottleneck_se_ghostnet_blocks6`.

GhostNet 1.0, blocks.6.4: timm GhostBottleneck(112, 672, 112, dw_kernel_size=3, stride=1,
se_ratio=0.25) (timm ghostnet_100).
A ghost bottleneck with squeeze-excitation at 14x14 (224x224 image): ghost module 112 -> 672
(primary 112 -> 336), SE 672 -> 168 -> 672 with a hard-sigmoid gate, ghost module 672 -> 112,
identity shortcut.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ghost1_primary_conv = nn.Conv2d(112, 336, 1, bias=False)
        self.ghost1_primary_bn = nn.BatchNorm2d(336)
        self.ghost1_primary_act = nn.ReLU(inplace=True)
        self.ghost1_cheap_conv = nn.Conv2d(336, 336, 3, padding=1, groups=336, bias=False)
        self.ghost1_cheap_bn = nn.BatchNorm2d(336)
        self.ghost1_cheap_act = nn.ReLU(inplace=True)
        self.se_fc1 = nn.Conv2d(672, 168, 1)
        self.se_fc2 = nn.Conv2d(168, 672, 1)
        self.se_act = nn.ReLU(inplace=True)
        self.se_gate = nn.Hardsigmoid()
        self.ghost2_primary_conv = nn.Conv2d(672, 56, 1, bias=False)
        self.ghost2_primary_bn = nn.BatchNorm2d(56)
        self.ghost2_cheap_conv = nn.Conv2d(56, 56, 3, padding=1, groups=56, bias=False)
        self.ghost2_cheap_bn = nn.BatchNorm2d(56)

    def forward(self, x):
        x1 = self.ghost1_primary_act(self.ghost1_primary_bn(self.ghost1_primary_conv(x)))
        x1b = self.ghost1_cheap_act(self.ghost1_cheap_bn(self.ghost1_cheap_conv(x1)))
        x1 = torch.cat([x1, x1b], dim=1)[:, :672, :, :]
        x_se = x1.mean((2, 3), keepdim=True)
        x_se = self.se_fc2(self.se_act(self.se_fc1(x_se)))
        x1 = x1 * self.se_gate(x_se)
        x2 = self.ghost2_primary_bn(self.ghost2_primary_conv(x1))
        x2b = self.ghost2_cheap_bn(self.ghost2_cheap_conv(x2))
        x2 = torch.cat([x2, x2b], dim=1)[:, :112, :, :]
        return x2 + x


def get_inputs():
    return [
        torch.empty(1, 112, 14, 14).uniform_(-1, 2),
    ]


def get_init_inputs():
    return []
