"""PyTorch twin of the task `add_rmsnorm_llama32_1b`.

Llama-3.2-1B, model.layers.0 (residual add, post_attention_layernorm): RMSNorm(2048, eps=1e-05)
of residual + hidden_states (transformers LlamaDecoderLayer (meta-llama/Llama-3.2-1B)).
The residual add after attention and the post-attention RMSNorm (eps 1e-5) of a Llama-3.2-1B
decoder layer over a 256-token prefill; outputs the normalised states and the new residual
stream.
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
        self.eps = 1e-05
        self.post_attention_layernorm_weight = nn.Parameter(torch.ones(2048))

    def forward(self, hidden_states, residual):
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = rms_norm(hidden_states, self.post_attention_layernorm_weight, self.eps)
        return hidden_states, residual


def get_inputs():
    return [
        torch.empty(1, 256, 2048).normal_(0, 1),
        torch.empty(1, 256, 2048).normal_(0, 2),
    ]


def get_init_inputs():
    return []
