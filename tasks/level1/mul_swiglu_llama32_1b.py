"""PyTorch twin of the task `mul_swiglu_llama32_1b`.

Llama-3.2-1B, model.layers.0.mlp (act_fn(gate_proj(x)) * up_proj(x)): torch.Tensor.__mul__
(transformers LlamaMLP (meta-llama/Llama-3.2-1B)).
The SwiGLU gate product, intermediate size 8192, for a 128-token prefill.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, gate, up):
        return gate * up


def get_inputs():
    return [
        torch.empty(1, 128, 8192).uniform_(-1, 1),
        torch.empty(1, 128, 8192).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
