"""PyTorch twin of the task `conv_transpose2d_4x4_s2_dcgan_generator`.

DCGAN generator (ngf=64, 64x64 images), main.9: torch.nn.ConvTranspose2d(128, 64, 4, 2, 1,
bias=False) (pytorch/examples dcgan/main.py (Generator)).
The fourth fractionally-strided convolution of the generator (kernel 4, stride 2, padding 1:
overlapping taps, every output pixel sums 2x2 taps of each input channel): ngf*2 = 128 -> 64
channels, 16x16 -> 32x32; weights drawn normal(0, 0.02) as DCGAN initialises them, input non-
negative (after BatchNorm and ReLU).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, groups):
        super().__init__()
        # The parameters of nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride, padding,
        # output_padding, groups, bias=False), applied with its functional form; the weight is
        # [in, out / groups, kH, kW].
        self.weight = nn.Parameter(
            torch.empty(in_channels, out_channels // groups, kernel_size, kernel_size)
        )
        self.stride = stride
        self.padding = padding
        self.output_padding = output_padding
        self.groups = groups

    def forward(self, x):
        return F.conv_transpose2d(x, self.weight, None, stride=self.stride, padding=self.padding,
                                  output_padding=self.output_padding, groups=self.groups)


def get_inputs():
    return [
        torch.empty(1, 128, 16, 16).uniform_(0, 2),
    ]


def get_init_inputs():
    return [128, 64, 4, 2, 1, 0, 1]
