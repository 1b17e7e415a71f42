"""PyTorch twin of the task `swiglu_mlp_decode_smollm2_360m`.

SmolLM2-360M, model.layers.0.mlp: LlamaMLP/Qwen2MLP: down_proj(act_fn(gate_proj(x)) *
up_proj(x)), SiLU, 960 -> 2560 -> 960, no bias (transformers LlamaMLP
(HuggingFaceTB/SmolLM2-360M)).
The gated MLP of SmolLM2-360M for one decoding step: gate and up projections 960 -> 2560, SiLU-
gated product, down projection 2560 -> 960 (29 MB of weights).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(960, 2560, bias=False)
        self.up_proj = nn.Linear(960, 2560, bias=False)
        self.act_fn = nn.SiLU()
        self.down_proj = nn.Linear(2560, 960, bias=False)

    def forward(self, x):
        down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        return down_proj


def get_inputs():
    return [
        torch.empty(1, 1, 960).normal_(0, 1),
    ]


def get_init_inputs():
    return []
