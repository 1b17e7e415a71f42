"""PyTorch twin of the task `prelu_enet_initial`.

ENet (Cityscapes), initial_block.out_activation: torch.nn.PReLU() (davidtvs/PyTorch-ENet
models/enet.py (InitialBlock)).
The parametric ReLU (one learned slope for negative inputs, shared by all channels) closing the
initial block: 16 channels at 256x512 for a 512x1024 frame; the slope is drawn uniform in [0.1,
0.4).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.out_activation = nn.PReLU()

    def forward(self, x):
        return self.out_activation(x)


def get_inputs():
    return [
        torch.empty(1, 16, 256, 512).uniform_(-2, 2),
    ]


def get_init_inputs():
    return []
