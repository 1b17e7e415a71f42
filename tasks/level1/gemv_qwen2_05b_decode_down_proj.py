"""PyTorch twin of the task `gemv_qwen2_05b_decode_down_proj`.

Qwen2-0.5B, model.layers.0.mlp.down_proj: torch.nn.Linear(4864, 896, bias=False) (transformers
Qwen2MLP (Qwen/Qwen2-0.5B)).
The MLP down projection for one decoded token: 17 MB of weights for one 4864-d vector.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [
        torch.empty(1, 1, 4864).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [4864, 896, False]
