"""PyTorch twin of the task `softmax_attention_deit_small`.

DeiT-Small, blocks.0.attn (attn.softmax(dim=-1)): torch.Tensor.softmax (timm
deit_small_patch16_224).
Softmax of the attention scores of 6 heads over 197 tokens (224x224 image, 16x16 patches and the
class token).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, scores):
        return scores.softmax(dim=-1)


def get_inputs():
    return [
        torch.empty(1, 6, 197, 197).uniform_(-3, 3),
    ]


def get_init_inputs():
    return []
