"""PyTorch twin of the task `convnext_block_convnext_pico_stage2`.

ConvNeXt-Pico, stages.2.blocks.0: timm ConvNeXtBlock(256, conv_mlp=True): conv_dw 7x7 +
LayerNorm2d + Mlp(Conv2d 1x1, GELU, Conv2d 1x1) + gamma (timm convnext_pico).
A ConvNeXt-Pico block of the third stage (256 channels at 14x14, 224x224 image): 7x7 depthwise
convolution, channel LayerNorm, 1x1 MLP 256 -> 1024 -> 256 with GELU, layer scale (drawn from
[0.1, 1]), residual add.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gamma = nn.Parameter(1e-6 * torch.ones(256))
        self.conv_dw = nn.Conv2d(256, 256, 7, padding=3, groups=256)
        self.norm = nn.LayerNorm(256, eps=1e-06)
        self.mlp_fc1 = nn.Conv2d(256, 1024, 1)
        self.mlp_act = nn.GELU()
        self.mlp_fc2 = nn.Conv2d(1024, 256, 1)

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
        torch.empty(1, 256, 14, 14).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
