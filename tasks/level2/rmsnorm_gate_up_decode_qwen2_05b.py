"""PyTorch twin of the task `rmsnorm_gate_up_decode_qwen2_05b`.

Qwen2-0.5B, model.layers.0 (post_attention_layernorm, mlp.gate_proj/up_proj, act_fn(gate) * up):
Qwen2RMSNorm(896, eps=1e-6) + Linear(896, 4864) x2 (no bias), SiLU(gate) * up (transformers
Qwen2DecoderLayer (Qwen/Qwen2-0.5B)).
The post-attention RMSNorm of one Qwen2-0.5B decoding step followed by the gate and up
projections 896 -> 4864 and the SiLU-gated product that feeds the down projection: 35 MB of
weights for one token.
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
        self.variance_epsilon = 1e-6
        self.post_attention_layernorm_weight = nn.Parameter(torch.ones(896))
        self.gate_proj = nn.Linear(896, 4864, bias=False)
        self.up_proj = nn.Linear(896, 4864, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, hidden_states):
        hidden_states = rms_norm(hidden_states, self.post_attention_layernorm_weight, self.variance_epsilon)
        return self.act_fn(self.gate_proj(hidden_states)) * self.up_proj(hidden_states)


def get_inputs():
    return [
        torch.empty(1, 1, 896).normal_(0, 2),
    ]


def get_init_inputs():
    return []
