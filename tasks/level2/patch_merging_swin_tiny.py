"""PyTorch twin of the task `patch_merging_swin_tiny`.

Swin-T, layers.1.downsample: timm PatchMerging(96): reshape(B, H/2, 2, W/2, 2, C).permute(0, 1,
3, 4, 2, 5).flatten(3), LayerNorm(384), Linear(384, 192, bias=False) (timm
swin_tiny_patch4_window7_224).
Swin-T's patch merging between stages 1 and 2 (224x224 image): each 2x2 neighbourhood of the
56x56x96 channels-last map is gathered into 384 features, normalised (LayerNorm) and reduced to
192 by a linear layer without bias (-> 28x28x192).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(384)
        self.reduction = nn.Linear(384, 192, bias=False)

    def forward(self, x):
        B, H, W, C = x.shape
        x = x.reshape(B, H // 2, 2, W // 2, 2, C).permute(0, 1, 3, 4, 2, 5).flatten(3)
        x = self.norm(x)
        return self.reduction(x)


def get_inputs():
    return [
        torch.empty(1, 56, 56, 96).normal_(0, 1),
    ]


def get_init_inputs():
    return []
