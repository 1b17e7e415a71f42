"""PyTorch twin of the task `matmul_decode_scores_qwen2_05b`.

Qwen2-0.5B, model.layers.0.self_attn (decode: query times the cached keys): torch.matmul
(transformers Qwen2Attention (Qwen/Qwen2-0.5B)).
Attention scores of one decoded token against a 2048-token KV cache: the 7 query heads of each
of the 2 KV heads form the rows, so the cache is read once (a batched matrix-vector product).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, q, k_cache):
        return torch.matmul(q, k_cache.transpose(-1, -2))


def get_inputs():
    return [
        torch.empty(1, 2, 7, 64).uniform_(-1, 1),
        torch.empty(1, 2, 2048, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
