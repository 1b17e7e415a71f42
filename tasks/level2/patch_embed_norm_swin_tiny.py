"""PyTorch twin of the task `patch_embed_norm_swin_tiny`.

Swin-T, patch_embed: timm PatchEmbed(4, 3, 96, norm_layer=LayerNorm, output_fmt=NHWC) (timm
swin_tiny_patch4_window7_224).
The Swin-T patch embedding of a 224x224 image: 4x4 stride-4 convolution 3 -> 96 with bias,
permute to channels-last (56x56x96) and LayerNorm over the channels.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2d(3, 96, 4, stride=4)
        self.norm = nn.LayerNorm(96)

    def forward(self, x):
        x = self.proj(x)
        x = x.permute(0, 2, 3, 1)  # NCHW -> NHWC
        return self.norm(x)


def get_inputs():
    return [
        torch.empty(1, 3, 224, 224).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
