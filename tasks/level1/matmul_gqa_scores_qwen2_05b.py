"""PyTorch twin of the task `matmul_gqa_scores_qwen2_05b`.

Qwen2-0.5B, model.layers.0.self_attn (torch.matmul(query, key_states.transpose(2, 3))):
torch.matmul (transformers Qwen2Attention (Qwen/Qwen2-0.5B)).
Attention scores of a 256-token prefill, head size 64: the 14 query heads share 2 key/value
heads (GQA), grouped 2x7 so that keys broadcast over the group instead of being repeated
(repeat_kv).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, q, k):
        return torch.matmul(q, k.transpose(-1, -2))


def get_inputs():
    return [
        torch.empty(1, 2, 7, 256, 64).uniform_(-1, 1),
        torch.empty(1, 2, 1, 256, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
