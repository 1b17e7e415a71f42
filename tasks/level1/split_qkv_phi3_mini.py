"""PyTorch twin of the task `split_qkv_phi3_mini`.

Phi-3-mini-4k-instruct, model.layers.0.self_attn (qkv[..., :query_pos], ...):
torch.Tensor.__getitem__ (slices) (transformers Phi3Attention
(microsoft/Phi-3-mini-4k-instruct)).
Splitting the fused qkv_proj output (3 x 3072 features) of a 128-token prefill into query, key
and value.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_heads, num_key_value_heads, head_dim):
        super().__init__()
        self.query_pos = num_heads * head_dim
        self.kv_size = num_key_value_heads * head_dim

    def forward(self, qkv):
        q = qkv[..., : self.query_pos]
        k = qkv[..., self.query_pos : self.query_pos + self.kv_size]
        v = qkv[..., self.query_pos + self.kv_size :]
        return q, k, v


def get_inputs():
    return [
        torch.empty(1, 128, 9216).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [32, 32, 96]
