"""PyTorch twin of the task `conv_transpose2d_16x16_s8_fcn8s_upscore8`.

FCN-8s (VGG16, Pascal VOC, 21 classes), upscore8: torch.nn.ConvTranspose2d(21, 21, 16, stride=8,
bias=False) (wkentaro/pytorch-fcn torchfcn/models/fcn8s.py).
The final 8x learned upsampling of the fused class scores (kernel 16, stride 8: each output pixel
gathers 2x2 taps of every class) for a 224x224 image: 38x38 -> 312x312 before the crop to 224x224
(the network pads its input by 100). The bilinear initial weights are replaced by seeded ones.
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
        torch.empty(1, 21, 38, 38).uniform_(-4, 4),
    ]


def get_init_inputs():
    return [21, 21, 16, 8, 0, 0, 1]
