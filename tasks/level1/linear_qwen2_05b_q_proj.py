"""PyTorch twin of the task `linear_qwen2_05b_q_proj`.

Qwen2-0.5B, model.layers.0.self_attn.q_proj: torch.nn.Linear(896, 896, bias=True) (transformers
Qwen2Attention (Qwen/Qwen2-0.5B)).
The query projection (with bias, as Qwen2 has) of a 128-token prefill.
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
        torch.empty(1, 128, 896).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [896, 896, True]
