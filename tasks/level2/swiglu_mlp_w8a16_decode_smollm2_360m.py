"""PyTorch twin of the task `swiglu_mlp_w8a16_decode_smollm2_360m`.

SmolLM2-360M, model.layers.0.mlp: LlamaMLP, down_proj(act_fn(gate_proj(x)) * up_proj(x)), SiLU,
960 -> 2560 -> 960, no bias (transformers LlamaMLP (HuggingFaceTB/SmolLM2-360M)) in float16 with
weight-only int8 quantization of the three projections.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class W8A16Linear(nn.Module):
    """A weight-only int8 linear layer: int8 weights with one float32 scale per output channel;
    the activations' products with the weights are summed in float32, the sum is scaled and
    rounded to the activations' dtype, as weight-only GEMV kernels compute it."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.register_buffer("weight", torch.zeros(out_features, in_features, dtype=torch.int8))
        self.register_buffer("scale", torch.ones(out_features))

    def forward(self, x):
        acc = F.linear(x.to(torch.float32), self.weight.to(torch.float32))
        return (acc * self.scale.to(torch.float32)).to(x.dtype)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = W8A16Linear(960, 2560)
        self.up_proj = W8A16Linear(960, 2560)
        self.down_proj = W8A16Linear(2560, 960)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        return down_proj


def get_inputs():
    return [
        torch.empty(1, 1, 960).normal_(0, 1).half(),
    ]


def get_init_inputs():
    return []
