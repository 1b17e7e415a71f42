"""PyTorch twin of the task `pow_gamma_camera_isp`.

camera ISP (Kornia), kornia.enhance.adjust_gamma (gain 1): torch.pow (kornia
kornia/enhance/adjust.py).
Gamma correction x ** (1/2.2) of a linear 640x480 RGB frame in (0, 1].
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("gamma", torch.tensor(1 / 2.2))

    def forward(self, x):
        return torch.pow(x, self.gamma)


def get_inputs():
    return [
        torch.empty(1, 3, 480, 640).uniform_(0.001, 1),
    ]


def get_init_inputs():
    return []
