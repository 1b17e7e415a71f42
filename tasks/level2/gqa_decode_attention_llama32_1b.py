"""PyTorch twin of the task `gqa_decode_attention_llama32_1b`.

Llama-3.2-1B, model.layers.0.self_attn (eager_attention_forward): transformers
eager_attention_forward with repeat_kv (32 query heads, 8 key/value heads) (transformers
LlamaAttention (meta-llama/Llama-3.2-1B)).
The attention of one decoding step over a 2048-token KV cache: the rotated query of 32 heads,
keys and values of 8 heads repeated 4x (repeat_kv), scores scaled by 1/8, softmax, weighted sum
of the values. Reading the 8 MB cache dominates.
"""

import torch
import torch.nn as nn


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.num_key_value_groups = 4
        self.scaling = 64 ** -0.5

    def forward(self, query, key, value):
        key_states = repeat_kv(key, self.num_key_value_groups)
        value_states = repeat_kv(value, self.num_key_value_groups)
        attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * self.scaling
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
        return torch.matmul(attn_weights, value_states)


def get_inputs():
    return [
        torch.empty(1, 32, 1, 64).normal_(0, 1),
        torch.empty(1, 8, 2048, 64).normal_(0, 1),
        torch.empty(1, 8, 2048, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
