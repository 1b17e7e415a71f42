"""PyTorch twin of the task `expand_repeat_kv_llama32_1b`.

Llama-3.2-1B, model.layers.0.self_attn (repeat_kv(key_states, 4)): torch.Tensor.expand + reshape
(transformers models/llama/modeling_llama.py (repeat_kv)).
Repeating the 8 key/value heads for the 32 query heads (grouped-query attention) of a 1024-token
prefill, head size 64: a size-1 axis expanded to 4, then merged with the head axis.
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
    def __init__(self, n_rep):
        super().__init__()
        self.n_rep = n_rep

    def forward(self, hidden_states):
        return repeat_kv(hidden_states, self.n_rep)


def get_inputs():
    return [
        torch.empty(1, 8, 1024, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [4]
