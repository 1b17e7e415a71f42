"""PyTorch twin of the task `avg_pool2d_3x3_poolformer_s12`.

PoolFormer-S12, network.0.0.token_mixer.pool: torch.nn.AvgPool2d(3, stride=1, padding=1,
count_include_pad=False) (sail-sg/poolformer models/poolformer.py).
The pooling token mixer of the first block: 3x3 stride-1 average pooling that ignores padded
positions, 64 channels at 56x56 (the subtraction of the input that follows is left out).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 64, 56, 56).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
