"""PyTorch twin of the task `gemv_qwen2_05b_decode_up_proj`.

Qwen2-0.5B, model.layers.0.mlp.up_proj: torch.nn.Linear(896, 4864, bias=False) (transformers
Qwen2MLP (Qwen/Qwen2-0.5B)).
The MLP up projection for one decoded token: a wide matrix-vector product (896 -> 4864).
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
        torch.empty(1, 1, 896).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [896, 4864, False]
