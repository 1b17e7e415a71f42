"""PyTorch twin of the task `ghost_bottleneck_se_s2_ghostnet_blocks3`.

GhostNet 1.0, blocks.3.0: timm GhostBottleneck(24, 72, 40, dw_kernel_size=5, stride=2,
se_ratio=0.25) (timm ghostnet_100).
A downsampling ghost bottleneck with squeeze-excitation (224x224 image): ghost module 24 -> 72
at 56x56, stride-2 5x5 depthwise with batch norm (-> 28x28), SE 72 -> 20 -> 72 with a hard-
sigmoid gate, ghost module 72 -> 40; the shortcut is a stride-2 5x5 depthwise and a 1x1
convolution 24 -> 40, each with batch norm.
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
        self.dw_conv = nn.Conv2d(72, 72, 5, stride=2, padding=2, groups=72, bias=False)
        self.dw_bn = nn.BatchNorm2d(72)
        self.se_fc1 = nn.Conv2d(72, 20, 1)
        self.se_fc2 = nn.Conv2d(20, 72, 1)
        self.se_act = nn.ReLU(inplace=True)
        self.se_gate = nn.Hardsigmoid()
        self.ghost2_primary_conv = nn.Conv2d(72, 20, 1, bias=False)
        self.ghost2_primary_bn = nn.BatchNorm2d(20)
        self.ghost2_cheap_conv = nn.Conv2d(20, 20, 3, padding=1, groups=20, bias=False)
        self.ghost2_cheap_bn = nn.BatchNorm2d(20)
        self.shortcut_dw_conv = nn.Conv2d(24, 24, 5, stride=2, padding=2, groups=24, bias=False)
        self.shortcut_dw_bn = nn.BatchNorm2d(24)
        self.shortcut_pw_conv = nn.Conv2d(24, 40, 1, bias=False)
        self.shortcut_pw_bn = nn.BatchNorm2d(40)

    def forward(self, x):
        x1 = self.ghost1_primary_act(self.ghost1_primary_bn(self.ghost1_primary_conv(x)))
        x1b = self.ghost1_cheap_act(self.ghost1_cheap_bn(self.ghost1_cheap_conv(x1)))
        x1 = torch.cat([x1, x1b], dim=1)[:, :72, :, :]
        x1 = self.dw_bn(self.dw_conv(x1))
        x_se = x1.mean((2, 3), keepdim=True)
        x_se = self.se_fc2(self.se_act(self.se_fc1(x_se)))
        x1 = x1 * self.se_gate(x_se)
        x2 = self.ghost2_primary_bn(self.ghost2_primary_conv(x1))
        x2b = self.ghost2_cheap_bn(self.ghost2_cheap_conv(x2))
        x2 = torch.cat([x2, x2b], dim=1)[:, :40, :, :]
        shortcut = self.shortcut_dw_bn(self.shortcut_dw_conv(x))
        shortcut = self.shortcut_pw_bn(self.shortcut_pw_conv(shortcut))
        return x2 + shortcut


def get_inputs():
    return [
        torch.empty(1, 24, 56, 56).uniform_(-1, 2),
    ]


def get_init_inputs():
    return []
