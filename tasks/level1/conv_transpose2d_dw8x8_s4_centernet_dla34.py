"""PyTorch twin of the task `conv_transpose2d_dw8x8_s4_centernet_dla34`.

CenterNet (DLA-34, 512x512), ida_up.up_2: torch.nn.ConvTranspose2d(64, 64, 8, stride=4, padding=2,
output_padding=0, groups=64, bias=False) (xingyizhou/CenterNet
src/lib/models/networks/pose_dla_dcn.py (IDAUp)).
Depthwise (groups = channels) transposed convolution of the final iterative aggregation: the
projected stride-16 features (64 channels, 32x32 for a 512x512 image) upsampled 4x to 128x128,
kernel 8 with padding 2. The bilinear initial weights (fill_up_weights) are replaced by seeded ones;
the input is non-negative (after the projection's BatchNorm and ReLU).
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
        torch.empty(1, 64, 32, 32).uniform_(0, 2),
    ]


def get_init_inputs():
    return [64, 64, 8, 4, 2, 0, 64]
