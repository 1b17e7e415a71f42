"""PyTorch twin of the task `add_gemma_rmsnorm_gemma_2b`.

Gemma-2B, model.layers.0 (residual add, post_attention_layernorm): GemmaRMSNorm(2048, eps=1e-06)
of residual + hidden_states (transformers GemmaDecoderLayer (google/gemma-2b)).
The residual add and Gemma's post-attention RMSNorm (eps 1e-6), whose weight is stored as an
offset and applied as (1 + weight), over a 128-token prefill; outputs the normalised states and
the new residual. The weight offsets are drawn from [-0.5, 0.5].
"""

import torch
import torch.nn as nn


def gemma_rms_norm(x, weight, eps):
    """transformers GemmaRMSNorm.forward: the weight is stored as an offset from 1."""
    output = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)
    output = output * (1.0 + weight.float())
    return output.type_as(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.eps = 1e-06
        self.post_attention_layernorm_weight = nn.Parameter(torch.zeros(2048))

    def forward(self, hidden_states, residual):
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = gemma_rms_norm(hidden_states, self.post_attention_layernorm_weight, self.eps)
        return hidden_states, residual


def get_inputs():
    return [
        torch.empty(1, 128, 2048).normal_(0, 1),
        torch.empty(1, 128, 2048).normal_(0, 2),
    ]


def get_init_inputs():
    return []
