"""PyTorch twin of the task `mlp_gelu_tanh_gpt2_decode`.

GPT-2 (124M), transformer.h.0.mlp: transformers GPT2MLP: c_fc Conv1D(3072, 768), gelu_new,
c_proj Conv1D(768, 3072) (transformers GPT2MLP (openai-community/gpt2)).
The MLP of one decoding step (one token): Conv1D layers as GPT-2 stores them (weight [in, out],
x @ W + b), tanh-approximated GELU (gelu_new) between; weights drawn normal(0, 0.02) as GPT-2
initialises them. Memory-bound: 19 MB of weights for 9 MFLOP.
"""

import math

import torch
import torch.nn as nn


def conv1d(x, weight, bias):
    """transformers Conv1D.forward."""
    size_out = x.size()[:-1] + (weight.size(-1),)
    x = torch.addmm(bias, x.view(-1, x.size(-1)), weight)
    return x.view(size_out)


def gelu_new(x):
    """transformers NewGELUActivation."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc_weight = nn.Parameter(torch.empty(768, 3072).normal_(0.0, 0.02))
        self.c_fc_bias = nn.Parameter(torch.zeros(3072))
        self.c_proj_weight = nn.Parameter(torch.empty(3072, 768).normal_(0.0, 0.02))
        self.c_proj_bias = nn.Parameter(torch.zeros(768))

    def forward(self, hidden_states):
        hidden_states = conv1d(hidden_states, self.c_fc_weight, self.c_fc_bias)
        hidden_states = gelu_new(hidden_states)
        return conv1d(hidden_states, self.c_proj_weight, self.c_proj_bias)


def get_inputs():
    return [
        torch.empty(1, 1, 768).normal_(0, 1),
    ]


def get_init_inputs():
    return []
