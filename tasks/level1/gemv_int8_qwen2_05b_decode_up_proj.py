"""PyTorch twin of the task `gemv_int8_qwen2_05b_decode_up_proj`.

Qwen2-0.5B, model.layers.0.mlp.up_proj: torch.nn.Linear(896, 4864, bias=False) with int8 weights
and activations (W8A8).
The integer product of int8 kernels: int8 operands, int32 sums (exact; no rounding anywhere). The
sums are computed in float64, where they are exact too (896 products of at most 2^14 each), so the
twin runs on devices without an integer matrix product (CUDA).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.register_buffer("weight", torch.zeros(out_features, in_features, dtype=torch.int8))

    def forward(self, x):
        return torch.matmul(x.double(), self.weight.double().t()).to(torch.int32)


def get_inputs():
    return [
        torch.randint(-128, 128, (1, 1, 896), dtype=torch.int8),
    ]


def get_init_inputs():
    return [896, 4864]
