"""PyTorch twin of the task `layerscale_add_layernorm_dinov2_small`.

DINOv2 ViT-S/14, blocks.0 (x + ls1(attn_out), norm2): timm LayerScale(384) + residual add +
LayerNorm(384, eps=1e-6) (timm vit_small_patch14_dinov2).
Between the two halves of a DINOv2-small block over 257 tokens (224x224 image): the attention
output times the layer scale (drawn from [0.1, 1]) added to the residual stream, and the second
LayerNorm; outputs the new stream and its normalised copy.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ls1_gamma = nn.Parameter(1e-5 * torch.ones(384))
        self.norm2 = nn.LayerNorm(384, eps=1e-06)

    def forward(self, x, attn_out):
        x = x + attn_out * self.ls1_gamma
        return x, self.norm2(x)


def get_inputs():
    return [
        torch.empty(1, 257, 384).normal_(0, 2),
        torch.empty(1, 257, 384).normal_(0, 1),
    ]


def get_init_inputs():
    return []
