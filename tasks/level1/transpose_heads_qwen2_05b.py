"""PyTorch twin of the task `transpose_heads_qwen2_05b`.

Qwen2-0.5B, model.layers.0.self_attn (q_proj(x).view(hidden_shape).transpose(1, 2)):
torch.Tensor.view, torch.Tensor.transpose (transformers Qwen2Attention (Qwen/Qwen2-0.5B)).
Splitting the 896 query features of a 512-token prefill into 14 heads of 64 and moving heads in
front of tokens.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.view(1, 512, -1, 64).transpose(1, 2)


def get_inputs():
    return [
        torch.empty(1, 512, 896).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
