"""PyTorch twin of the task `unet_down1_milesial`.

U-Net (milesial), down1: Down(64, 128): MaxPool2d(2) + DoubleConv(64, 128) (milesial/Pytorch-
UNet unet/unet_parts.py).
An encoder down-step of the U-Net segmentation model: 2x2 max pooling (64x64 -> 32x32) and
DoubleConv (two 3x3 convolutions without bias, batch norm, ReLU) 64 -> 128. The input resolution
is reduced so that the step stays under 700 MFLOP; channels are the model's. Inputs are non-
negative (after ReLU).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv0 = nn.Conv2d(64, 128, 3, padding=1, bias=False)
        self.bn0 = nn.BatchNorm2d(128)
        self.conv1 = nn.Conv2d(128, 128, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(128)

    def forward(self, x):
        maxpool = F.max_pool2d(x, 2)
        conv0 = self.conv0(maxpool)
        bn0 = self.bn0(conv0)
        relu0 = torch.relu(bn0)
        conv1 = self.conv1(relu0)
        bn1 = self.bn1(conv1)
        relu1 = torch.relu(bn1)
        return relu1


def get_inputs():
    return [
        torch.empty(1, 64, 64, 64).uniform_(0, 2),
    ]


def get_init_inputs():
    return []
