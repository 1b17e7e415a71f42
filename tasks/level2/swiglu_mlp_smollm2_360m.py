"""PyTorch twin of the task `swiglu_mlp_smollm2_360m`.

SmolLM2-360M, model.layers.0.mlp: LlamaMLP: down_proj(act_fn(gate_proj(x)) * up_proj(x)), SiLU,
960 -> 2560 -> 960, no bias (transformers LlamaMLP (HuggingFaceTB/SmolLM2-360M)).
The gated MLP of SmolLM2-360M over a 32-token prefill chunk (a longer prefill would exceed the
700 MFLOP budget of the reference interpreter): gate and up projections 960 -> 2560, SiLU of the
gate times up, down projection 2560 -> 960.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(960, 2560, bias=False)
        self.up_proj = nn.Linear(960, 2560, bias=False)
        self.down_proj = nn.Linear(2560, 960, bias=False)

    def forward(self, x):
        gate_proj = self.gate_proj(x)
        up_proj = self.up_proj(x)
        act = F.silu(gate_proj)
        gated = act * up_proj
        down_proj = self.down_proj(gated)
        return down_proj


def get_inputs():
    return [
        torch.empty(1, 32, 960).normal_(0, 1),
    ]


def get_init_inputs():
    return []
