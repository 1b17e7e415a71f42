"""PyTorch twin of the task `tanh_cyclegan_output`.

CycleGAN ResnetGenerator (9 blocks), netG.model[-1]: torch.nn.Tanh (junyanz/pytorch-CycleGAN-
and-pix2pix models/networks.py).
The generator's final Tanh on its 3-channel 256x256 output image.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Tanh()

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 3, 256, 256).uniform_(-3, 3),
    ]


def get_init_inputs():
    return []
