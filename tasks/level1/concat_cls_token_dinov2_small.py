"""PyTorch twin of the task `concat_cls_token_dinov2_small`.

DINOv2 ViT-S/14, prepare_tokens_with_masks (torch.cat((cls_token.expand(B, -1, -1), x), dim=1)):
torch.cat (facebookresearch/dinov2 dinov2/models/vision_transformer.py).
Prepending the learned class token to the 1369 patch tokens (37x37, 518x518 image).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, 384))

    def forward(self, x):
        return torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1)


def get_inputs():
    return [
        torch.empty(1, 1369, 384).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
