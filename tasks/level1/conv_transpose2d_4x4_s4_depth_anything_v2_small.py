"""PyTorch twin of the task `conv_transpose2d_4x4_s4_depth_anything_v2_small`.

Depth Anything V2 Small (ViT-S/14), depth_head.resize_layers.0: torch.nn.ConvTranspose2d(48, 48,
kernel_size=4, stride=4, padding=0) (DepthAnything/Depth-Anything-V2 depth_anything_v2/dpt.py
(DPTHead)).
Reassembling the shallowest ViT features for the DPT decoder: the 37x37 patch tokens of a 518x518
image, projected to 48 channels, upsampled 4x to 148x148 by a transposed convolution with kernel =
stride = 4, with bias.
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
        torch.empty(1, 48, 37, 37).uniform_(-1, 1),
    ]


def get_init_inputs():
    return [48, 48, 4, 4, 0, 0, 1]
