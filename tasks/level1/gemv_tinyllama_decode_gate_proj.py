"""PyTorch twin of the task `gemv_tinyllama_decode_gate_proj`.

TinyLlama-1.1B, model.layers.0.mlp.gate_proj: torch.nn.Linear(2048, 5632, bias=False) (transformers
LlamaMLP (TinyLlama/TinyLlama-1.1B-Chat-v1.0)).
The MLP gate projection for one decoded token: 46 MB of weights for one 2048-d vector.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [
        torch.empty(1, 1, 2048).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [2048, 5632, False]
