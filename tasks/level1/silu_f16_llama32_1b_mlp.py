"""PyTorch twin of the task `silu_f16_llama32_1b_mlp`.

Llama-3.2-1B, model.layers.0.mlp.act_fn: torch.nn.SiLU on float16 (transformers LlamaMLP
(meta-llama/Llama-3.2-1B) loaded with torch_dtype=float16).
SiLU of gate_proj's output in the SwiGLU MLP (intermediate size 8192) for a 128-token prefill.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 128, 8192).uniform_(-4, 4).half(),
    ]


def get_init_inputs():
    return []
