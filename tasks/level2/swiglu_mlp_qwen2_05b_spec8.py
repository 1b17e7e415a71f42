"""PyTorch twin of the task `swiglu_mlp_qwen2_05b_spec8`.

Qwen2-0.5B, model.layers.0.mlp: LlamaMLP/Qwen2MLP: down_proj(act_fn(gate_proj(x)) * up_proj(x)),
SiLU, 896 -> 4864 -> 896, no bias (transformers Qwen2MLP (Qwen/Qwen2-0.5B)).
The gated MLP of Qwen2-0.5B verifying 8 draft tokens at once (speculative decoding): gate and up
projections 896 -> 4864, SiLU-gated product, down projection 4864 -> 896; the weights are read
once for all 8 tokens.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(896, 4864, bias=False)
        self.up_proj = nn.Linear(896, 4864, bias=False)
        self.act_fn = nn.SiLU()
        self.down_proj = nn.Linear(4864, 896, bias=False)

    def forward(self, x):
        down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        return down_proj


def get_inputs():
    return [
        torch.empty(1, 8, 896).normal_(0, 1),
    ]


def get_init_inputs():
    return []
