"""PyTorch twin of the task `gemv_gpt2_medium_decode_mlp_c_fc`.

GPT-2 Medium (355M), transformer.h.0.mlp.c_fc: transformers Conv1D (torch.addmm(bias, x, weight))
(transformers pytorch_utils.Conv1D (openai-community/gpt2-medium)).
The MLP up projection for one decoded token with GPT-2's weight layout [in, out] (x @ W + b, the
vector times a row-major 1024 x 4096 matrix, 16.8 MB); weights drawn normal(0, 0.02) as GPT-2
initialises them.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, nx, nf):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(0.0, 0.02))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return torch.addmm(self.bias, x, self.weight)


def get_inputs():
    return [
        torch.empty(1, 1024).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [1024, 4096]
