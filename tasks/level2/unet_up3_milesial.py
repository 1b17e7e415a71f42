"""PyTorch twin of the task `unet_up3_milesial`.

U-Net (milesial), up3: Up(256, 128, bilinear=False): ConvTranspose2d(256, 128, 2, stride=2),
concatenation with the skip, DoubleConv(256, 128) (milesial/Pytorch-UNet unet/unet_parts.py).
A decoder up-step of the U-Net segmentation model: a 2x2 stride-2 transposed convolution halves
the channels (256 -> 128) and doubles the feature map (12x12 -> 24x24), concatenation with the
encoder skip (128 channels; same size, so the pad is empty), and DoubleConv (two 3x3
convolutions without bias, batch norm, ReLU) 256 -> 128. The input resolution is reduced so that
the step stays under 700 MFLOP (a 24x24 output); channels are the model's.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up_weight = nn.Parameter(torch.empty(256, 128, 2, 2))
        self.up_bias = nn.Parameter(torch.empty(128))
        self.conv0 = nn.Conv2d(256, 128, 3, padding=1, bias=False)
        self.bn0 = nn.BatchNorm2d(128)
        self.conv1 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(128)

    def forward(self, x1, x2):
        up = F.conv_transpose2d(x1, self.up_weight, self.up_bias, stride=2)
        cat = torch.cat([x2, up], 1)
        conv0 = self.conv0(cat)
        bn0 = self.bn0(conv0)
        relu0 = torch.relu(bn0)
        conv1 = self.conv1(relu0)
        bn1 = self.bn1(conv1)
        relu1 = torch.relu(bn1)
        return relu1


def get_inputs():
    return [
        torch.empty(1, 256, 12, 12).uniform_(0, 2),
        torch.empty(1, 128, 24, 24).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
