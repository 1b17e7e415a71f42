"""PyTorch twin of the task `matmul_1024`.

The square f32 product the GPU benchmark times against cuBLAS (TF32 off): the anchor of a tuned
CUDA matmul, not a task of the suite.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [
        torch.empty(1024, 1024).uniform_(-1, 1),
        torch.empty(1024, 1024).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
