"""PyTorch twin of the task `unet_inc_milesial`.

U-Net (milesial), inc: DoubleConv(3, 64): (Conv2d 3x3, BatchNorm2d, ReLU) x 2 (milesial/Pytorch-
UNet unet/unet_parts.py).
The input block of the U-Net segmentation model: two 3x3 convolutions without bias (3 -> 64 ->
64), each with batch norm and ReLU, on an RGB image reduced to 64x64 so that the block stays
under 700 MFLOP.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv0 = nn.Conv2d(3, 64, 3, padding=1, bias=False)
        self.bn0 = nn.BatchNorm2d(64)
        self.conv1 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)

    def forward(self, x):
        conv0 = self.conv0(x)
        bn0 = self.bn0(conv0)
        relu0 = torch.relu(bn0)
        conv1 = self.conv1(relu0)
        bn1 = self.bn1(conv1)
        relu1 = torch.relu(bn1)
        return relu1


def get_inputs():
    return [
        torch.empty(1, 3, 64, 64).uniform_(-1, 1),
    ]


def get_init_inputs():
    return []
