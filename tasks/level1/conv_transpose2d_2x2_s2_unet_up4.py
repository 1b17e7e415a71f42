"""PyTorch twin of the task `conv_transpose2d_2x2_s2_unet_up4`.

U-Net (milesial Pytorch-UNet, bilinear=False), up4.up: torch.nn.ConvTranspose2d(128, 64,
kernel_size=2, stride=2) (milesial/Pytorch-UNet unet/unet_parts.py (Up)).
The last decoder up-convolution, kernel 2 and stride 2 (each input pixel writes its own 2x2 block,
no overlap): 128 -> 64 channels, 64x64 -> 128x128, with bias; the input is a 128x128 image (reduced
from the Carvana scale so that the reference stays fast) and non-negative, as the DoubleConv before
it ends in a ReLU.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, groups):
        super().__init__()
        # The parameters of nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride, padding,
        # output_padding, groups, bias=True), applied with its functional form; the weight is
        # [in, out / groups, kH, kW].
        self.weight = nn.Parameter(
            torch.empty(in_channels, out_channels // groups, kernel_size, kernel_size)
        )
        self.bias = nn.Parameter(torch.empty(out_channels))
        self.stride = stride
        self.padding = padding
        self.output_padding = output_padding
        self.groups = groups

    def forward(self, x):
        return F.conv_transpose2d(x, self.weight, self.bias, stride=self.stride, padding=self.padding,
                                  output_padding=self.output_padding, groups=self.groups)


def get_inputs():
    return [
        torch.empty(1, 128, 64, 64).uniform_(0, 2),
    ]


def get_init_inputs():
    return [128, 64, 2, 2, 0, 0, 1]
