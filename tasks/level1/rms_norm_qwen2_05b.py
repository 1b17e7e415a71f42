"""PyTorch twin of the task `rms_norm_qwen2_05b`.

Qwen2-0.5B, model.layers.0.post_attention_layernorm: Qwen2RMSNorm(896, eps=1e-6) (transformers
Qwen2RMSNorm (Qwen/Qwen2-0.5B)).
RMSNorm over the 896 hidden features of a 512-token prefill (rms_norm_eps 1e-6).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    """LlamaRMSNorm / Qwen2RMSNorm as transformers writes it (float32 throughout)."""

    def __init__(self, hidden_size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


def get_inputs():
    return [
        torch.empty(1, 512, 896).normal_(0.0, 2.0),
    ]


def get_init_inputs():
    return [896, 1e-06]
