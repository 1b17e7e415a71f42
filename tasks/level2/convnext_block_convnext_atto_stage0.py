"""PyTorch twin of the task `convnext_block_convnext_atto_stage0`.

ConvNeXt-Atto, stages.0.blocks.0: timm ConvNeXtBlock(40, conv_mlp=True): conv_dw 7x7 +
LayerNorm2d + Mlp(Conv2d 1x1, GELU, Conv2d 1x1) + gamma (timm convnext_atto).
A ConvNeXt-Atto block of the first stage (40 channels at 56x56, 224x224 image): 7x7 depthwise
convolution, LayerNorm over channels (eps 1e-6), 1x1 convolutions 40 -> 160 (GELU) -> 40, per-
channel layer scale, residual add. The trained layer scale is drawn from [0.1, 1].
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gamma = nn.Parameter(1e-6 * torch.ones(40))
        self.conv_dw = nn.Conv2d(40, 40, 7, padding=3, groups=40)
        self.norm = nn.LayerNorm(40, eps=1e-06)
        self.mlp_fc1 = nn.Conv2d(40, 160, 1)
        self.mlp_act = nn.GELU()
        self.mlp_fc2 = nn.Conv2d(160, 40, 1)

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
        torch.empty(1, 40, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
