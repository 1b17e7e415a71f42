"""PyTorch twin of the task `swiglu_mlp_smollm2_135m`.

SmolLM2-135M, model.layers.0.mlp: LlamaMLP/Qwen2MLP: down_proj(act_fn(gate_proj(x)) *
up_proj(x)), SiLU, 576 -> 1536 -> 576, no bias (transformers LlamaMLP
(HuggingFaceTB/SmolLM2-135M)).
The gated MLP of SmolLM2-135M (a Llama-architecture on-device model) over a 128-token prefill:
gate and up projections 576 -> 1536, SiLU of the gate times the up projection, down projection
1536 -> 576. The input is the post-attention RMSNorm output.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(576, 1536, bias=False)
        self.up_proj = nn.Linear(576, 1536, bias=False)
        self.act_fn = nn.SiLU()
        self.down_proj = nn.Linear(1536, 576, bias=False)

    def forward(self, x):
        down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        return down_proj


def get_inputs():
    return [
        torch.empty(1, 128, 576).normal_(0, 1),
    ]


def get_init_inputs():
    return []
