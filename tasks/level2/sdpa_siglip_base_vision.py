"""PyTorch twin of the task `sdpa_siglip_base_vision`.

SigLIP ViT-B/16 (vision tower), blocks.0.attn (F.scaled_dot_product_attention):
torch.nn.functional.scaled_dot_product_attention (no mask) (timm vit_base_patch16_siglip_224).
The attention core of a SigLIP-base vision tower (the image encoder of PaliGemma-style vision-
language models): 12 heads of 64 over 196 patch tokens of a 224x224 image; scores scaled by 1/8,
softmax, weighted sum of the values. Queries and keys are drawn normal(0, 1).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    return [
        torch.empty(1, 12, 196, 64).normal_(0, 1),
        torch.empty(1, 12, 196, 64).normal_(0, 1),
        torch.empty(1, 12, 196, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
