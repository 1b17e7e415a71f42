"""PyTorch twin of the task `rmsnorm_qkv_qwen2_05b`.

Qwen2-0.5B, model.layers.0 (input_layernorm, self_attn.q_proj/k_proj/v_proj): RMSNorm(896,
eps=1e-06) + Linear(896, 896) / Linear(896, 128) x2 with bias (transformers Qwen2DecoderLayer
(Qwen/Qwen2-0.5B)).
The input RMSNorm (eps 1e-6) of a Qwen2-0.5B decoder layer and the three attention projections
with bias (896 -> 896 query, 128 key, 128 value) over a 128-token prefill.
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
        self.variance_epsilon = 1e-06
        self.input_layernorm_weight = nn.Parameter(torch.ones(896))
        self.q_proj = nn.Linear(896, 896)
        self.k_proj = nn.Linear(896, 128)
        self.v_proj = nn.Linear(896, 128)

    def forward(self, hidden_states):
        hidden_states = rms_norm(hidden_states, self.input_layernorm_weight, self.variance_epsilon)
        return self.q_proj(hidden_states), self.k_proj(hidden_states), self.v_proj(hidden_states)


def get_inputs():
    return [
        torch.empty(1, 128, 896).normal_(0, 2),
    ]


def get_init_inputs():
    return []
