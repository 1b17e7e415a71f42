"""PyTorch twin of the task `rmsnorm_qkv_decode_llama32_1b`.

Llama-3.2-1B, model.layers.0 (input_layernorm, self_attn.q_proj/k_proj/v_proj): RMSNorm(2048,
eps=1e-05) + Linear(2048, 2048) / Linear(2048, 512) x2, no bias (transformers LlamaDecoderLayer
(meta-llama/Llama-3.2-1B)).
The input RMSNorm (eps 1e-5) and the query/key/value projections (2048 -> 2048, 512, 512, no
bias) of one Llama-3.2-1B decoding step: 25 MB of weights for one token.
"""

import torch
import torch.nn as nn


def rms_norm(hidden_states, weight, variance_epsilon):
    """transformers LlamaRMSNorm / Qwen2RMSNorm.forward (float32 throughout)."""
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + variance_epsilon)
    return weight * hidden_states


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.variance_epsilon = 1e-05
        self.input_layernorm_weight = nn.Parameter(torch.ones(2048))
        self.q_proj = nn.Linear(2048, 2048, bias=False)
        self.k_proj = nn.Linear(2048, 512, bias=False)
        self.v_proj = nn.Linear(2048, 512, bias=False)

    def forward(self, hidden_states):
        hidden_states = rms_norm(hidden_states, self.input_layernorm_weight, self.variance_epsilon)
        return self.q_proj(hidden_states), self.k_proj(hidden_states), self.v_proj(hidden_states)


def get_inputs():
    return [
        torch.empty(1, 1, 2048).normal_(0, 2),
    ]


def get_init_inputs():
    return []
