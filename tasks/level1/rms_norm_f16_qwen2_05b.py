"""PyTorch twin of the task `rms_norm_f16_qwen2_05b`.

Qwen2-0.5B, model.layers.0.post_attention_layernorm: Qwen2RMSNorm(896, eps=1e-6) on float16
(transformers Qwen2RMSNorm (Qwen/Qwen2-0.5B) loaded with torch_dtype=float16).
RMSNorm over the 896 hidden features of a 512-token prefill in half precision.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Qwen2RMSNorm as transformers writes it: statistics in float32, weight applied in the
    input's dtype."""

    def __init__(self, hidden_size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=torch.float16))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def get_inputs():
    return [
        torch.empty(1, 512, 896).normal_(0.0, 2.0).half(),
    ]


def get_init_inputs():
    return [896, 1e-06]
