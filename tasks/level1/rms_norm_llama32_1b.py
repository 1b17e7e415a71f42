"""PyTorch twin of the task `rms_norm_llama32_1b`.

Llama-3.2-1B, model.layers.0.input_layernorm: LlamaRMSNorm(2048, eps=1e-5) (transformers
LlamaRMSNorm (meta-llama/Llama-3.2-1B)).
RMSNorm over the 2048 hidden features of a 256-token prefill (rms_norm_eps 1e-5).
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
        torch.empty(1, 256, 2048).normal_(0.0, 2.0),
    ]


def get_init_inputs():
    return [2048, 1e-05]
