"""PyTorch twin of the task `mlp_residual_dinov2_small`.

DINOv2 ViT-S/14, blocks.0 (x + ls2(mlp(norm2(x)))): timm Block: LayerNorm(384, eps=1e-6),
Mlp(384, 1536) with GELU, LayerScale(384) (timm vit_small_patch14_dinov2).
The MLP half of a DINOv2-small block over 257 tokens (224x224 image): LayerNorm, Linear 384 ->
1536, exact GELU, Linear 1536 -> 384, layer scale (drawn from [0.1, 1]) and the residual add.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ls2_gamma = nn.Parameter(1e-5 * torch.ones(384))
        self.norm2 = nn.LayerNorm(384, eps=1e-06)
        self.mlp_fc1 = nn.Linear(384, 1536)
        self.mlp_act = nn.GELU()
        self.mlp_fc2 = nn.Linear(1536, 384)

    def forward(self, x):
        return x + self.mlp_fc2(self.mlp_act(self.mlp_fc1(self.norm2(x)))) * self.ls2_gamma


def get_inputs():
    return [
        torch.empty(1, 257, 384).normal_(0, 1),
    ]


def get_init_inputs():
    return []
