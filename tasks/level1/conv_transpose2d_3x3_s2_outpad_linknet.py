"""PyTorch twin of the task `conv_transpose2d_3x3_s2_outpad_linknet`.

LinkNet (ResNet-18 encoder, Cityscapes), decoder4.tp_conv.0: torch.nn.ConvTranspose2d(128, 128, 3,
2, 1, 1, bias=False) (e-lab/pytorch-linknet models/linknet.py (Decoder)).
The transposed convolution of the deepest decoder block: kernel 3, stride 2, padding 1 and
output_padding 1 (the extra bottom row and right column that make the size exactly double), 128
channels, 16x32 -> 32x64 for a 512x1024 Cityscapes frame; input non-negative (after the block's 1x1
convolution, BatchNorm and ReLU).
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
        torch.empty(1, 128, 16, 32).uniform_(0, 2),
    ]


def get_init_inputs():
    return [128, 128, 3, 2, 1, 1, 1]
