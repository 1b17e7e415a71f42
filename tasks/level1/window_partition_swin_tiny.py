"""PyTorch twin of the task `window_partition_swin_tiny`.

Swin-T, layers.0.blocks.0 (window_partition(x, 7)): torch.Tensor.view + permute (microsoft/Swin-
Transformer models/swin_transformer.py (window_partition)).
Cutting the channels-last stage-1 map into 7x7 windows (a 6-D view and permute): 112x112 x 96
channels -> 256 windows, Swin-T as a dense-prediction backbone on a 448x448 image.
"""

import torch
import torch.nn as nn


def window_partition(x, window_size):
    B, H, W, C = x.shape
    x = x.view(B, H // window_size, window_size, W // window_size, window_size, C)
    windows = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, C)
    return windows


class Model(nn.Module):
    def __init__(self, window_size):
        super().__init__()
        self.window_size = window_size

    def forward(self, x):
        return window_partition(x, self.window_size)


def get_inputs():
    return [
        torch.empty(1, 112, 112, 96).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [7]
