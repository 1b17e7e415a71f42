"""PyTorch twin of the task `matmul_window_attention_swin_tiny`.

Swin-T, layers.0.blocks.0.attn (x = attn @ v): torch.matmul (microsoft/Swin-Transformer
models/swin_transformer.py (WindowAttention)).
Window attention applied to the values in the first stage: 256 windows of 7x7 = 49 tokens (the
112x112 map of a 448x448 image, Swin-T as a dense-prediction backbone) x 3 heads of size 32, many
small products batched; attention weights drawn uniform in [0, 0.04) (rows of 49 softmax weights).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, attn, v):
        return attn @ v


def get_inputs():
    return [
        torch.empty(256, 3, 49, 49).uniform_(0, 0.04),
        torch.empty(256, 3, 49, 32).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
