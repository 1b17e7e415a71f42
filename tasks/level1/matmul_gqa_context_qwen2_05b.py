"""PyTorch twin of the task `matmul_gqa_context_qwen2_05b`.

Qwen2-0.5B, model.layers.0.self_attn (torch.matmul(attn_weights, value_states)): torch.matmul
(transformers Qwen2Attention (Qwen/Qwen2-0.5B)).
Attention-weighted values of a 256-token prefill: probabilities of 14 query heads times the 2
shared value heads (GQA grouped 2x7, values broadcast).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, p, v):
        return torch.matmul(p, v)


def get_inputs():
    return [
        torch.empty(1, 2, 7, 256, 256).uniform_(0, 0.0078125),
        torch.empty(1, 2, 1, 256, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
