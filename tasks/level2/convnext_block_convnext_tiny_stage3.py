"""PyTorch twin of the task `convnext_block_convnext_tiny_stage3`.

ConvNeXt-Tiny, features.5.1: torchvision CNBlock(384, layer_scale=1e-6): Conv2d 7x7 dw, Permute,
LayerNorm, Linear, GELU, Linear, Permute (torchvision.models.convnext_tiny).
A ConvNeXt-Tiny block of the third stage (384 channels at 14x14, 224x224 image) as torchvision
writes it: 7x7 depthwise convolution, permute to channels-last, LayerNorm (eps 1e-6), Linear 384
-> 1536, GELU, Linear 1536 -> 384, permute back, layer scale [384, 1, 1] (drawn from [0.1, 1]),
residual add.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer_scale = nn.Parameter(torch.ones(384, 1, 1) * 1e-6)
        self.dwconv = nn.Conv2d(384, 384, 7, padding=3, groups=384)
        self.norm = nn.LayerNorm(384, eps=1e-06)
        self.pwconv1 = nn.Linear(384, 1536)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(1536, 384)

    def forward(self, x):
        result = self.dwconv(x)
        result = result.permute(0, 2, 3, 1)
        result = self.norm(result)
        result = self.pwconv2(self.act(self.pwconv1(result)))
        result = result.permute(0, 3, 1, 2)
        result = self.layer_scale * result
        # stochastic depth is the identity at inference
        result += x
        return result


def get_inputs():
    return [
        torch.empty(1, 384, 14, 14).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
