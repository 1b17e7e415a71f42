"""PyTorch twin of the task `addmm_gpt2_attn_c_proj`.

GPT-2 (124M), transformer.h.0.attn.c_proj: transformers Conv1D (torch.addmm(bias, x, weight))
(transformers pytorch_utils.Conv1D (openai-community/gpt2)).
The attention output projection as GPT-2 stores it (weight [in, out], x @ W + b) for a 128-token
prompt; weights drawn normal(0, 0.02) as GPT-2 initialises them.
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
        torch.empty(128, 768).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [768, 768]
