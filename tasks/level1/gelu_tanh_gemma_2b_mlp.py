"""PyTorch twin of the task `gelu_tanh_gemma_2b_mlp`.

Gemma-2B, model.layers.0.mlp.act_fn: transformers PytorchGELUTanh
(torch.nn.GELU(approximate='tanh')) (transformers GemmaMLP (google/gemma-2b)).
Tanh-approximated GELU (hidden_activation gelu_pytorch_tanh) of gate_proj's output, intermediate
size 16384, 128-token prefill.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 128, 16384).uniform_(-4, 4),
    ]


def get_init_inputs():
    return []
