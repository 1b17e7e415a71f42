"""PyTorch twin of the task `patch_embed_pos_siglip_base`.

SigLIP ViT-B/16 (vision tower), patch_embed, _pos_embed: timm PatchEmbed(16, 3, 768) + pos_embed
(no class token) (timm vit_base_patch16_siglip_224).
The SigLIP-base vision embedding of a 224x224 image scaled to [-1, 1]: 16x16 stride-16
convolution 3 -> 768 with bias, flatten and transpose to 196 tokens, add the learned position
embedding (196 x 768, drawn normal(0, 0.02)).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos_embed = nn.Parameter(torch.randn(1, 196, 768) * 0.02)
        self.patch_embed_proj = nn.Conv2d(3, 768, 16, stride=16)

    def forward(self, x):
        x = self.patch_embed_proj(x)
        x = x.flatten(2).transpose(1, 2)  # NCHW -> NLC
        return x + self.pos_embed


def get_inputs():
    return [
        torch.empty(1, 3, 224, 224).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
