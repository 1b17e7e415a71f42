"""PyTorch twin of the task `pad_reflect_cyclegan_resblock`.

CycleGAN ResnetGenerator (9 blocks), netG.model[10].conv_block[0]: torch.nn.ReflectionPad2d(1)
(junyanz/pytorch-CycleGAN-and-pix2pix models/networks.py).
Reflection padding in the first residual block: 256 channels at 64x64 (256x256 image) to 66x66.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReflectionPad2d(1)

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [
        torch.empty(1, 256, 64, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
