"""PyTorch twin of the task `patch_embed_cls_pos_deit_tiny`.

DeiT-Tiny, patch_embed, _pos_embed (cls_token, pos_embed): timm PatchEmbed(16, 3, 192) +
cat(cls_token) + pos_embed (timm deit_tiny_patch16_224).
The DeiT-Tiny input embedding of a 224x224 image: 16x16 stride-16 convolution 3 -> 192 with
bias, flatten to 196 tokens and transpose, prepend the class token, add the learned position
embedding (197 x 192); class token and position embedding drawn normal(0, 0.02).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, 192))
        self.pos_embed = nn.Parameter(torch.randn(1, 197, 192) * 0.02)
        self.patch_embed_proj = nn.Conv2d(3, 192, 16, stride=16)

    def forward(self, x):
        x = self.patch_embed_proj(x)
        x = x.flatten(2).transpose(1, 2)  # NCHW -> NLC
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        x = x + self.pos_embed
        return x


def get_inputs():
    return [
        torch.empty(1, 3, 224, 224).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
