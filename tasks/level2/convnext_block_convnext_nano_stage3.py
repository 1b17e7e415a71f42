"""PyTorch twin of the task `convnext_block_convnext_nano_stage3`.

ConvNeXt-Nano, stages.3.blocks.0: timm ConvNeXtBlock(640, conv_mlp=True): conv_dw 7x7 +
LayerNorm2d + Mlp(Conv2d 1x1, GELU, Conv2d 1x1) + gamma (timm convnext_nano).
A ConvNeXt-Nano block of the last stage (640 channels at 7x7, 224x224 image): 7x7 depthwise
convolution, channel LayerNorm, 1x1 MLP 640 -> 2560 -> 640 with GELU, layer scale (drawn from
[0.1, 1]), residual add; weight-dominated.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gamma = nn.Parameter(1e-6 * torch.ones(640))
        self.conv_dw = nn.Conv2d(640, 640, 7, padding=3, groups=640)
        self.norm = nn.LayerNorm(640, eps=1e-06)
        self.mlp_fc1 = nn.Conv2d(640, 2560, 1)
        self.mlp_act = nn.GELU()
        self.mlp_fc2 = nn.Conv2d(2560, 640, 1)

    def forward(self, x):
        shortcut = x
        x = self.conv_dw(x)
        # LayerNorm2d: normalise over channels in channels-last order
        x = x.permute(0, 2, 3, 1)
        x = self.norm(x)
        x = x.permute(0, 3, 1, 2)
        x = self.mlp_fc2(self.mlp_act(self.mlp_fc1(x)))
        x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        return x + shortcut


def get_inputs():
    return [
        torch.empty(1, 640, 7, 7).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
