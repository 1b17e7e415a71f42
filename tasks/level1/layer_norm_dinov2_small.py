"""PyTorch twin of the task `layer_norm_dinov2_small`.

DINOv2 ViT-S/14, blocks.0.norm1: torch.nn.LayerNorm(384, eps=1e-6) (facebookresearch/dinov2
dinov2/models/vision_transformer.py).
Pre-attention LayerNorm over the 384 features of 1370 tokens (518x518 image), as in the Depth
Anything V2 Small encoder.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(384, eps=1e-6)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [
        torch.empty(1, 1370, 384).normal_(0.0, 2.0),
    ]


def get_init_inputs():
    return []
