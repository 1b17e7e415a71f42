"""PyTorch twin of the task `add_rmsnorm_qwen2_05b`.

Qwen2-0.5B, model.layers.0 (residual add, post_attention_layernorm): RMSNorm(896, eps=1e-06) of
residual + hidden_states (transformers Qwen2DecoderLayer (Qwen/Qwen2-0.5B)).
The residual add after attention and the post-attention RMSNorm (eps 1e-6) of a Qwen2-0.5B
decoder layer over a 128-token prefill; both the normalised states and the new residual stream
are outputs (a fused add + RMSNorm kernel writes both).
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
        self.eps = 1e-06
        self.post_attention_layernorm_weight = nn.Parameter(torch.ones(896))

    def forward(self, hidden_states, residual):
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = rms_norm(hidden_states, self.post_attention_layernorm_weight, self.eps)
        return hidden_states, residual


def get_inputs():
    return [
        torch.empty(1, 128, 896).normal_(0, 1),
        torch.empty(1, 128, 896).normal_(0, 2),
    ]


def get_init_inputs():
    return []
